import { retry } from '../core/base/retry';
import { alertView } from '../core/memory/actions';
import { type CompareResult, compareMemory, type NextState } from '../core/memory/compare';
import { registryRecheck } from '../core/memory/registry-memory';
import { ScanMemory } from '../core/memory/scan-memory';
import {
  type AccountBinding,
  EMPTY_HEAD,
  StateConflictError,
  StateError,
  type StatefulReport,
  type StatePolicy,
  StateRefusedError,
} from '../core/memory/state';
import { StateDamagedError } from '../core/memory/state-header';
import { scanTimeProblem } from '../core/memory/state-time';
import type { Domain } from '../core/reseller/schemas';
import type { Report } from '../core/scan/scan';
import type { Published } from './publish-alert';
import { runScanJob, type ScanJobInput, signReportLinks } from './scan-job';
import {
  accountFor,
  MAX_LEASE_MS,
  type OpenedState,
  type StateSelector,
  type StateStore,
  stateCommand,
} from './state-store';

/** How long a lease holds: far longer than a publish and a save take; a crashed holder blocks no longer. */
export const LEASE_MS = 120_000;
/** How long a scan waits for another one holding the lease before it fails. */
export const CONFLICT_WAIT_MS = 30_000;

export interface StatefulScanInput {
  readonly job: ScanJobInput;
  readonly store: StateStore;
  readonly policy: StatePolicy;
  /** Delivers the message; absent, nothing is published and nothing is written (a dry run). */
  readonly publish?: (report: StatefulReport) => Promise<Published>;
  /**
   * Keeps the report (for the report page, and as the whole an alert links to) once the lease is
   * held and before the alert goes out, so a subscriber that follows the alert's link at once finds it.
   */
  readonly keep?: (report: StatefulReport) => Promise<void>;
  /** @default Date.now */
  readonly clock?: () => number;
  /**
   * Scan even when the scan's time is far ahead of the clock or before the state's last scan (a
   * replay, or a clock that was wrong; stored times in the future then count as due). @default false
   */
  readonly allowClockSkew?: boolean;
  /**
   * Whose state this is: the scope the store was opened with (an account of several has its own,
   * see accountScope). @default the reseller base URL
   */
  readonly scope?: string;
  /** What names this state to `sentinel state rebind`, for the refusal of a rotated key. @default its location */
  readonly rebind?: StateSelector;
  /**
   * Epoch ms by which a first save must be done (a Lambda's timeout, less a margin): it then keeps
   * the domains it wrote, and the outcome says so (StateWrite.saveBy). @default no limit
   */
  readonly saveBy?: number;
}

export interface StatefulScanOutcome {
  readonly result: CompareResult;
  readonly published: Published | null;
  /** False for a dry run, and when superseded. */
  readonly saved: boolean;
  /** How many times the state had to be re-read because another scan moved it. */
  readonly conflicts: number;
  /** Why nothing was published or saved: another scan saved a later one while this one ran. */
  readonly superseded?: string;
  /**
   * The state's account-wide part could not be read: the scan alerted as a first scan would (no
   * memory used), wrote nothing, and the run must fail with this once the alert is out.
   */
  readonly damaged?: StateDamagedError;
  /**
   * A first save that ran out of time kept the memory of some domains only (the next scan
   * announces the others again and saves them): the run must fail with this, naming what to raise.
   */
  readonly savedInPart?: StateError;
}

/**
 * One scan with memory: open the state (the account-wide part), check the scan's time and the
 * account against it, then read the whole account (full mode: only a complete read proves a
 * domain left) and the remembered domains at once into one ScanMemory, compare, take the lease,
 * publish if the comparison says so, then save what changed and release. A failed publish releases
 * the lease unsaved, so the next run says it again (at least once); a scan that finds the state
 * moved or leased re-reads it and recomputes, so what the other scan announced is not announced
 * twice (at most once).
 */
export async function runStatefulScan(input: StatefulScanInput): Promise<StatefulScanOutcome> {
  const { store } = input;
  const scope = input.scope ?? input.job.settings.resellerBaseUrl;
  const clock = input.clock ?? Date.now;
  const owner = `scan-${Math.random().toString(36).slice(2, 10)}-${clock()}`;
  const opened = await store.open(scope).catch((error: unknown) => {
    if (error instanceof StateDamagedError) return error;
    throw error;
  });
  // Checked before the account is read: a refused scan costs no request.
  const last = opened instanceof StateDamagedError ? null : opened.head.last_scan_at;
  const timeProblem = input.allowClockSkew ? null : scanTimeProblem(input.job.now, clock(), last);
  if (timeProblem)
    throw new StateRefusedError(
      `${timeProblem}: refused; pass --allow-clock-skew to scan anyway (a replay, or a clock that was wrong)`,
    );
  if (opened instanceof StateDamagedError) return scanDamaged(input, opened, { scope, clock, owner });
  const apiKey = await input.job.secrets.apiKey();
  const account = await accountFor(opened.head, apiKey, store.location, input.rebind);
  const memory = new ScanMemory();
  const report = await readBoth((signal) => store.read(opened, memory, signal), memory, input.job);
  const scan: ScanInProgress = { input, scope, clock, owner, apiKey, opened, account, memory, report };
  return retry((attempt) => decideAndSave(scan, attempt - 1), {
    retries: Number.POSITIVE_INFINITY,
    minTimeout: 100,
    maxTimeout: 2_000,
    maxRetryTime: CONFLICT_WAIT_MS,
    clock,
    // A stop ends the wait for another scan's lease at once, not at the next try.
    ...(input.job.signal ? { signal: input.job.signal } : {}),
    // Only the claim throws a conflict here: a save that loses its lease fails as a StateError.
    shouldRetry: ({ error }) => error instanceof StateConflictError,
  }).catch((error: unknown) => {
    if (!(error instanceof StateConflictError)) throw error;
    throw new StateConflictError(
      `gave up after ${CONFLICT_WAIT_MS / 1000} s: ${error.message}; another scan is running, or crashed holding the lease (it lapses ${LEASE_MS / 1000} s after it was taken)`,
      { cause: error },
    );
  });
}

/**
 * A scan over a state whose account-wide part is damaged: one damaged value must not stop every
 * alert of the account until a person repairs it. The account is read and compared with no memory
 * (as a first scan: every finding is new), the damage is a problem record, and the alert is
 * published while the store holds the state against every other scan (holdDamaged). Nothing is
 * written: neither the state's account binding nor its generation can be checked, and what is
 * damaged is for a person to look at. The outcome's `damaged` fails the run once the alert is out.
 */
async function scanDamaged(
  input: StatefulScanInput,
  damaged: StateDamagedError,
  at: { readonly scope: string; readonly clock: () => number; readonly owner: string },
): Promise<StatefulScanOutcome> {
  const { store } = input;
  const memory = new ScanMemory();
  memory.headDamaged(damaged.item, damaged.damage);
  const report = await readBoth(async () => undefined, memory, input.job);
  const compared = compareMemory({
    report,
    memory,
    head: { ...EMPTY_HEAD, scope: at.scope },
    policy: input.policy,
    scope: at.scope,
  });
  // No snooze or acknowledge links: they act on this state, and refuse it until it is repaired.
  const result = {
    ...compared,
    report: await signReportLinks(compared.report, input.job, { silencing: false }),
  };
  const failure = new StateDamagedError(
    `the state in ${store.location} cannot be used (${damaged.damage}); this scan alerted without memory, as a first scan, and did not write the state: correct that value, or start over with ${stateCommand('reset', input.rebind ?? { state: store.location })}`,
    damaged,
    { cause: damaged },
  );
  const { publish } = input;
  if (!publish) return { result, published: null, saved: false, conflicts: 0, damaged: failure };
  // Held for as long as a lease may be once the alert is out (a table's store keeps it): the run
  // fails, and Lambda's two retries of it, minutes later, find the state held and send nothing.
  const published = await store
    .holdDamaged(damaged, { owner: at.owner, expiresAt: at.clock() + MAX_LEASE_MS }, async () => {
      await input.keep?.(result.report);
      return result.publish ? publish(alertView(result.report, result.silenced)) : null;
    })
    .catch((error: unknown) => {
      if (!(error instanceof StateConflictError)) throw error;
      throw new StateDamagedError(
        `${failure.message}; another scan holds it (one that alerted without memory keeps it ${MAX_LEASE_MS / 60_000} minutes, so a retry sends the alert no second time): nothing was published`,
        damaged,
        { cause: error },
      );
    });
  return { result, published, saved: false, conflicts: 0, damaged: failure };
}

/** What one scan with memory carries from try to try. */
interface ScanInProgress {
  readonly input: StatefulScanInput;
  readonly scope: string;
  readonly clock: () => number;
  readonly owner: string;
  readonly apiKey: string;
  opened: OpenedState;
  account: AccountBinding;
  readonly memory: ScanMemory;
  readonly report: Report;
  /** The last comparison made: what a superseded scan reports. */
  last?: CompareResult;
}

/**
 * One try: compare, claim, publish, save. After a conflict (`conflicts` so far) the state is read
 * again first; the account read stays. A scan that finds a later scan saved meanwhile stops there.
 */
async function decideAndSave(scan: ScanInProgress, conflicts: number): Promise<StatefulScanOutcome> {
  const { input, clock, owner } = scan;
  const { store } = input;
  if (conflicts > 0) {
    const superseded = await reread(scan);
    if (superseded) return { ...superseded, conflicts };
  }
  const compared = compareMemory({
    report: scan.report,
    memory: scan.memory,
    head: scan.opened.head,
    policy: input.policy,
    scope: scan.scope,
    account: scan.account,
  });
  // Links are signed for the findings as compared: a snooze link must act on what the alert shows.
  // The compared findings are this comparison's own objects: the links go on them, not on copies.
  const result = {
    ...compared,
    report: await signReportLinks(compared.report, input.job, { silencing: true, owned: true }),
  };
  scan.last = result;
  const { publish } = input;
  if (!publish) return { result, published: null, saved: false, conflicts };
  const opened = scan.opened;
  // Another scan moved the state on or holds it: a StateConflictError, and the next try re-reads.
  // A keep, publish or save that fails gives the lease back, and its failure is what is reported.
  return store.leased(opened.generation, { owner, expiresAt: clock() + LEASE_MS }, async () => {
    await input.keep?.(result.report);
    // Snoozed and acknowledged domains stay in the report and the state, but not in the message.
    const published = result.publish ? await publish(alertView(result.report, result.silenced)) : null;
    const short = await saveNext(store, opened, owner, result.next, published, input.saveBy);
    return { result, published, saved: true, conflicts, ...short };
  });
}

/**
 * After a conflict: the state opened and its domains read again. The outcome of a superseded scan
 * when the other scan read the account later than this one: what it saved is newer than what this
 * one read, and going back to this one's would move the state's time backwards.
 */
async function reread(scan: ScanInProgress): Promise<Omit<StatefulScanOutcome, 'conflicts'> | null> {
  const { input } = scan;
  const opened = await input.store.open(scan.scope);
  scan.opened = opened;
  if (opened.head.account?.hash !== scan.account.hash)
    scan.account = await accountFor(opened.head, scan.apiKey, input.store.location, input.rebind);
  const last = opened.head.last_scan_at === null ? Number.NaN : Date.parse(opened.head.last_scan_at);
  if (!input.allowClockSkew && last > input.job.now && scan.last)
    return {
      result: scan.last,
      published: null,
      saved: false,
      superseded: `another scan saved a later scan (${opened.head.last_scan_at}) while this one ran, so this one's older read was not used`,
    };
  // What this scan read stays; the memory it is compared with is read again.
  scan.memory.forgetPrior();
  await input.store.read(opened, scan.memory);
  return null;
}

/** Saves the next state under the lease, or says what failed (and whether the alert went out); the lease is then released. */
async function saveNext(
  store: StateStore,
  opened: OpenedState,
  owner: string,
  next: NextState,
  published: Published | null,
  saveBy: number | undefined,
): Promise<Pick<StatefulScanOutcome, 'savedInPart'>> {
  const write = { head: next.head, changed: next.changed, all: next.domains };
  const inPart = await store
    .save(opened, owner, saveBy === undefined ? write : { ...write, saveBy })
    .catch((error: unknown) => {
      const what = (error as Error).message;
      throw new StateError(
        published
          ? `the alert was published (${published.messageId}) but the state could not be saved to ${store.location} (${what}); the lease was released and the next scan will announce the same again`
          : `the state could not be saved to ${store.location} (${what}); the lease was released, nothing was published`,
        { cause: error },
      );
    });
  return inPart
    ? {
        savedInPart: new StateError(
          `the first save to ${store.location} ran out of the time left and kept the memory of ${inPart.kept} of ${inPart.of} domains; the next scan announces the others again and saves them; raise the scan function's timeout (scanTimeoutMinutes, up to Lambda's 15 minutes)`,
        ),
      }
    : {};
}

/**
 * Reads the account and the remembered domains at the same time into `memory`: the store's
 * queries run while the reseller's pages are awaited. Either failing stops the other: a state that
 * cannot be read ends the scan at its next domain, a scan that fails stops the state's queries.
 */
async function readBoth(
  readPrior: (signal: AbortSignal) => Promise<void>,
  memory: ScanMemory,
  job: ScanJobInput,
): Promise<Report> {
  const stop = new AbortController();
  let stateFailure: { readonly error: unknown } | null = null;
  let attemptSeen = 0;
  const domains = readPrior(stop.signal).catch((error: unknown) => {
    stateFailure = { error };
    throw error;
  });
  const scan = runScanJob({
    ...job,
    // The registry check asks once both reads are done: the memory of every domain is in by then;
    // it tells memory every re-check it could not confirm, beside the report (which lists 100).
    registryRecheck: registryRecheck(memory, domains),
    // A remembered domain the read did not list is looked up before it is announced as gone.
    unlisted: async () => {
      await domains;
      return memory.unlisted();
    },
    observe: (domain: Domain, attempt: number, page: number, group: string | undefined) => {
      if (stateFailure) throw stateFailure.error;
      if (attempt !== attemptSeen) {
        memory.restart(); // the read started over: only the last attempt's domains count
        attemptSeen = attempt;
      }
      memory.observe(domain, page, group);
    },
  });
  const stopping = scan.catch((error: unknown) => {
    stop.abort();
    throw error;
  });
  const [scanned, read] = await Promise.allSettled([stopping, domains]);
  if (read.status === 'rejected') throw read.reason;
  if (scanned.status === 'rejected') throw scanned.reason;
  return scanned.value;
}
