import { describe, expect, it } from 'vitest';
import { ResellerClient } from '../../functions/core/reseller/client';
import { confirmUnlisted, type UnlistedGathering } from '../../functions/core/scan/unlisted';

/**
 * Attacks on the lookups of remembered names a whole read did not list: no path may judge a domain
 * gone (nothing marked incomplete, no account change said) that a lookup found in the account.
 */

const record = (name: string) => ({
  domain_name: name,
  date_expiry: '2028-01-01T00:00:00Z',
  auto_renew: true,
});
const answer = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const list = (names: readonly string[]) =>
  answer(200, {
    data: names.map(record),
    pagination: { current_page: 1, per_page: 100, total_pages: 1, total_results: names.length },
  });

const client = (fetch: (url: URL) => Response) =>
  new ResellerClient({
    baseUrl: 'https://api.test',
    apiKey: 'k-unit-unlisted',
    fetch: (async (input: string | URL | Request) =>
      fetch(new URL(String(input)))) as typeof globalThis.fetch,
    sleep: async () => undefined,
  });

const gathering = (): UnlistedGathering & { problems: []; incomplete: string[] } => ({
  problems: [],
  incomplete: [],
  listed: 'a.nl',
});

describe('confirmUnlisted', () => {
  it('keeps a domain one lookup found when another lookup finds the search unfiltered', async () => {
    // A substring search: held.nl is found by name, ample.nl's search lists example.nl. The whole
    // list (which, as the read did, leaves held.nl out) must not outweigh the lookup that found it.
    const server = (url: URL) => {
      const name = url.searchParams.get('domain_name');
      if (name === null) return list(['a.nl', 'example.nl']);
      if (name.startsWith('held.nl')) return list(['held.nl']);
      if (name.startsWith('ample.nl')) return list(['example.nl']);
      return list([]);
    };
    const gathered = gathering();
    await confirmUnlisted(client(server), async () => ['x.nl', 'held.nl', 'ample.nl'], gathered, 'report');
    expect(gathered.incomplete).toEqual([expect.stringMatching(/^held\.nl is in the account/)]);
  });
});

describe('confirmUnlisted when a lookup answers a page that breaks its own promise', () => {
  it('alerts what the whole read found, marked incomplete, instead of failing every read of the account', async () => {
    // The search for gone.nl counts a record it does not hand out (a deleted domain still counted):
    // the lookup's listing is not whole. The account's read was; thrown, it failed both reads of
    // every run, and no finding of the account was alerted.
    const server = (url: URL) =>
      url.searchParams.has('domain_name')
        ? answer(200, {
            data: [],
            pagination: { current_page: 1, per_page: 100, total_pages: 1, total_results: 1 },
          })
        : list(['a.nl']);
    const gathered = gathering();
    await confirmUnlisted(client(server), async () => ['gone.nl'], gathered, 'report');
    expect(gathered.incomplete).toEqual([
      expect.stringMatching(
        /^the domains the read did not list could not be looked up \(read 0 of 1 domains .*\): the domains read were checked, but none is judged to have left the account$/,
      ),
    ]);
  });
});

describe('confirmUnlisted on a server that ignores domain_name, near the deadline', () => {
  it('gives up the whole read at once when its pace says it cannot end in the time left, leaving the rest of the budget', async () => {
    // 50 pages of 100, one at a time, every request 1 s, 20 s left: the whole read would need 50 s. Read to the
    // deadline, it spent all 20 s the registry check and the rest of the scan still needed.
    let clock = Date.parse('2026-11-22T06:00:00Z');
    const all = Array.from({ length: 5_000 }, (_, i) => `d${String(i).padStart(4, '0')}.nl`);
    let requests = 0;
    const fetch = (async (input: string | URL | Request) => {
      requests++;
      clock += 1_000;
      const n = Number(new URL(String(input)).searchParams.get('page') ?? '1');
      return answer(200, {
        data: all.slice((n - 1) * 100, n * 100).map(record),
        pagination: { current_page: n, per_page: 100, total_pages: 50, total_results: all.length },
      });
    }) as typeof globalThis.fetch;
    const c = new ResellerClient({
      baseUrl: 'https://api.test',
      apiKey: 'k-unit-unlisted',
      fetch,
      sleep: async () => undefined,
      now: () => clock,
      deadline: clock + 20_000,
      concurrency: 1,
    });
    const gathered = gathering();
    await confirmUnlisted(c, async () => ['gone.nl'], gathered, 'report');
    expect(gathered.incomplete).toEqual([
      expect.stringMatching(/^the domains the read did not list could not be looked up .*time budget/),
    ]);
    expect(requests).toBeLessThanOrEqual(8);
    expect(c.remainingMs).toBeGreaterThan(10_000);
  });
});
