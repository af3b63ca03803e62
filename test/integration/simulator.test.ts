import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const KEY = 'simulator-test-key';
let sim: Simulator;
const portfolio = generatePortfolio({ domains: 300, seed: 11, now: NOW });

beforeAll(async () => {
  sim = await startSimulator({ portfolio, apiKey: KEY, maxPerPage: 100, now: () => NOW });
});
afterAll(() => sim.close());

async function get(path: string, key = KEY) {
  const res = await fetch(`${sim.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

describe('reseller simulator', () => {
  it('answers 401 without the right Bearer key', async () => {
    expect((await get('/v2/domains', 'nope')).status).toBe(401);
    expect((await fetch(`${sim.url}/v2/contacts`)).status).toBe(401);
  });

  it('pages with a default of 50 and caps per_page at its maximum', async () => {
    const first = await get('/v2/domains');
    expect(first.body.data).toHaveLength(50);
    expect(first.body.pagination).toEqual({
      current_page: 1,
      per_page: 50,
      total_pages: 6,
      total_results: 300,
    });
    const capped = await get('/v2/domains?per_page=500&page=3');
    expect(capped.body.pagination).toEqual({
      current_page: 3,
      per_page: 100,
      total_pages: 3,
      total_results: 300,
    });
    expect((await get('/v2/contacts')).body.pagination.page).toBe(1);
  });

  it('filters arrays, booleans with aliases, wildcards and date comparisons', async () => {
    const quarantined = (await get('/v2/domains?status=quarantine&per_page=100')).body.data;
    expect(quarantined.length).toBe(portfolio.truth.findings.filter((f) => f.kind === 'quarantine').length);
    expect(quarantined.every((d: { status: string[] }) => d.status.includes('quarantine'))).toBe(true);

    const off = (await get('/v2/domains?auto_renewal=false&per_page=100')).body;
    expect(off.data.every((d: Record<string, unknown>) => (d.auto_renew ?? d.auto_renewal) === false)).toBe(
      true,
    );
    expect(off.data.some((d: Record<string, unknown>) => 'auto_renewal' in d)).toBe(true);

    const nl = (await get(`/v2/domains?domain_name=${encodeURIComponent('%.nl')}&per_page=100`)).body.data;
    expect(nl.length).toBeGreaterThan(0);
    expect(nl.every((d: { domain_name: string }) => d.domain_name.endsWith('.nl'))).toBe(true);

    const end = '2026-12-22T06:00:00Z';
    const soon = (await get(`/v2/domains?date_expiry=${encodeURIComponent(`<=${end}`)}&per_page=100`)).body
      .data;
    expect(soon.length).toBeGreaterThan(0);
    expect(soon.every((d: { date_expiry: string }) => Date.parse(d.date_expiry) <= Date.parse(end))).toBe(
      true,
    );

    const busy = (await get(`/v2/contacts?connections=${encodeURIComponent('>=3')}`)).body.data;
    expect(busy.every((c: { connections: number | string }) => Number(c.connections) >= 3)).toBe(true);
  });

  it('sorts by several fields, descending with a leading minus', async () => {
    const { data } = (await get('/v2/contacts?sort=-connections,handle&per_page=100')).body;
    const keys = data.map((c: { connections: number | string; handle: string }) => [
      Number(c.connections),
      c.handle,
    ]);
    const sorted = [...keys].sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : 1));
    expect(keys).toEqual(sorted);
  });

  it('answers 400 naming an unknown filter', async () => {
    const res = await get('/v2/domains?colour=blue');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('colour');
  });

  it('restores a quarantined domain once, then refuses with a 4xx JSON error', async () => {
    const name = portfolio.truth.findings.find((f) => f.kind === 'quarantine')?.key as string;
    const post = () =>
      fetch(`${sim.url}/v2/domains/${name}/restore`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${KEY}` },
      });
    const first = await post();
    expect(first.status).toBe(204);
    expect(await first.text()).toBe('');
    expect(sim.domain(name)?.status).toEqual(['registered']);
    const second = await post();
    expect(second.status).toBe(422);
    expect((await second.json()).error.message).toContain('not in quarantine');
  });

  it('generates the same portfolio for the same seed, with every finding kind, IDNs and multi-label TLDs', () => {
    expect(generatePortfolio({ domains: 300, seed: 11, now: NOW })).toEqual(portfolio);
    const kinds = new Set(portfolio.truth.findings.map((f) => `${f.kind}/${f.severity}`));
    for (const k of [
      'quarantine/critical',
      'expired/critical',
      'expiring/critical',
      'expiring/warning',
      'expiring/info',
      'auto_renew_off/info',
      'contact_pending_validation/warning',
    ]) {
      expect(kinds).toContain(k);
    }
    const names = portfolio.domains.map((d) => String(d.domain_name));
    expect(names.some((n) => n.startsWith('xn--'))).toBe(true);
    expect(names.some((n) => n.endsWith('.co.uk') || n.endsWith('.com.au'))).toBe(true);
    expect(portfolio.truth.problems.length).toBeGreaterThan(0);
  });
});
