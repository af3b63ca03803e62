import { afterEach, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../functions/simulator/server';
import { runCli, startCliServer } from '../support/cli';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const KEY = 'simulator-knobs-key';
const portfolio = generatePortfolio({ domains: 200, seed: 3, now: NOW, edgeCases: 10 });
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function startWith(options: Partial<SimulatorOptions>) {
  sim = await startSimulator({ portfolio, apiKey: KEY, ...options });
  return sim;
}

async function total(s: Simulator, query: string): Promise<number> {
  const res = await fetch(`${s.url}/v2/domains?per_page=1&${query}`, {
    headers: { Authorization: `Bearer ${KEY}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()).pagination.total_results;
}

const all = portfolio.domains.length;
const renewal = (d: Record<string, unknown>) => d.auto_renew ?? d.auto_renewal;
const off = portfolio.domains.filter((d) => renewal(d) === false).length;
const absent = portfolio.domains.filter((d) => renewal(d) === undefined || renewal(d) === null).length;

describe('portfolio edge cases', () => {
  it('appends them without changing what the seed generates', () => {
    const plain = generatePortfolio({ domains: 200, seed: 3, now: NOW });
    expect(portfolio.domains.slice(0, 200)).toEqual(plain.domains);
    expect(portfolio.contacts).toEqual(plain.contacts);
    expect(portfolio.domains.slice(200).map((d) => d.domain_name)).toEqual([
      'edge-no-date-expiry-0.nl',
      'edge-null-date-expiry-1.nl',
      'edge-null-auto-renew-beyond-2.nl',
      'edge-no-auto-renew-in-window-3.nl',
      'edge-cancelled-early-4.nl',
      'edge-renewal-failed-beyond-5.nl',
      'edge-no-date-expiry-6.nl',
      'edge-null-date-expiry-7.nl',
      'edge-null-auto-renew-beyond-8.nl',
      'edge-no-auto-renew-in-window-9.nl',
    ]);
    expect(portfolio.domains[200]).not.toHaveProperty('date_expiry');
    expect(portfolio.truth.problems).toContain('edge-null-date-expiry-1.nl');
    expect(portfolio.truth.findings).toContainEqual({
      key: 'edge-cancelled-early-4.nl',
      kind: 'quarantine',
      severity: 'critical',
    });
  });
});

describe('search semantics', () => {
  it('or (the default): repeated plain values are alternatives', async () => {
    const s = await startWith({});
    expect(await total(s, 'auto_renewal=false&auto_renewal=')).toBe(off + absent);
    expect(await total(s, 'auto_renewal=')).toBe(absent);
  });

  it('and: every value of a repeated parameter must hold', async () => {
    const s = await startWith({ searchSemantics: 'and' });
    expect(await total(s, 'auto_renewal=false&auto_renewal=')).toBe(0);
    expect(await total(s, 'auto_renewal=false')).toBe(off);
  });

  it('ignore: search parameters are ignored, unknown ones too, instead of answering 400', async () => {
    const s = await startWith({ searchSemantics: 'ignore' });
    expect(await total(s, 'auto_renewal=false')).toBe(all);
    expect(await total(s, 'colour=blue')).toBe(all);
  });

  it('ignore with named parameters: only those are ignored', async () => {
    const s = await startWith({ searchSemantics: 'ignore', ignoredSearchParameters: ['status'] });
    expect(await total(s, 'status=quarantine')).toBe(all);
    expect(await total(s, 'auto_renewal=false')).toBe(off);
    const res = await fetch(`${s.url}/v2/domains?colour=blue`, {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    expect(res.status).toBe(400);
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After beyond the bucket, and counts those answers', async () => {
    // One token every 2 s: the five requests arrive long before a new one.
    const s = await startWith({ rateLimit: 0.5, rateLimitBurst: 3 });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        fetch(`${s.url}/v2/domains?per_page=1`, { headers: { Authorization: `Bearer ${KEY}` } }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited.map((r) => r.headers.get('retry-after'))).toEqual(['2', '2']);
    expect(await limited[0]?.json()).toEqual({ error: { code: 429, message: 'rate limit exceeded' } });
    expect(s.rateLimited).toBe(2);
    expect(s.requests).toHaveLength(5);
  });

  it('rejects a rate that cannot hold a token', async () => {
    await expect(
      startSimulator({ portfolio, apiKey: KEY, rateLimit: 1, rateLimitBurst: 0.5 }),
    ).rejects.toThrow(/rateLimitBurst/);
  });
});

describe('sentinel simulate knobs', () => {
  const simulate = async (args: string[]) => {
    const server = await startCliServer(['simulate', '--port', '0', '--domains', '50', ...args], {
      RESELLER_API_KEY: KEY,
    });
    return { base: server.url, stop: server.stop };
  };

  it('passes --search-semantics and --rate-limit to the simulator', async () => {
    const { base, stop } = await simulate(['--search-semantics', 'ignore', '--rate-limit', '1']);
    const get = () =>
      fetch(`${base}/v2/domains?per_page=1&colour=blue`, { headers: { Authorization: `Bearer ${KEY}` } });
    const answers = await Promise.all([get(), get()]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 429]);
    // Stopped as by Ctrl-C.
    expect((await stop()).code).toBe(130);
  });

  it('refuses an unknown search semantics with a usage error', async () => {
    const run = await runCli(['simulate', '--search-semantics', 'xor'], { RESELLER_API_KEY: KEY });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'sentinel: --search-semantics must be one of or, and, ignore; did you mean or?\n',
    );
  });
});

describe('the request log', () => {
  it('keeps the newest requests up to requestLog, so a simulator left running does not grow without bound', async () => {
    const s = await startWith({ requestLog: 4 });
    const ids: string[] = [];
    for (let page = 1; page <= 10; page++) {
      const res = await fetch(`${s.url}/v2/domains?per_page=1&page=${page}`, {
        headers: { Authorization: `Bearer ${KEY}` },
      });
      await res.arrayBuffer();
      ids.push(res.headers.get('x-request-id') ?? '');
    }
    expect(s.requests.length).toBeLessThanOrEqual(4);
    expect(s.requests.at(-1)?.query.get('page')).toBe('10');
    // Ids still count every request, trimmed or not.
    expect(ids).toEqual(Array.from({ length: 10 }, (_, i) => `sim-${i + 1}`));
  });

  it('keeps the newest requests up to requestLogChars too, so long queries sent without a key do not fill the memory', async () => {
    const s = await startWith({ requestLogChars: 100_000 });
    const long = 'x'.repeat(10_000);
    for (let i = 1; i <= 30; i++) {
      const res = await fetch(`${s.url}/v2/domains?tld=${long}&n=${i}`);
      expect(res.status).toBe(401);
      await res.arrayBuffer();
    }
    const kept = s.requests.reduce((sum, r) => sum + r.path.length + r.query.toString().length, 0);
    expect(kept).toBeLessThanOrEqual(100_000);
    expect(s.requests.at(-1)?.query.get('n')).toBe('30');
  });
});
