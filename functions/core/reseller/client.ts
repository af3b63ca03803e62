import type { z } from 'zod';
import {
  DeadlineError,
  ResellerApiError,
  SchemaValidationError,
  TimeoutError,
  UnexpectedResponseError,
} from '../errors';
import {
  type Contact,
  ContactSchema,
  type Domain,
  DomainSchema,
  describeIssues,
  ListEnvelopeSchema,
  statusValues,
} from '../schemas';
import { type ListPage, type Problem, paginate } from './paging';
import { type RawResponse, Transport, type TransportOptions } from './transport';

export type { ListPage, Problem } from './paging';
export { apiKeyProblem, parseRetryAfter, retryDecision, scrubSecrets } from './transport';

/** A search filter: values are sent as the documented search syntax (`<`, `>`, `%`, arrays as repeated keys). */
export type ListFilter = Readonly<Record<string, string | number | boolean | readonly string[] | undefined>>;

/** Options of {@link ResellerClient}. */
export interface ResellerClientOptions extends TransportOptions {
  /** `per_page` asked for; the server's answer is what counts. @default 100 */
  readonly perPage?: number;
  /** A listing reporting more pages than this fails instead of running away. @default 20 000 */
  readonly maxPages?: number;
}

interface Listing<T> {
  readonly path: string;
  readonly resource: Problem['resource'];
  readonly sortField: string;
  readonly schema: z.ZodType<T>;
  readonly caseInsensitiveKeys: boolean;
  /** How serious a record is that could not be checked, judged from what can be read of it. */
  readonly problemSeverity: (raw: unknown) => Problem['severity'];
}

/**
 * Client of the reseller API: domain list, contact list, restore. Lists are async iterables of
 * pages (see {@link paginate} for what makes a listing complete); requests go through one
 * {@link Transport}, so every listing of a client shares its concurrency and deadline.
 */
export class ResellerClient {
  readonly baseUrl: string;
  private readonly transport: Transport;
  private readonly perPage: number;
  private readonly maxPages: number;
  /** The name as the server spelled it (schemas lower-case it), to tell a case-only twin from a repeat. */
  private readonly rawKeys = new WeakMap<object, string>();

  /** @throws ConfigError when the API key cannot be sent in a header (the message never holds the key). */
  constructor(options: ResellerClientOptions) {
    this.transport = new Transport(options);
    this.baseUrl = this.transport.baseUrl;
    this.perPage = options.perPage ?? 100;
    this.maxPages = options.maxPages ?? 20_000;
  }

  /** Requests sent, retries included. */
  get requests(): number {
    return this.transport.requests;
  }

  /** Every domain matching `filter`, page by page, sorted by name so pages do not shift. */
  listDomains(filter: ListFilter = {}): AsyncIterable<ListPage<Domain>> {
    return this.list(DOMAINS, filter);
  }

  /** Every contact matching `filter`, page by page, sorted by handle. */
  listContacts(filter: ListFilter = {}): AsyncIterable<ListPage<Contact>> {
    return this.list(CONTACTS, filter);
  }

  /** How many domains match `filter`: one request with `per_page=1`, read from the pagination totals. */
  async countDomains(filter: ListFilter = {}): Promise<number> {
    const page = await this.fetchPage(DOMAINS, filter, 1, 1);
    return page.totalResults;
  }

  /** One domain by name (letter case does not matter), or null when the account does not hold it. */
  async findDomain(name: string): Promise<Domain | null> {
    const wanted = name.toLowerCase();
    for await (const page of this.listDomains({ domain_name: name })) {
      const match = page.records.find((d) => d.domain_name === wanted);
      if (match) return match;
    }
    return null;
  }

  /**
   * Restores a domain from quarantine. Only 204, or 200 with an empty or JSON body, means restored;
   * anything else throws, and no answer throws a TimeoutError saying the outcome is unknown. Never
   * retried: a restore is not something to repeat behind a person's back; the caller decides.
   */
  async restoreDomain(name: string): Promise<void> {
    try {
      await this.restore(name);
    } catch (error) {
      throw this.transport.scrubError(error);
    }
  }

  private async restore(name: string): Promise<void> {
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
      // Only a request that went out can have restored the domain; one stopped before it did not.
      if (sent && (error instanceof TimeoutError || error instanceof DeadlineError)) {
        throw new TimeoutError(
          `no answer in time for ${what}: the outcome is unknown; check the domain's status in the reseller's control panel before trying again`,
          { status: 0, url: error instanceof TimeoutError ? error.url : this.baseUrl },
          { cause: error },
        );
      }
      throw error;
    }
    if (res.status === 204 || (res.status === 200 && isEmptyOrJson(res.text))) return;
    const facts = this.transport.facts(res);
    if (res.status < 400) {
      const redirect = res.status >= 300 ? ` to ${originOf(facts.location, res.url)}` : '';
      throw new UnexpectedResponseError(
        `the reseller answered unexpectedly (HTTP ${res.status}${redirect}) to ${what}; the domain was NOT restored`,
        facts,
      );
    }
    throw ResellerApiError.fromResponse(facts, what);
  }

  private list<T>(listing: Listing<T>, filter: ListFilter): AsyncIterable<ListPage<T>> {
    return paginate({
      fetchPage: (page) => this.fetchPage(listing, filter, page, this.perPage),
      keyOf: (record) => this.rawKeys.get(record as object) ?? '',
      caseInsensitiveKeys: listing.caseInsensitiveKeys,
      problemSeverity: listing.problemSeverity,
      concurrency: this.transport.ceiling,
      maxPages: this.maxPages,
      resource: listing.resource,
      source: listing.path,
    });
  }

  /** One page, parsed; what the server put in an error (an envelope's values too) leaves scrubbed. */
  private async fetchPage<T>(
    listing: Listing<T>,
    filter: ListFilter,
    page: number,
    perPage: number,
  ): Promise<ListPage<T>> {
    try {
      return await this.readPage(listing, filter, page, perPage);
    } catch (error) {
      throw this.transport.scrubError(error);
    }
  }

  private async readPage<T>(
    listing: Listing<T>,
    filter: ListFilter,
    page: number,
    perPage: number,
  ): Promise<ListPage<T>> {
    const { resource } = listing;
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(filter)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) query.append(key, v);
      else query.append(key, String(value));
    }
    query.set('sort', listing.sortField);
    query.set('page', String(page));
    query.set('per_page', String(perPage));
    const what = `${resource} list page ${page}`;
    const res = await this.transport.send({ method: 'GET', path: listing.path, query, what });
    if (res.status !== 200) throw ResellerApiError.fromResponse(this.transport.facts(res), what);

    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      throw new SchemaValidationError(
        `the reseller API answered ${what} with something that is not JSON`,
        this.transport.facts(res),
      );
    }
    const envelope = ListEnvelopeSchema.safeParse(body);
    if (!envelope.success) {
      throw new SchemaValidationError(
        `the reseller API answered ${what} without the documented list shape (${describeIssues(envelope.error)})`,
        this.transport.facts(res),
      );
    }
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
    const p = envelope.data.pagination;
    return { page, records, problems, totalResults: p.total_results, totalPages: p.total_pages };
  }
}

const DOMAINS: Listing<Domain> = {
  path: '/v2/domains',
  resource: 'domain',
  sortField: 'domain_name',
  schema: DomainSchema,
  // DNS names are case-insensitive: `Example.nl` and `example.nl` are one domain.
  caseInsensitiveKeys: true,
  // Rule 1 needs only the status: a record that says quarantine stays critical even when another
  // field of it cannot be read.
  problemSeverity: (raw) =>
    statusValues((raw as { status?: unknown } | null)?.status).includes('quarantine')
      ? 'critical'
      : undefined,
};

const CONTACTS: Listing<Contact> = {
  path: '/v2/contacts',
  resource: 'contact',
  sortField: 'handle',
  schema: ContactSchema,
  caseInsensitiveKeys: false,
  problemSeverity: () => undefined,
};

function isEmptyOrJson(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function originOf(location: string | undefined, base: string): string {
  if (!location) return 'no Location';
  try {
    return new URL(location, base).origin;
  } catch {
    return 'an unreadable Location';
  }
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
