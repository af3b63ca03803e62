import { DeadlineError, IncompleteListingError, ResellerApiError } from '../base/errors';
import { cutText, plural } from '../base/text';
import { askOtherEnd, cappedShort, notChecked, type OtherEnd, UNDERCOUNT } from './other-end';
import { PageOrder, type Rotation, rotateWhenLate } from './page-order';
import { unreadPages } from './page-ranges';
import type { KeptQuarantineMarks } from './problem-marks';

export type { Rotation } from './page-order';

import { RecordRegistry } from './record-registry';

/** A record the scan could not use, with the reason. Never dropped silently. */
export interface Problem extends KeptQuarantineMarks {
  /** `state`: a stored memory of the last scans that could not be read (the domains were still checked). */
  readonly resource: 'domain' | 'contact' | 'state';
  /** The domain name or handle (for `state`, the memory's key or the store's item), when the record had a readable one. */
  readonly key: string | null;
  readonly page: number;
  readonly reason: string;
  /**
   * `critical` when the record says the domain is in quarantine although it could not be checked:
   * rule 1 needs only the status, so the alert treats it as a critical item. Absent: a warning.
   */
  readonly severity?: 'critical';
}

/** One page of a listing: the records that parsed and the ones that did not. */
export interface ListPage<T> {
  readonly page: number;
  readonly records: readonly T[];
  readonly problems: readonly Problem[];
  readonly totalResults: number;
  readonly totalPages: number;
  /** The page size the server says it used, when it says. */
  readonly perPage?: number;
  /**
   * Set on the last page of a listing that could not be read whole and was reported as it was
   * (`onMove` or `onDeadline: 'report'`): why. Its one problem (key null) says records may be missing.
   */
  readonly incomplete?: string;
}

/**
 * What a listing that moves while it is read does: `fail` (retryable, to read it again from the
 * start) or `report`, to read on to the most pages any page reported and end with a page whose
 * problem says the listing moved ({@link ListPage.incomplete}); or a function deciding it once, at the
 * first move seen, from how far the listing got (`read` of `pages` pages taken).
 */
export type OnMove =
  | 'fail'
  | 'report'
  | ((at: { readonly read: number; readonly pages: number }) => 'fail' | 'report');

/** What `onMove` says a listing that moved `at` this point does. */
export const decideMove = (onMove: OnMove, at: { readonly read: number; readonly pages: number }) =>
  typeof onMove === 'function' ? onMove(at) : onMove;

/** What {@link paginate} needs: a way to read one page, and how to tell records apart. */
export interface PaginateOptions<T> {
  /**
   * Requests page `page` (1-based) of the listing. Resolves as soon as the answer has arrived, to a
   * function that parses it: the next request leaves before this page's parsing starts, so parsing
   * overlaps the network wait instead of adding to it. `once`: sent once, never retried (the page
   * past the end, whose failure only leaves the read as its totals promise).
   */
  readonly fetchPage: (page: number, once?: boolean) => Promise<() => ListPage<T>>;
  /**
   * Page 1 of the listing sorted the other way, sent once, when the page past a full last page
   * shows nothing, or after a short one ({@link PageAdmission.pastTheEnd}): names
   * there the read did not hold, in any spelling, mean the totals undercount the account. @default not asked
   */
  readonly otherEnd?: OtherEnd<ListPage<T>>;
  /** Page 1, when it was read already (the same request the listing would send); not fetched again. */
  readonly first?: ListPage<T>;
  /** The record's identity as the server sent it (the domain name or handle). */
  readonly keyOf: (record: T) => string;
  /**
   * The one form of a name's spellings (a domain's letter case, trailing dot, punycode): names of one
   * form are one name, and the later record becomes a problem. Absent: names are compared as sent.
   */
  readonly foldKey?: (key: string) => string;
  /** The severity of a problem made of a record that could not be checked (a second record of a name). */
  readonly problemSeverity?: (record: T) => Problem['severity'];
  /**
   * Pages in flight at once after page 1. @default 4. No request leaves while as many pages that
   * arrived wait to be parsed, so a slow reader holds the listing back instead of buffering it (at
   * most twice this many pages are held at once).
   */
  readonly concurrency?: number;
  /** A listing reporting more pages than this fails instead of running away. @default 20 000 */
  readonly maxPages?: number;
  /** What a listing whose totals change while it is read does ({@link OnMove}). @default 'fail' */
  readonly onMove?: OnMove;
  /**
   * What a listing does when the time budget runs out before a page after page 1 (a DeadlineError):
   * `fail`, or `report`: end with a page whose problem says how far it got ({@link ListPage.incomplete}).
   * @default 'fail'
   */
  readonly onDeadline?: 'fail' | 'report';
  /**
   * Spreads what a time budget cuts over successive runs, so each page is read by one of a few runs
   * (a read taken in the order 1…N would cut the same tail every time, and never check it). @default
   * off: always 1…N. See {@link Rotation}.
   */
  readonly rotation?: Rotation;
  /**
   * The count the same server gave a wider search just before (a filtered read's part: the whole
   * account's). A listing whose totals are below it ends no capped result window: a back end caps
   * every search at one window, so a capped part counts as many as the whole. Its other end is not
   * asked: after every short last page it cost a request per part on every healthy account.
   * @default none: the other end is asked
   */
  readonly widerTotal?: number;
  /** For messages: `domain`, `contact`. */
  readonly resource: Problem['resource'];
  /** For messages: `/v2/domains`. */
  readonly source: string;
}

/**
 * Every page of one listing, in the way of octokit's paginate plugin: page 1 first, then pages
 * 2…N concurrently, each yielded as it arrives (and each arrival sends the next request before the
 * page is parsed). Page 1's totals are a promise the listing must
 * keep, because a listing that moved while it was read can hide a live domain in the gap:
 *  - any later page reporting another `total_results` or `total_pages` fails the listing at once
 *    (retryable: reading again from the start may succeed);
 *  - it never reads past page 1's page count;
 *  - at the end, records + problems must equal page 1's `total_results`, after a full last page
 *    the next must hold nothing, and the listing sorted the other way no name it did not read
 *    ({@link PageAdmission.pastTheEnd}: capped totals add up too).
 * With `onMove: 'report'` (as a scan's last read, or one with no time to read again) the listing reads
 * on instead, to the most pages any page reported, and its last page says it moved: what it read
 * stands, marked incomplete.
 * A record repeated verbatim (it shifted onto the next page) is read once; a name repeated with
 * other letter case becomes a problem record, counted toward the total.
 */
export async function* paginate<T>(options: PaginateOptions<T>): AsyncGenerator<ListPage<T>> {
  const first = options.first ?? (await options.fetchPage(1))();
  const promise = promiseOfFirstPage(first, options);
  const admission = new PageAdmission(promise, options);
  yield admission.take(first);
  const fetchPage = (page: number) =>
    page <= promise.pages ? options.fetchPage(page) : pastPromise(page, promise, options);
  const order = new PageOrder(() => admission.pages);
  const arrived = rotateWhenLate(options.rotation, options.concurrency, order);
  let past: Awaited<ReturnType<PageAdmission<T>['pastTheEnd']>> = null;
  try {
    for await (const parse of fetchAhead({ ...options, fetchPage }, order, arrived))
      yield admission.take(parse());
    if (!admission.moved && (admission.lastFull || admission.roundShort)) past = await admission.pastTheEnd();
  } catch (error) {
    if (!(error instanceof DeadlineError) || options.onDeadline !== 'report') throw error;
    yield cutPage(admission, promise, options, error);
    return;
  }
  const moved =
    admission.moved ??
    past?.moved ??
    countMismatch(admission, promise, options) ??
    pagesBeyondNeed(admission, promise, options);
  if (moved === null) return;
  if (admission.onMove() === 'fail') throw new IncompleteListingError(moved.text, { retryable: true });
  if (past) yield past.page;
  yield movedPage(moved, promise, options);
}

/**
 * A page past the count page 1 promised, read only because the listing moved: it may no longer
 * exist when the account shrank back (a 404, another page answered). Its failure is one problem
 * on a page of no record, not the end of a read whose findings must still be alerted.
 */
async function pastPromise<T>(
  page: number,
  promise: ListingPromise,
  options: PaginateOptions<T>,
): Promise<() => ListPage<T>> {
  const unread = (error: unknown): ListPage<T> => {
    if (!(error instanceof ResellerApiError || error instanceof IncompleteListingError)) throw error;
    const reason = `${options.resource} list page ${page}, past the ${promise.pages} pages page 1 promised, could not be read (${error.message})`;
    return problemPage<T>(page, reason, promise, options);
  };
  try {
    const parse = await options.fetchPage(page);
    return () => {
      try {
        return parse();
      } catch (error) {
        return unread(error);
      }
    };
  } catch (error) {
    const failed = unread(error);
    return () => failed;
  }
}

/** How a listing moved, and where (undercount: records past the totals, past the end or at the other end). */
interface Move {
  readonly text: string;
  readonly page: number;
  readonly undercount?: boolean;
}

/** The page that ends a listing that moved while it was read: no record, one problem saying so. */
function movedPage<T>(moved: Move, promise: ListingPromise, options: PaginateOptions<T>): ListPage<T> {
  const what = `${options.resource}s`;
  const text = `the ${options.resource} list ${moved.undercount ? 'holds more than its totals say' : 'changed while it was read'} (${moved.text}): the ${what} read were checked, but ${what} may be missing from what was read, so none is judged to have left the account`;
  return { ...problemPage<T>(moved.page, text, promise, options), incomplete: text };
}

/** The page that ends a listing the time budget ran out in: no record, one problem saying how far it got. */
function cutPage<T>(
  admission: PageAdmission<T>,
  promise: ListingPromise,
  options: PaginateOptions<T>,
  error: DeadlineError,
): ListPage<T> {
  const what = `${options.resource}s`;
  const unread = unreadPages(admission.taken, admission.pages);
  const read = `${admission.received} of ${promise.results} ${what} read${unread ? `; not read: ${unread}` : ''}`;
  const text = `the ${options.resource} list could not be read whole within the scan's time budget (${read}; ${error.message}): the ${what} read were checked, but the others were not, so none is judged to have left the account`;
  return { ...problemPage<T>(0, text, promise, options), incomplete: text };
}

/** A page of no record and one problem without a name (`reason`), under page 1's totals. */
function problemPage<T>(
  page: number,
  reason: string,
  promise: ListingPromise,
  options: PaginateOptions<T>,
): ListPage<T> {
  return {
    page,
    records: [],
    problems: [{ resource: options.resource, key: null, page, reason }],
    totalResults: promise.results,
    totalPages: promise.pages,
  };
}

/** The most pages a listing may report. */
const MAX_PAGES = 20_000;

/** What page 1 says the whole listing holds: every later page must say the same. */
type ListingPromise = { readonly results: number; readonly pages: number };

/** Page 1's totals, refused when they ask for more pages than a scan may read. */
function promiseOfFirstPage<T>(first: ListPage<T>, options: PaginateOptions<T>): ListingPromise {
  const maxPages = options.maxPages ?? MAX_PAGES;
  if (first.totalPages > maxPages) {
    throw new IncompleteListingError(
      `the reseller reports ${first.totalPages} pages (${first.totalResults} ${options.resource}s) for ${options.source}, more than the limit of ${maxPages}; raise the page limit or per_page`,
      { retryable: false },
    );
  }
  return { results: first.totalResults, pages: first.totalPages };
}

/**
 * Takes the pages of one listing in: each must keep page 1's promise; its records are admitted
 * once by name (a repeat read once, a second record of a name a problem); what was taken is counted.
 */
class PageAdmission<T> {
  /** Records and problems taken so far, to hold against page 1's `total_results`. */
  received = 0;
  /** The pages to read: page 1's count, or (onMove: 'report') the most any page reported. */
  pages: number;
  /** With onMove: 'report', the first page that broke page 1's promise. */
  moved: Move | null = null;
  /** The pages taken, by number: a read cut short says which it did not read. */
  readonly taken = new Set<number>();
  lastFull = false; // the last page page 1 promised was full (its per_page): see pastTheEnd
  private lastShort = false; // it was read, and was not full
  private firstHeld = 0; // records and problems on page 1
  /** Page 1's page size: its per_page, or the records it held when fewer (a server echoing the per_page asked). */
  firstSize: number | undefined;
  /** Records read again verbatim (a repeat, read once and not counted): what pages beyond need may stand for. */
  repeats = 0;
  /** Second records of names read on other pages, not counted toward `received`, and the first's name. */
  readonly uncounted = { count: 0, first: '' };
  private first: string | null = null; // page 1's first key: an other end in its order ignored sort
  /**
   * The names read that the other end's narrower search selects (records, and unreadable records
   * that are critical problems), each once, as the server spelled it: a name listed twice counted
   * twice hid a missing one, and a case duplicate is a record the search counts too.
   */
  private readonly narrowedNames = new Set<string>();
  private narrowedNameless = 0; // critical problems without a name: each is a record
  private readonly seen: RecordRegistry;
  /** The keys of unreadable records (problems), folded: few, beside the names `seen` holds. */
  private readonly unreadable = new Set<string>();
  private readonly unreadableRead = new Set<string>(); // each one's folded key and reason
  private readonly fold: (key: string) => string;
  private decided: 'fail' | 'report' | undefined;

  constructor(
    private readonly promise: ListingPromise,
    private readonly options: PaginateOptions<T>,
  ) {
    this.pages = promise.pages;
    this.fold = options.foldKey ?? ((key: string) => key);
    this.seen = new RecordRegistry(options.resource, this.fold);
  }

  /** What the listing does now that it moved: decided once, at the first move (options.onMove). */
  onMove(): 'fail' | 'report' {
    this.decided ??= decideMove(this.options.onMove ?? 'fail', { read: this.taken.size, pages: this.pages });
    return this.decided;
  }

  /** A short last page of more than one that adds up: a capped window's, perhaps ({@link cappedShort}). */
  get roundShort(): boolean {
    return (
      this.lastShort &&
      this.received === this.promise.results &&
      cappedShort(this.promise.results, this.promise.pages)
    );
  }

  /**
   * After a full last page, the page after it, as capped totals add up too: records new there are a
   * move. When it shows nothing (an error, an empty page, other totals), or after a roundShort last
   * page, the other end's page 1 (options.otherEnd): names there the read did not hold are one too.
   */
  async pastTheEnd(): Promise<{ moved: Move; page: ListPage<T> } | null> {
    const past = this.lastFull ? await this.pageAfterLast() : null;
    const { widerTotal } = this.options;
    const uncapped = widerTotal !== undefined && this.promise.results < widerTotal;
    if (past || !this.options.otherEnd || uncapped) return past;
    const { resource, keyOf } = this.options;
    const at = { resource, results: this.promise.results, pages: this.promise.pages };
    const names = () => [this.seen.names(), this.unreadable];
    const held = { first: this.first, narrowed: this.narrowedNames.size + this.narrowedNameless };
    const found = await askOtherEnd(
      this.options.otherEnd,
      (read) => this.unread(read),
      keyOf,
      at,
      names,
      held,
    );
    return found && { moved: { text: found.text, page: 0, undercount: true }, page: found.page };
  }

  /** The records and keyed problems of `read` (the other end's page 1) the read did not hold. */
  private unread(read: ListPage<T>): ListPage<T> {
    const known = (key: string) => this.seen.has(key) || this.unreadable.has(this.fold(key));
    const records: T[] = [];
    // Not admitted to `seen`: the other end's names are held against the names read in any spelling after.
    const fresh = new RecordRegistry(this.options.resource, this.fold);
    for (const record of read.records) {
      const key = this.options.keyOf(record);
      if (!known(key) && fresh.admit(key, record).kind === 'new') records.push(record);
    }
    const problems = read.problems
      .filter((p) => p.key !== null && !known(p.key))
      .map((p) => ({ ...p, page: 0 }));
    return { page: 0, records, problems, totalResults: this.promise.results, totalPages: this.promise.pages };
  }

  private async pageAfterLast(): Promise<{ moved: Move; page: ListPage<T> } | null> {
    const next = this.promise.pages + 1;
    if (next > (this.options.maxPages ?? MAX_PAGES)) return null;
    let page: ListPage<T> | null = null;
    try {
      const read = (await this.options.fetchPage(next, true))();
      // Another page's number, or other totals, than asked: not a page past the end. Held against
      // the totals here, not by take: with onMove 'report' take marks other totals a move, and a
      // server counting the rows it returns says 0 past the end of every healthy account.
      const same = read.totalResults === this.promise.results && read.totalPages === this.promise.pages;
      if (read.page === next && same) page = this.take(read);
    } catch (error) {
      if (!notChecked(error)) throw error;
    }
    const held = page ? page.records.length + page.problems.length : 0;
    if (!page || held === 0) return null;
    const text = `${this.options.resource} list page ${next}, past the ${this.promise.pages} pages page 1 promised, holds ${held} records: total_results (${this.promise.results}) ${UNDERCOUNT}`;
    return { moved: { text, page: next, undercount: true }, page };
  }

  take(page: ListPage<T>): ListPage<T> {
    this.taken.add(page.page);
    const held = page.records.length + page.problems.length;
    if (page.page === 1) {
      this.firstHeld = held;
      const sizes = [page.perPage, this.promise.pages > 1 && held > 0 ? held : undefined];
      const known = sizes.filter((n): n is number => n !== undefined && n > 0);
      this.firstSize = known.length ? Math.min(...known) : undefined;
    }
    const { keyOf } = this.options;
    if (page.page === 1)
      this.first = page.records[0] ? keyOf(page.records[0]) : (page.problems[0]?.key ?? null);
    // Full by its per_page, or by page 1's count (the size really served, when more pages follow):
    // a server echoing the per_page asked while it serves fewer hid its capped totals.
    const served = this.promise.pages > 1 && this.firstHeld > 0 && held >= this.firstHeld;
    if (page.page === Math.max(1, this.promise.pages) && page.perPage !== undefined) {
      this.lastFull = served || held >= page.perPage;
      this.lastShort = !this.lastFull;
    }
    this.checkPromiseKept(page);
    const { resource, problemSeverity } = this.options;
    const selects = this.options.otherEnd?.narrower?.selects;
    const records: T[] = [];
    // An unreadable record repeated verbatim (shifted onto the next page) is read once, as a record
    // is: counted twice, it made up for a record the shift skipped, and the count proved a gap whole.
    const problems = page.problems.filter((p) => p.key === null || this.firstUnreadable(p.key, p.reason));
    for (const p of problems) if (p.severity === 'critical') this.narrow(p.key);
    // A second record of a name read on another page may be that record, changed and shifted here:
    // counted, it stood in for the one the shift skipped. A problem, uncounted (on its first's page: counted).
    const here = new Set<string>();
    let shifted = 0;
    for (const record of page.records) {
      const key = keyOf(record);
      // A repeat shifted onto the next page while we read: the same record, read once.
      const admission = this.seen.admit(key, record);
      const onThisPage = here.has(key);
      here.add(key);
      if (selects?.(record)) this.narrow(key);
      if (admission.kind === 'new') records.push(record);
      else if (admission.kind === 'repeat') this.repeats++;
      else {
        if (admission.kind === 'second' && !onThisPage) {
          shifted++;
          this.uncounted.first ||= key;
        }
        // A second record, or one differing only in case, left unchecked: it may be the one in quarantine.
        const severity = problemSeverity?.(record);
        problems.push({
          resource,
          key,
          page: page.page,
          reason: admission.reason,
          ...(severity ? { severity } : {}),
        });
      }
    }
    this.received += records.length + problems.length - shifted;
    this.uncounted.count += shifted;
    return { ...page, records, problems };
  }

  /** Counts a name the narrower search selects toward what the read held of it: once. */
  private narrow(key: string | null): void {
    if (key === null) this.narrowedNameless++;
    else this.narrowedNames.add(key);
  }

  /** False for an unreadable record taken already (the same name and reason): a repeat. */
  private firstUnreadable(key: string, reason: string): boolean {
    this.unreadable.add(this.fold(key));
    const read = `${this.fold(key)}\n${reason}`;
    return !this.unreadableRead.has(read) && Boolean(this.unreadableRead.add(read));
  }

  /** A page with other totals than page 1's: the account changed while it was read. */
  private checkPromiseKept(page: ListPage<T>): void {
    const listing = `${this.options.resource} list`;
    let text: string | null = null;
    if (page.totalResults !== this.promise.results)
      text = `total_results changed from ${this.promise.results} to ${page.totalResults} while ${listing} pages were read (page ${page.page}): the account changed during the scan`;
    else if (page.totalPages !== this.promise.pages)
      text = `total_pages changed from ${this.promise.pages} to ${page.totalPages} while ${listing} pages were read (page ${page.page}); the listing stopped at the page count page 1 promised`;
    if (text === null) return;
    if (this.onMove() === 'fail') throw new IncompleteListingError(text, { retryable: true });
    this.moved ??= { text, page: page.page };
    // Records shift as the account changes: read on to the most pages any page reported, a tenth
    // more than page 1's count at most (a server whose every page reports more never runs away).
    const limit = Math.min(
      this.options.maxPages ?? MAX_PAGES,
      this.promise.pages + Math.max(2, Math.ceil(this.promise.pages / 10)),
    );
    this.pages = Math.max(this.pages, Math.min(limit, page.totalPages));
  }
}

/**
 * Pages 2…`pages` (in `order`), as parse functions in the order they arrive. Up to `concurrency` requests are in
 * flight; each answer that arrives sends the next request at once (in the callback, whatever the
 * reader is doing) and waits until the reader parses it. No request leaves while `concurrency`
 * answers wait, so a slow reader holds the listing back instead of buffering it. The first failure
 * ends it; so does a reader that stops: nothing more is sent.
 */
async function* fetchAhead<T>(
  options: PaginateOptions<T>,
  order: PageOrder,
  onArrival: () => void,
): AsyncGenerator<() => ListPage<T>> {
  const concurrency = Math.max(1, options.concurrency ?? 4);
  let inflight = 0;
  let closed = false;
  // Set from the callbacks; a cast keeps TypeScript from narrowing it to null in the loop below.
  let failure = null as { readonly error: unknown } | null;
  const arrived: Array<() => ListPage<T>> = [];
  let wake: (() => void) | null = null;
  const signal = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const launch = () => {
    while (!closed && failure === null && inflight < concurrency && arrived.length < concurrency) {
      const page = order.next();
      if (page === undefined) return;
      inflight++;
      let pending: Promise<() => ListPage<T>>;
      try {
        pending = options.fetchPage(page);
      } catch (error) {
        // A fetchPage that throws instead of rejecting fails the listing all the same.
        inflight--;
        failure ??= { error };
        signal();
        return;
      }
      pending.then(
        (parse) => {
          inflight--;
          arrived.push(parse);
          onArrival();
          launch();
          signal();
        },
        (error: unknown) => {
          inflight--;
          failure ??= { error };
          signal();
        },
      );
    }
  };
  try {
    // Launched again at each turn: a page just parsed may have raised the count to read (onMove).
    for (launch(); inflight > 0 || arrived.length > 0; launch()) {
      if (failure) throw failure.error;
      const parse = arrived.shift();
      if (!parse) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      // Its place in the queue is free: the next request leaves before this page is parsed. Then let
      // answers that arrived meanwhile send theirs before parsing holds the thread for a few
      // milliseconds: pages arrive in bursts, and parsing a burst before the next sends would add
      // its time to every round.
      launch();
      await new Promise((resolve) => setImmediate(resolve));
      yield parse;
    }
    if (failure) throw failure.error;
  } finally {
    closed = true;
  }
}

/**
 * Page 1 promised more pages than its own total needs at the size it served, and a page repeated
 * records read before: the pages beyond may hold anything, and the count adds up over them. A page repeating an earlier one (read once,
 * uncounted) with a total cut to match hid the records it stood in for, behind a count that held.
 */
function pagesBeyondNeed<T>(
  admission: PageAdmission<T>,
  promise: ListingPromise,
  options: PaginateOptions<T>,
): Move | null {
  const size = admission.firstSize;
  // Without a repeat, a page beyond need held nothing the count missed (a server that counts one
  // page too many serves it empty): only a repeat, uncounted, can hide records behind it.
  if (size === undefined || admission.repeats === 0) return null;
  const needed = Math.max(1, Math.ceil(promise.results / size));
  if (promise.pages <= needed) return null;
  return {
    text: `page 1 of ${options.source} promised ${promise.pages} pages for ${promise.results} ${options.resource}s at ${size} a page, where ${plural(needed, 'page')} hold them: the totals disagree with each other, so the count cannot prove the pages read held every ${options.resource}`,
    page: promise.pages,
  };
}

/** At the end, records + problems must be what page 1 promised: fewer or more means the listing moved. */
function countMismatch<T>(
  admission: PageAdmission<T>,
  promise: ListingPromise,
  options: PaginateOptions<T>,
): Move | null {
  const received = admission.received;
  if (received === promise.results) return null;
  const more = received > promise.results;
  // Second records of names read on another page are not counted (PageAdmission.take): say so, and
  // which, or an account listing one name twice reads as an account that keeps moving.
  const { count, first } = admission.uncounted;
  const twice =
    count > 0 && !more
      ? `, and ${plural(count, 'second record')} of a name read on another page (${JSON.stringify(cutText(first, 100))}${count > 1 ? ' and others' : ''}) ${count > 1 ? 'were' : 'was'} not counted: a record changed and shifted onto the next page may stand in for one the shift skipped; if it repeats on a quiet account, ask the reseller why the name is listed twice`
      : '';
  return {
    text: `read ${received} of ${promise.results} ${options.resource}s from ${options.source}: ${more ? 'more records arrived than total_results promised' : 'the pages held fewer records than total_results promised'}${twice}; the account changed while it was read, or the server's paging is inconsistent`,
    page: promise.pages,
  };
}
