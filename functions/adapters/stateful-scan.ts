import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import { ConfigError } from '../core/base/errors';
import { alertView } from '../core/memory/actions';
import {
  compareMemory,
  type MemoryCompareResult,
  ScanMemory,
  type ScanState,
  StateConflictError,
  StateError,
  type StatefulReport,
  type StatePolicy,
  StateRefusedError,
} from '../core/memory/state';
import { type AccountBinding, belongsTo, bindAccount } from '../core/memory/state-account';
import { loadStatePolicy, STATE_ENV } from '../core/memory/state-config';
import { scanTimeProblem } from '../core/memory/state-time';
import type { Domain } from '../core/reseller/schemas';
import { ENV, type ScanSettings } from '../core/scan/config';
import { DynamoDbStateStore } from './dynamodb-state-store';
import { FileStateStore } from './file-state-store';
import { type HeapPacer, heapPacer, NO_PACE } from './heap-pacer';
import type { SmsHolder } from './held-sms';
import { deliverPlanned, plannedAlerts, runScanJob, type ScanJobInput, signReportLinks } from './scan-job';
import { type AlertSender, chatTargetOf, snsSender } from './sns-publish';
import type { OpenedState, StateStore } from './state-store';

/** How long a lease holds: far longer than a publish and a save take; a crashed holder blocks no longer. */
export const LEASE_MS = 120_000;
/** How long a scan waits for another one holding the lease before it fails. */
export const CONFLICT_WAIT_MS = 30_000;

const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

/** `dynamodb:TABLE` or a file path, as `--state` / `STATE` take it. */
export type StateLocation =
  | { readonly kind: 'dynamodb'; readonly table: string }
  | { readonly kind: 'file'; readonly path: string };

/**
 * Reads `--state` / `STATE`; the error says what a good value looks like. A path is used exactly as
 * given (never trimmed into another file's name): one with spaces around it is refused.
 */
export function parseStateLocation(value: string, source = '--state'): StateLocation {
  if (value.trim() !== value)
    throw new ConfigError(
      `${source}: ${JSON.stringify(value)} starts or ends with white space; give the path or dynamodb:TABLE without it`,
    );
  if (value.startsWith('dynamodb:')) {
    const table = value.slice('dynamodb:'.length);
    if (!TABLE_NAME.test(table))
      throw new ConfigError(
        `${source}: ${JSON.stringify(table)} is not a DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -)`,
      );
    return { kind: 'dynamodb', table };
  }
  if (!value) throw new ConfigError(`${source} must be a file path or dynamodb:TABLE`);
  return { kind: 'file', path: value };
}

/**
 * A DynamoDB client configured from an environment object the way the SDK configures itself from
 * process.env (endpoint, region, static keys), so the CLI honours AWS_ENDPOINT_URL_DYNAMODB from
 * the environment it was given.
 */
export function dynamoDbClientFromEnv(env: NodeJS.ProcessEnv): DynamoDBClient {
  const endpoint = env.AWS_ENDPOINT_URL_DYNAMODB ?? env.AWS_ENDPOINT_URL;
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  const {
    AWS_ACCESS_KEY_ID: accessKeyId,
    AWS_SECRET_ACCESS_KEY: secretAccessKey,
    AWS_SESSION_TOKEN: sessionToken,
  } = env;
  return new DynamoDBClient({
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    ...(accessKeyId && secretAccessKey
      ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } }
      : {}),
  });
}

/** Opens the store a location names; `scope` (the reseller base URL) keeps accounts apart. */
export function openStateStore(
  location: StateLocation,
  scope: string,
  dynamodb: () => DynamoDBClient,
): StateStore {
  return location.kind === 'dynamodb'
    ? new DynamoDbStateStore({ client: dynamodb(), tableName: location.table, scope })
    : new FileStateStore(location.path);
}

/** Opens the state (everything but its domains) and refuses one written for another reseller (base URL). */
export async function openState(store: StateStore, scope: string): Promise<OpenedState> {
  const opened = await store.open();
  if (opened.head.scope !== null && opened.head.scope !== scope)
    throw new StateRefusedError(
      `the state in ${store.location} belongs to ${opened.head.scope}, but this scan reads ${scope}; use another --state for each account`,
    );
  return opened;
}

/**
 * The account binding to save with the next state: the state's own when `apiKey` is the key it was
 * bound with, a new one for a state not bound yet (a first scan, or a state from before states were
 * bound). A state bound to another key is refused: two accounts of one reseller share a base URL,
 * and one's memory would announce the other's domains as gone and drop its snoozes.
 */
export async function accountFor(
  state: Pick<ScanState, 'account' | 'scope'>,
  apiKey: string,
  location: string,
): Promise<AccountBinding> {
  if (state.account === null) return bindAccount(apiKey);
  if (await belongsTo(state.account, apiKey)) return state.account;
  throw new StateRefusedError(
    `the state in ${location} belongs to another account of ${state.scope ?? 'this reseller'} (it was bound to another API key); use another --state for each account, or if this account's key was rotated: sentinel state rebind ${location} --yes`,
  );
}

/**
 * `sentinel state rebind`: binds the state to the account of `apiKey`, keeping all of its memory
 * (after a key rotation of the same account). One conditional step of the store's protocol, as a
 * snooze is. Returns false when the state already belonged to that key.
 */
export async function rebindState(store: StateStore, scope: string, apiKey: string): Promise<boolean> {
  const owner = `rebind-${Math.random().toString(36).slice(2, 10)}`;
  const opened = await openState(store, scope);
  if (opened.head.account && (await belongsTo(opened.head.account, apiKey))) return false;
  const account = await bindAccount(apiKey);
  await store.claim(opened.generation, { owner, expiresAt: Date.now() + 15_000 });
  try {
    // The account-wide part only: every domain's memory stays as it is.
    await store.saveNext(
      { head: { ...opened.head, scope: opened.head.scope ?? scope, account } },
      opened,
      owner,
    );
  } catch (error) {
    await store.release(opened.generation, owner).catch(() => undefined);
    throw error;
  }
  return true;
}

export interface Published {
  readonly messageId: string;
  readonly findingsCut: number;
}

export interface StatefulScanInput {
  readonly job: ScanJobInput;
  readonly store: StateStore;
  readonly policy: StatePolicy;
  /** Delivers the message; absent, nothing is published and nothing is written (a dry run). */
  readonly publish?: (report: StatefulReport) => Promise<Published>;
  /** Names this scan in the lease. @default a random id */
  readonly owner?: string;
  /** @default Date.now */
  readonly clock?: () => number;
  /** @default CONFLICT_WAIT_MS */
  readonly waitMs?: number;
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
  /** Called as the account's domains are taken in (see heap-pacer.ts). @default none */
  readonly pace?: HeapPacer;
}

export interface StatefulScanOutcome {
  readonly result: MemoryCompareResult;
  readonly published: Published | null;
  /** False for a dry run, and when superseded. */
  readonly saved: boolean;
  /** How many times the state had to be re-read because another scan moved it. */
  readonly conflicts: number;
  /** Why nothing was published or saved: another scan saved a later one while this one ran. */
  readonly superseded?: string;
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
  const { store, policy } = input;
  const scope = input.scope ?? input.job.settings.resellerBaseUrl;
  const clock = input.clock ?? Date.now;
  const now = input.job.now;
  const owner = input.owner ?? `scan-${Math.random().toString(36).slice(2, 10)}-${clock()}`;
  let opened = await openState(store, scope);
  // Checked before the account is read: a refused scan costs no request.
  const timeProblem = input.allowClockSkew ? null : scanTimeProblem(now, clock(), opened.head.last_scan_at);
  if (timeProblem)
    throw new StateRefusedError(
      `${timeProblem}: refused; pass --allow-clock-skew to scan anyway (a replay, or a clock that was wrong)`,
    );
  const apiKey = await input.job.secrets.apiKey();
  let account = await accountFor(opened.head, apiKey, store.location);

  const memory = new ScanMemory();
  const pace = input.pace ?? NO_PACE;
  const report = await readBoth(store, opened, memory, input.job, pace);

  const started = clock();
  const waitMs = input.waitMs ?? CONFLICT_WAIT_MS;
  for (let conflicts = 0; ; conflicts++) {
    const compared = compareMemory({ report, memory, state: opened.head, policy, scope, account });
    // Links are signed for the findings as compared: a snooze link must act on what the alert shows.
    // The compared findings are this comparison's own objects: the links go on them, not on copies.
    const result = {
      ...compared,
      report: await signReportLinks(compared.report, input.job, {
        silencing: true,
        owned: true,
      }),
    };
    pace();
    if (!input.publish) return { result, published: null, saved: false, conflicts };
    try {
      await store.claim(opened.generation, { owner, expiresAt: clock() + LEASE_MS });
    } catch (error) {
      if (!(error instanceof StateConflictError)) throw error;
      if (clock() - started >= waitMs)
        throw new StateConflictError(
          `gave up after ${Math.round(waitMs / 1000)} s: ${error.message}; another scan is running, or crashed holding the lease (it lapses ${LEASE_MS / 1000} s after it was taken)`,
          { cause: error },
        );
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** conflicts, 2_000)));
      opened = await openState(store, scope);
      if (opened.head.account?.hash !== account.hash)
        account = await accountFor(opened.head, apiKey, store.location);
      // The other scan read the account later than this one: what it saved is newer than what this
      // one read, and going back to this one's would move the state's time backwards.
      const last = opened.head.last_scan_at === null ? Number.NaN : Date.parse(opened.head.last_scan_at);
      if (!input.allowClockSkew && last > now)
        return {
          result,
          published: null,
          saved: false,
          conflicts: conflicts + 1,
          superseded: `another scan saved a later scan (${opened.head.last_scan_at}) while this one ran, so this one's older read was not used`,
        };
      // What this scan read stays; the memory it is compared with is read again.
      memory.forgetPrior();
      await store.readDomains(opened, memory);
      continue;
    }
    let published: Published | null = null;
    if (result.publish) {
      try {
        // Snoozed and acknowledged domains stay in the report and the state, but not in the message.
        published = await input.publish(alertView(result.report, result.silenced));
      } catch (error) {
        // If the release fails too, the lease lapses by itself; the publish failure is what to report.
        await store.release(opened.generation, owner).catch(() => undefined);
        throw error;
      }
    }
    try {
      await store.saveNext({ head: result.next.head, memory: result.next.memory }, opened, owner);
    } catch (error) {
      // Never leave the lease behind: the next scan must be able to try again at once.
      await store.release(opened.generation, owner).catch(() => undefined);
      const what = (error as Error).message;
      throw new StateError(
        published
          ? `the alert was published (${published.messageId}) but the state could not be saved to ${store.location} (${what}); the lease was released and the next scan will announce the same again`
          : `the state could not be saved to ${store.location} (${what}); the lease was released, nothing was published`,
        { cause: error },
      );
    }
    return { result, published, saved: true, conflicts };
  }
}

/**
 * Reads the account and the remembered domains at the same time into `memory`: the store's
 * queries run while the reseller's pages are awaited. Either failing stops the other: a state that
 * cannot be read ends the scan at its next domain, a scan that fails stops the state's queries.
 */
async function readBoth(
  store: StateStore,
  opened: OpenedState,
  memory: ScanMemory,
  job: ScanJobInput,
  pace: HeapPacer,
): Promise<Awaited<ReturnType<typeof runScanJob>>> {
  const stop = new AbortController();
  let observed = 0;
  let stateFailure: { readonly error: unknown } | null = null;
  let attemptSeen = 0;
  const domains = store.readDomains(opened, memory, stop.signal).catch((error: unknown) => {
    stateFailure = { error };
    throw error;
  });
  const scan = runScanJob({
    ...job,
    observe: (domain: Domain, attempt: number, page: number) => {
      if (stateFailure) throw stateFailure.error;
      if (attempt !== attemptSeen) {
        memory.restart(); // the read started over: only the last attempt's domains count
        attemptSeen = attempt;
      }
      memory.observeDomain(domain, page);
      if (++observed % PACE_EVERY === 0) pace();
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

/** Domains taken in between two looks at the heap (a look is a call to V8 for its statistics). */
const PACE_EVERY = 256;

/** Changes and resolved entries carried in one message: the JSON goes into it four times (sqs, lambda, http, https). */
export const MESSAGE_CHANGES_LIMIT = 100;

/**
 * The report as one message carries it: `changes` and `resolved` cut to `limit` each, the cut
 * stated in the report (an account emptied at once must not make every message too big for SNS,
 * which would make every run fail and alert nobody).
 */
export function capForMessage(report: StatefulReport, limit = MESSAGE_CHANGES_LIMIT): StatefulReport {
  if (report.changes.length <= limit && report.resolved.length <= limit) return report;
  return {
    ...report,
    changes: report.changes.slice(0, limit),
    resolved: report.resolved.slice(0, limit),
    ...{
      changes_truncated: {
        changes_omitted: Math.max(0, report.changes.length - limit),
        resolved_omitted: Math.max(0, report.resolved.length - limit),
      },
    },
  };
}

/** The publisher for a stateful scan: the same messages as without state, carrying change, changes and resolved. */
export function snsPublisher(settings: ScanSettings, sns: SNSClient, topicArn: string, holdSms?: SmsHolder) {
  return alertPublisher(
    settings,
    snsSender(sns, topicArn, chatTargetOf(settings)),
    holdSms ? { holdSms } : {},
  );
}

/**
 * The publisher for a stateful scan that delivers through `send` (SNS, or stdout / a file locally):
 * the memory decided to publish, so the account's message goes out, and each group's that has
 * something at its level (functions/core/alerts/groups.ts).
 */
export function alertPublisher(
  settings: ScanSettings,
  send: AlertSender,
  options: { readonly holdSms?: SmsHolder; readonly groups?: boolean } = {},
) {
  return async (full: StatefulReport): Promise<Published> => {
    const report = capForMessage(full);
    const input = { settings, now: Date.parse(report.now), decided: true };
    // Decided: the plan always starts with the account's message.
    const [account] = await deliverPlanned(plannedAlerts(report, input), input, { send, ...options });
    return { messageId: account?.messageId ?? '', findingsCut: account?.findingsCut ?? 0 };
  };
}

export interface ScheduledStatefulScanInput {
  readonly job: ScanJobInput;
  readonly tableName: string;
  readonly env: NodeJS.ProcessEnv;
  readonly dynamodb: DynamoDBClient;
  readonly sns: SNSClient;
  /** The clock the scan's time is checked against. @default Date.now */
  readonly clock?: () => number;
  /** The state's scope (an account's own, see accountScope). @default the reseller base URL */
  readonly scope?: string;
  /** Schedules an SMS held by quiet hours. @default none */
  readonly holdSms?: SmsHolder;
}

/** The Lambda's scan with memory: the DynamoDB store its environment names, the alert topic, the policy from the environment. */
export async function runScheduledStatefulScan(
  input: ScheduledStatefulScanInput,
): Promise<StatefulScanOutcome> {
  const { settings } = input.job;
  const scope = input.scope ?? settings.resellerBaseUrl;
  const topicArn = settings.alertTopicArn;
  if (!topicArn)
    throw new ConfigError(
      `${STATE_ENV.tableName} is set but ${ENV.alertTopicArn} is not: state advances only after an alert is delivered`,
    );
  // One pacer for the account read, the state's pages and its writes: they run at the same time.
  const pace = heapPacer();
  return runStatefulScan({
    job: input.job,
    store: new DynamoDbStateStore({
      client: input.dynamodb,
      tableName: input.tableName,
      scope,
      pace,
    }),
    pace,
    policy: loadStatePolicy(input.env, settings.minSeverity),
    publish: snsPublisher(settings, input.sns, topicArn, input.holdSms),
    ...(input.clock ? { clock: input.clock } : {}),
    ...(input.scope ? { scope } : {}),
  });
}
