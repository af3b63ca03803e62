import { beforeEach, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ConnectionError,
  IncompleteListingError,
  SchemaValidationError,
  ServerError,
  TimeoutError,
} from '../../functions/core/errors';
import {
  type ListPage,
  parseRetryAfter,
  ResellerClient,
  type ResellerClientOptions,
} from '../../functions/core/reseller-client';
import type { Domain } from '../../functions/core/schemas';

const KEY = 'key-0123456789abcdef-SECRET';
const BASE = 'https://api.test.example';

const record = (n: number) => ({
  domain_name: `d${String(n).padStart(4, '0')}.nl`,
  date_expiry: '2027-01-01T00:00:00Z',
  auto_renew: true,
});
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });

/** A fake domain list of `total` records that caps per_page at `cap`, with a hook to answer differently. */
function fakeApi(
  total: number,
  cap = 10,
  override?: (url: URL, call: number) => Response | Promise<Response> | undefined,
) {
  const calls: Array<{ url: URL; init: RequestInit | undefined }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const fakeFetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    calls.push({ url, init });
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      const special = await override?.(url, calls.length);
      if (special) return special;
      const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 50), cap);
      const page = Number(url.searchParams.get('page') ?? 1);
      const data = Array.from({ length: total }, (_, i) => record(i)).slice(
        (page - 1) * perPage,
        page * perPage,
      );
      return json(200, {
        data,
        pagination: {
          current_page: page,
          per_page: perPage,
          total_pages: Math.ceil(total / perPage),
          total_results: total,
        },
      });
    } finally {
      inFlight--;
    }
  }) as typeof globalThis.fetch;
  return { fetch: fakeFetch, calls, maxInFlight: () => maxInFlight };
}

const sleeps: number[] = [];
const client = (fetch: typeof globalThis.fetch, options: Partial<ResellerClientOptions> = {}) =>
  new ResellerClient({
    baseUrl: BASE,
    apiKey: KEY,
    fetch,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...options,
  });

async function readAll(pages: AsyncIterable<ListPage<Domain>>) {
  const records: Domain[] = [];
  const problems = [];
  for await (const page of pages) {
    records.push(...page.records);
    problems.push(...page.problems);
  }
  return { records, problems };
}

describe('ResellerClient.listDomains', () => {
  beforeEach(() => {
    sleeps.length = 0;
  });

  it('reads every page, trusting the per_page the server answers with, at most `concurrency` at once', async () => {
    const api = fakeApi(95, 10);
    const c = client(api.fetch, { perPage: 100, concurrency: 3 });
    const { records } = await readAll(c.listDomains());
    expect(records.map((d) => d.domain_name)).toHaveLength(95);
    expect(new Set(records.map((d) => d.domain_name)).size).toBe(95);
    expect(api.calls).toHaveLength(10);
    expect(api.maxInFlight()).toBeLessThanOrEqual(3);
    expect(api.maxInFlight()).toBeGreaterThan(1);
    expect(c.requests).toBe(10);
  });

  it('authenticates with a Bearer header and asks for a stable sort', async () => {
    const api = fakeApi(5);
    await readAll(client(api.fetch).listDomains({ status: ['quarantine'], auto_renewal: false }));
    const first = api.calls[0];
    if (!first) throw new Error('no request was made');
    const { url, init } = first;
    const headers = (init?.headers ?? {}) as Record<string, string>;
    expect(headers.Authorization).toBe(`Bearer ${KEY}`);
    expect(url.searchParams.get('sort')).toBe('domain_name');
    expect(url.searchParams.getAll('status')).toEqual(['quarantine']);
    expect(url.searchParams.get('auto_renewal')).toBe('false');
    expect(url.href).not.toContain(KEY);
  });

  it('drops a record that shifted onto the next page while it was read', async () => {
    const api = fakeApi(20, 10, (url) => {
      if (url.searchParams.get('page') !== '2') return undefined;
      const data = [record(9), ...Array.from({ length: 10 }, (_, i) => record(10 + i))];
      return json(200, {
        data,
        pagination: { current_page: 2, per_page: 10, total_pages: 2, total_results: 20 },
      });
    });
    const { records } = await readAll(client(api.fetch).listDomains());
    expect(records).toHaveLength(20);
  });

  it('puts a record that does not parse under problems and keeps the rest', async () => {
    const api = fakeApi(3, 10, () =>
      json(200, {
        data: [record(1), { domain_name: 'broken.nl', date_expiry: 'tomorrow' }, { nothing: true }],
        pagination: { page: 1, per_page: 10, total_pages: 1, total_results: 3 },
      }),
    );
    const { records, problems } = await readAll(client(api.fetch).listDomains());
    expect(records.map((d) => d.domain_name)).toEqual(['d0001.nl']);
    expect(problems).toEqual([
      {
        resource: 'domain',
        key: 'broken.nl',
        page: 1,
        reason: expect.stringContaining('date_expiry: not an RFC 3339'),
      },
      { resource: 'domain', key: null, page: 1, reason: expect.stringContaining('domain_name') },
    ]);
  });

  it('retries a 429 after the Retry-After it was given', async () => {
    let limited = false;
    const api = fakeApi(30, 10, (url) => {
      if (limited || url.searchParams.get('page') !== '2') return undefined;
      limited = true;
      return json(429, { error: 'slow down' }, { 'retry-after': '2' });
    });
    const { records } = await readAll(client(api.fetch).listDomains());
    expect(records).toHaveLength(30);
    expect(sleeps).toEqual([2000]);
    expect(api.calls.filter((c) => c.url.searchParams.get('page') === '2')).toHaveLength(2);
  });

  it('caps a Retry-After that asks for too long', async () => {
    const api = fakeApi(10, 10, (_url, call) =>
      call === 1 ? json(429, {}, { 'retry-after': '3600' }) : undefined,
    );
    await readAll(client(api.fetch, { maxRetryAfterMs: 5_000 }).listDomains());
    expect(sleeps).toEqual([5_000]);
  });

  it('retries 5xx with exponential backoff and full jitter, then fails with ServerError', async () => {
    const api = fakeApi(10, 10, () => json(503, { error: 'down' }));
    const error = await readAll(client(api.fetch, { maxAttempts: 4, retryBaseMs: 100 }).listDomains()).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(ServerError);
    expect(error.status).toBe(503);
    expect(api.calls).toHaveLength(4);
    // random() = 0.5 of a ceiling doubling from 100 ms
    expect(sleeps).toEqual([50, 100, 200]);
  });

  it('gives up on a request that never answers after the per-request timeout, and retries it', async () => {
    let calls = 0;
    const hanging = ((_url: string, init?: RequestInit) => {
      calls++;
      return new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
    }) as typeof fetch;
    const error = await readAll(client(hanging, { timeoutMs: 20, maxAttempts: 2 }).listDomains()).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toContain('no answer within 20 ms');
    expect(calls).toBe(2);
  });

  it('retries a connection reset', async () => {
    const api = fakeApi(10, 10, (_url, call) => {
      if (call === 1) throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
      return undefined;
    });
    const { records } = await readAll(client(api.fetch).listDomains());
    expect(records).toHaveLength(10);
    expect(api.calls).toHaveLength(2);
  });

  it('fails at once, naming the base URL, when the API cannot be reached', async () => {
    const refused = (async () => {
      throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    }) as typeof fetch;
    const error = await readAll(client(refused).listDomains()).catch((e) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toContain(BASE);
    expect(error.message).toContain('ECONNREFUSED');
    expect(sleeps).toEqual([]);
  });

  it('turns 401 into AuthenticationError without retrying, and never repeats the key', async () => {
    const api = fakeApi(10, 10, () => json(401, { error: `invalid key ${KEY}` }));
    const error = await readAll(client(api.fetch).listDomains()).catch((e) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.message).toMatch(/refused the API key \(HTTP 401\)/);
    expect(api.calls).toHaveLength(1);
    expect(error.bodyExcerpt).toContain('[redacted]');
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(KEY);
  });

  it('rejects an answer that is not JSON or lacks pagination as a schema error', async () => {
    const notJson = fakeApi(1, 10, () => new Response('<html>maintenance</html>', { status: 200 }));
    await expect(readAll(client(notJson.fetch).listDomains())).rejects.toBeInstanceOf(SchemaValidationError);
    const noPaging = fakeApi(1, 10, () => json(200, { data: [record(1)] }));
    await expect(readAll(client(noPaging.fetch).listDomains())).rejects.toThrow(
      /without the documented list shape \(pagination/,
    );
  });

  it('refuses a runaway page count', async () => {
    const api = fakeApi(1, 10, () =>
      json(200, {
        data: [],
        pagination: { current_page: 1, per_page: 1, total_pages: 1e9, total_results: 1e9 },
      }),
    );
    await expect(readAll(client(api.fetch, { maxPages: 1000 }).listDomains())).rejects.toThrow(
      IncompleteListingError,
    );
  });

  it('fails loudly when fewer records arrive than the server said it has', async () => {
    const api = fakeApi(30, 10, (url) =>
      url.searchParams.get('page') === '3'
        ? json(200, {
            data: [],
            pagination: { current_page: 3, per_page: 10, total_pages: 3, total_results: 30 },
          })
        : undefined,
    );
    await expect(readAll(client(api.fetch).listDomains())).rejects.toThrow(/read 20 of 30 domains/);
  });

  it('reads pages that appear while the listing runs', async () => {
    let total = 20;
    const api = fakeApi(0, 10, (url) => {
      const page = Number(url.searchParams.get('page'));
      if (page === 2) total = 25; // a domain batch was registered mid-scan
      const data = Array.from({ length: total }, (_, i) => record(i)).slice((page - 1) * 10, page * 10);
      return json(200, {
        data,
        pagination: {
          current_page: page,
          per_page: 10,
          total_pages: Math.ceil(total / 10),
          total_results: total,
        },
      });
    });
    const { records } = await readAll(client(api.fetch, { concurrency: 1 }).listDomains());
    expect(records).toHaveLength(25);
  });
});

describe('ResellerClient.restoreDomain', () => {
  it('POSTs once and accepts 204', async () => {
    const api = fakeApi(0, 10, () => new Response(null, { status: 204 }));
    await client(api.fetch).restoreDomain('example.nl');
    expect(api.calls).toHaveLength(1);
    expect(api.calls[0]?.init?.method).toBe('POST');
    expect(api.calls[0]?.url.pathname).toBe('/v2/domains/example.nl/restore');
  });

  it('never retries a restore, even on a 503', async () => {
    const api = fakeApi(0, 10, () => json(503, {}));
    await expect(client(api.fetch).restoreDomain('example.nl')).rejects.toBeInstanceOf(ServerError);
    expect(api.calls).toHaveLength(1);
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-22T06:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 06:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 05:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
