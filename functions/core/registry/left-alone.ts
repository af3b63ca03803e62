import { cutText, safeText } from '../base/text';
import { notFoundExplained, type ResellerSide } from '../findings/registry-rules';
import type { RdapQueryError } from './rdap-errors';
import type { ServerTally } from './server-problems';

/**
 * When the registry check leaves a server alone for what it answers, not for failing: 404s to every
 * domain asked (knowsNone), or 400s to every name (answeredForName). Such a server would spend its
 * whole share of the budget on answers that check nothing; but a working registry may answer ten
 * 404s in a row too, for domains deleted there, and those are the findings the check exists for.
 * So ten 404s in a row, no record between, put the server in doubt (from its first lookup, or after
 * a backend broke mid-scan: its 404s, repeated when asked again, became findings), and it is left
 * alone only once a few control lookups (domains the reseller lists as plainly active, from the
 * sample first) are 404s as well.
 */

/** A domain asked, as these rules read it (registry-check's RegistryCandidate). */
export interface AskedDomain extends ResellerSide {
  readonly reason: string;
  readonly remembered?: string;
}

/** What these rules keep of one server (registry-check's ServerState). */
export interface AnswerRuns extends ServerTally {
  /** It has answered once: until then it gets one lookup at a time, so a dead server costs three. */
  answered: boolean;
  /** Its 400 answers since its last record or 404 (answeredForName). */
  refusalsInRow: number;
  /** Its 404s since its last record for domains that do not explain one (knowsNone): neither in quarantine nor added within a day. */
  unexplainedNotFound: number;
  /** Control lookups started while it was in doubt (takeControl), and of them answered 404. */
  controlsAsked: number;
  controlsNotFound: number;
  /**
   * Where takeControl's searches go on (queue indexes): before `activeFrom` no domain is plainly
   * active, before `sampleFrom` none of the sample is. Scanned once, so a long run of expired domains
   * costs each doubt nothing more (at 200 000 domains a rescan per doubt was billions of reads).
   */
  activeFrom: number;
  sampleFrom: number;
}

/** The limits of registry-check's input these rules read. */
export interface LeaveAloneLimits {
  readonly now: number;
  readonly failuresToStop?: number;
  readonly refusalsToStop?: number;
  readonly notFoundToStop?: number;
}

/** A server's tally before its first lookup. */
export const freshRuns = (): AnswerRuns => ({
  failuresInRow: 0,
  answered: false,
  refusalsInRow: 0,
  unexplainedNotFound: 0,
  controlsAsked: 0,
  controlsNotFound: 0,
  activeFrom: 0,
  sampleFrom: 0,
  stopped: false,
  asked: false,
  lastError: '',
  notChecked: 0,
  notFound: [],
  known: 0,
  distrusted: false,
  contradicted: 0,
  perName: new Map(),
  saysWhy: false,
  unrepeated: [],
  notAskedAgain: 0,
  unansweredAgain: 0,
  outOfTimeAgain: 0,
});

/** Control lookups that must answer 404 too before a server in doubt is left alone. */
export const CONTROLS = 3;

/**
 * True while a server has answered `notFoundToStop` lookups in a row with a 404 its domain does not
 * explain, no record between (from its first lookup, or since a backend broke mid-scan): its next
 * lookup is a control (takeControl), one at a time, and a record from any lookup ends the doubt
 * (knowsOne). Not counted: a 404 the domain explains
 * (notFoundExplained) or memory expects (a re-check of a domain the registry no longer knew or had
 * in redemption): re-checks and flagged domains are asked first, and a registry that works gives those.
 */
export const inDoubt = (limits: LeaveAloneLimits, state: AnswerRuns): boolean =>
  !state.stopped && state.unexplainedNotFound >= (limits.notFoundToStop ?? 10);

/** A record: the server knows a domain asked, so the 404s before it start no doubt, and a doubt ends. */
export function knowsOne(state: AnswerRuns): void {
  state.known++;
  endDoubt(state);
}

/** The 404s so far are judged as any, and the controls of a doubt forgotten. */
function endDoubt(state: AnswerRuns): void {
  state.unexplainedNotFound = state.controlsAsked = state.controlsNotFound = 0;
}

/** A domain whose 404 at a registry that works would be news: listed, active, not expired. */
const plainlyActive = (candidate: AskedDomain, now: number): boolean =>
  !expectedNotFound(candidate) && !notFoundExplained(candidate, now) && candidate.date_expiry > now;

const expectedNotFound = (candidate: AskedDomain): boolean =>
  candidate.remembered === 'registry_unknown' || candidate.remembered === 'registry_redemption';

/**
 * Puts a control first in a server's queue: the first plainly active domain of the sample left (a
 * hash picks those; the flagged are picked for their troubles, which come together, and the first
 * ten were next to each other in line), else the first plainly active one. None left: a server that
 * knew none, or whose controls were 404s, is left alone; one that knew some is out of doubt.
 */
export function takeControl(
  limits: LeaveAloneLimits,
  state: AnswerRuns & { readonly items: { readonly candidate: AskedDomain }[]; readonly head: number },
): void {
  const { items, head } = state;
  const active = (i: number) => plainlyActive((items[i] as (typeof items)[number]).candidate, limits.now);
  let first = Math.max(head, state.activeFrom);
  while (first < items.length && !active(first)) first++;
  if (first === items.length) {
    state.activeFrom = first;
    // Nothing left to tell a working registry from a broken one. One that knew none, or whose controls
    // were 404s too (no record: that ends a doubt; a backend broken mid-scan, the rest expired domains):
    // its 404s are believed neither way, so the rest would only spend the budget. One that knew some
    // and no control said otherwise: its run of 404s is judged as any (asked again, believed when it
    // knew as many), rather than left unchecked.
    if (state.known && !state.controlsNotFound) endDoubt(state);
    else knewNone(state);
    return;
  }
  let sample = Math.max(first, state.sampleFrom);
  while (sample < items.length && !(items[sample]?.candidate.reason === 'sample' && active(sample))) sample++;
  const chosen = sample < items.length ? sample : first;
  const [control] = items.splice(chosen, 1);
  if (control) items.splice(head, 0, control);
  // The move shifted what lay between head and `chosen` one on: still searched, still without one.
  state.activeFrom = first + 1;
  state.sampleFrom = sample < items.length ? sample + 1 : sample;
  state.controlsAsked++;
}

/**
 * Counts a 404 (or 410) against the server: a control's while it is in doubt (controls go one at a
 * time, so every answer after the first control started is one), and leaves it alone once
 * {@link CONTROLS} controls were 404s too.
 */
export function knowsNone(limits: LeaveAloneLimits, state: AnswerRuns, candidate: AskedDomain): void {
  if (!expectedNotFound(candidate) && !notFoundExplained(candidate, limits.now)) state.unexplainedNotFound++;
  if (state.controlsAsked > 0) state.controlsNotFound++;
  if (inDoubt(limits, state) && state.controlsNotFound >= CONTROLS) knewNone(state);
}

function knewNone(state: AnswerRuns): void {
  const knew = state.known
    ? ` after knowing ${state.known} of the domains asked`
    : ' and knew none of the domains asked';
  const controls = state.controlsNotFound
    ? `, not even ${state.controlsNotFound} the reseller lists as active asked to confirm it`
    : ' (and the reseller lists none of the rest as active, to confirm it)';
  state.stopped = state.saysWhy = true;
  state.lastError = `it answered ${state.unexplainedNotFound} lookups${state.known ? ' in a row' : ''} with HTTP 404 or 410${knew}${controls}: its 404s say nothing of them; left alone for the rest of this scan`;
}

/**
 * A 400 (RdapQueryError): the server's word on that one name, neither its failure (a healthy
 * registry that refuses three odd names in a row is not left alone) nor its success (a failure run
 * goes on). A server that answered nothing else to its first lookups, or that answered before and
 * then nothing else to `refusalsToStop` lookups in a row, is left alone: it reads none of our
 * queries (any more), and asking it the rest would spend its whole share of the budget.
 */
export function answeredForName(
  limits: LeaveAloneLimits,
  state: AnswerRuns,
  candidate: AskedDomain,
  error: RdapQueryError,
): 'failed' {
  const named = state.perName.get(error.status) ?? [];
  named.push(cutText(safeText(candidate.domain_name), 80));
  state.perName.set(error.status, named);
  const run = ++state.refusalsInRow;
  if (state.stopped) return 'failed'; // a lookup in flight when it was left alone: said once already
  if (!state.answered && run >= (limits.failuresToStop ?? 3)) {
    state.stopped = true;
    state.saysWhy = true;
    state.lastError = `it answered ${run} lookups with HTTP 400 before any record or 404: it reads none of the queries; left alone for the rest of this scan`;
  } else if (state.answered && run >= (limits.refusalsToStop ?? 10)) {
    state.stopped = true;
    state.saysWhy = true;
    state.lastError = `it answered ${run} lookups in a row with HTTP 400 after answering others with a record or a 404: it no longer reads the queries; left alone for the rest of this scan`;
  }
  return 'failed';
}
