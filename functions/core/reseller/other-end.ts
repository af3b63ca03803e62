import {
  AccessDeniedError,
  AuthenticationError,
  ResellerApiError,
  SentinelError,
  StoppedError,
} from '../base/errors';
import { cutText, normalizeDomainName, plural, safeText } from '../base/text';

/** What of a page (paging's ListPage, which imports this module) the other end is judged by. */
export interface HeldPage<T> {
  readonly records: readonly T[];
  readonly problems: readonly { readonly key: string | null }[];
}

/**
 * The words of a reason that says a listing's totals fall short of the account (a capped result
 * window, or records added while it was read): incompleteScanError gives its advice by them.
 */
export const UNDERCOUNT = 'undercounts the account';

/**
 * A request the read does not need to be whole by its totals (the page past the end, the other
 * end's page 1) could not be read, and the read stands as page 1 promised, as it did before it was
 * asked for: nothing says what the API answers there (a 404, a 400, another page, a 500), a rate
 * limit or the time budget there must not fail a read that is whole by its totals, and the next run
 * asks again. A key refused there (401), or a stop, is what it is anywhere; a 403 is not: the key
 * has just read this very listing, so what is forbidden is the request (a gateway refusing a
 * descending sort or a page past the end), and failing on it would fail every run.
 */
export const notChecked = (e: unknown) =>
  e instanceof SentinelError &&
  (!(e instanceof AuthenticationError) || e instanceof AccessDeniedError) &&
  !(e instanceof StoppedError);

/**
 * Page 1 of a listing sorted the other way (`-domain_name`), sent once: the records at the far end
 * of the account. A search back end capping its result window (total_results 10 000 of 100 000)
 * makes the totals add up while most of the account is never listed, and may answer past its cap
 * with an error or an empty page, which the page past the end cannot tell from the end of a healthy
 * account; the other end's first page can: it holds names the read never reached.
 */
export interface OtherEnd<P> {
  /** The sort asked, for messages: `-domain_name`. */
  readonly sort: string;
  readonly fetch: () => Promise<() => P>;
  /**
   * Takes the API key out of a name the message quotes: the server answering the request holds the
   * key, and may echo it as a name. @default the name as it is
   */
  readonly scrub?: (text: string) => string;
  /** What a server that ignores the sort is asked instead ({@link Narrower}). @default nothing */
  readonly narrower?: Narrower;
}

/**
 * A search narrower than the listing, counted once (`per_page=1`) when the other end comes back in
 * page 1's order (a server ignoring `sort` shows no other end): a capped window caps the listing,
 * and the narrower search, counted over the whole account, finds more than the read held. For
 * domains `status=quarantine`, the records rule 1 alerts most. A count equal to the listing's
 * totals (a server ignoring the search too) proves nothing; so does an error there.
 */
export interface Narrower {
  /** For messages: `status=quarantine`. */
  readonly search: string;
  /**
   * For messages: what else makes the count exceed the read, once (`a domain was quarantined while
   * the list was read`): a person told only of a capped window is misled by a run that read whole.
   */
  readonly meanwhile: string;
  readonly count: () => Promise<number>;
  /** Whether a record read is one the search selects. */
  readonly selects: (record: unknown) => boolean;
}

/**
 * Whether a short last page may end a capped result window: more than one page. A cap need not be
 * a round number (a window of 1 010 ends as short a page as one of 10 000), and a short last page
 * under totals that add up is all a capped window shows, so the other end is asked after every one:
 * one request per listing of more than one page. A listing of one page is no capped window: a
 * back end's window holds more than one page.
 */
export const cappedShort = (results: number, pages: number) => pages > 1 && results > 0;

/** Statuses of a request refused as asked (not a rate limit, a failure or a refused key). */
const REFUSED = new Set([400, 403, 404, 405, 422]);

/** What the other end's page 1 says: nothing (null), or records the read did not hold. */
export interface OtherEndFinding<P> {
  readonly text: string;
  /** Those records, and the problems of unreadable ones named by a key the read did not hold. */
  readonly page: P;
}

/**
 * Asks the other end's page 1 and keeps what `unread` says the read did not hold (records by
 * their key, unreadable records by their problem's key; one without a key proves nothing). An
 * error there (other than a refused key or a stop), a page of names read (in any spelling:
 * {@link withoutRespelled}), or a server that ignores the sort (page 1 again) leave the read as its
 * totals promise.
 */
export async function askOtherEnd<T, P extends HeldPage<T>>(
  otherEnd: OtherEnd<P>,
  unread: (page: P) => P,
  keyOf: (record: T) => string,
  at: { readonly resource: string; readonly results: number; readonly pages: number },
  namesRead: () => Iterable<Iterable<string>>,
  /** Page 1's first key, and how many records the read held that the narrower search selects. */
  read1?: { readonly first: string | null; readonly narrowed: number },
): Promise<OtherEndFinding<P> | null> {
  let read: P;
  try {
    read = (await otherEnd.fetch())();
  } catch (error) {
    if (!notChecked(error)) throw error;
    // A request refused (a sort the server does not take) shows no other end either; a rate limit,
    // a 5xx or a timeout is not followed by another request.
    const refused = error instanceof ResellerApiError && REFUSED.has(error.status);
    if (!refused || !otherEnd.narrower || at.pages <= 1 || !read1) return null;
    const none = unread({ records: [], problems: [] } as unknown as P);
    return countNarrower(otherEnd, at, read1.narrowed, none, `could not be read (HTTP ${error.status})`);
  }
  const page = withoutRespelled(unread(read), keyOf, namesRead);
  const firstOf = (p: HeldPage<T>) => (p.records[0] ? keyOf(p.records[0]) : p.problems[0]?.key);
  const first = firstOf(page);
  if (first == null) {
    const unsorted = at.pages > 1 && read1?.first != null && firstOf(read) === read1.first;
    const inOrder = 'came back in the order of page 1';
    return unsorted && otherEnd.narrower ? countNarrower(otherEnd, at, read1.narrowed, page, inOrder) : null;
  }
  const held = page.records.length + page.problems.length;
  const more = held > 1 ? ` and ${plural(held - 1, 'more record')}` : '';
  const text = `${at.resource} list sorted the other way (sort=${otherEnd.sort}) holds ${safeText(cutText(otherEnd.scrub?.(first) ?? first, 100))}${more}, which the ${plural(at.pages, 'page')} page 1 promised did not: total_results (${at.results}) ${UNDERCOUNT}`;
  return { text, page };
}

/** The narrower search's count, against what the read held of it: more there is an undercount. */
async function countNarrower<P>(
  otherEnd: OtherEnd<P>,
  at: { readonly resource: string; readonly results: number },
  narrowed: number,
  page: P,
  why: string,
): Promise<OtherEndFinding<P> | null> {
  const narrower = otherEnd.narrower;
  let counted: number;
  try {
    counted = narrower ? await narrower.count() : 0;
  } catch (error) {
    if (!notChecked(error)) throw error;
    return null;
  }
  if (!narrower || counted <= narrowed || counted === at.results) return null;
  const text = `${at.resource} list sorted the other way (sort=${otherEnd.sort}) ${why}, so its other end cannot be seen, and ${narrower.search} counts ${plural(counted, at.resource)} where the read held ${narrowed}: total_results (${at.results}) ${UNDERCOUNT}, unless ${narrower.meanwhile}: run again, and if it repeats, a result window caps the listing`;
  return { text, page };
}

/**
 * `page` without the names the read held spelled another way (letter case, a trailing dot, Unicode
 * against punycode, as normalizeDomainName reads them; a handle's case too): the other sort may be
 * answered by another back end that spells names its own way, and a healthy account must not fail
 * every run on it. A capped window's other end holds names the read never reached in any spelling.
 * The names read are walked once, only when the other end holds one the read did not hold as
 * spelled there; nothing is kept of them but the few the other end holds.
 */
function withoutRespelled<T, P extends HeldPage<T>>(
  page: P,
  keyOf: (record: T) => string,
  namesRead: () => Iterable<Iterable<string>>,
): P {
  const keys = [...page.records.map(keyOf), ...page.problems.map((p) => p.key)];
  const wanted = new Set(keys.flatMap((key) => (key === null ? [] : [normalizeDomainName(key)])));
  if (wanted.size === 0) return page;
  const held = new Set<string>();
  for (const names of namesRead())
    for (const name of names) {
      const loose = normalizeDomainName(name);
      if (wanted.has(loose)) held.add(loose);
    }
  if (held.size === 0) return page;
  const unheld = (key: string | null) => key === null || !held.has(normalizeDomainName(key));
  return {
    ...page,
    records: page.records.filter((record) => unheld(keyOf(record))),
    problems: page.problems.filter((problem) => unheld(problem.key)),
  };
}
