import {
  AuthenticationError,
  DeadlineError,
  IncompleteListingError,
  NotFoundError,
  ResellerApiError,
} from '../base/errors';
import { normalizeDomainName } from '../base/text';
import type { Problem, ResellerClient } from '../reseller/client';
import { decideMove, type OnMove } from '../reseller/paging';
import { PACE_MARGIN } from './moves';

/**
 * Looks up by name the remembered domains a whole read did not list, checking at run time the two
 * things the API documentation leaves unsaid: what a `domain_name` search without a hit answers
 * (a 404 counts as no hit only once a search for a name the read did list answered with it), and
 * whether the server searches by `domain_name` at all (one that answers with other names has every
 * name answered by one whole read of the domain list instead of a whole read per name and spelling).
 */

/** What {@link confirmUnlisted} reads and adds to of a scan's gathering. */
export interface UnlistedGathering {
  readonly problems: Problem[];
  readonly incomplete: string[];
  /** The first domain read, as the server spelled it. */
  readonly listed?: string;
  /** The last domain read after the first (its name as the server spelled it is asked of the client). */
  readonly lastListed?: { readonly domain_name: string };
}

/** Remembered domains a read did not list that are looked up by name, at most, each read. */
const UNLISTED_LOOKUPS = 10;

/**
 * Looks a few of the remembered names a whole read did not list (ScanOptions.unlisted) up by name,
 * checking what the server's search answers ({@link lookUpUnlisted}): one the account holds fails the attempt (read again), or, on a read that reads a
 * listing that moves to its end (`onMove`), marks this one incomplete with an unnamed problem, as a
 * moved listing is: its findings are still alerted. After a read with an unnamed unreadable record,
 * or lookups that settle nothing, no domain is said to have left.
 */
export async function confirmUnlisted(
  client: ResellerClient,
  unlisted: () => Promise<readonly string[]>,
  gathered: UnlistedGathering,
  onMove: OnMove,
): Promise<void> {
  const problems = gathered.problems.filter((p) => p.resource === 'domain');
  if (problems.some((p) => p.key === null)) return;
  const unreadable = new Set(problems.map((p) => normalizeDomainName(p.key as string)));
  const names = (await unlisted()).filter((n) => !unreadable.has(normalizeDomainName(n)));
  const last =
    gathered.lastListed && (client.rawKeyOf(gathered.lastListed) || gathered.lastListed.domain_name);
  const controls = [gathered.listed, last].filter((n): n is string => n !== undefined);
  const lookups = { lookups: names.slice(0, UNLISTED_LOOKUPS), all: names, controls };
  const settled = await lookUpUnlisted(client, lookups).catch((error: unknown) => {
    // The read was whole: lookups cut by the budget, refused, or whose own listing broke its promise
    // (a search counting a record it does not hand out) judge nobody gone; thrown, the last would
    // fail every read of every run, and nothing the read found would be alerted.
    const cut = error instanceof DeadlineError;
    const settlesNothing =
      error instanceof IncompleteListingError ||
      (error instanceof ResellerApiError && !(error instanceof AuthenticationError));
    if (!cut && !settlesNothing) throw error;
    return { unsettled: `${cut ? "within the scan's time budget " : ''}(${error.message})` };
  });
  if ('unsettled' in settled)
    return markIncomplete(
      gathered,
      `the domains the read did not list could not be looked up ${settled.unsettled}: the domains read were checked, but none is judged to have left the account`,
    );
  const missed = settled.held;
  if (!missed) return;
  // Whether a whole read still fits, judged as a listing's move is, with the whole read taken.
  if (decideMove(onMove, { read: 1, pages: 1 }) === 'fail')
    throw new IncompleteListingError(
      `${missed} is in the account, but the pages read did not list it: the account changed while it was read`,
      { retryable: true },
    );
  markIncomplete(
    gathered,
    `${missed} is in the account, but the pages read did not list it: the account changed while it was read; the domains read were checked, but domains may be missing from what was read, so none is judged to have left the account`,
  );
}

/** The read is reported incomplete, for `reason`, with one unnamed problem saying so. */
function markIncomplete(gathered: UnlistedGathering, reason: string): void {
  gathered.incomplete.push(reason);
  gathered.problems.push({ resource: 'domain', key: null, page: 0, reason });
}

/** What the lookups settled: a name the account holds, none (they left), or why nothing is judged (in brackets). */
type UnlistedLookup = { readonly held: string } | { readonly held: null } | { readonly unsettled: string };

/** Where the lookups start: the names to look up, all the names unlisted, and one name the read listed. */
interface UnlistedNames {
  /** Looked up one by one (the first alone: it shows whether the server searches at all). */
  readonly lookups: readonly string[];
  /** Every remembered name the read did not list: a whole read answers for all of them at once. */
  readonly all: readonly string[];
  /**
   * Names as the read listed them (the first and the last), to check what a 404 means: the second
   * is searched only when the first cannot be, so one name the server cannot search does not decide.
   * Empty when the read listed none.
   */
  readonly controls: readonly string[];
}

/**
 * The lookups, settled. Throws what a lookup throws other than a 404 for no hit (the scan judges a
 * cut, refused or stopped lookup as it always has).
 */
async function lookUpUnlisted(client: ResellerClient, names: UnlistedNames): Promise<UnlistedLookup> {
  let notFound: NotFoundError | undefined;
  const how = {
    stopUnfiltered: true,
    onNotFound: (error: NotFoundError) => {
      notFound ??= error;
    },
  };
  const [first, ...rest] = names.lookups;
  if (first === undefined) return { held: null };
  const firstFound = await client.lookUpDomain(first, how);
  if (firstFound === 'unfiltered') return readWholeList(client, names.all);
  const found = [firstFound, ...(await Promise.all(rest.map((name) => client.lookUpDomain(name, how))))];
  // A name found is in the account, whatever another search answered: a whole read that leaves it
  // out, as the read did, must not outweigh it.
  const held = found.find((domain) => domain !== null && domain !== 'unfiltered');
  if (held && typeof held === 'object') return { held: held.domain_name };
  if (found.includes('unfiltered')) return readWholeList(client, names.all);
  if (!notFound) return { held: null };
  const doubt = await searchDoubt(client, names.controls);
  return doubt
    ? { unsettled: `(${notFound.message}; ${doubt}, so its 404 does not say a domain is not there)` }
    : { held: null };
}

/**
 * Why this server's 404 may not mean "no hit", or undefined when a search for one of `controls`
 * (names the read listed, tried in turn) found it: the search works, and a 404 for another name is
 * no hit. A control whose search fails or finds nothing (a name the server cannot search) hands on
 * to the next, except a 404: answered for a name the read listed, it shows this server's 404 does
 * not mean "no hit", whatever a search for another name finds. A refused key is thrown, never read
 * as a search that settled nothing.
 */
async function searchDoubt(client: ResellerClient, controls: readonly string[]): Promise<string | undefined> {
  if (controls.length === 0) return 'no domain was read to check the search against';
  const why: string[] = [];
  for (const control of new Map(controls.map((c) => [normalizeDomainName(c), c])).values()) {
    try {
      const found = await client.lookUpDomain(control, { stopUnfiltered: true });
      if (found !== null && found !== 'unfiltered') return undefined;
      why.push(`a search for ${control}, which the read listed, did not find it`);
    } catch (error) {
      const settlesNothing = error instanceof ResellerApiError || error instanceof IncompleteListingError;
      if (!settlesNothing || error instanceof AuthenticationError) throw error;
      why.push(`a search for ${control}, which the read listed, failed too (${error.message})`);
      // A 404 for a name the account holds proves this server's 404 is not "no hit": no other control outweighs it.
      if (error instanceof NotFoundError) break;
    }
  }
  return why.join(', and ');
}

/**
 * One whole read of the domain list, unfiltered, for a server that does not search by name: the
 * first of `names` it lists (or holds as an unreadable record) is held; none is held only when the
 * read is whole (page 1's totals kept, nothing moved, every unreadable record named).
 */
async function readWholeList(client: ResellerClient, names: readonly string[]): Promise<UnlistedLookup> {
  const wanted = new Set(names.map(normalizeDomainName));
  const unsettled = (why: string) => ({
    unsettled: `(the server does not search by domain_name, and the domain list read instead ${why})`,
  });
  const pace = { left: client.remainingMs, taken: 0 };
  try {
    for await (const page of client.listDomains({}, undefined, { onMove: 'report' })) {
      if (page.incomplete) return unsettled(`was not whole (${page.incomplete})`);
      const listed = [...page.records.map((d) => d.domain_name), ...page.problems.map((p) => p.key)];
      if (listed.includes(null)) return unsettled('holds a record without a readable name');
      const held = listed.find((name) => wanted.has(normalizeDomainName(name as string)));
      if (held) return { held: held as string };
      const late = outpaced(client, pace, page.totalPages);
      if (late) return unsettled(late);
    }
  } catch (error) {
    if (!(error instanceof IncompleteListingError)) throw error;
    return unsettled(`was not whole (${error.message})`);
  }
  return { held: null };
}

/** Pages of the whole read taken before its pace is judged: the first round arrives at once. */
const PACED_AFTER = 3;

/**
 * Why the whole read stops here, or undefined: once a few pages are in, the rest must fit in the
 * time left with half again to spare ({@link PACE_MARGIN}, as a second read of a moved listing),
 * else the read is given up at once, leaving the budget to the rest of the scan (the registry check
 * shares it) instead of reading on into the deadline to settle nothing. Without a deadline, nothing
 * is late.
 */
function outpaced(client: ResellerClient, pace: { readonly left: number; taken: number }, pages: number) {
  pace.taken++;
  const remaining = client.remainingMs;
  const rest = ((pace.left - remaining) * Math.max(0, pages - pace.taken)) / pace.taken;
  if (pace.taken < PACED_AFTER || !(PACE_MARGIN * rest > remaining)) return undefined;
  return `would not end within the scan's time budget (${pace.taken} of ${pages} pages in ${Math.round((pace.left - remaining) / 1000)} s)`;
}
