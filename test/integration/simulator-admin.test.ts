import { afterEach, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';

const KEY = 'admin-test-key-77a0';
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function names(s: Simulator): Promise<string[]> {
  const res = await fetch(`${s.url}/v2/domains?per_page=100`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  const body = (await res.json()) as { data: Array<{ domain_name: string }> };
  return body.data.map((d) => d.domain_name);
}

describe('simulator admin endpoint: the portfolio changes while it runs', () => {
  it('patches, adds and removes domains over HTTP, with the API key, uncounted in requests', async () => {
    const portfolio = generatePortfolio({ domains: 5, seed: 3, now: Date.parse('2026-11-22T06:00:00Z') });
    sim = await startSimulator({ portfolio, apiKey: KEY });
    const first = String(portfolio.domains[0]?.domain_name);
    const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    expect(await names(sim)).toContain(first); // primes the listing cache

    const patched = await fetch(`${sim.url}/_admin/domains/${first}`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ transfer_lock: false, domain_name: 'ignored.nl' }),
    });
    expect(patched.status).toBe(200);
    expect(sim.domain(first)).toMatchObject({ domain_name: first, transfer_lock: false });

    const added = await fetch(`${sim.url}/_admin/domains/new-one.nl`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ date_expiry: '2027-01-01T00:00:00Z', status: ['registered'] }),
    });
    expect(added.status).toBe(200);
    expect(await names(sim)).toContain('new-one.nl');

    expect(
      (await fetch(`${sim.url}/_admin/domains/${first}`, { method: 'DELETE', headers: auth })).status,
    ).toBe(204);
    expect(await names(sim)).not.toContain(first);
    expect(
      (await fetch(`${sim.url}/_admin/domains/${first}`, { method: 'DELETE', headers: auth })).status,
    ).toBe(404);
    expect(sim.requests.map((r) => r.path)).toEqual(['/v2/domains', '/v2/domains', '/v2/domains']);
  });

  it('refuses a wrong key and a body that is not a JSON object', async () => {
    sim = await startSimulator({
      portfolio: generatePortfolio({ domains: 2, now: Date.now() }),
      apiKey: KEY,
    });
    const wrongKey = await fetch(`${sim.url}/_admin/domains/x.nl`, {
      method: 'DELETE',
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrongKey.status).toBe(401);
    const notObject = await fetch(`${sim.url}/_admin/domains/x.nl`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: '[1,2]',
    });
    expect(notObject.status).toBe(400);
    expect(sim.domain('x.nl')).toBeUndefined();
  });

  it('answers a patch too large with 413, and one that would set the record prototype with 400', async () => {
    sim = await startSimulator({
      portfolio: generatePortfolio({ domains: 2, now: Date.now() }),
      apiKey: KEY,
    });
    const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const large = await fetch(`${sim.url}/_admin/domains/x.nl`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ tags: ['x'.repeat(100_000)] }),
    });
    expect(large.status).toBe(413);
    expect(sim.domain('x.nl')).toBeUndefined();
    const proto = await fetch(`${sim.url}/_admin/domains/x.nl`, {
      method: 'POST',
      headers: auth,
      body: '{"__proto__": {"status": ["quarantine"]}}',
    });
    expect(proto.status).toBe(400);
    expect(sim.domain('x.nl')).toBeUndefined();
  });
});
