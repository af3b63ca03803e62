import { describe, expect, it } from 'vitest';
import { DeadlineError } from '../../functions/core/base/errors';
import { ResellerClient } from '../../functions/core/reseller/client';

const BASE = 'https://api.test.example';
const TOTAL = 25;

/** A domain list of TOTAL records, 10 a page; notes every URL asked for. */
function listing() {
  const urls: URL[] = [];
  const fetch = (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    urls.push(url);
    const page = Number(url.searchParams.get('page'));
    const perPage = Number(url.searchParams.get('per_page'));
    const data = Array.from({ length: TOTAL }, (_, i) => ({
      domain_name: `d${String(i).padStart(3, '0')}.nl`,
      date_expiry: '2027-01-01T00:00:00Z',
      auto_renew: true,
    })).slice((page - 1) * perPage, page * perPage);
    return Response.json({
      data,
      pagination: {
        current_page: page,
        per_page: perPage,
        total_pages: Math.ceil(TOTAL / perPage),
        total_results: TOTAL,
      },
    });
  }) as typeof globalThis.fetch;
  return { fetch, urls };
}

async function drain(pages: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of pages);
}

describe('the account size a read tells on its way', () => {
  it('tells the totals of page 1 of the whole domain list once, and nothing for a filtered listing', async () => {
    // Prepare
    const sizes: number[] = [];
    const api = listing();
    const client = new ResellerClient({
      baseUrl: BASE,
      apiKey: 'k-0123456789',
      perPage: 10,
      fetch: api.fetch,
      onAccountSize: (domains) => void sizes.push(domains),
    });
    // Act: a filtered listing, then the whole list (3 pages).
    await drain(client.listDomains({ auto_renewal: false }));
    await drain(client.listDomains());
    // Assess: only the whole list's page 1 told its totals.
    expect(sizes).toEqual([TOTAL]);
  });

  it('stops a read at a deadline that moved earlier while it ran', async () => {
    // Prepare: the deadline is far off until page 1 has been read, then it is past.
    let readBy = Date.now() + 60_000;
    const api = listing();
    const client = new ResellerClient({
      baseUrl: BASE,
      apiKey: 'k-0123456789',
      perPage: 10,
      concurrency: 1,
      initialConcurrency: 1,
      fetch: api.fetch,
      deadline: () => readBy,
      onAccountSize: () => {
        readBy = Date.now() - 1;
      },
    });
    // Act
    const read = drain(client.listDomains());
    // Assess: the read stopped at the moved deadline, after page 1.
    await expect(read).rejects.toThrow(DeadlineError);
    expect(api.urls.filter((u) => u.searchParams.get('page') !== '1')).toHaveLength(0);
  });
});
