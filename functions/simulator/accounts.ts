import type { Portfolio, RawRecord } from './portfolio';
import { buildFilter, buildSort, type Resource, type SearchSemantics } from './search';

/**
 * What the simulator does with one account's records: list a page of a search, restore a domain,
 * change a record. Each answers with a status and a body; the server (server.ts) owns the HTTP
 * around them: keys, latency, the rate limit and injected faults.
 */

/** The records of one account, and its answers cached per query. */
export interface AccountData {
  readonly domains: RawRecord[];
  readonly contacts: RawRecord[];
  readonly byName: Map<string, RawRecord>;
  readonly cache: Map<string, RawRecord[]>;
  readonly restoreCalls: string[];
}

/** An answer to send: its status and JSON body (none for 204). */
export interface Answer {
  readonly status: number;
  readonly body?: unknown;
}

/** How the server searches: its per_page cap and its search semantics. */
export interface ListRules {
  readonly maxPerPage: number;
  readonly searchSemantics?: SearchSemantics;
  readonly ignoredSearchParameters?: readonly string[];
  /** A domain search by `domain_name` that selects nothing is answered 404, not an empty page. */
  readonly notFoundWithoutHit?: boolean;
}

const DEFAULT_PER_PAGE = 50;
/** The searches whose matches an account keeps, the newest: a scan pages through a few at a time. */
export const SEARCH_CACHE_ENTRIES = 64;

/** The account's records, copied so a test's portfolio is never changed under it. */
export function accountData(portfolio: Portfolio): AccountData {
  const domains = portfolio.domains.map((d) => ({ ...d }));
  return {
    domains,
    contacts: portfolio.contacts.map((c) => ({ ...c })),
    byName: new Map(domains.map((d) => [String(d.domain_name), d])),
    // Filtering and sorting 100 000 records per page would dominate a benchmark: cache per query.
    cache: new Map(),
    restoreCalls: [],
  };
}

/** An error answer in the API's shape. */
export const errorAnswer = (status: number, message: string): Answer => ({
  status,
  body: { error: { code: status, message } },
});

/** One page of a search of domains or contacts (throws SearchError for a search it does not take). */
export function listAnswer(
  account: AccountData,
  resource: Resource,
  query: URLSearchParams,
  rules: ListRules,
): Answer {
  const page = query.has('page') ? Number(query.get('page')) : 1;
  const askedPerPage = query.has('per_page') ? Number(query.get('per_page')) : DEFAULT_PER_PAGE;
  if (!Number.isInteger(page) || page < 1) return errorAnswer(400, 'page must be a positive integer');
  if (!Number.isInteger(askedPerPage) || askedPerPage < 1)
    return errorAnswer(400, 'per_page must be a positive integer');
  const perPage = Math.min(askedPerPage, rules.maxPerPage);
  const matches = searched(account, resource, query, rules);
  if (rules.notFoundWithoutHit && resource === 'domains' && query.has('domain_name') && !matches.length)
    return errorAnswer(404, 'no domain matches the search');
  const totalPages = Math.ceil(matches.length / perPage);
  const data = matches.slice((page - 1) * perPage, page * perPage);
  // The examples name current_page `page`: the contact list answers that way.
  const pageField = resource === 'contacts' ? 'page' : 'current_page';
  return {
    status: 200,
    body: {
      data,
      pagination: {
        [pageField]: page,
        per_page: perPage,
        total_pages: totalPages,
        total_results: matches.length,
      },
    },
  };
}

/** The records a search selects, in its order; cached per query (paging aside). */
function searched(account: AccountData, resource: Resource, query: URLSearchParams, rules: ListRules) {
  // The parameters as JSON: joined as `k=v&…` decoded, `tld=nl%26status%3Dquarantine` (a tld of
  // `nl&status=quarantine`, which selects nothing) and `tld=nl&status=quarantine` shared one entry,
  // and whichever came first answered both.
  const key = JSON.stringify([resource, [...query].filter(([k]) => k !== 'page' && k !== 'per_page')]);
  let matches = account.cache.get(key);
  // The newest use last, so the search a scan pages through stays while lookups come and go.
  if (matches) account.cache.delete(key);
  else {
    const source = resource === 'domains' ? account.domains : account.contacts;
    const filter = buildFilter(resource, query, {
      ...(rules.searchSemantics ? { semantics: rules.searchSemantics } : {}),
      ...(rules.ignoredSearchParameters ? { ignored: rules.ignoredSearchParameters } : {}),
    });
    matches = source.filter(filter);
    const sort = buildSort(resource, query.get('sort'));
    if (sort) matches.sort(sort);
    // Bounded: every other search held its matches (up to the whole portfolio) until the portfolio
    // changed, so a simulator left running grew with each search it was sent.
    if (account.cache.size >= SEARCH_CACHE_ENTRIES)
      account.cache.delete(account.cache.keys().next().value as string);
  }
  account.cache.set(key, matches);
  return matches;
}

/** Restores a quarantined domain: registered again, a year past its expiry or `now`. */
export function restoreAnswer(account: AccountData, name: string, now: number): Answer {
  const { restoreCalls, byName, cache } = account;
  restoreCalls.push(name);
  const domain = byName.get(name);
  if (!domain) return errorAnswer(404, `domain ${name} not found`);
  const status = domain.status as string[];
  if (!status.includes('quarantine')) return errorAnswer(422, `domain ${name} is not in quarantine`);
  domain.status = ['registered'];
  domain.date_deleted = null;
  const expiry = Math.max(Date.parse(String(domain.date_expiry)), now);
  domain.date_expiry = new Date(expiry + 365 * 86_400_000).toISOString().replace('.000Z', 'Z');
  domain.date_renewal = new Date(expiry + 364 * 86_400_000).toISOString().replace('.000Z', 'Z');
  cache.clear();
  return { status: 204 };
}

/** Merges `patch` into the domain (adding it when new), or removes it with null; false when there was nothing to remove. */
export function updateDomainOf(account: AccountData, name: string, patch: RawRecord | null): boolean {
  const { byName, domains, cache } = account;
  const existing = byName.get(name);
  if (patch === null) {
    if (!existing) return false;
    domains.splice(domains.indexOf(existing), 1);
    byName.delete(name);
  } else if (existing) Object.assign(existing, patch, { domain_name: name });
  else {
    const record = { ...patch, domain_name: name };
    domains.push(record);
    byName.set(name, record);
  }
  cache.clear();
  return true;
}
