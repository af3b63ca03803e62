import { domainToUnicode } from 'node:url';
import type * as z from 'zod';
import {
  ConnectionError,
  DeadlineError,
  IncompleteListingError,
  NotFoundError,
  RateLimitError,
  ResellerApiError,
  SchemaValidationError,
  ServerError,
  StoppedError,
  TimeoutError,
  UnexpectedResponseError,
} from '../base/errors';
import { normalizeDomainName } from '../base/text';
import type { Narrower } from './other-end';
import { type ListPage, type PaginateOptions, type Problem, paginate } from './paging';
import {
  blankDomainName,
  type Contact,
  ContactSchema,
  type Domain,
  DomainSchema,
  describeIssues,
  ListEnvelopeSchema,
  statusValues,
} from './schemas';
import { type RawResponse, Transport, type TransportOptions } from './transport';

export type { ListPage, Problem } from './paging';

/**
 * How a listing that moves, or that the time budget runs out in, ends, and whether a read the budget
 * will cut spreads its cut over runs (paginate's options).
 */
export type ListingRules = Pick<
  PaginateOptions<unknown>,
  'onMove' | 'onDeadline' | 'rotation' | 'widerTotal'
>;

/** A search filter: values are sent as the documented search syntax (`<`, `>`, `%`, arrays as repeated keys). */
export type ListFilter = Readonly<Record<string, string | number | boolean | readonly string[] | undefined>>;

/**
 * The spellings to search the account for `name` by, in order, without repeats: the name as given,
 * its normalised form (punycode, no trailing dot, what links carry), the Unicode form of that, and
 * the normalised form with a trailing dot. The documentation does not say how `domain_name` is
 * matched, so each form an account may hold the name in gets its own search.
 */
function searchSpellings(name: string): string[] {
  const normal = normalizeDomainName(name);
  const unicode = normal.includes('xn--') ? domainToUnicode(normal) : '';
  return [...new Set([name, normal, unicode, `${normal}.`])].filter((s) => s !== '' && s !== '.');
}

/** A 2xx answer to a restore: only 204 with an empty body is the documented success. */
export interface RestoreAnswer {
  readonly status: number;
  readonly bodyEmpty: boolean;
}

/** Options of {@link ResellerClient}. */
export interface ResellerClientOptions extends TransportOptions {
  /** `per_page` asked for; the server's answer is what counts. @default 100 */
  readonly perPage?: number;
  /** A listing reporting more pages than this fails instead of running away. @default 20 000 */
  readonly maxPages?: number;
  /**
   * Told the account's size each time page 1 of the whole domain list (no filter) is read: its
   * `total_results`, the same totals a count of `per_page=1` reads (the scheduled scan sizes its
   * report store reserve from them when that count failed).
   */
  readonly onAccountSize?: (domains: number) => void;
}

interface Listing<T> {
  readonly path: string;
  readonly resource: Problem['resource'];
  readonly sortField: string;
  readonly schema: z.ZodType<T>;
  /** A name's one form among its spellings (paginate's foldKey); absent: names are compared as sent. */
  readonly foldKey?: (key: string) => string;
  /** How serious a record is that could not be checked, judged from what can be read of it. */
  readonly problemSeverity: (raw: unknown) => Problem['severity'];
  /** The narrower search asked when the server ignores sort (other-end.ts): none for contacts. */
  readonly narrower?: (client: ResellerClient, filter: ListFilter) => Narrower;
}

/**
 * Client of the reseller API: domain list, contact list, restore. Lists are async iterables of
 * pages (see {@link paginate} for what makes a listing complete); requests go through one
 * {@link Transport}, so every listing of a client shares its concurrency and deadline.
 */
export class ResellerClient {
  readonly baseUrl: string;
  private readonly transport: Transport;
  /** The transport's stop signal: a restore it stops is told apart by whether it went out. */
  private readonly signal: AbortSignal | undefined;
  /** Records asked for per page (the server may send fewer). */
  readonly perPage: number;
  private readonly maxPages: number;
  private readonly onAccountSize: ((domains: number) => void) | undefined;
  /** The name as the server spelled it (schemas lower-case it), to tell a case-only twin from a repeat. */
  private readonly rawKeys = new WeakMap<object, string>();

  /** @throws ConfigError when the API key cannot be sent in a header (the message never holds the key). */
  constructor(options: ResellerClientOptions) {
    this.transport = new Transport(options);
    this.signal = options.signal;
    this.baseUrl = this.transport.baseUrl;
    this.perPage = options.perPage ?? 100;
    this.maxPages = options.maxPages ?? 20_000;
    this.onAccountSize = options.onAccountSize;
  }

  /** Time left before the deadline (the scan's time budget); Infinity without one. */
  get remainingMs(): number {
    return this.transport.remainingMs();
  }

  /** Requests sent, retries included. */
  get requests(): number {
    return this.transport.requests;
  }

  /**
   * Every domain matching `filter`, page by page, sorted by name so pages do not shift. `first` is
   * page 1 of this very listing when {@link measureDomains} read it already. `rules` as paginate
   * takes them: `report` reads a listing that moves to its end, or ends one the time budget runs out
   * in, and says so on its last page.
   */
  listDomains(
    filter: ListFilter = {},
    first?: ListPage<Domain>,
    rules: ListingRules = {},
  ): AsyncIterable<ListPage<Domain>> {
    return this.list(DOMAINS, filter, first, rules);
  }

  /** Every contact matching `filter`, page by page, sorted by handle. */
  listContacts(filter: ListFilter = {}, rules: ListingRules = {}): AsyncIterable<ListPage<Contact>> {
    return this.list(CONTACTS, filter, undefined, rules);
  }

  /** The name a record had as the server sent it (records carry it lower-cased); '' when unknown. */
  rawKeyOf(record: object): string {
    return this.rawKeys.get(record) ?? '';
  }

  /**
   * How many domains match `filter`: one request with `per_page=1`, read from the pagination totals.
   * `once`: sent once, no retry nor Retry-After wait (a check the read can go without).
   */
  async countDomains(filter: ListFilter = {}, how: { readonly once?: boolean } = {}): Promise<number> {
    const page = await this.fetchPage(DOMAINS, filter, 1, 1, how.once);
    return page().totalResults;
  }

  /**
   * Page 1 of the domains matching `filter`, as {@link listDomains} would read it: how many there
   * are, the page size the server really uses for this client's `per_page` (it may cap it lower),
   * and the page itself, for `listDomains(filter, first)` to start from.
   */
  async measureDomains(
    filter: ListFilter = {},
  ): Promise<{ total: number; perPage: number; pages: number; first: ListPage<Domain> }> {
    const first = (await this.fetchPage(DOMAINS, filter, 1, this.perPage))();
    const served = first.perPage ?? first.records.length + first.problems.length;
    return {
      total: first.totalResults,
      perPage: served > 0 ? served : this.perPage,
      pages: first.totalPages,
      first,
    };
  }

  /**
   * One domain by name, or null when the account does not hold it. A record matches only when its
   * name normalises to the same name as `name` (letter case, a trailing dot and Unicode against
   * punycode do not matter; nothing else does), so a near match the search returns is never taken.
   * The reseller's `domain_name` search matches the name as the account holds it, which may be the
   * Unicode form or carry a trailing dot where links and state use the normalised name: when a
   * search finds no match, the next spelling is tried ({@link searchSpellings}: at most three
   * searches for a normalised name, four for one given in another form). A search answered 404 is
   * such a miss too (a reseller may answer no hit so, and the punycode a link carries is then
   * answered 404 for a name held in Unicode); when no spelling finds the name, the first 404 is
   * thrown, as the API leaves unsaid whether it means no hit or a wrong route.
   */
  async findDomain(name: string): Promise<Domain | null> {
    let notFound: NotFoundError | undefined;
    const found = await this.lookUpDomain(name, {
      onNotFound: (error) => {
        notFound ??= error;
      },
    });
    if (found === null && notFound) throw notFound;
    return found as Domain | null;
  }

  /**
   * {@link findDomain} for a caller that checks the server's search at run time. With
   * `stopUnfiltered`, a search whose page 1 lists another name (or a record it cannot read), or more
   * than one page, ends the lookup as `'unfiltered'`: an exact-name search answers only the name, so the server did not
   * search by `domain_name`. With `onNotFound`, a search answered 404 before any page counts as no
   * hit for that spelling and is handed to it, for the caller to check what this server's 404 means
   * before it believes the null.
   */
  async lookUpDomain(
    name: string,
    how: { readonly stopUnfiltered?: boolean; readonly onNotFound?: (error: NotFoundError) => void } = {},
  ): Promise<Domain | null | 'unfiltered'> {
    const wanted = normalizeDomainName(name);
    for (const spelling of searchSpellings(name)) {
      let pages = 0;
      try {
        for await (const page of this.listDomains({ domain_name: spelling })) {
          pages++;
          const match = page.records.find((d) => normalizeDomainName(d.domain_name) === wanted);
          if (match) return match;
          // An unreadable record may be the very name: only a whole read can tell whether it is.
          const other = page.totalPages > 1 || page.records.length > 0 || page.problems.length > 0;
          if (how.stopUnfiltered && page.page === 1 && other) return 'unfiltered';
        }
      } catch (error) {
        if (!(how.onNotFound && pages === 0 && error instanceof NotFoundError)) throw error;
        how.onNotFound(error);
      }
    }
    return null;
  }

  /**
   * Sends the restore of a domain from quarantine, once: a restore is not something to repeat behind
   * a person's back; the caller decides. Resolves with any 2xx answer, for the caller to judge: only
   * 204 with an empty body is the documented success, so anything else (202, a 200 carrying an
   * error) needs a fresh look at the domain before it can be called restored. Throws
   * {@link UnexpectedResponseError} for a redirect (never followed: NOT restored), the
   * {@link ResellerApiError} subclass of a 4xx or 5xx answer, {@link TimeoutError} or
   * {@link ConnectionError} when the request went out and no answer came (outcome unknown),
   * {@link DeadlineError} when the time budget ran out before it went out (not sent), and
   * {@link StoppedError} when the signal stopped it, saying whether it went out.
   */
  async restoreDomain(name: string): Promise<RestoreAnswer> {
    try {
      return await this.restore(name);
    } catch (error) {
      throw this.transport.scrubError(error);
    }
  }

  private async restore(name: string): Promise<RestoreAnswer> {
    const what = `restore of ${name}`;
    let res: RawResponse;
    let sent = false;
    try {
      res = await this.transport.send({
        method: 'POST',
        path: `/v2/domains/${encodeURIComponent(name)}/restore`,
        what,
        maxAttempts: 1,
        onSend: () => {
          sent = true;
        },
      });
    } catch (error) {
      // Stopped (Ctrl-C; the transport throws the signal's reason): whether it went out is what counts.
      if (this.signal?.aborted)
        throw new StoppedError(
          sent ? `${what} was stopped after it was sent` : `${what} was stopped before it was sent`,
          sent,
          { cause: error },
        );
      // Only a request that went out can have restored the domain; one stopped before it did not.
      if (sent && (error instanceof TimeoutError || error instanceof DeadlineError)) {
        throw new TimeoutError(
          `no answer in time for ${what}: the outcome is unknown; check the domain's status in the reseller's control panel before trying again`,
          { status: 0, url: error instanceof TimeoutError ? error.url : this.baseUrl },
          { cause: error },
        );
      }
      // A refused or unresolvable connection never reached the server; anything else may have.
      if (sent && error instanceof ConnectionError && !NEVER_ARRIVED.has(error.code ?? '')) {
        throw new ConnectionError(
          `the connection to the reseller API broke (${error.code ?? 'no answer'}) after ${what} was sent: the outcome is unknown until the domain's status is checked`,
          { status: 0, url: error.url, code: error.code },
          { cause: error },
        );
      }
      throw error;
    }
    if (res.status >= 200 && res.status < 300)
      return { status: res.status, bodyEmpty: res.text.trim() === '' };
    const facts = this.transport.facts(res);
    if (res.status < 400) {
      const redirect = res.status >= 300 ? ` to ${originOf(facts.location, res.url)}` : '';
      throw new UnexpectedResponseError(
        `the reseller answered unexpectedly (HTTP ${res.status}${redirect}) to ${what}; the domain was NOT restored`,
        facts,
      );
    }
    // fromResponse speaks of retries for these; a restore is sent once.
    const said = facts.bodyExcerpt ? `: ${facts.bodyExcerpt}` : '';
    if (res.status >= 500) {
      throw new ServerError(
        `the reseller API failed (HTTP ${res.status}) on ${what}, sent once${said}`,
        facts,
      );
    }
    if (res.status === 429) {
      throw new RateLimitError(`rate limited by the reseller API (HTTP 429) on ${what}, sent once`, facts);
    }
    throw ResellerApiError.fromResponse(facts, what);
  }

  private list<T>(
    listing: Listing<T>,
    filter: ListFilter,
    first?: ListPage<T>,
    rules: ListingRules = {},
  ): AsyncIterable<ListPage<T>> {
    return paginate({
      ...(first ? { first } : {}),
      ...rules,
      fetchPage: (page, once) => this.fetchPage(listing, filter, page, this.perPage, once),
      // The far end of the listing: names there a capped result window never lists (paginate).
      otherEnd: {
        sort: `-${listing.sortField}`,
        fetch: () => this.fetchPage(listing, filter, 1, this.perPage, true, `-${listing.sortField}`),
        scrub: (text) => this.transport.scrub(text),
        ...(listing.narrower && !('status' in filter) ? { narrower: listing.narrower(this, filter) } : {}),
      },
      keyOf: (record) => this.rawKeys.get(record as object) ?? '',
      ...(listing.foldKey ? { foldKey: listing.foldKey } : {}),
      problemSeverity: listing.problemSeverity,
      concurrency: this.transport.ceiling,
      maxPages: this.maxPages,
      resource: listing.resource,
      source: listing.path,
    });
  }

  /**
   * One page: resolves once the answer has arrived, to a function that parses it, so paginate can
   * send the next request before this page's parsing starts. What the server put in an error (an
   * envelope's values too) leaves scrubbed, from either step.
   */
  private async fetchPage<T>(
    listing: Listing<T>,
    filter: ListFilter,
    page: number,
    perPage: number,
    once = false,
    sort = listing.sortField,
  ): Promise<() => ListPage<T>> {
    let res: RawResponse;
    const sorted = sort === listing.sortField ? '' : ` (sort=${sort})`;
    const what = `${listing.resource} list page ${page}${sorted}`;
    try {
      res = await this.receivePage(listing, filter, { page, perPage, sort }, what, once);
    } catch (error) {
      throw this.transport.scrubError(error);
    }
    const whole = listing === DOMAINS && page === 1 && !sorted && isUnfiltered(filter);
    return () => {
      let parsed: ListPage<T>;
      try {
        parsed = this.parsePage(listing, page, res, what);
      } catch (error) {
        throw this.transport.scrubError(error);
      }
      if (whole) this.onAccountSize?.(parsed.totalResults);
      return parsed;
    };
  }

  private async receivePage<T>(
    listing: Listing<T>,
    filter: ListFilter,
    { page, perPage, sort }: { readonly page: number; readonly perPage: number; readonly sort: string },
    what: string,
    once = false,
  ): Promise<RawResponse> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(filter)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) query.append(key, v);
      else query.append(key, String(value));
    }
    query.set('sort', sort);
    query.set('page', String(page));
    query.set('per_page', String(perPage));
    const res = await this.transport.send({
      method: 'GET',
      path: listing.path,
      query,
      what,
      ...(once ? { maxAttempts: 1 } : {}),
    });
    if (res.status !== 200) throw ResellerApiError.fromResponse(this.transport.facts(res), what);
    return res;
  }

  private parsePage<T>(listing: Listing<T>, page: number, res: RawResponse, what: string): ListPage<T> {
    const { resource } = listing;
    let body: unknown;
    try {
      body = this.transport.parseJson(res.text);
    } catch {
      throw new SchemaValidationError(
        `the reseller API answered ${what} with something that is not JSON`,
        this.transport.facts(res),
      );
    }
    // Before any record is parsed: each one that fails costs a problem of its own, so the 32 MiB
    // the size limit lets through could hold millions of them and run the heap out of memory.
    const held = (body as { data?: unknown } | null)?.data;
    if (Array.isArray(held) && held.length > MAX_RECORDS_PER_PAGE)
      throw new SchemaValidationError(
        `the reseller API answered ${what} with ${held.length} records, more than the ${MAX_RECORDS_PER_PAGE} a page may hold`,
        this.transport.facts(res),
      );
    const envelope = ListEnvelopeSchema.safeParse(body);
    if (!envelope.success) {
      throw new SchemaValidationError(
        `the reseller API answered ${what} without the documented list shape (${describeIssues(envelope.error)})`,
        this.transport.facts(res),
      );
    }
    const p = envelope.data.pagination;
    // Another page's records (a cache that ignores the query) could make the count add up as
    // problem records while the page asked for was never read.
    if (p.current_page !== page)
      throw new IncompleteListingError(
        `the reseller answered ${what} with page ${p.current_page} (current_page); the listing cannot be proven whole`,
        { retryable: true },
      );
    const records: T[] = [];
    const problems: Problem[] = [];
    for (const item of envelope.data.data) {
      const parsed = listing.schema.safeParse(item);
      if (parsed.success) {
        records.push(parsed.data);
        this.rawKeys.set(parsed.data as object, readableKey(item) ?? '');
      } else {
        // A reason may quote the value it got: a server echoing the key must not put it in the report.
        const key = readableKey(item);
        const severity = listing.problemSeverity(item);
        problems.push({
          resource,
          key: key === null ? null : this.transport.scrub(key),
          page,
          reason: this.transport.scrub(describeIssues(parsed.error)),
          ...(severity ? { severity } : {}),
        });
      }
    }
    return {
      page,
      records,
      problems,
      totalResults: p.total_results,
      totalPages: p.total_pages,
      perPage: p.per_page,
    };
  }
}

/**
 * The most records one page may hold, whatever its per_page says: every one costs a parse, and one
 * that fails a problem of its own. As many real records as the 32 MiB body limit lets through (some
 * 300 bytes each), so a server that ignores per_page and answers a whole account in one page is
 * still read up to that size; millions of `1,` are not.
 */
const MAX_RECORDS_PER_PAGE = 100_000;

// A connection that never opened (refused, unresolved, or undici's connect timeout, which covers the
// TCP and TLS handshakes; the request is written only once they are done). A reset or a closed socket
// cannot say whether the request went out: undici's error carries no such fact (its bytesWritten,
// when given, counts a kept-alive socket's earlier requests), and bytes written reached only the kernel.
const NEVER_ARRIVED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/** True when a connection failure may have carried the request to the reseller (anything but refused or unresolved). */
export const mayHaveArrived = (error: ConnectionError): boolean => !NEVER_ARRIVED.has(error.code ?? '');

const DOMAINS: Listing<Domain> = {
  path: '/v2/domains',
  resource: 'domain',
  sortField: 'domain_name',
  schema: DomainSchema,
  // `Example.nl`, `example.nl.` and `xn--…` of `…` are one domain to DNS, the registry and the state.
  foldKey: normalizeDomainName,
  // Rule 1 needs only the status: a record that says quarantine stays critical even when another
  // field of it cannot be read.
  problemSeverity: (raw) =>
    statusValues((raw as { status?: unknown } | null)?.status).includes('quarantine')
      ? 'critical'
      : undefined,
  // A server ignoring sort shows no other end: quarantined domains counted there show a capped window.
  narrower: (client, filter) => ({
    search: 'status=quarantine',
    meanwhile: 'a domain was quarantined while the list was read',
    // Sent once, as the other end is: a 429 or a 5xx proves nothing, and waits would take the read's time.
    count: () => client.countDomains({ ...filter, status: 'quarantine' }, { once: true }),
    selects: (record) => (record as Domain).status.includes('quarantine'),
  }),
};

const CONTACTS: Listing<Contact> = {
  path: '/v2/contacts',
  resource: 'contact',
  sortField: 'handle',
  schema: ContactSchema,
  problemSeverity: () => undefined,
};

function originOf(location: string | undefined, base: string): string {
  if (!location) return 'no Location';
  try {
    return new URL(location, base).origin;
  } catch {
    return 'an unreadable Location';
  }
}

/** The record's name, or null when it has none to read: a blank one names no record. */
function readableKey(item: unknown): string | null {
  if (item && typeof item === 'object') {
    const { domain_name: name, handle } = item as Record<string, unknown>;
    if (typeof name === 'string') return blankDomainName(name) ? null : name;
    if (typeof handle === 'string') return handle.trim() === '' ? null : handle;
  }
  return null;
}

/** Whether `filter` narrows nothing: the listing is the whole account. */
const isUnfiltered = (filter: ListFilter): boolean => Object.values(filter).every((v) => v === undefined);
