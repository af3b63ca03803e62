import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { accountData, listAnswer, SEARCH_CACHE_ENTRIES } from '../../functions/simulator/accounts';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { buildFilter, buildSort } from '../../functions/simulator/search';

/** The simulator's search conventions (functions/simulator/search.ts) against odd searches. */

const SEARCH = fileURLToPath(new URL('../../functions/simulator/search.ts', import.meta.url));

const emailMatches = (email: string, wanted: string) =>
  buildFilter('contacts', new URLSearchParams({ email: wanted }))({ email });

describe('the simulator search wildcard', () => {
  it.each([
    ['ann@example.nl', '%@example.nl', true],
    ['ann@example.nl', 'ann@%', true],
    ['ann@example.nl', 'a%n%@%.nl', true],
    ['ann@example.nl', '%', true],
    ['ann@example.nl', '%%', true],
    ['ANN@Example.NL', '%@example.nl', true],
    ['ann@example.nl', '%@example.com', false],
    ['ann@example.nl', 'bob%', false],
    ['aXa', 'a%a%a', false],
    ['aa', 'a%a', true],
    ['a', 'a%a', false],
    ['ann@example.nl', '%.%', true],
    ['a.b', 'a.%', true],
    ['axb', 'a.%', false],
    ['a(b', 'a(%', true],
  ])('matches %s against %s: %s', (email, wanted, expected) => {
    expect(emailMatches(email, wanted)).toBe(expected);
  });

  // Run in a process of its own: a search that backtracks would hold this one, and the test's own
  // timeout with it, for as long as it runs.
  it('answers a search of many wildcards without backtracking, so one request cannot hold the simulator', async () => {
    const script = `
      const { buildFilter } = await import(${JSON.stringify(SEARCH)});
      const wanted = '%a'.repeat(14) + '%b';
      const filter = buildFilter('contacts', new URLSearchParams({ email: wanted }));
      console.log(filter({ email: 'a'.repeat(40) }), filter({ email: 'a'.repeat(1_000_000) + 'b' }));`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { timeout: 15_000 },
    );
    expect(stdout.trim()).toBe('false true');
  }, 30_000);
});

describe('the simulator search cache', () => {
  const RULES = { maxPerPage: 100 };
  const total = (answer: { body?: unknown }) =>
    (answer.body as { pagination: { total_results: number } }).pagination.total_results;

  it('tells a value holding an ampersand from two parameters', () => {
    const account = accountData(generatePortfolio({ domains: 40, now: Date.parse('2026-11-27T00:00:00Z') }));
    const quarantined = account.domains.filter((d) => (d.status as string[]).includes('quarantine'));
    const tld = String(quarantined[0]?.tld);
    const odd = listAnswer(
      account,
      'domains',
      new URLSearchParams([['tld', `${tld}&status=quarantine`]]),
      RULES,
    );
    const real = listAnswer(
      account,
      'domains',
      new URLSearchParams([
        ['tld', tld],
        ['status', 'quarantine'],
      ]),
      RULES,
    );
    expect(total(odd)).toBe(0);
    expect(total(real)).toBe(quarantined.filter((d) => d.tld === tld).length);
    expect(total(real)).toBeGreaterThan(0);
  });

  it('keeps a bounded number of searches, the one paged through among them', () => {
    const account = accountData(generatePortfolio({ domains: 40, now: Date.parse('2026-11-27T00:00:00Z') }));
    const paged = new URLSearchParams({ sort: 'domain_name', page: '1' });
    listAnswer(account, 'domains', paged, RULES);
    for (let i = 0; i < 1_000; i++) {
      listAnswer(account, 'domains', new URLSearchParams({ domain_name: `lookup-${i}.nl` }), RULES);
      if (i % 10 === 0) listAnswer(account, 'domains', paged, RULES);
    }
    expect(account.cache.size).toBeLessThanOrEqual(SEARCH_CACHE_ENTRIES);
    expect([...account.cache.keys()].some((key) => key.includes('"sort"'))).toBe(true);
  });
});

describe('the simulator sort', () => {
  /** A record that counts the fields read from it. */
  const counted = (record: Record<string, unknown>, reads: { n: number }) =>
    new Proxy(record, {
      get: (target, key) => {
        reads.n++;
        return target[key as string];
      },
    });

  it('reads a field named again in sort once per comparison', () => {
    const compare = buildSort('domains', Array.from({ length: 3_000 }, () => 'tld').join(','));
    const reads = { n: 0 };
    const a = counted({ domain_name: 'a.nl', tld: 'nl' }, reads);
    const b = counted({ domain_name: 'b.nl', tld: 'nl' }, reads);
    expect(compare?.(a, b)).toBe(0);
    // Two reads of tld in each record (the getter looks, then takes), as for a single tld.
    expect(reads.n).toBe(4);
  });

  it('still breaks ties by the fields named after', () => {
    const compare = buildSort('domains', 'tld,-tld,-domain_name,tld') as (a: object, b: object) => number;
    const names = [
      { domain_name: 'a.nl', tld: 'nl' },
      { domain_name: 'b.eu', tld: 'eu' },
      { domain_name: 'c.nl', tld: 'nl' },
    ]
      .sort(compare)
      .map((d) => d.domain_name);
    expect(names).toEqual(['b.eu', 'c.nl', 'a.nl']);
  });
});

describe('the simulator filter', () => {
  it('reads each search value once per search and each record once, however many values are given', () => {
    const values = Array.from({ length: 50 }, (_, i) => [
      'date_expiry',
      `>2020-01-${String((i % 28) + 1).padStart(2, '0')}T00:00:00Z`,
    ]);
    const records = Array.from({ length: 200 }, (_, i) => ({
      domain_name: `d${i}.nl`,
      date_expiry: `2026-${String((i % 12) + 1).padStart(2, '0')}-01T00:00:00Z`,
    }));
    const parse = vi.spyOn(Date, 'parse');
    try {
      const filter = buildFilter('domains', new URLSearchParams(values));
      expect(records.filter(filter)).toHaveLength(200);
      expect(parse.mock.calls.length).toBeLessThanOrEqual(values.length + records.length);
    } finally {
      parse.mockRestore();
    }
  });

  it.each([
    ['date_expiry', '>2026-01-01T00:00:00Z', { date_expiry: '2026-06-01T00:00:00Z' }, true],
    ['date_expiry', '<2026-01-01T00:00:00Z', { date_expiry: '2026-06-01T00:00:00Z' }, false],
    ['date_expiry', '>=not-a-date', { date_expiry: '2026-06-01T00:00:00Z' }, false],
    ['auto_renewal_period', '>=12', { auto_renew_period: 12 }, true],
    ['auto_renewal_period', '12', { auto_renew_period: 12 }, true],
    ['auto_renewal_period', '>x', { auto_renew_period: 12 }, false],
    ['auto_renewal', 'false', { auto_renew: false }, true],
    ['auto_renewal', '0', { auto_renew: false }, true],
    ['auto_renewal', '', { auto_renew: null }, true],
    ['auto_renewal', '', { auto_renew: false }, false],
    ['status', 'QUARANTINE', { status: ['registered', 'quarantine'] }, true],
    ['status', 'quarantine', { status: [] }, false],
    ['tld', 'n%', { tld: 'nl' }, true],
    ['date_expiry', '2026-06-01T00:00:00Z', { date_expiry: '2026-06-01T00:00:00.000Z' }, true],
    ['date_expiry', '2026-06-01T02:00:00+02:00', { date_expiry: '2026-06-01T00:00:00Z' }, true],
    ['date_expiry', '2026-06-01T00:00:01Z', { date_expiry: '2026-06-01T00:00:00Z' }, false],
    ['date_expiry', '2026-13-45T00:00:00Z', { date_expiry: '2026-13-45T00:00:00Z' }, true],
  ])('filters %s=%s on %j: %s', (key, value, record, expected) => {
    expect(buildFilter('domains', new URLSearchParams([[key, value]]))(record)).toBe(expected);
  });
});
