import { normalizeDomainName, plural, safeText } from '../base/text';
import {
  judgeRegistry,
  type RegistryPolicy,
  type RegistryView,
  type ResellerSide,
} from '../findings/registry-rules';
import type { RdapBootstrap } from './bootstrap';
import { type RdapClient, RdapDeadlineError } from './rdap-client';
import { RdapError, RdapRateLimitError } from './rdap-errors';

/**
 * One registry check: the chosen domains looked up at their registries' RDAP servers, within a
 * query budget, each answer judged by the registry rules. Never louder than it knows and never the
 * scan's failure: a TLD without RDAP or a registry without a published expiration is counted as
 * not checkable; a server that fails or hangs is one problem line (info) and, after a few failures
 * in a row, left alone for the rest of the scan, its remaining domains counted as not checked.
 */

/** Why a domain is checked, in the order the budget is spent. */
export const CHECK_REASONS = ['recheck', 'flagged', 'sample'] as const;
export type CheckReason = (typeof CHECK_REASONS)[number];

/** A domain the check may look up: the reseller's side, why, and its place within that reason. */
export interface RegistryCandidate extends ResellerSide {
  readonly reason: CheckReason;
  /** Lower goes first within its reason. */
  readonly rank: number;
}

/** What one RDAP server did in this check, when something went wrong there (always info). */
export interface RegistryProblem {
  /** The server's origin. */
  readonly server: string;
  readonly severity: 'info';
  readonly reason: string;
  /** Domains of this server left unchecked because of it (the failed lookups included). */
  readonly domains_not_checked: number;
}

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
  readonly not_checked: { budget: number; time: number; server_failed: number };
}

/** What the check found. */
export interface RegistryCheckResult {
  /** By name: what the registry says that the reseller does not. */
  readonly views: Map<string, RegistryView>;
  readonly counts: RegistryCounts;
  readonly problems: RegistryProblem[];
  /** Domains to re-check (memory's) that could not be checked this time: memory keeps what it knew. */
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
interface ServerState {
  /** It has answered once: until then it gets one lookup at a time, so a dead server costs three. */
  answered: boolean;
  readonly items: QueueItem[];
  active: number;
  failuresInRow: number;
  stopped: boolean;
  lastError: string;
  notChecked: number;
  notFound: string[];
}

const NOT_FOUND_NAMED = 5;

/** Looks the candidates up, most important first, and judges every answer. */
export async function checkRegistry(input: RegistryCheckInput): Promise<RegistryCheckResult> {
  const { bootstrap, client, budget } = input;
  const counts = emptyCounts(input.candidates);
  const result: RegistryCheckResult = { views: new Map(), counts, problems: [], unconfirmed: [] };
  const queue: QueueItem[] = [];
  for (const candidate of ordered(input.candidates)) {
    const service = bootstrap.serviceFor(candidate.domain_name);
    if (!service) counts.not_checkable.no_rdap_service++;
    else if (queue.length < budget) queue.push({ candidate, baseUrl: service.baseUrl, index: queue.length });
    else {
      counts.not_checked.budget++;
      unconfirmed(result, candidate);
    }
  }
  const servers = new Map<string, ServerState>();
  for (const item of queue) {
    const origin = new URL(item.baseUrl).origin;
    let state = servers.get(origin);
    if (!state) {
      state = {
        items: [],
        active: 0,
        failuresInRow: 0,
        answered: false,
        stopped: false,
        lastError: '',
        notChecked: 0,
        notFound: [],
      };
      servers.set(origin, state);
    }
    state.items.push(item);
  }
  const perServer = Math.max(1, input.perServer ?? 2);
  let outOfTime = false;
  let wake: () => void = () => {};
  /** The server whose next domain comes first in the queue and that has room for one more lookup. */
  const nextServer = (): ServerState | undefined => {
    let best: ServerState | undefined;
    for (const state of servers.values())
      if (
        state.items.length &&
        state.active < (state.answered ? perServer : 1) &&
        (!best || order(state) < order(best))
      )
        best = state;
    return best;
  };
  const order = (state: ServerState) => (state.items[0] as QueueItem).index;
  const skip = (state: ServerState, item: QueueItem) => {
    if (outOfTime) counts.not_checked.time++;
    else {
      counts.not_checked.server_failed++;
      state.notChecked++;
    }
    unconfirmed(result, item.candidate);
  };
  // Each server gets at most its own concurrency of lookups at once, so no worker waits on one
  // server while another could answer, and a failing server is stopped after a few failures, not
  // after every worker has tried it.
  const worker = async (): Promise<void> => {
    for (;;) {
      const state = nextServer();
      if (!state) {
        if (![...servers.values()].some((s) => s.items.length)) return;
        await new Promise<void>((resolve) => {
          const previous = wake;
          wake = () => {
            previous();
            resolve();
          };
        });
        continue;
      }
      const item = state.items.shift() as QueueItem;
      if (outOfTime || state.stopped) {
        skip(state, item);
        continue;
      }
      state.active++;
      const outcome = await lookUp(input, counts, item.candidate, item.baseUrl, state);
      state.active--;
      const waiting = wake;
      wake = () => {};
      waiting();
      if (outcome === 'deadline') {
        outOfTime = true;
        counts.not_checked.time++;
        unconfirmed(result, item.candidate);
      } else if (outcome === 'failed') unconfirmed(result, item.candidate);
      else if (outcome) result.views.set(item.candidate.domain_name, outcome);
    }
  };
  const workers = Math.max(1, Math.min(input.concurrency ?? 16, queue.length));
  await Promise.all(Array.from({ length: workers }, worker));
  counts.requests = client.requests;
  for (const [server, state] of servers) {
    if (state.lastError)
      result.problems.push({
        server,
        severity: 'info',
        reason: state.stopped
          ? `${state.lastError}; left alone for the rest of this scan after ${state.failuresInRow} failed lookups in a row`
          : state.lastError,
        domains_not_checked: state.notChecked,
      });
    if (state.notFound.length)
      result.problems.push({
        server,
        severity: 'info',
        reason: `the registry does not know ${plural(state.notFound.length, 'domain')} the reseller lists (HTTP 404), e.g. ${state.notFound.slice(0, NOT_FOUND_NAMED).join(', ')}: check them in the reseller's control panel`,
        domains_not_checked: 0,
      });
  }
  return result;
}

/** One lookup, counted: the view when the registry disagrees, null when not, or why it did not happen. */
async function lookUp(
  input: RegistryCheckInput,
  counts: RegistryCounts,
  candidate: RegistryCandidate,
  baseUrl: string,
  state: ServerState,
): Promise<RegistryView | null | 'failed' | 'deadline'> {
  counts.queries++;
  try {
    const answer = await input.client.lookupDomain(baseUrl, normalizeDomainName(candidate.domain_name));
    state.failuresInRow = 0;
    state.answered = true;
    counts.checked++;
    if (answer.kind === 'not_found') {
      counts.not_checkable.not_found++;
      state.notFound.push(safeText(candidate.domain_name).slice(0, 80));
      return null;
    }
    const judged = judgeRegistry(candidate, answer.record, input.now, input.policy);
    if (judged.kind === 'no_expiration') {
      counts.not_checkable.no_expiration++;
      return null;
    }
    if (judged.kind === 'agree') {
      counts.agree++;
      return null;
    }
    counts.disagree++;
    return { ...judged.view, server: answer.server };
  } catch (error) {
    if (error instanceof RdapDeadlineError) {
      counts.queries--;
      return 'deadline';
    }
    if (!(error instanceof RdapError)) throw error;
    state.failuresInRow++;
    state.notChecked++;
    counts.not_checked.server_failed++;
    // One line per server: the domain is left out, it is one of many.
    state.lastError = safeText(error.message.replace(/the RDAP lookup of \S+/, 'a lookup')).slice(0, 300);
    const asked = error instanceof RdapRateLimitError && error.retryAfterMs !== undefined;
    if (asked || state.failuresInRow >= (input.failuresToStop ?? 3)) state.stopped = true;
    return 'failed';
  }
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
    not_checked: { budget: 0, time: 0, server_failed: 0 },
  };
}
