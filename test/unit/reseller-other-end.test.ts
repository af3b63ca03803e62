import { describe, expect, it } from 'vitest';
import { AuthenticationError, IncompleteListingError } from '../../functions/core/base/errors';
import { type ListPage, ResellerClient } from '../../functions/core/reseller/client';

/**
 * A search back end with a result window: it lists `total` domains sorted as asked, but its totals
 * stop at `window` and a page past the window answers `past` (400 "result window is too large", or
 * an empty page under the same totals). `window` = `total` is a healthy server whose answer past the
 * end is `past` too.
 */
interface Server {
  readonly total: number;
  readonly window: number;
  readonly perPage?: number;
  readonly past: 'error' | 'empty';
  /** A server that ignores `sort` (always ascending). */
  readonly ignoresSort?: boolean;
  /** The answer to page 1 sorted descending, instead of the real one. */
  readonly otherEnd?: () => Response;
  /** Which domains are quarantined; with it, `status=quarantine` is counted over the whole account. @default none, and status ignored */
  readonly quarantined?: (n: number) => boolean;
  /** What the listing serves in place of record `n` (status=quarantine is still counted by `quarantined`). @default the record */
  readonly listed?: (record: object, n: number) => object;
  /** The answer to the status=quarantine count, instead of the real one. */
  readonly count?: () => Response;
}

const record = (n: number) => ({
  domain_name: `d${String(n).padStart(4, '0')}.nl`,
  date_expiry: '2027-01-01T00:00:00Z',
  auto_renew: true,
});
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });

function windowedApi(server: Server) {
  const calls: URL[] = [];
  const perPage = server.perPage ?? 10;
  const all = Array.from({ length: server.total }, (_, i) =>
    server.quarantined?.(i) ? { ...record(i), status: ['quarantine'] } : record(i),
  );
  const fetch = (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    calls.push(url);
    await new Promise((resolve) => setImmediate(resolve));
    const page = Number(url.searchParams.get('page'));
    const descending = url.searchParams.get('sort')?.startsWith('-') && !server.ignoresSort;
    if (descending && server.otherEnd) return server.otherEnd();
    if (server.count && url.searchParams.get('status') === 'quarantine') return server.count();
    if (server.quarantined && url.searchParams.get('status') === 'quarantine') {
      const held = all.filter((_, i) => server.quarantined?.(i)).length;
      const pagination = { current_page: 1, per_page: 1, total_pages: held, total_results: held };
      return json(200, { data: all.filter((_, i) => server.quarantined?.(i)).slice(0, 1), pagination });
    }
    const pagination = {
      current_page: page,
      per_page: perPage,
      total_pages: Math.ceil(server.window / perPage),
      total_results: server.window,
    };
    if ((page - 1) * perPage >= server.window) {
      if (server.past === 'error') return json(400, { error: 'Result window is too large' });
      return json(200, { data: [], pagination });
    }
    const served = server.listed ? all.map(server.listed) : all;
    const sorted = descending ? [...served].reverse() : served;
    const end = Math.min(page * perPage, server.window);
    return json(200, { data: sorted.slice((page - 1) * perPage, end), pagination });
  }) as typeof globalThis.fetch;
  const asked = () => calls.map((u) => `${u.searchParams.get('page')} ${u.searchParams.get('sort')}`);
  return { fetch, calls, asked };
}

const sleeps: number[] = [];
const client = (fetch: typeof globalThis.fetch) =>
  new ResellerClient({
    baseUrl: 'https://api.test.example',
    apiKey: 'key-0123456789abcdef-SECRET',
    fetch,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
  });

async function readAll<T>(pages: AsyncIterable<ListPage<T>>) {
  const read: ListPage<T>[] = [];
  for await (const page of pages) read.push(page);
  return {
    pages: read,
    records: read.flatMap((p) => p.records),
    problems: read.flatMap((p) => p.problems),
  };
}

const UNDERCOUNT =
  'domain list sorted the other way (sort=-domain_name) holds d0029.nl and 9 more records, which the 2 pages page 1 promised did not: total_results (20) undercounts the account';

describe('a listing whose totals a result window caps is caught by its other end', () => {
  for (const past of ['error', 'empty'] as const) {
    it(`fails, retryable, when 20 of 30 domains are listed and the page past the window answers ${past === 'error' ? '400' : 'an empty page'}`, async () => {
      const api = windowedApi({ total: 30, window: 20, past });
      const error = await readAll(client(api.fetch).listDomains()).catch((e) => e);
      expect(error).toBeInstanceOf(IncompleteListingError);
      expect(error.retryable).toBe(true);
      expect(error.message).toBe(UNDERCOUNT);
      expect(api.asked()).toEqual(['1 domain_name', '2 domain_name', '3 domain_name', '1 -domain_name']);
    });

    it(`reports the read incomplete, with the records the other end holds, on a read that reports a move (${past})`, async () => {
      const api = windowedApi({ total: 30, window: 20, past });
      const read = await readAll(client(api.fetch).listDomains({}, undefined, { onMove: 'report' }));
      // the 20 listed, then the 10 of the other end the read did not hold: all checked
      expect(read.records.map((d) => d.domain_name)).toHaveLength(30);
      expect(new Set(read.records.map((d) => d.domain_name)).size).toBe(30);
      const last = read.pages.at(-1);
      expect(last?.incomplete).toContain(UNDERCOUNT);
      expect(last?.incomplete).toContain('none is judged to have left the account');
      expect(read.problems).toHaveLength(1);
    });
  }

  it('reads a healthy account of exactly two full pages whole, with one request for its other end', async () => {
    for (const past of ['error', 'empty'] as const) {
      sleeps.length = 0;
      const api = windowedApi({ total: 20, window: 20, past });
      const read = await readAll(client(api.fetch).listDomains());
      expect(read.records).toHaveLength(20);
      expect(read.problems).toEqual([]);
      expect(read.pages.some((p) => p.incomplete)).toBe(false);
      expect(api.asked()).toEqual(['1 domain_name', '2 domain_name', '3 domain_name', '1 -domain_name']);
      expect(sleeps).toEqual([]);
    }
  });

  it('reads the listing as its totals promise on a server that ignores sort, capped or not', async () => {
    for (const total of [20, 30]) {
      const api = windowedApi({ total, window: 20, past: 'error', ignoresSort: true });
      const read = await readAll(client(api.fetch).listDomains({}, undefined, { onMove: 'report' }));
      expect(read.records).toHaveLength(20);
      expect(read.problems).toEqual([]);
      // and status=quarantine counted, which this server answers with the listing's totals: no proof
      expect(api.calls).toHaveLength(5);
    }
  });

  it('fails a capped window that ignores sort when status=quarantine counts more quarantined domains than were read', async () => {
    // d0005, d0015 and d0025 are quarantined; the window of 20 lists the first two, and a search on
    // status (counted over the whole account) finds three.
    const quarantined = (n: number) => n % 10 === 5;
    const api = windowedApi({ total: 30, window: 20, past: 'empty', ignoresSort: true, quarantined });
    const error = await readAll(client(api.fetch).listDomains()).catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.message).toBe(
      'domain list sorted the other way (sort=-domain_name) came back in the order of page 1, so its other end cannot be seen, and status=quarantine counts 3 domains where the read held 2: total_results (20) undercounts the account, unless a domain was quarantined while the list was read: run again, and if it repeats, a result window caps the listing',
    );
    expect(api.asked()).toEqual([
      '1 domain_name',
      '2 domain_name',
      '3 domain_name',
      '1 -domain_name',
      '1 domain_name',
    ]);
    // Whole, the same server: the count agrees, and one request more.
    const whole = windowedApi({ total: 20, window: 20, past: 'empty', ignoresSort: true, quarantined });
    expect((await readAll(client(whole.fetch).listDomains())).records).toHaveLength(20);
    expect(whole.calls).toHaveLength(5);
    expect(whole.calls.at(-1)?.searchParams.get('status')).toBe('quarantine');
    // A server honouring sort is never asked the count.
    const sorted = windowedApi({ total: 20, window: 20, past: 'empty', quarantined });
    await readAll(client(sorted.fetch).listDomains());
    expect(sorted.calls).toHaveLength(4);
  });

  it('reads whole a server ignoring sort whose quarantined names differ only in letter case', async () => {
    // D0005.NL and d0005.nl, both quarantined, are two records the status search counts as two; the
    // second is a problem (a case duplicate), and still counted as quarantined.
    const quarantined = (n: number) => n === 4 || n === 5;
    const listed = (r: object, n: number) => (n === 4 ? { ...r, domain_name: 'D0005.NL' } : r);
    const api = windowedApi({ total: 20, window: 20, past: 'empty', ignoresSort: true, quarantined, listed });
    const read = await readAll(client(api.fetch).listDomains());
    expect(read.records).toHaveLength(19);
    expect(read.problems.map((p) => p.reason)).toEqual([expect.stringContaining('differing only in case')]);
    expect(api.calls.at(-1)?.searchParams.get('status')).toBe('quarantine');
  });

  it('counts a quarantined name listed twice with different content once against status=quarantine', async () => {
    // d0005.nl is listed twice on page 1 (changed), in the place of d0006.nl; the window of 20 of 30
    // never lists d0025.nl. status=quarantine counts 2: d0005 and d0025. The read held one of them.
    const quarantined = (n: number) => n === 5 || n === 25;
    const listed = (r: object, n: number) =>
      n === 6 ? { ...r, domain_name: 'd0005.nl', status: ['quarantine'], auto_renew: false } : r;
    const api = windowedApi({ total: 30, window: 20, past: 'empty', ignoresSort: true, quarantined, listed });
    const error = await readAll(client(api.fetch).listDomains()).catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.message).toContain('status=quarantine counts 2 domains where the read held 1');
  });

  it('counts status=quarantine when the other end is refused (400), and fails a capped window that way', async () => {
    const quarantined = (n: number) => n % 10 === 5;
    const refused = () => json(400, { error: 'sort field not allowed' });
    const capped = windowedApi({ total: 30, window: 20, past: 'empty', quarantined, otherEnd: refused });
    const error = await readAll(client(capped.fetch).listDomains()).catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.message).toMatch(
      /^domain list sorted the other way \(sort=-domain_name\) could not be read \(.*HTTP 400.*\), so its other end cannot be seen, and status=quarantine counts 3 domains where the read held 2: total_results \(20\) undercounts the account, unless a domain was quarantined while the list was read: run again, and if it repeats, a result window caps the listing$/,
    );
    const whole = windowedApi({ total: 20, window: 20, past: 'empty', quarantined, otherEnd: refused });
    expect((await readAll(client(whole.fetch).listDomains())).records).toHaveLength(20);
    expect(whole.asked()).toEqual([
      '1 domain_name',
      '2 domain_name',
      '3 domain_name',
      '1 -domain_name',
      '1 domain_name',
    ]);
  });

  it('reads the listing as its totals promise when the other end answers 500 or 429, asked once', async () => {
    for (const answer of [() => json(500, { error: 'boom' }), () => json(429, {}, { 'retry-after': '30' })]) {
      sleeps.length = 0;
      const api = windowedApi({ total: 30, window: 20, past: 'error', otherEnd: answer });
      const read = await readAll(client(api.fetch).listDomains());
      expect(read.records).toHaveLength(20);
      expect(read.problems).toEqual([]);
      expect(api.calls).toHaveLength(4);
      expect(sleeps).toEqual([]);
    }
  });

  it('reads the listing as its totals promise when the status=quarantine count answers 503 or 429, asked once', async () => {
    for (const answer of [() => json(503, { error: 'busy' }), () => json(429, {}, { 'retry-after': '30' })]) {
      sleeps.length = 0;
      const api = windowedApi({ total: 20, window: 20, past: 'empty', ignoresSort: true, count: answer });
      const read = await readAll(client(api.fetch).listDomains());
      expect(read.records).toHaveLength(20);
      // The count is one request, as the other end is: no retry, no Retry-After wait out of the scan's time.
      expect(api.calls.filter((u) => u.searchParams.get('status') === 'quarantine')).toHaveLength(1);
      expect(sleeps).toEqual([]);
    }
  });

  it('fails with AuthenticationError when the other end refuses the key', async () => {
    const api = windowedApi({
      total: 20,
      window: 20,
      past: 'error',
      otherEnd: () => json(401, { error: 'unauthorized' }),
    });
    await expect(readAll(client(api.fetch).listDomains())).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('reads a healthy account whole when its other end, or the page past its end, answers 403', async () => {
    // The key just read this very listing: a gateway forbidding a descending sort or a page past
    // the end is no key lacking access, and must not fail every run.
    const forbidden = () => json(403, { error: 'forbidden' });
    const api = windowedApi({ total: 20, window: 20, past: 'empty', otherEnd: forbidden });
    const read = await readAll(client(api.fetch).listDomains());
    expect(read.records).toHaveLength(20);
    expect(read.pages.some((p) => p.incomplete)).toBe(false);
    // and status=quarantine counted in its stead (this server answers the listing's totals: no proof)
    expect(api.calls).toHaveLength(5);
    const pastForbidden = (async (input: string | URL | Request, init?: RequestInit) =>
      new URL(String(input)).searchParams.get('page') === '3'
        ? forbidden()
        : api.fetch(input, init)) as typeof globalThis.fetch;
    const capped = windowedApi({ total: 30, window: 20, past: 'error' });
    const cappedForbidden = (async (input: string | URL | Request, init?: RequestInit) =>
      new URL(String(input)).searchParams.get('page') === '3'
        ? forbidden()
        : capped.fetch(input, init)) as typeof globalThis.fetch;
    expect((await readAll(client(pastForbidden).listDomains())).records).toHaveLength(20);
    const error = await readAll(client(cappedForbidden).listDomains()).catch((e) => e);
    expect(error.message).toBe(UNDERCOUNT);
  });

  it('holds an unreadable record of the other end against the keys of the problems read', async () => {
    // d0019.nl cannot be read (no expiry): a problem on page 2, and on the other end's page 1 it is
    // no name the read did not hold; d0029.nl, unreadable too, is one.
    const broken = (n: number) => ({ domain_name: `d00${n}.nl`, auto_renew: true });
    const healthy = windowedApi({
      total: 20,
      window: 20,
      past: 'empty',
      otherEnd: () =>
        json(200, {
          data: [broken(19), record(18)],
          pagination: { current_page: 1, per_page: 10, total_pages: 2, total_results: 20 },
        }),
    });
    const page2Broken = async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input));
      const answer = await healthy.fetch(input, init);
      if (url.searchParams.get('page') !== '2' || url.searchParams.get('sort') !== 'domain_name')
        return answer;
      const body = await answer.json();
      body.data[9] = broken(19);
      return json(200, body);
    };
    const read = await readAll(client(page2Broken as typeof globalThis.fetch).listDomains());
    expect(read.records).toHaveLength(19);
    expect(read.problems.map((p) => p.key)).toEqual(['d0019.nl']);
    const capped = windowedApi({
      total: 20,
      window: 20,
      past: 'empty',
      otherEnd: () =>
        json(200, {
          data: [broken(29)],
          pagination: { current_page: 1, per_page: 10, total_pages: 2, total_results: 20 },
        }),
    });
    const error = await readAll(client(capped.fetch).listDomains()).catch((e) => e);
    expect(error.message).toContain('(sort=-domain_name) holds d0029.nl, which the 2 pages');
  });

  it('asks the other end after a short last page under round totals too, and after no single page', async () => {
    // 1 000 of 1 010 listed, 30 a page: the 34th page holds 10, and the totals add up.
    const capped = windowedApi({ total: 1010, window: 1000, perPage: 30, past: 'error' });
    const error = await readAll(client(capped.fetch).listDomains()).catch((e) => e);
    expect(error.message).toContain(
      '(sort=-domain_name) holds d1009.nl and 9 more records, which the 34 pages page 1 promised did not: total_results (1000) undercounts the account',
    );
    expect(capped.calls).toHaveLength(35);
    const healthy = windowedApi({ total: 1000, window: 1000, perPage: 30, past: 'error' });
    expect((await readAll(client(healthy.fetch).listDomains())).records).toHaveLength(1000);
    expect(healthy.calls).toHaveLength(35);
    const other = windowedApi({ total: 25, window: 25, past: 'error' });
    expect((await readAll(client(other.fetch).listDomains())).records).toHaveLength(25);
    expect(other.asked()).toEqual(['1 domain_name', '2 domain_name', '3 domain_name', '1 -domain_name']);
    const single = windowedApi({ total: 5, window: 5, past: 'error' });
    expect((await readAll(client(single.fetch).listDomains())).records).toHaveLength(5);
    expect(single.asked()).toEqual(['1 domain_name']);
  });

  it('asks the other end after a short last page under totals that are not round, and fails a window capping them', async () => {
    // 1 010 of 1 100 listed, 30 a page: the 34th page holds 20, and the totals add up.
    const capped = windowedApi({ total: 1100, window: 1010, perPage: 30, past: 'empty' });
    const error = await readAll(client(capped.fetch).listDomains()).catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.message).toContain(
      '(sort=-domain_name) holds d1099.nl and 29 more records, which the 34 pages page 1 promised did not: total_results (1010) undercounts the account',
    );
    const healthy = windowedApi({ total: 1010, window: 1010, perPage: 30, past: 'empty' });
    expect((await readAll(client(healthy.fetch).listDomains())).records).toHaveLength(1010);
    expect(healthy.calls).toHaveLength(35);
  });

  it('asks the contact list sorted by handle the other way', async () => {
    const contact = (n: number) => ({ handle: `C${String(n).padStart(4, '0')}`, name: 'x', email: 'x@y.nl' });
    const calls: URL[] = [];
    const fetch = (async (input: string | URL | Request) => {
      const url = new URL(String(input));
      calls.push(url);
      const page = Number(url.searchParams.get('page'));
      const descending = url.searchParams.get('sort') === '-handle';
      const all = Array.from({ length: 30 }, (_, i) => contact(descending ? 29 - i : i));
      const data = page > 2 ? [] : all.slice((page - 1) * 10, page * 10);
      return json(200, { data, pagination: { page, per_page: 10, total_pages: 2, total_results: 20 } });
    }) as typeof globalThis.fetch;
    const error = await readAll(client(fetch).listContacts()).catch((e) => e);
    expect(error.message).toContain('contact list sorted the other way (sort=-handle) holds C0029');
  });
});

describe('the other end of a healthy account that spells names its own way', () => {
  /** A healthy account of 20 names, whose answers sorted descending spell each name with `spell`. */
  function spelledApi(
    names: readonly string[],
    spell: (name: string) => string,
    make: (name: string) => object,
  ) {
    const calls: string[] = [];
    const fetch = (async (input: string | URL | Request) => {
      const url = new URL(String(input));
      calls.push(`${url.searchParams.get('page')} ${url.searchParams.get('sort')}`);
      const page = Number(url.searchParams.get('page'));
      const descending = url.searchParams.get('sort')?.startsWith('-') ?? false;
      const sorted = descending ? [...names].reverse().map(spell) : names;
      const pagination = { current_page: page, per_page: 10, total_pages: 2, total_results: 20 };
      return json(200, { data: sorted.slice((page - 1) * 10, page * 10).map(make), pagination });
    }) as typeof globalThis.fetch;
    return { fetch, calls };
  }
  const domain = (name: string) => ({ ...record(0), domain_name: name });
  const names = [
    ...Array.from({ length: 18 }, (_, i) => `d${String(i).padStart(4, '0')}.nl`),
    'zürich.nl',
    'zz.nl',
  ];

  for (const [form, spell] of [
    ['with a trailing dot', (name: string) => `${name}.`],
    ['in punycode', (name: string) => (name === 'zürich.nl' ? 'xn--zrich-kva.nl' : name)],
    ['in capitals and punycode', (name: string) => (name === 'zürich.nl' ? 'XN--ZRICH-KVA.NL' : name)],
  ] as const) {
    it(`reads it whole when the other end holds the names ${form}`, async () => {
      const api = spelledApi(names, spell, domain);
      const read = await readAll(client(api.fetch).listDomains());
      expect(read.records).toHaveLength(20);
      expect(read.pages.some((p) => p.incomplete)).toBe(false);
      expect(api.calls).toEqual(['1 domain_name', '2 domain_name', '3 domain_name', '1 -domain_name']);
    });
  }

  it('reads a contact list whole when its other end holds the handles in lower case', async () => {
    const handles = Array.from({ length: 20 }, (_, i) => `C${String(i).padStart(4, '0')}`);
    const contact = (handle: string) => ({ handle, name: 'x', email: 'x@y.nl' });
    const api = spelledApi(handles, (h) => h.toLowerCase(), contact);
    const read = await readAll(client(api.fetch).listContacts());
    expect(read.records).toHaveLength(20);
    expect(read.pages.some((p) => p.incomplete)).toBe(false);
  });

  it('still fails when one name of the other end is no spelling of a name read', async () => {
    const api = spelledApi(names, (name) => (name === 'zz.nl' ? 'zzz.nl.' : `${name}.`), domain);
    const error = await readAll(client(api.fetch).listDomains()).catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.message).toContain('(sort=-domain_name) holds zzz.nl., which the 2 pages');
  });
});

describe('the name the other end is reported by', () => {
  it('never holds the API key, as a server echoing it there sends it', async () => {
    const api = windowedApi({
      total: 20,
      window: 20,
      past: 'empty',
      otherEnd: () =>
        json(200, {
          data: [{ ...record(0), domain_name: 'key-0123456789abcdef-SECRET.nl' }],
          pagination: { current_page: 1, per_page: 10, total_pages: 2, total_results: 20 },
        }),
    });
    const error = await readAll(client(api.fetch).listDomains()).catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.message).toContain('(sort=-domain_name) holds ');
    expect(error.message).not.toContain('SECRET');
    const read = await readAll(client(api.fetch).listDomains({}, undefined, { onMove: 'report' }));
    expect(read.pages.at(-1)?.incomplete).toContain('(sort=-domain_name) holds ');
    expect(JSON.stringify(read.problems)).not.toContain('SECRET');
  });
});
