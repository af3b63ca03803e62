import { cutText, normalizeDomainName, safeText } from '../base/text';
import type { RegistryFindingKind, RegistryView } from '../findings/classify';
import {
  judgeNotFound,
  judgeRegistry,
  type RegistryPolicy,
  type ResellerSide,
} from '../findings/registry-rules';
import type { RdapBootstrap } from './bootstrap';
import {
  type AnswerRuns,
  answeredForName,
  freshRuns,
  inDoubt,
  knowsNone,
  knowsOne,
  takeControl,
} from './left-alone';
import { type RdapClient, RdapDeadlineError, type RdapLookup } from './rdap-client';
import { RdapError, RdapQueryError, RdapRateLimitError } from './rdap-errors';
import { type RegistryProblem, serverProblems } from './server-problems';

/**
 * One registry check: the chosen domains looked up at their registries' RDAP servers, within a
 * query budget, each answer judged by the registry rules. Never louder than it knows and never the
 * scan's failure: a TLD without RDAP or a registry without a published expiration is counted as
 * not checkable; a server that fails or hangs is one problem line (info) and, after a few failures
 * in a row, left alone for the rest of the scan, its remaining domains counted as not checked.
 */

/** Why a domain is checked, in the order the budget is spent (re-checks past their share last: planQueue). */
export const CHECK_REASONS = ['recheck', 'flagged', 'sample'] as const;
export type CheckReason = (typeof CHECK_REASONS)[number];

/**
 * The places of the query budget memory's re-checks always have: half, rounded up. They come first,
 * so a remembered finding is not left unchecked by a busy day; the other half is the flagged
 * domains' and the sample's, so thousands of remembered findings (one registry off for a whole TLD)
 * cannot leave the rest of the account unchecked. Places either side leaves unused go to the other.
 */
export const recheckShare = (budget: number): number => Math.ceil(budget / 2);

/** A domain the check may look up: the reseller's side, why, and its place within that reason. */
export interface RegistryCandidate extends ResellerSide {
  readonly reason: CheckReason;
  /** Lower goes first within its reason. */
  readonly rank: number;
  /** A re-check's remembered finding: what an answer must speak to before it resolves it. */
  readonly remembered?: RegistryFindingKind;
}

export type { RegistryProblem } from './server-problems';

/** The counts the report shows. */
export interface RegistryCounts {
  /** Candidates by reason. */
  readonly candidates: Readonly<Record<CheckReason, number>>;
  /** Domains the check looked up (the query budget counts these; retries and redirects are `requests`). */
  queries: number;
  /** HTTP requests sent to RDAP servers, retries and redirects included. */
  requests: number;
  /** Answered: agreeing, disagreeing, without an expiration, or unknown to the registry. */
  checked: number;
  agree: number;
  disagree: number;
  readonly not_checkable: { no_rdap_service: number; no_expiration: number; not_found: number };
  /**
   * Not looked up (budget, time), at a failing server or one left alone (server_failed; a would-be
   * finding's 404 not asked again counts in time or here, askUnknownAgain), or
   * answered 400 for that name alone (name_refused: RdapQueryError, an answer of a server that
   * works). Each candidate is counted once: checked, no_rdap_service, or one of these.
   */
  readonly not_checked: { budget: number; time: number; server_failed: number; name_refused: number };
}

/** What the check found. */
export interface RegistryCheckResult {
  /** By name: what the registry says that the reseller does not. */
  readonly views: Map<string, RegistryView>;
  readonly counts: RegistryCounts;
  readonly problems: RegistryProblem[];
  /**
   * Domains to re-check (memory's) that could not be checked this time (their TLD without a server
   * in the bootstrap included), or whose registry said nothing of them (404, or neither a status
   * nor an expiration): memory keeps what it knew.
   */
  readonly unconfirmed: string[];
}

/** What {@link checkRegistry} needs. */
export interface RegistryCheckInput {
  readonly candidates: readonly RegistryCandidate[];
  readonly bootstrap: RdapBootstrap;
  readonly client: RdapClient;
  readonly now: number;
  /** Most domains looked up in this scan. */
  readonly budget: number;
  readonly policy: RegistryPolicy;
  /** Failed lookups in a row at one server before it is left alone for this scan. @default 3 */
  readonly failuresToStop?: number;
  /**
   * 400 answers in a row (no record nor 404 between) at a server that answered before, after
   * which it is left alone for this scan: ten odd names in a row is no healthy registry. @default 10
   */
  readonly refusalsToStop?: number;
  /**
   * 404 (or 410) answers in a row at a server, no record between, after which it is in doubt
   * (left-alone.ts): left alone for this scan when its control lookups are 404s too, as its 404s
   * then say nothing of the domains asked, and asking it the rest would spend the budget of
   * registries that answer. @default 10
   */
  readonly notFoundToStop?: number;
  /** Lookups in flight at once over every server. @default 16 */
  readonly concurrency?: number;
  /** Lookups in flight at once at one server (the client's own limit, RdapClient.concurrencyPerServer). @default 2 */
  readonly perServer?: number;
}

/** A domain to look up, and where. */
interface QueueItem {
  readonly candidate: RegistryCandidate;
  readonly baseUrl: string;
  /** Its place in the order the budget was spent in. */
  readonly index: number;
}

/** One server: its domains still to look up, and what happened there. */
interface ServerState extends AnswerRuns {
  /** Its domains in queue order; those before `head` are taken (an index, not shift(): linear at 200 000). */
  readonly items: QueueItem[];
  head: number;
  active: number;
  /** Its 404s that would be findings (registry_unknown), asked again and judged once every lookup is done. */
  unknown: { readonly candidate: RegistryCandidate; readonly view: RegistryView }[];
}

/** Looks the candidates up, most important first, and judges every answer. */
export async function checkRegistry(input: RegistryCheckInput): Promise<RegistryCheckResult> {
  const counts = emptyCounts(input.candidates);
  const result: RegistryCheckResult = { views: new Map(), counts, problems: [], unconfirmed: [] };
  const { queue, beyond } = planQueue(input, result);
  const servers = byServer(queue);
  const run = new LookupRun(input, result, servers, beyond);
  const workers = Math.max(1, Math.min(input.concurrency ?? 16, queue.length));
  await Promise.all(Array.from({ length: workers }, () => run.work()));
  for (const item of beyond.slice(run.beyondTaken)) {
    counts.not_checked.budget++;
    unconfirmed(result, item.candidate);
  }
  await askUnknownAgain(input, result, servers);
  for (const state of servers.values()) judgeUnknown(result, state);
  counts.requests = input.client.requests;
  result.problems.push(...serverProblems(servers));
  return result;
}

/**
 * The domains to look up, in the order the budget is spent, and those beyond the budget in the same
 * order: a place a server left alone does not use goes to the first of them. Memory's re-checks
 * (in their rotating order) have the first places up to their share, then the flagged domains and
 * the sample, then the re-checks past their share: so either side has what the other leaves.
 */
function planQueue(
  input: RegistryCheckInput,
  result: RegistryCheckResult,
): { queue: QueueItem[]; beyond: QueueItem[] } {
  const rechecks: Omit<QueueItem, 'index'>[] = [];
  const others: Omit<QueueItem, 'index'>[] = [];
  for (const candidate of ordered(input.candidates)) {
    const service = input.bootstrap.serviceFor(candidate.domain_name);
    if (!service) {
      result.counts.not_checkable.no_rdap_service++;
      // A remembered finding whose TLD the bootstrap no longer serves was not looked at: memory keeps it.
      unconfirmed(result, candidate);
      continue;
    }
    (candidate.reason === 'recheck' ? rechecks : others).push({ candidate, baseUrl: service.baseUrl });
  }
  const share = recheckShare(input.budget);
  const line = [...rechecks.slice(0, share), ...others, ...rechecks.slice(share)];
  const queue: QueueItem[] = [];
  const beyond: QueueItem[] = [];
  line.forEach((item, index) => {
    (index < input.budget ? queue : beyond).push({ ...item, index });
  });
  return { queue, beyond };
}

/** The queue split by RDAP server (origin), each keeping the queue's order. */
function byServer(queue: readonly QueueItem[]): Map<string, ServerState> {
  const servers = new Map<string, ServerState>();
  for (const item of queue) queueAt(servers, item);
  return servers;
}

/** Puts `item` last in its server's queue, the server's state made on its first item. */
function queueAt(servers: Map<string, ServerState>, item: QueueItem): void {
  const origin = new URL(item.baseUrl).origin;
  let state = servers.get(origin);
  if (!state) {
    state = { ...freshRuns(), items: [], head: 0, active: 0, unknown: [] };
    servers.set(origin, state);
  }
  state.items.push(item);
}

/**
 * The lookups of one check, run by a few workers. Each server gets at most its own concurrency of
 * lookups at once (one until it has answered), so no worker waits on one server while another could
 * answer, and a failing server is stopped after a few failures, not after every worker tried it.
 */
class LookupRun {
  private readonly perServer: number;
  private outOfTime = false;
  /** Domains beyond the budget already given a place (taken from the front: an index, not shift()). */
  beyondTaken = 0;
  private wake: () => void = () => {};

  constructor(
    private readonly input: RegistryCheckInput,
    private readonly result: RegistryCheckResult,
    private readonly servers: Map<string, ServerState>,
    /** Domains beyond the budget, in line for the places a server left alone does not use. */
    private readonly beyond: QueueItem[],
  ) {
    this.perServer = Math.max(1, input.perServer ?? 2);
  }

  /** One worker: takes the next lookup any server has room for, until none is left. */
  async work(): Promise<void> {
    for (;;) {
      const state = this.nextServer();
      if (!state) {
        // A lookup still running may yet leave its server alone, and give its places to others.
        if (![...this.servers.values()].some((s) => s.items.length > s.head || s.active)) return;
        await this.untilALookupEnds();
        continue;
      }
      if (!this.outOfTime && inDoubt(this.input, state)) takeControl(this.input, state);
      const item = state.items[state.head++] as QueueItem;
      if (this.outOfTime || state.stopped) {
        this.skip(state, item);
        continue;
      }
      state.active++;
      const outcome = await lookUp(this.input, this.result.counts, item.candidate, item.baseUrl, state);
      state.active--;
      const waiting = this.wake;
      this.wake = () => {};
      waiting();
      this.record(item, outcome);
    }
  }

  private record(item: QueueItem, outcome: Awaited<ReturnType<typeof lookUp>>): void {
    if (outcome === 'deadline') {
      this.outOfTime = true;
      this.result.counts.not_checked.time++;
      unconfirmed(this.result, item.candidate);
    } else if (outcome === 'deferred')
      return; // judged once every lookup is done (judgeUnknown)
    else if (outcome === 'failed' || outcome === 'silent') unconfirmed(this.result, item.candidate);
    else if (outcome) this.result.views.set(item.candidate.domain_name, outcome);
  }

  /** The server whose next domain comes first in the queue and that has room for one more lookup. */
  private nextServer(): ServerState | undefined {
    let best: ServerState | undefined;
    const first = (state: ServerState) => (state.items[state.head] as QueueItem).index;
    for (const state of this.servers.values())
      if (
        state.items.length > state.head &&
        state.active < (state.answered && !inDoubt(this.input, state) ? this.perServer : 1) &&
        (!best || first(state) < first(best))
      )
        best = state;
    return best;
  }

  private untilALookupEnds(): Promise<void> {
    return new Promise<void>((resolve) => {
      const previous = this.wake;
      this.wake = () => {
        previous();
        resolve();
      };
    });
  }

  private skip(state: ServerState, item: QueueItem): void {
    if (this.outOfTime) this.result.counts.not_checked.time++;
    else {
      this.result.counts.not_checked.server_failed++;
      state.notChecked++;
      // Its place in the budget is not spent: the next domain in line has it.
      const next = this.beyond[this.beyondTaken];
      if (next) {
        this.beyondTaken++;
        queueAt(this.servers, next);
      }
    }
    unconfirmed(this.result, item.candidate);
  }
}

/**
 * One lookup, counted: the view when the registry disagrees, null when not, `silent` when it answered
 * nothing to judge a remembered finding by, or why it did not happen. A registry that no longer knows
 * a domain it had in redemption has purged it: that is no all-clear, so memory keeps the finding.
 */
async function lookUp(
  input: RegistryCheckInput,
  counts: RegistryCounts,
  candidate: RegistryCandidate,
  baseUrl: string,
  state: ServerState,
): Promise<RegistryView | null | 'silent' | 'failed' | 'deadline' | 'deferred'> {
  counts.queries++;
  try {
    const answer = await input.client.lookupDomain(baseUrl, normalizeDomainName(candidate.domain_name));
    state.failuresInRow = 0;
    state.refusalsInRow = 0;
    state.answered = true;
    counts.checked++;
    if (answer.kind === 'not_found') {
      const unknown = notFoundView(candidate, input);
      if (unknown) state.unknown.push({ candidate, view: { ...unknown, server: answer.server } });
      const outcome = unknown ? 'deferred' : notFound(counts, state, candidate);
      knowsNone(input, state, candidate);
      return outcome;
    }
    return judgeFound(input, counts, candidate, answer, state);
  } catch (error) {
    if (error instanceof RdapDeadlineError) {
      counts.queries--;
      return 'deadline';
    }
    if (!(error instanceof RdapError)) throw error;
    // Named in a line of their own (serverProblems), not among the server's failures.
    if (error instanceof RdapQueryError) {
      counts.not_checked.name_refused++;
      return answeredForName(input, state, candidate, error);
    }
    counts.not_checked.server_failed++;
    state.notChecked++;
    state.failuresInRow++;
    // One line per server: the domain is left out, it is one of many.
    const message = error.message.replace(/the RDAP lookup of [^\s:,]+/, 'a lookup');
    if (!state.saysWhy) state.lastError = cutText(safeText(message), 300); // a lookup in flight when left alone for its answers
    // A server that asked for a wait the scan cannot make says so itself ("it is not asked again").
    state.asked = error instanceof RdapRateLimitError && error.retryAfterMs !== undefined;
    if (state.asked || state.failuresInRow >= (input.failuresToStop ?? 3)) state.stopped = true;
    return 'failed';
  }
}

/** A domain object, judged: the view when the registry disagrees, null when not, `silent` when it tells a re-check nothing. */
function judgeFound(
  input: RegistryCheckInput,
  counts: RegistryCounts,
  candidate: RegistryCandidate,
  answer: Extract<RdapLookup, { kind: 'found' }>,
  state: ServerState,
): RegistryView | null | 'silent' {
  knowsOne(state);
  const judged = judgeRegistry(candidate, answer.record, input.now, input.policy);
  if (judged.kind === 'no_expiration') {
    counts.not_checkable.no_expiration++;
    // Statuses without a date still tell a hold or a redemption is over (SIDN's .nl); none, nothing.
    // Nor can they tell that dates which disagreed agree now.
    const undecided = !answer.record.status.length || candidate.remembered === 'registry_expiry_mismatch';
    return candidate.reason === 'recheck' && undecided ? 'silent' : null;
  }
  if (judged.kind === 'agree') {
    counts.agree++;
    return null;
  }
  counts.disagree++;
  return { ...judged.view, server: answer.server };
}

/**
 * Every 404 that would be a finding is asked once more, once the other lookups are done (no scan
 * remembers a server: a 404 must hold within one). One more request each at most, through the
 * client's gate of that server and within the scan's time; none at a server left alone, nor at one
 * whose 404s judgeUnknown would not believe whatever the second answers. A 404 repeated stays a
 * would-be finding; one answered with the domain is judged by that record, and its server counted
 * as contradicting itself (judgeUnknown then believes none of its 404s); one not asked again (its
 * server left alone, the deadline) or not answered (a failure) is no finding and not checked
 * (unrepeated): a 404 the scan could not confirm.
 */
async function askUnknownAgain(
  input: RegistryCheckInput,
  result: RegistryCheckResult,
  servers: ReadonlyMap<string, ServerState>,
): Promise<void> {
  const asks: { state: ServerState; entry: ServerState['unknown'][number] }[] = [];
  for (const state of servers.values()) {
    const entries = state.unknown;
    if (!entries.length) continue;
    state.unknown = [];
    if (!believable(state, entries.length)) {
      state.unknown = entries; // judged (and not believed) as they are
      continue;
    }
    if (state.stopped) {
      // Left alone before they could be asked again: 404s not repeated, so not checked.
      for (const { candidate } of entries) unrepeated(result, state, candidate, 'left');
      continue;
    }
    for (const entry of entries) asks.push({ state, entry });
  }
  let next = 0;
  const work = async () => {
    for (let ask = asks[next++]; ask; ask = asks[next++]) {
      const { state, entry } = ask;
      const again = await askAgain(input, entry.candidate);
      if (again === 'not_found') state.unknown.push(entry);
      else if (again === 'failed' || again === 'time') unrepeated(result, state, entry.candidate, again);
      else {
        state.contradicted++;
        const view = judgeFound(input, result.counts, entry.candidate, again, state);
        if (view === 'silent') unconfirmed(result, entry.candidate);
        else if (view) result.views.set(entry.candidate.domain_name, view);
      }
    }
  };
  const workers = Math.max(1, Math.min(input.concurrency ?? 16, asks.length));
  await Promise.all(Array.from({ length: workers }, work));
}

/** The second answer to a 404: a 404 again, the domain, or none (a failure, the deadline). */
async function askAgain(
  input: RegistryCheckInput,
  candidate: RegistryCandidate,
): Promise<'not_found' | 'failed' | 'time' | Extract<RdapLookup, { kind: 'found' }>> {
  const service = input.bootstrap.serviceFor(candidate.domain_name);
  if (!service) return 'failed';
  try {
    const answer = await input.client.lookupDomain(
      service.baseUrl,
      normalizeDomainName(candidate.domain_name),
    );
    return answer.kind === 'not_found' ? 'not_found' : answer;
  } catch (error) {
    if (error instanceof RdapDeadlineError) return 'time';
    if (error instanceof RdapError) return 'failed';
    throw error;
  }
}

/**
 * A would-be finding's 404 that was not repeated because the second ask did not happen (its server
 * left alone, the scan's time) or got no answer: no finding, and not "the registry does not know it"
 * either (one 404 is not the registry's word, askUnknownAgain). The domain was not checked: counted so,
 * out of `checked`, named in a line of its own; memory keeps what it knew.
 */
function unrepeated(
  result: RegistryCheckResult,
  state: ServerState,
  candidate: RegistryCandidate,
  why: 'left' | 'failed' | 'time',
): void {
  result.counts.checked--;
  if (why === 'time') {
    result.counts.not_checked.time++;
    state.outOfTimeAgain++;
  } else {
    result.counts.not_checked.server_failed++;
    if (why === 'left') state.notAskedAgain++;
    else state.unansweredAgain++;
  }
  state.unrepeated.push(cutText(safeText(candidate.domain_name), 80));
  unconfirmed(result, candidate);
}

/** True when a server that knew `state.known` domains may be believed for `unknown` 404s (judgeUnknown's rule). */
const believable = (state: ServerState, unknown: number): boolean =>
  state.contradicted === 0 && state.known > 0 && unknown <= state.known;

/** A 404 that is no finding: counted, named in the server's info line; a re-check learns nothing. */
function notFound(counts: RegistryCounts, state: ServerState, candidate: RegistryCandidate): 'silent' | null {
  counts.not_checkable.not_found++;
  state.notFound.push(cutText(safeText(candidate.domain_name), 80));
  return candidate.reason === 'recheck' ? 'silent' : null;
}

/**
 * A server's 404s that would be findings (registry_unknown), once its every lookup is done and each
 * was asked again (askUnknownAgain): findings only when it repeated every one of them, and knew at
 * least as many of the domains asked as it did not. A server that knows none
 * (or few) is more likely broken than the registry rid of the account's domains: its 404s are then
 * the info line a ccTLD's are, so a misconfigured server never turns a whole sample into warnings.
 */
function judgeUnknown(result: RegistryCheckResult, state: ServerState): void {
  const believed = believable(state, state.unknown.length);
  state.distrusted = !believed && state.unknown.length > 0;
  for (const { candidate, view } of state.unknown) {
    if (believed) {
      result.counts.disagree++;
      result.views.set(candidate.domain_name, view);
    } else if (notFound(result.counts, state, candidate) === 'silent') unconfirmed(result, candidate);
  }
}

/**
 * A 404's finding (judgeNotFound: a gTLD's registry does not know the domain). A re-check of another
 * remembered registry finding takes it only when it is critical: never lower than what memory keeps
 * (a redemption, a hold), so a purge never reads as the finding falling; else memory keeps that one.
 */
function notFoundView(candidate: RegistryCandidate, input: RegistryCheckInput) {
  const unknown = judgeNotFound(candidate, input.now, input.policy);
  if (!unknown || !candidate.remembered || candidate.remembered === 'registry_unknown') return unknown;
  return unknown.severity === 'critical' ? unknown : null;
}

function unconfirmed(result: RegistryCheckResult, candidate: RegistryCandidate): void {
  if (candidate.reason === 'recheck') result.unconfirmed.push(candidate.domain_name);
}

function ordered(candidates: readonly RegistryCandidate[]): RegistryCandidate[] {
  const order = (c: RegistryCandidate) => CHECK_REASONS.indexOf(c.reason);
  return [...candidates].sort((a, b) => order(a) - order(b) || a.rank - b.rank);
}

function emptyCounts(candidates: readonly RegistryCandidate[]): RegistryCounts {
  const byReason = { recheck: 0, flagged: 0, sample: 0 };
  for (const c of candidates) byReason[c.reason]++;
  return {
    candidates: byReason,
    queries: 0,
    requests: 0,
    checked: 0,
    agree: 0,
    disagree: 0,
    not_checkable: { no_rdap_service: 0, no_expiration: 0, not_found: 0 },
    not_checked: { budget: 0, time: 0, server_failed: 0, name_refused: 0 },
  };
}
