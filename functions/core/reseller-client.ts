import type { z } from 'zod';
import {
  ConnectionError,
  DeadlineError,
  IncompleteListingError,
  ResellerApiError,
  type ResponseFacts,
  SchemaValidationError,
  TimeoutError,
} from './errors';
import {
  type Contact,
  ContactSchema,
  type Domain,
  DomainSchema,
  describeIssues,
  ListEnvelopeSchema,
} from './schemas';

/** A search filter: values are sent as the documented search syntax (`<`, `>`, `%`, arrays as repeated keys). */
export type ListFilter = Readonly<Record<string, string | number | boolean | readonly string[] | undefined>>;

/** A record the scan could not use, with the reason. Never dropped silently. */
export interface Problem {
  readonly resource: 'domain' | 'contact';
  /** The domain name or handle, when the record had a readable one. */
  readonly key: string | null;
  readonly page: number;
  readonly reason: string;
}

/** One page of a listing: the records that parsed and the ones that did not. */
export interface ListPage<T> {
  readonly page: number;
  readonly records: readonly T[];
  readonly problems: readonly Problem[];
  readonly totalResults: number;
  readonly totalPages: number;
}

/** Options of {@link ResellerClient}. */
export interface ResellerClientOptions {
  /** Base URL of the live or the test environment, without `/v2`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer …`; never logged or put in an error. */
  readonly apiKey: string;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Per-request timeout. @default 10 000 ms */
  readonly timeoutMs?: number;
  /** Attempts for a list request (429, 5xx, timeouts, resets are retried). @default 5 */
  readonly maxAttempts?: number;
  /** Backoff base and cap (full jitter). @default 250 ms, 8 000 ms */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  /** Longest `Retry-After` honoured; longer ones are cut to this. @default 60 000 ms */
  readonly maxRetryAfterMs?: number;
  /** Requests in flight at once, across every listing of this client. @default 4 */
  readonly concurrency?: number;
  /** `per_page` asked for; the server's answer is what counts. @default 100 */
  readonly perPage?: number;
  /** A listing reporting more pages than this fails instead of running away. @default 20 000 */
  readonly maxPages?: number;
  /** Epoch ms after which no request starts and no retry waits. */
  readonly deadline?: number;
  /** @default setTimeout-based sleep */
  readonly sleep?: (ms: number) => Promise<void>;
  /** @default Math.random */
  readonly random?: () => number;
}

const RETRYABLE_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNABORTED',
]);

interface RawResponse {
  readonly status: number;
  readonly text: string;
  readonly url: string;
  readonly requestId: string | undefined;
  readonly retryAfter: string | null;
}

/** A counting semaphore: requests of every listing share one bound. */
class Semaphore {
  private available: number;
  private readonly waiting: Array<() => void> = [];
  constructor(size: number) {
    this.available = size;
  }
  async acquire(): Promise<void> {
    if (this.available > 0) {
      this.available--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.available++;
  }
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Client of the reseller API: domain list, contact list, restore. Lists are async iterables of
 * pages, read concurrently after page 1 has told how many there are.
 */
export class ResellerClient {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly perPage: number;
  private readonly maxPages: number;
  private readonly concurrency: number;
  private readonly deadline: number | undefined;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly semaphore: Semaphore;
  /** Requests sent, retries included. */
  requests = 0;

  constructor(options: ResellerClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.retryBaseMs = options.retryBaseMs ?? 250;
    this.retryMaxMs = options.retryMaxMs ?? 8_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.perPage = options.perPage ?? 100;
    this.maxPages = options.maxPages ?? 20_000;
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.deadline = options.deadline;
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.semaphore = new Semaphore(this.concurrency);
  }

  /** Every domain matching `filter`, page by page, sorted by name so pages do not shift. */
  listDomains(filter: ListFilter = {}): AsyncIterable<ListPage<Domain>> {
    return this.listPages('/v2/domains', 'domain', filter, 'domain_name', DomainSchema, (d) => d.domain_name);
  }

  /** Every contact matching `filter`, page by page, sorted by handle. */
  listContacts(filter: ListFilter = {}): AsyncIterable<ListPage<Contact>> {
    return this.listPages('/v2/contacts', 'contact', filter, 'handle', ContactSchema, (c) => c.handle);
  }

  /** One domain by exact name, or null when the account does not hold it. */
  async findDomain(name: string): Promise<Domain | null> {
    for await (const page of this.listDomains({ domain_name: name })) {
      const match = page.records.find((d) => d.domain_name === name);
      if (match) return match;
    }
    return null;
  }

  /**
   * Restores a domain from quarantine. 204 is success. Never retried: a restore is not something
   * to repeat behind a person's back; the caller decides.
   */
  async restoreDomain(name: string): Promise<void> {
    const path = `/v2/domains/${encodeURIComponent(name)}/restore`;
    const res = await this.send('POST', path, undefined, `restore of ${name}`, 1);
    if (res.status !== 204 && res.status !== 200) {
      throw ResellerApiError.fromResponse(this.facts(res), `restore of ${name}`);
    }
  }

  private async *listPages<T>(
    path: string,
    resource: Problem['resource'],
    filter: ListFilter,
    sortField: string,
    schema: z.ZodType<T>,
    keyOf: (record: T) => string,
  ): AsyncGenerator<ListPage<T>> {
    const seen = new Set<string>();
    let received = 0;
    let minTotal = Number.POSITIVE_INFINITY;
    const fetchPage = (page: number) => this.fetchPage(path, resource, filter, sortField, page, schema);

    const first = await fetchPage(1);
    let knownPages = first.totalPages;
    const checkPages = (pages: number, total: number) => {
      if (pages > this.maxPages) {
        throw new IncompleteListingError(
          `the reseller reports ${pages} pages (${total} ${resource}s) for ${path}, more than the limit of ${this.maxPages}; raise the page limit or per_page`,
          { retryable: false },
        );
      }
    };
    checkPages(knownPages, first.totalResults);

    const take = (p: ListPage<T>): ListPage<T> => {
      minTotal = Math.min(minTotal, p.totalResults);
      if (p.totalPages > knownPages) {
        checkPages(p.totalPages, p.totalResults);
        knownPages = p.totalPages; // the account grew during the scan: read the new pages too
      }
      const records: T[] = [];
      for (const record of p.records) {
        const key = keyOf(record);
        if (seen.has(key)) continue; // a record shifted onto the next page while we read
        seen.add(key);
        records.push(record);
      }
      received += records.length + p.problems.length;
      return { ...p, records };
    };

    yield take(first);

    // Pages 2…N concurrently, a bounded window at a time, yielded as they arrive.
    let next = 2;
    const inflight = new Map<number, Promise<{ page: number; result: ListPage<T> }>>();
    const launch = () => {
      while (inflight.size < this.concurrency && next <= knownPages) {
        const page = next++;
        inflight.set(
          page,
          fetchPage(page).then((result) => ({ page, result })),
        );
      }
    };
    launch();
    try {
      while (inflight.size > 0) {
        const { page, result } = await Promise.race(inflight.values());
        inflight.delete(page);
        const taken = take(result);
        launch();
        yield taken;
      }
    } finally {
      // A failed page ends the listing; do not leave the others' rejections unhandled.
      for (const pending of inflight.values()) pending.catch(() => undefined);
    }

    if (received < minTotal) {
      throw new IncompleteListingError(
        `read ${received} of ${minTotal} ${resource}s from ${path}: the account changed while it was read, or the server's paging is inconsistent; run the scan again`,
        { retryable: true },
      );
    }
  }

  private async fetchPage<T>(
    path: string,
    resource: Problem['resource'],
    filter: ListFilter,
    sortField: string,
    page: number,
    schema: z.ZodType<T>,
  ): Promise<ListPage<T>> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(filter)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) query.append(key, v);
      else query.append(key, String(value));
    }
    query.set('sort', sortField);
    query.set('page', String(page));
    query.set('per_page', String(this.perPage));
    const what = `${resource} list page ${page}`;
    const res = await this.send('GET', path, query, what, this.maxAttempts);
    if (res.status !== 200) throw ResellerApiError.fromResponse(this.facts(res), what);

    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      throw new SchemaValidationError(
        `the reseller API answered ${what} with something that is not JSON`,
        this.facts(res),
      );
    }
    const envelope = ListEnvelopeSchema.safeParse(body);
    if (!envelope.success) {
      throw new SchemaValidationError(
        `the reseller API answered ${what} without the documented list shape (${describeIssues(envelope.error)})`,
        this.facts(res),
      );
    }
    const records: T[] = [];
    const problems: Problem[] = [];
    for (const item of envelope.data.data) {
      const parsed = schema.safeParse(item);
      if (parsed.success) records.push(parsed.data);
      else problems.push({ resource, key: readableKey(item), page, reason: describeIssues(parsed.error) });
    }
    const p = envelope.data.pagination;
    return { page, records, problems, totalResults: p.total_results, totalPages: p.total_pages };
  }

  /** One request with retries for list calls; the semaphore is held only while a request is in flight. */
  private async send(
    method: 'GET' | 'POST',
    path: string,
    query: URLSearchParams | undefined,
    what: string,
    maxAttempts: number,
  ): Promise<RawResponse> {
    const url = `${this.baseUrl}${path}${query ? `?${query}` : ''}`;
    for (let attempt = 1; ; attempt++) {
      const budget = this.remainingBudget(what);
      let res: RawResponse | undefined;
      let failure: ResellerApiError | undefined;
      await this.semaphore.acquire();
      try {
        this.requests++;
        res = await this.fetchOnce(method, url, Math.min(this.timeoutMs, budget));
      } catch (error) {
        failure = this.describeFailure(error, url, what, budget < this.timeoutMs);
      } finally {
        this.semaphore.release();
      }

      const retryable = res ? res.status === 429 || res.status >= 500 : isRetryableFailure(failure);
      if (!retryable || attempt >= maxAttempts) {
        if (failure) throw failure;
        return res as RawResponse;
      }
      const delay = this.retryDelay(attempt, res);
      if (this.deadline !== undefined && Date.now() + delay >= this.deadline) {
        throw new DeadlineError(`the time budget ran out while retrying ${what}`);
      }
      await this.sleep(delay);
    }
  }

  private async fetchOnce(method: string, url: string, timeoutMs: number): Promise<RawResponse> {
    const res = await this.fetchImpl(url, {
      method,
      headers: {
        Authorization: `Bearer ${this.apiKey}`,
        Accept: 'application/json',
        ...(method === 'POST' ? { 'Content-Type': 'application/json' } : {}),
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    return {
      status: res.status,
      text,
      url,
      requestId: res.headers.get('x-request-id') ?? undefined,
      retryAfter: res.headers.get('retry-after'),
    };
  }

  private remainingBudget(what: string): number {
    if (this.deadline === undefined) return Number.POSITIVE_INFINITY;
    const left = this.deadline - Date.now();
    if (left <= 0) throw new DeadlineError(`the time budget ran out before ${what}`);
    return left;
  }

  /** Full-jitter exponential backoff, or the server's Retry-After (capped) when it sent one. */
  private retryDelay(attempt: number, res: RawResponse | undefined): number {
    const retryAfter = parseRetryAfter(res?.retryAfter ?? null);
    if (retryAfter !== undefined) return Math.min(retryAfter, this.maxRetryAfterMs);
    const ceiling = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (attempt - 1));
    return Math.floor(this.random() * ceiling);
  }

  private describeFailure(
    error: unknown,
    url: string,
    what: string,
    deadlineBound: boolean,
  ): ResellerApiError {
    const facts = { status: 0, url };
    const name = (error as { name?: string }).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      if (deadlineBound) throw new DeadlineError(`the time budget ran out while waiting for ${what}`);
      return new TimeoutError(`no answer within ${this.timeoutMs} ms for ${what} (${url})`, facts, {
        cause: error,
      });
    }
    const code = errorCode(error);
    return new ConnectionError(
      `could not reach the reseller API at ${this.baseUrl} (${code ?? (error as Error).message}) for ${what}`,
      { ...facts, code },
      { cause: error },
    );
  }

  private facts(res: RawResponse): ResponseFacts {
    return {
      status: res.status,
      url: res.url,
      requestId: res.requestId,
      bodyExcerpt: this.excerpt(res.text),
    };
  }

  /** A short, single-line excerpt of a body, with the key redacted in case a server echoes it. */
  private excerpt(text: string): string | undefined {
    const flat = text.replace(/\s+/g, ' ').trim();
    if (!flat) return undefined;
    const redacted = this.apiKey ? flat.split(this.apiKey).join('[redacted]') : flat;
    return redacted.length > 200 ? `${redacted.slice(0, 200)}…` : redacted;
  }

  /**
   * How many domains match `filter`, from the pagination total of one `per_page=1` request: what
   * the filtered read's proof is built on. Arrays are sent as repeated keys, as in listings.
   */
  async countDomains(filter: ListFilter = {}): Promise<number> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(filter)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) query.append(key, v);
      else query.append(key, String(value));
    }
    query.set('page', '1');
    query.set('per_page', '1');
    const what = 'domain count';
    const res = await this.send('GET', '/v2/domains', query, what, this.maxAttempts);
    if (res.status !== 200) throw ResellerApiError.fromResponse(this.facts(res), what);
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      throw new SchemaValidationError(
        `the reseller API answered ${what} with something that is not JSON`,
        this.facts(res),
      );
    }
    const envelope = ListEnvelopeSchema.safeParse(body);
    if (!envelope.success) {
      throw new SchemaValidationError(
        `the reseller API answered ${what} without the documented list shape (${describeIssues(envelope.error)})`,
        this.facts(res),
      );
    }
    return envelope.data.pagination.total_results;
  }
}

function isRetryableFailure(failure: ResellerApiError | undefined): boolean {
  if (failure instanceof TimeoutError) return true;
  return failure instanceof ConnectionError && RETRYABLE_CODES.has(failure.code ?? '');
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** `Retry-After` as delay-seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

function readableKey(item: unknown): string | null {
  if (item && typeof item === 'object') {
    const record = item as Record<string, unknown>;
    for (const field of ['domain_name', 'handle']) {
      if (typeof record[field] === 'string') return record[field] as string;
    }
  }
  return null;
}
