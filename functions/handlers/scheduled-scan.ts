import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { SNSClient } from '@aws-sdk/client-sns';
import { DynamoDbStateStore } from '../aws/dynamodb-state-store';
import { schedulerHolder } from '../aws/held-sms';
import { countingFetch } from '../aws/metrics';
import { SCAN_SDK_TIMEOUTS, uploadTimeoutMs } from '../aws/sdk-timeouts';
import type { SecretSource } from '../aws/secrets';
import { chatTargetOf, snsSender } from '../aws/sns-publish';
import { accountSummaryOf } from '../core/alerts/account-summary';
import { criticalCount, unreadableCount } from '../core/alerts/alert';
import { truncateReport } from '../core/alerts/message';
import { ConfigError, errorLine, withKeySource } from '../core/base/errors';
import type { ReportStore } from '../core/memory/report-store';
import { loadStatePolicy, STATE_ENV } from '../core/memory/state-config';
import { ResellerClient } from '../core/reseller/client';
import type { Deadline } from '../core/reseller/transport';
import {
  ACCOUNT_ENV,
  ACCOUNT_NAME,
  type AccountDirectory,
  type AccountScanInput,
  type AccountSummaryStore,
  accountLinkBase,
  accountRawSettings,
  accountScope,
  accountSecrets,
  deployedItem,
  isAccountEvent,
  parseAccountInput,
} from '../core/scan/accounts';
import { ENV, loadScanSettings, METRICS, type ScanSettings, settingsFromEnv } from '../core/scan/config';
import { incompleteScanError } from '../core/scan/moves';
import type { Report } from '../core/scan/scan';
import {
  checkHeartbeatUrl,
  heartbeatFailureLine,
  heartbeatOf,
  type ScanOutcome,
} from '../use-cases/heartbeat';
import type { SmsHolder } from '../use-cases/publish-alert';
import { checkQuietHours, deliverAlert, publishAlert } from '../use-cases/publish-alert';
import { finishReport } from '../use-cases/report-finish';
import { runScanJob, type ScanJobInput } from '../use-cases/scan-job';
import type { StateSelector } from '../use-cases/state-store';
import {
  runStatefulScan,
  type StatefulScanInput,
  type StatefulScanOutcome,
} from '../use-cases/stateful-scan';

/**
 * Time kept back from the Lambda's budget for publishing the alert, saving the state and flushing
 * logs; a run that keeps a report keeps the time its uploads take as well (storeReserveMs).
 */
export const PUBLISH_RESERVE_MS = 20_000;
/**
 * Bytes a domain makes a run store at most: the report twice (its copy under reports/ and
 * latest.json), 253 bytes a domain, and its view, 116, as the stress portfolio (42 % of domains
 * flagged) measured (docs/performance.md, "When AWS does not answer the scan").
 */
export const STORED_BYTES_PER_DOMAIN = 2 * 253 + 116;
/**
 * The time storing the report of an account of `domains` may take: each of its three uploads'
 * attempt (S3ReportStore's PutObject: 3 s and its size at the slowest pace assumed, 10 MB/s).
 */
export function storeReserveMs(domains: number): number {
  const s3 = SCAN_SDK_TIMEOUTS.s3;
  // The bytes of the three are summed: one upload's own time, then the other two's.
  return uploadTimeoutMs(s3, domains * STORED_BYTES_PER_DOMAIN) + 2 * s3.requestTimeoutMs;
}
/**
 * The Lambda's last seconds: a first save with memory (every domain written) starts writing no more
 * domains then and keeps those it wrote, where the timeout would have killed it keeping none (and
 * the next run would announce everything again, and be killed again).
 */
export const SAVE_MARGIN_MS = 10_000;
/** Findings written to the log in full; the rest are counted (CloudWatch events stop at 256 KB). */
const LOGGED_FINDINGS = 200;

export interface ScheduledScanDeps {
  readonly env: NodeJS.ProcessEnv;
  readonly secrets: SecretSource;
  readonly sns: SNSClient;
  /**
   * Used when the environment names a state table (memory between scans). Required, so every call
   * bounds it: the Lambda entry's is timed (functions/aws/sdk-timeouts.ts), never an untimed default.
   */
  readonly dynamodb: DynamoDBClient;
  readonly logger: Pick<Logger, 'info' | 'error'>;
  readonly metrics: Pick<Metrics, 'addMetric' | 'publishStoredMetrics'> &
    Partial<Pick<Metrics, 'addDimension'>>;
  /** Where the report is kept for the report page (the stack's bucket); absent, it is not kept. */
  readonly reports?: ReportStore;
  /** @default Date.now */
  readonly clock?: () => number;
  /** How the reseller API is reached. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** What a scan of one account of several reads with (docs/accounts.md); absent, an account's input is refused. */
  readonly accounts?: AccountScanDeps;
  /** Reads the heartbeat URL (the SecureString HEARTBEAT_URL_PARAMETER names); absent or undefined: no heartbeat. */
  readonly heartbeatUrl?: () => Promise<string | undefined>;
  /**
   * Schedules an SMS held by quiet hours (the Lambda entry's is timed). Absent, no SMS can be held:
   * quiet hours are refused before the scan, as without the stack's schedule group.
   */
  readonly scheduler?: SchedulerClient;
}

/** Where one account's scan finds its own key and keeps its own report. */
export interface AccountScanDeps {
  /**
   * The deployment's accounts as the deploy wrote them (`accounts.json` in the report bucket): an
   * input is scanned only when it is exactly its account's item there. Required, so the check
   * cannot be left out; without a bucket the reader refuses.
   */
  readonly directory: () => Promise<AccountDirectory>;
  /** The secrets with the API key read from the account's own parameter; signing keys the deployment's. */
  readonly secrets: (apiKeyParameter: string) => SecretSource;
  /** The account's report store (its own prefix of the bucket). */
  readonly reports?: (account: string) => ReportStore;
  /** Where the overview page reads the account's last completed scan. */
  readonly summaries?: AccountSummaryStore;
}

export interface ScheduledScanResult {
  readonly summary: Readonly<Record<string, number>>;
  readonly domainsScanned: number;
  readonly problems: number;
  readonly published: boolean;
  /** The account scanned, when the input named one. */
  readonly account?: string;
}

/**
 * One scheduled scan: settings from the environment, secrets from SSM, scan within the Lambda's
 * remaining time, one alert, metrics. Any failure is logged with its reason and re-thrown, so the
 * invocation fails, the on-failure destination gets the event, and the error alarm fires.
 */
export async function handleScheduledScan(
  deps: ScheduledScanDeps,
  remainingMs: number,
  event?: unknown,
): Promise<ScheduledScanResult> {
  const clock = deps.clock ?? Date.now;
  const { deadline: publishBy, saveBy, end } = budgetOf(clock(), remainingMs);
  const reseller = countingFetch(deps.fetch);
  const heartbeat: HeartbeatTarget = { base: await heartbeatBase(deps), end };
  let keySource: string | undefined;
  try {
    const target = await scanTarget(deps, event);
    const { settings, secrets, account } = target;
    keySource = target.keySource;
    if (settings.linkBaseUrl && !secrets.hasSigningKeys())
      throw new ConfigError(`${ENV.linkSigningKeyParameter} is not set but ${ENV.linkBaseUrl} is`);
    const reading = await readingDeadline(deps, target, reseller.fetch, publishBy);
    const now = clock();
    const job = {
      settings,
      secrets,
      now,
      ...reading,
      fetch: reseller.fetch,
      ...(account ? { account: account.account } : {}),
    };
    // With a state table: alert on change, and only after delivery does the state move on.
    const stateTable = deps.env[STATE_ENV.tableName];
    const holdSms = smsHolderOf(settings, deps);
    const stateful = stateTable
      ? await runScheduledStatefulScan({
          job,
          tableName: stateTable,
          env: deps.env,
          dynamodb: deps.dynamodb,
          sns: deps.sns,
          clock,
          saveBy,
          ...(holdSms ? { holdSms } : {}),
          ...(account ? { scope: accountScope(settings.resellerBaseUrl, account.account) } : {}),
          rebind: lambdaRebind(stateTable, settings.resellerBaseUrl, account),
          // Kept before the alert goes out: the alert's report_json_url must find it.
          ...(target.reports ? { keep: (r) => (target.reports as ReportStore).put(r) } : {}),
        })
      : undefined;
    // The report page and the calendar feed read the report from the bucket the stack names (a
    // stateful scan kept it already, under its lease).
    const { report, alert } = await finishReport({
      report: stateful?.result.report ?? (await runScanJob(job)),
      ...(stateful ? { silenced: stateful.result.silenced } : {}),
      ...(target.reports && !stateful ? { reports: target.reports } : {}),
    });
    if (account)
      await deps.accounts?.summaries?.put(accountSummaryOf(report, account.account, settings.accountLabel));
    deps.logger.info('scan completed', { report: truncateReport(report, LOGGED_FINDINGS) });

    const published = stateful
      ? loggedOutcome(deps, stateful)
      : settings.alertTopicArn !== undefined &&
        (await deliverStateless(deps, alert, settings, settings.alertTopicArn, holdSms));

    addScanMetrics(deps.metrics, report, stateful?.damaged ?? stateful?.savedInPart);
    await beat(deps, heartbeat, 'complete', account?.account);
    return {
      summary: report.summary,
      domainsScanned: report.stats.domains_scanned,
      problems: report.problems.length,
      published,
      ...(account ? { account: account.account } : {}),
    };
  } catch (error) {
    throw await failure(deps, heartbeat, event, keySource ? withKeySource(error, keySource) : error);
  } finally {
    // Also when the scan failed: a run that ends in 429s is what this pair of metrics is for.
    reseller.addTo(deps.metrics);
    deps.metrics.publishStoredMetrics();
  }
}

/**
 * When the scan stops reading, when a first save stops writing, and when Lambda stops the run (`end`), for a run of `remainingMs`
 * from `now`. Lambda's timeout counts from the invocation: the time the reads before the scan take
 * (the heartbeat URL and the key from SSM, an account's item from S3, slow when those retry) comes
 * out of the scan's budget, never out of the reserve that publishing needs.
 */
function budgetOf(now: number, remainingMs: number): { deadline: number; saveBy: number; end: number } {
  return {
    deadline: now + Math.max(5_000, remainingMs - PUBLISH_RESERVE_MS),
    saveBy: now + remainingMs - SAVE_MARGIN_MS,
    end: now + remainingMs,
  };
}

/**
 * The longest the count before the scan may take (readingDeadline): one request that only sizes the
 * reserve. A reseller that is slow or answers 429 then costs the scan these seconds, not the
 * retries and Retry-After waits of a whole read (up to 5 attempts of RESELLER_TIMEOUT_MS and 60 s
 * waits, minutes of the run).
 */
export const COUNT_BUDGET_MS = 15_000;

/** When the scan stops reading: a fixed time, or one that moves once the read's page 1 sizes the account. */
interface ReadingDeadline {
  readonly deadline: Deadline;
  /** Told the account's size by the read's own page 1 (ScanJobInput.onAccountSize). */
  readonly onAccountSize?: (domains: number) => void;
}

/**
 * When the scan stops reading. A report kept in the bucket is stored before the alert goes out (the
 * alert's links must find it): such a run stops the time storing it takes (storeReserveMs, for the
 * account's size: one request of `per_page=1`, its totals, within COUNT_BUDGET_MS) before
 * `publishBy`, never later than `publishBy`, and keeps at least half the time left for reading: the
 * report holds only what was read, so a count that says more than a run can read (a reseller's
 * wrong totals) cannot take the scan's time. A count that fails (logged) leaves the size to the
 * read's own page 1, which carries the same totals: reading stops at `publishBy` until it arrives,
 * then as early as that size needs (sizedByTheRead).
 */
async function readingDeadline(
  deps: ScheduledScanDeps,
  { settings, secrets, reports }: { settings: ScanSettings; secrets: SecretSource; reports?: ReportStore },
  fetch: typeof globalThis.fetch,
  publishBy: number,
): Promise<ReadingDeadline> {
  if (!reports) return { deadline: publishBy };
  const clock = deps.clock ?? Date.now;
  try {
    const client = new ResellerClient({
      baseUrl: settings.resellerBaseUrl,
      apiKey: await secrets.apiKey(),
      timeoutMs: settings.requestTimeoutMs,
      // The scan's own cap: a server that ignores per_page=1 sends the whole account in one answer.
      maxResponseBytes: settings.maxResponseMb * 1024 * 1024,
      deadline: Math.min(publishBy, clock() + COUNT_BUDGET_MS),
      fetch,
    });
    const domains = await client.countDomains();
    return { deadline: stopToStore(deps, domains, publishBy, publishBy - clock(), 'count') };
  } catch (error) {
    deps.logger.error('the account could not be counted: the report store reserve waits for the read', {
      reason: errorLine(error),
    });
    return sizedByTheRead(deps, publishBy);
  }
}

/**
 * A reading deadline at `publishBy` that moves earlier when the read's page 1 of the whole domain
 * list tells the account's size (its first one: a read made again does not move it twice), by the
 * time storing the report takes, keeping at least half the time left when reading started.
 */
function sizedByTheRead(deps: ScheduledScanDeps, publishBy: number): ReadingDeadline {
  const left = publishBy - (deps.clock ?? Date.now)();
  let readBy: number | undefined;
  return {
    deadline: () => readBy ?? publishBy,
    onAccountSize: (domains) => {
      readBy ??= stopToStore(deps, domains, publishBy, left, 'page 1');
    },
  };
}

/**
 * When reading stops for an account of `domains` (known from `from`), with `left` ms to
 * `publishBy` for reading and storing: the time storing takes before `publishBy`, at most half of
 * `left` (logged).
 */
function stopToStore(
  deps: ScheduledScanDeps,
  domains: number,
  publishBy: number,
  left: number,
  from: 'count' | 'page 1',
): number {
  const time = Math.max(0, left);
  const needed = storeReserveMs(domains);
  const reserve = Math.min(needed, time / 2);
  deps.logger.info('reading stops early to store the report', {
    domains,
    sizedBy: from,
    storeReserveMs: reserve,
    ...(reserve < needed ? { storeReserveNeededMs: needed } : {}),
    readingLeftMs: time - reserve,
  });
  return publishBy - reserve;
}

/** Logs whether a scan with memory published and why; returns whether it did. */
function loggedOutcome(
  deps: ScheduledScanDeps,
  stateful: NonNullable<Awaited<ReturnType<typeof runScheduledStatefulScan>>>,
): boolean {
  const published = Boolean(stateful.published);
  deps.logger.info(published ? 'alert published' : 'no alert published', {
    why: stateful.superseded ? [stateful.superseded] : stateful.result.why,
    published: stateful.published,
    ...(stateful.damaged ? { stateNotWritten: stateful.damaged.message } : {}),
    ...(stateful.savedInPart ? { stateSavedInPart: stateful.savedInPart.message } : {}),
  });
  return published;
}

/**
 * A scan without memory: its alert delivered when the notify policy says so, and logged either
 * way. Quiet hours are judged now, at hand-over, not when the scan started: a window that ended
 * meanwhile would make a schedule for a time already past.
 */
async function deliverStateless(
  deps: ScheduledScanDeps,
  alert: Report,
  settings: ScanSettings,
  topicArn: string,
  holdSms: SmsHolder | undefined,
): Promise<boolean> {
  const at = { settings, now: (deps.clock ?? Date.now)() };
  const outcome = await deliverAlert(alert, at, {
    send: snsSender(deps.sns, topicArn, chatTargetOf(at.settings)),
    ...(holdSms ? { holdSms } : {}),
  });
  deps.logger.info(outcome.published ? 'alert published' : 'no alert published', { outcome });
  return outcome.published;
}

/**
 * The scan's metrics, which the alarms and the dashboard read. A report marked incomplete (a listing
 * that moved while it was read), or one made without memory over a damaged state (`damaged`:
 * nothing was written), went out as such, and then fails the run here, without ScanCompleted.
 */
function addScanMetrics(metrics: ScheduledScanDeps['metrics'], report: Report, damaged?: Error): void {
  const failure = damaged ?? incompleteScanError(report);
  // The critical items as the alert and the accounts overview count them (a record that says
  // quarantine, a domain that left the account), so the dashboard never shows 0 beside an alert that said 1.
  metrics.addMetric(METRICS.criticalFindings, MetricUnit.Count, criticalCount(report));
  metrics.addMetric(METRICS.warningFindings, MetricUnit.Count, report.summary.warning);
  metrics.addMetric(METRICS.domainsScanned, MetricUnit.Count, report.stats.domains_scanned);
  // The records that could not be read, as every channel counts them: not those read by their dates
  // only or with their registrant given twice, which are problem records too.
  metrics.addMetric(METRICS.unreadableRecords, MetricUnit.Count, unreadableCount(report));
  // Last: only a scan that read everything and delivered its alert counts as completed.
  if (failure) throw failure;
  metrics.addMetric(METRICS.scanCompleted, MetricUnit.Count, 1);
}

/** Logs why the scan failed and pings the heartbeat's failure; returns the error, to be thrown. */
async function failure(
  deps: ScheduledScanDeps,
  heartbeat: HeartbeatTarget,
  event: unknown,
  error: unknown,
): Promise<unknown> {
  const named = logFailure(deps, event, error);
  await beat(deps, heartbeat, 'failed', named);
  return error;
}

/** Logs why the scan failed, with the account the input named when it is a name (returned). */
function logFailure(deps: ScheduledScanDeps, event: unknown, error: unknown): string | undefined {
  const named = isAccountEvent(event) ? (event as { account?: unknown }).account : undefined;
  // An invalid input is the reason itself, not an account to name.
  const account = typeof named === 'string' && ACCOUNT_NAME.test(named) ? named : undefined;
  deps.logger.error('scan failed', {
    ...(account ? { account } : {}),
    reason: error instanceof Error ? error.message : String(error),
    errorName: (error as Error).name,
  });
  return account;
}

/**
 * What this invocation scans: the deployment's own account (the schedule's empty event), or the
 * one account its input names (the state machine's Map item): that account's settings over the
 * deployment's, its own key, its own links, report and state. An input that names an account but
 * is not a valid one, or not exactly that account's item of the deployed directory, fails loudly
 * before any key is read; so does an empty one where only accounts are scanned, and an account's
 * input where the deployment has no accounts.
 */
async function scanTarget(deps: ScheduledScanDeps, event: unknown) {
  if (!isAccountEvent(event)) {
    if (deps.env[ACCOUNT_ENV.accountsOnly] === 'true')
      throw new ConfigError(
        "this deployment scans the accounts of its accounts file: start its state machine (output ScanStateMachineArn), or invoke the scan with one account's input",
      );
    return {
      settings: loadScanSettings(settingsFromEnv(deps.env)),
      secrets: deps.secrets,
      reports: deps.reports,
      account: undefined,
      keySource: undefined,
    };
  }
  const { account } = parseAccountInput(event);
  if (!deps.accounts || deps.env[ACCOUNT_ENV.accountsOnly] !== 'true')
    throw new ConfigError(`this scan function cannot scan an account of several (account ${account})`);
  const input = deployedItem(account, await deps.accounts.directory());
  // Only now: a refused input must not make a metric of whatever account it named.
  deps.metrics.addDimension?.(METRICS.accountDimension, input.account);
  const settings = loadScanSettings(accountRawSettings(settingsFromEnv(deps.env), input));
  return {
    settings: settings.linkBaseUrl
      ? { ...settings, linkBaseUrl: accountLinkBase(settings.linkBaseUrl, input.account) }
      : settings,
    secrets: accountSecrets(deps.accounts.secrets(input.apiKeyParameter), input.account),
    reports: deps.accounts.reports?.(input.account),
    account: input,
    // The key sent is the account's own parameter: a refusal names it, not RESELLER_API_KEY.
    keySource: `SSM parameter ${input.apiKeyParameter} (the key of account ${input.account})`,
  };
}

/**
 * The heartbeat URL, checked; undefined when none is set, or when it cannot be read or is not a
 * URL (said in the log: the scan runs all the same, and the missing pings show the heartbeat's
 * service that something is wrong).
 */
async function heartbeatBase(deps: ScheduledScanDeps): Promise<URL | undefined> {
  try {
    const text = await deps.heartbeatUrl?.();
    return text === undefined
      ? undefined
      : checkHeartbeatUrl(text, `the heartbeat URL (${ENV.heartbeatUrlParameter})`);
  } catch (error) {
    deps.logger.error('heartbeat off for this scan', { reason: (error as Error).message });
    return undefined;
  }
}

/** The heartbeat's URL (undefined: none), and when Lambda stops the invocation (epoch ms). */
interface HeartbeatTarget {
  readonly base: URL | undefined;
  readonly end: number;
}

/**
 * Time kept after a ping, before the invocation's timeout: for the metrics flushed after it. A ping
 * still waiting when Lambda stops the invocation would turn a completed scan into a timed-out one:
 * no ScanCompleted, an error alarm, and a retry that scans and alerts again.
 */
const PING_END_MARGIN_MS = 1_000;

/**
 * Pings the heartbeat, the account's own check when the scan was one account's, within the time the
 * invocation has left. A ping that fails is logged and nothing more: it never fails the scan nor
 * hides its error.
 */
async function beat(
  deps: ScheduledScanDeps,
  { base, end }: HeartbeatTarget,
  outcome: ScanOutcome,
  account: string | undefined,
): Promise<void> {
  if (!base) return;
  const heartbeat = heartbeatOf(base, account ? { account } : {});
  const left = end - (deps.clock ?? Date.now)() - PING_END_MARGIN_MS;
  const result = await heartbeat.ping(outcome, left);
  if (!result.ok)
    deps.logger.error('heartbeat failed', {
      reason: heartbeatFailureLine(heartbeat, outcome, result.reason),
    });
}

/**
 * The scheduler that delivers an SMS held by quiet hours, when the stack set one up. Quiet hours
 * without one are refused here, before the scan, as the command line does: an alert whose SMS is
 * held with nothing to send it later would go out to e-mail and never reach a phone.
 */
function smsHolderOf(settings: ScanSettings, deps: ScheduledScanDeps): SmsHolder | undefined {
  const { heldSmsScheduleGroup: scheduleGroup, heldSmsRoleArn: roleArn, alertTopicArn: topicArn } = settings;
  if (!settings.smsQuietHours || !topicArn) return undefined;
  const holdSms =
    scheduleGroup && roleArn && deps.scheduler
      ? schedulerHolder(deps.scheduler, { scheduleGroup, roleArn, topicArn })
      : undefined;
  checkQuietHours(settings, holdSms ? { holdSms } : {});
  return holdSms;
}

/** Stands for the accounts file in the refusal's command: the function knows its items, not the file's path. */
export const DEPLOYED_ACCOUNTS_FILE = 'ACCOUNTS_FILE';

/**
 * What names the function's state to `sentinel state rebind`, run on an operator's machine: the
 * table, the reseller base URL (that machine need not have the deployment's), and for an account
 * of several its name and the accounts file the deployment was deployed from.
 */
function lambdaRebind(table: string, baseUrl: string, account: AccountScanInput | undefined): StateSelector {
  return {
    state: `dynamodb:${table}`,
    ...(account ? { account: { name: account.account, accountsFile: DEPLOYED_ACCOUNTS_FILE } } : {}),
    ...(account?.settings.resellerBaseUrl === undefined ? { baseUrl } : {}),
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
  /** What names this state to `sentinel state rebind` (see StatefulScanInput.rebind). */
  readonly rebind?: StateSelector;
  /** Schedules an SMS held by quiet hours. @default none */
  readonly holdSms?: SmsHolder;
  /** Keeps the report before the alert goes out (see StatefulScanInput.keep). */
  readonly keep?: StatefulScanInput['keep'];
  /** When a first save must be done (see StatefulScanInput.saveBy). @default no limit */
  readonly saveBy?: number;
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
  return runStatefulScan({
    job: input.job,
    store: new DynamoDbStateStore({
      client: input.dynamodb,
      tableName: input.tableName,
      scope,
      // Leases are taken and judged on the one clock the scan's time is checked with.
      ...(input.clock ? { clock: input.clock } : {}),
    }),
    policy: loadStatePolicy(input.env, settings.minSeverity, settings.policies),
    publish: (report) =>
      publishAlert(
        report,
        // Judged at hand-over (see handleScheduledScan), on the clock the scan's time is checked with.
        { settings, now: (input.clock ?? Date.now)() },
        {
          send: snsSender(input.sns, topicArn, chatTargetOf(settings)),
          ...(input.holdSms ? { holdSms: input.holdSms } : {}),
        },
      ),
    ...(input.keep ? { keep: input.keep } : {}),
    ...(input.clock ? { clock: input.clock } : {}),
    ...(input.scope ? { scope } : {}),
    ...(input.rebind ? { rebind: input.rebind } : {}),
    ...(input.saveBy !== undefined ? { saveBy: input.saveBy } : {}),
  });
}
