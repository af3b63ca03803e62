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
