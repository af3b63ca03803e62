import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { IncompleteListingError } from '../../functions/core/base/errors';
import { type ListPage, ResellerClient } from '../../functions/core/reseller/client';
import type { Domain } from '../../functions/core/reseller/schemas';
import { listenOnLoopback } from '../support/loopback';

const KEY = 'key-0123456789abcdef-SECRET';

type PageAnswer = (page: number, query: URLSearchParams) => unknown;

const servers: Array<{ close: () => Promise<void> }> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** A reseller on 127.0.0.1 answering the domain list with `answer` (a JSON body, status 200). */
async function reseller(answer: PageAnswer) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = answer(Number(url.searchParams.get('page') ?? 1), url.searchParams);
    res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' });
    res.end(JSON.stringify(body));
  });
  const served = await listenOnLoopback(server);
  servers.push(served);
  return new ResellerClient({ baseUrl: served.url, apiKey: KEY, sleep: async () => {} });
}

async function readAll(pages: AsyncIterable<ListPage<Domain>>) {
  const records: string[] = [];
  const problems: Array<{ key: string | null; reason: string; severity?: string | undefined }> = [];
  for await (const page of pages) {
    records.push(...page.records.map((d) => d.domain_name));
    problems.push(...page.problems.map((p) => ({ key: p.key, reason: p.reason, severity: p.severity })));
  }
  return { records, problems };
}

const good = (name: string) => ({ domain_name: name, date_expiry: '2027-01-01T00:00:00Z', auto_renew: true });
const bad = (name: string) => ({ domain_name: name, date_expiry: 'soon', auto_renew: true });

/**
 * Six domains, two a page, under totals that never change; page 2 repeats the unreadable bad.nl
 * from page 1 and skips c.nl (a server paging without a stable order, or one domain leaving and
 * another arriving while the pages are read). The other end's page 1 lists only names read.
 */
async function repeatsUnreadable() {
  const pages: Record<number, unknown[]> = {
    1: [good('a.nl'), bad('bad.nl')],
    2: [bad('bad.nl'), good('d.nl')],
    3: [good('e.nl'), good('f.nl')],
  };
  return reseller((page, q) => {
    const data = q.get('sort') === '-domain_name' ? [good('f.nl'), good('e.nl')] : (pages[page] ?? []);
    return { data, pagination: { current_page: page, per_page: 2, total_pages: 3, total_results: 6 } };
  });
}

describe('a reseller whose pages repeat an unreadable record and skip another under unchanged totals', () => {
  it('fails the read: the repeat is not counted as a second record making up for the one skipped', async () => {
    const client = await repeatsUnreadable();
    const error = await readAll(client.listDomains()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect((error as IncompleteListingError).retryable).toBe(true);
    expect((error as Error).message).toContain('read 5 of 6 domains from /v2/domains');
  });

  it('reports the unreadable record once, and the read as incomplete, when it reads on', async () => {
    const client = await repeatsUnreadable();
    const read = await readAll(client.listDomains({}, undefined, { onMove: 'report' }));
    expect(read.records).toEqual(['a.nl', 'd.nl', 'e.nl', 'f.nl']);
    expect(read.problems.filter((p) => p.key === 'bad.nl')).toHaveLength(1);
    expect(read.problems.filter((p) => p.key === null)).toEqual([
      {
        key: null,
        reason: expect.stringMatching(/^the domain list changed while it was read \(read 5 of 6/),
      },
    ]);
  });
});

/** What Node's fetch throws when DNS could not answer or the connection did not open in time. */
function fetchFailed(code: string): TypeError {
  const cause = Object.assign(new Error(`getaddrinfo ${code} 127.0.0.1`), { code });
  return new TypeError('fetch failed', { cause });
}

describe('a request that never reached the reseller for a passing reason', () => {
  for (const code of ['EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']) {
    it(`is sent again after ${code}, which says nothing reached the server`, async () => {
      const served = await listenOnLoopback(
        createServer((req, res) => {
          const page = Number(new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('page'));
          const data = page === 1 ? [good('a.nl')] : [];
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              data,
              pagination: { current_page: page, per_page: 100, total_pages: 1, total_results: 1 },
            }),
          );
        }),
      );
      servers.push(served);
      let calls = 0;
      const flaky = (async (input: string | URL | Request, init?: RequestInit) => {
        calls++;
        if (calls === 1) throw fetchFailed(code);
        return fetch(input, init);
      }) as typeof fetch;
      const client = new ResellerClient({
        baseUrl: served.url,
        apiKey: KEY,
        fetch: flaky,
        sleep: async () => {},
      });
      const read = await readAll(client.listDomains());
      expect(read.records).toEqual(['a.nl']);
      expect(calls).toBe(2);
    });
  }
});

describe('a domain record whose name is blank', () => {
  it('is a problem without a name, critical when it says quarantine: it may be any domain', async () => {
    const quarantined = (name: string) => ({ ...good(name), status: ['quarantine'] });
    const data = [good('a.nl'), quarantined(''), quarantined('   '), quarantined('.'), good('b.nl')];
    const client = await reseller((page) => ({
      data: page === 1 ? data : [],
      pagination: { current_page: page, per_page: 100, total_pages: 1, total_results: 5 },
    }));
    const read = await readAll(client.listDomains());
    expect(read.records).toEqual(['a.nl', 'b.nl']);
    expect(read.problems).toEqual(
      ['', '   ', '.'].map(() => ({
        key: null,
        reason: 'domain_name: a blank name',
        severity: 'critical',
      })),
    );
  });
});

describe('a reseller behind a cache that ignores the page asked, whose records change on every answer', () => {
  it('fails the read: page 1 again, changed, is no page 2 standing in for the records never listed', async () => {
    // Every answer is page 1 (a.nl, b.nl) under the page number asked, with a date_renewal that
    // moves on each request; 4 domains in 2 pages, so c.nl and d.nl are never listed. Past the
    // end it answers nothing, which proves nothing.
    let answers = 0;
    const client = await reseller((page) => {
      answers++;
      const renewal = `2026-12-${String(answers).padStart(2, '0')}T00:00:00Z`;
      const names = page > 2 ? [] : ['a.nl', 'b.nl'];
      const data = names.map((name) => ({ ...good(name), date_renewal: renewal }));
      return { data, pagination: { current_page: page, per_page: 2, total_pages: 2, total_results: 4 } };
    });
    const error = await readAll(client.listDomains()).catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.message).toMatch(/read 2 of 4 domains from \/v2\/domains: the pages held fewer records/);
  });
});
