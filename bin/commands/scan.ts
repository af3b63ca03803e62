import { schedulerHolder } from '../../functions/aws/held-sms';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { chatTargetOf, snsSender } from '../../functions/aws/sns-publish';
import { reportReaches, smsAsDelivered } from '../../functions/core/alerts/alert';
import { chatNotificationOf } from '../../functions/core/alerts/chat';
import { renderDigest } from '../../functions/core/alerts/digest';
import { groupLabel } from '../../functions/core/alerts/groups';
import { checkWebhookUrl, webhookHost } from '../../functions/core/alerts/webhook-delivery';
import { ConfigError } from '../../functions/core/base/errors';
import { SEVERITIES, type Severity } from '../../functions/core/findings/classify';
import type { SecretSource } from '../../functions/core/links/secrets';
import { alertView } from '../../functions/core/memory/actions';
import { prettyReportJson } from '../../functions/core/memory/report-json';
import type { ReportStore } from '../../functions/core/memory/report-store';
import { loadStatePolicy } from '../../functions/core/memory/state-config';
import type { WebhookFormat } from '../../functions/core/scan/config';
import { ENV, loadScanSettings, type ScanSettings } from '../../functions/core/scan/config';
import { incompleteScanError } from '../../functions/core/scan/moves';
import type { Report } from '../../functions/core/scan/scan';
import { type LocalAlertTarget, localSender, parseAlertTarget } from '../../functions/local/local-alert';
import {
  dynamoDbClientFromEnv,
  openStateStore,
  type StateLocation,
} from '../../functions/local/state-location';
import type { AlertSender, SmsHolder } from '../../functions/use-cases/publish-alert';
import {
  type AlertDelivery,
  alertMessageOf,
  checkQuietHours,
  deliverAlert,
  type Published,
  plannedAlerts,
  publishAlert,
  type SentAlert,
} from '../../functions/use-cases/publish-alert';
import { finishReport } from '../../functions/use-cases/report-finish';
import { runScanJob, type ScanJobInput } from '../../functions/use-cases/scan-job';
import type { StateSelector } from '../../functions/use-cases/state-store';
import { runStatefulScan } from '../../functions/use-cases/stateful-scan';
import { webhookSender } from '../../functions/use-cases/webhook-post';
import { flagsOf, noPositionals, oneOf, parseNow, settingsWithFlags, str } from '../args';
import { cliSchedulerClient, cliSnsClient } from '../aws-clients';
import { type CliIo, EXIT, type ParsedArgs, UsageError } from '../command';
import { type CliHeartbeat, cliHeartbeat } from '../heartbeat';
import { unlessAborted } from '../interrupt';
import { reportStoreFor, stateLocationOf } from '../local-stores';
import { withPoliciesFile } from '../policies-file';
import { scan } from './index';

/** Where this run's alert goes. */
type Delivery =
  | { readonly kind: 'dry-run' }
  | { readonly kind: 'sns'; readonly topicArn: string }
  | { readonly kind: 'local'; readonly target: LocalAlertTarget }
  | {
      readonly kind: 'webhook';
      readonly url: string;
      readonly format: WebhookFormat;
      readonly signingKey?: string;
    };

/** A scan as the command line asked for it, checked before anything starts. */
export interface ScanRun {
  readonly job: ScanJobInput;
  readonly delivery: Delivery;
  readonly json: boolean;
  /** `--chat`: a dry run prints the chat message (the custom-notification JSON) instead of the digest. */
  readonly chat: boolean;
  readonly failOn: Severity | undefined;
  readonly stateFlag: string | undefined;
  /** `--allow-clock-skew`: scan with state even when the time does not fit the state's (replays). */
  readonly allowClockSkew: boolean;
  /** `--heartbeat-url` (HEARTBEAT_URL): pinged after the scan, unless it is a dry run. */
  readonly heartbeat: CliHeartbeat | undefined;
  /** The wall clock when the run began: `job.now` moved on by the time since is the hand-over time. */
  readonly wallStart: number;
}

/**
 * When the alert is handed over, on the run's clock: its `now` (as `--now` gives it) moved on by the
 * time the scan took. Quiet hours are judged then, as the deployed scan judges them at hand-over: a
 * window that ended during a long read must not make a schedule for a time already past.
 */
const handOver = (run: ScanRun): number => run.job.now + Math.max(0, Date.now() - run.wallStart);

/**
 * Where one account of several keeps what is its own (scan --accounts): its state scope and its
 * report store; its report is returned rather than printed, the status lines go to stderr.
 */
export interface AccountPlace {
  readonly scope: string;
  readonly reports: ReportStore | null;
  /** What names the account's state to `sentinel state rebind`, for the refusal of a rotated key. */
  readonly rebind?: StateSelector;
  /** Keeps the account's summary for the overview page, of an incomplete report too (before it fails the run). */
  readonly summarize?: (report: Report) => Promise<void>;
}

/** `sentinel scan` of one account (with --accounts, scan-accounts.ts runs instead: runs.ts). */
export async function runScan(args: ParsedArgs, io: CliIo): Promise<number> {
  for (const flag of ['account', 'account-concurrency'])
    if (args.values[flag] !== undefined)
      throw new UsageError(`--${flag} goes with --accounts FILE (the accounts file, docs/accounts.md)`);
  const run = checkScanRun(args, io);
  const location = stateLocationOf(run.stateFlag, io.env);
  if (run.allowClockSkew && !location)
    throw new UsageError(
      '--allow-clock-skew is for scans with --state (or STATE): without state no time is checked',
    );
  const once = () => scanOnce(run, location, io);
  const report = run.heartbeat ? await run.heartbeat.around(io, once) : await once();
  if (report && run.failOn && reportReaches(report, run.failOn)) {
    io.stderr(`sentinel: findings at ${run.failOn} or above (--fail-on ${run.failOn})\n`);
    return EXIT.failOn;
  }
  return EXIT.ok;
}

/**
 * One scan of one account, with memory when `location` is given. A report marked incomplete (a
 * listing that moved while it was read: incompleteScanError) fails it once its alert is out: what was
 * read reached a person, and the run still fails.
 */
export async function scanOnce(
  run: ScanRun,
  location: StateLocation | undefined,
  io: CliIo,
  place?: AccountPlace,
): Promise<Report | undefined> {
  const report = await (location ? scanWithMemory(run, location, io, place) : scanAlone(run, io, place));
  if (report) await place?.summarize?.(report);
  const incomplete = report && incompleteScanError(report);
  if (incomplete) throw incomplete;
  return report;
}

/** Every flag, setting and secret checked up front: a bad one is exit 2 before a request leaves. */
function checkScanRun(args: ParsedArgs, io: CliIo): ScanRun {
  noPositionals(scan, args);
  const failOn = oneOf(str(args.values['fail-on']), '--fail-on', SEVERITIES);
  const settings = loadScanSettings(
    withPoliciesFile(settingsWithFlags(scan, args, io.env), io),
    flagsOf(scan),
  );
  const now = parseNow(str(args.values.now));
  const secrets = new EnvSecretSource(io.env);
  secrets.apiKeyNow();
  return scanRunOf(args, io, settings, secrets, now, failOn);
}

/** The run of checked settings and secrets, with the flags that are the same for every account. */
export function scanRunOf(
  args: ParsedArgs,
  io: CliIo,
  settings: ScanSettings,
  secrets: SecretSource,
  now: number,
  failOn: Severity | undefined,
  account?: string,
): ScanRun {
  if (settings.linkBaseUrl) new EnvSecretSource(io.env).signingKeysNow();
  const json = args.values.json === true;
  const chat = args.values.chat === true;
  if (chat && args.values['dry-run'] !== true)
    throw new UsageError(
      '--chat prints the chat message of a dry run: add --dry-run (CHAT_TOPIC_ARN publishes it)',
    );
  if (chat && json) throw new UsageError('--json and --chat would both write to stdout: pass one of them');
  const delivery = chooseDelivery(args, settings, json, io.env);
  const delivers = alertDeliveryOf(delivery, settings, io);
  if (delivers) checkQuietHours(settings, delivers);
  // Checked on a dry run too, which sends no ping: a bad URL is found before the real run.
  const heartbeat = cliHeartbeat(args, io.env, account);
  // A key without a base is most likely a half-done setup: say so rather than drop links silently.
  // Said once every flag passed, so a refused command line says only why.
  if (!settings.linkBaseUrl && secrets.hasSigningKeys())
    io.stderr(
      `sentinel: note: findings carry no restore links because ${ENV.linkBaseUrl} is not set (${ENV.linkSigningKey} is)\n`,
    );
  return {
    job: {
      settings,
      secrets,
      now,
      deadline: Date.now() + settings.timeBudgetSeconds * 1000,
      ...(io.signal ? { signal: io.signal } : {}),
    },
    delivery,
    heartbeat: delivery.kind === 'dry-run' ? undefined : heartbeat,
    json,
    chat,
    failOn,
    stateFlag: str(args.values.state),
    allowClockSkew: args.values['allow-clock-skew'] === true,
    wallStart: Date.now(),
  };
}

/** Where the alert goes (`--dry-run`, `--alert-to`, `--webhook`, or the topic); a combination that cannot work is a UsageError. */
export function chooseDelivery(
  args: ParsedArgs,
  settings: ScanSettings,
  json: boolean,
  env: NodeJS.ProcessEnv,
): Delivery {
  const alertTo = str(args.values['alert-to']);
  const dryRun = args.values['dry-run'] === true;
  const webhook = str(args.values.webhook) ?? (env[ENV.webhookUrl]?.trim() || undefined);
  if (webhook !== undefined) {
    if (dryRun || alertTo !== undefined)
      throw new UsageError(
        '--webhook delivers the alert, as --alert-to does and --dry-run does not: pass one of them',
      );
    const format = settings.webhookFormat;
    if (!format)
      throw new UsageError(
        `--webhook needs --webhook-format slack, teams or json (or ${ENV.webhookFormat}): the webhook at ${webhookHost(webhook)} takes one of them`,
      );
    const url = checkWebhookUrl(
      webhook,
      str(args.values.webhook) !== undefined ? '--webhook' : ENV.webhookUrl,
    );
    const signingKey = env[ENV.webhookSigningKey]?.trim();
    if (signingKey !== undefined && signingKey.length < 32)
      throw new ConfigError(`${ENV.webhookSigningKey} must be at least 32 characters`);
    return { kind: 'webhook', url, format, ...(signingKey ? { signingKey } : {}) };
  }
  if (args.values['webhook-format'] !== undefined)
    throw new UsageError(
      `--webhook-format goes with --webhook URL (or ${ENV.webhookUrl}): without a webhook nothing is posted`,
    );
  if (alertTo !== undefined && dryRun)
    throw new UsageError('--dry-run delivers nothing and --alert-to delivers the alert: pass one of them');
  if (alertTo === 'stdout' && json)
    throw new UsageError('--json and --alert-to stdout would both write to stdout: use --alert-to FILE');
  if (alertTo === '') throw new UsageError('--alert-to needs stdout or a file path');
  // `-` means stdout to most tools: never a file of that name the person did not mean to make.
  if (alertTo === '-')
    throw new UsageError(
      '--alert-to - would append the alert to a file named -: write --alert-to stdout to print it, or --alert-to ./- for that file',
    );
  if (alertTo !== undefined) return { kind: 'local', target: parseAlertTarget(alertTo) };
  if (dryRun) return { kind: 'dry-run' };
  if (settings.alertTopicArn) return { kind: 'sns', topicArn: settings.alertTopicArn };
  throw new ConfigError(
    `${ENV.alertTopicArn} is not set; set it to publish the alert, pass --alert-to stdout to print it, or pass --dry-run`,
  );
}

/** How the messages of this run are delivered; undefined for a dry run (printed instead). */
function alertDeliveryOf(delivery: Delivery, settings: ScanSettings, io: CliIo): AlertDelivery | undefined {
  const send = senderFor(delivery, settings, io);
  if (!send) return undefined;
  return {
    send,
    // A command-line webhook is the deployment's own recipient: it takes the account's message.
    groups: delivery.kind !== 'webhook',
    ...heldSmsDelivery(delivery, settings),
  };
}

/**
 * What becomes of an SMS quiet hours hold: on SNS, a schedule at the window's end (when the stack's
 * scheduler is named); printed with the alert on --alert-to (nothing is sent later); a webhook
 * takes no SMS. Without one, checkQuietHours refuses quiet hours before the scan.
 */
function heldSmsDelivery(delivery: Delivery, settings: ScanSettings): { holdSms?: SmsHolder } {
  if (!settings.smsQuietHours) return {};
  if (delivery.kind === 'webhook') return { holdSms: async () => '' };
  if (delivery.kind === 'local')
    return {
      holdSms: async (held) =>
        `until ${held.until} ${held.timeZone} (printed above; a local delivery sends nothing later)`,
    };
  const { heldSmsScheduleGroup: scheduleGroup, heldSmsRoleArn: roleArn, alertTopicArn: topicArn } = settings;
  if (delivery.kind !== 'sns' || !scheduleGroup || !roleArn || !topicArn) return {};
  return { holdSms: schedulerHolder(cliSchedulerClient(), { scheduleGroup, roleArn, topicArn }) };
}

/**
 * How this run delivers its alert, if it does. A scan the signal stopped delivers nothing: the alert
 * is checked against it as it leaves (a stateful scan then releases its lease, its state unsaved).
 * A signal while the alert is on its way (a webhook or SNS that does not answer) fails the delivery
 * at once rather than after its retries: the lease is released before the shell's grace ends the
 * process, and the next scan says the alert again (it may have arrived: at least once, never lost).
 */
function senderFor(delivery: Delivery, settings: ScanSettings, io: CliIo): AlertSender | undefined {
  const send = deliveryOf(delivery, settings, io);
  const { signal } = io;
  if (!send || !signal) return send;
  return (alert) => {
    signal.throwIfAborted();
    return unlessAborted(send(alert), signal);
  };
}

function deliveryOf(delivery: Delivery, settings: ScanSettings, io: CliIo): AlertSender | undefined {
  if (delivery.kind === 'sns')
    return snsSender(io.sns?.() ?? cliSnsClient(), delivery.topicArn, chatTargetOf(settings), io.signal);
  if (delivery.kind === 'local') return localSender(delivery.target, io.stdoutDelivered ?? io.stdout);
  if (delivery.kind === 'webhook')
    return webhookSender({
      url: delivery.url,
      format: delivery.format,
      timeZone: settings.timeZone,
      ...(delivery.signingKey ? { signingKey: delivery.signingKey } : {}),
      ...(settings.accountLabel ? { accountLabel: settings.accountLabel } : {}),
    });
  return undefined;
}

/**
 * Where the scan's own lines go (`published alert …`, `state saved to …`): stdout, unless stdout
 * carries something a program reads, the JSON report (--json), the chat message (--chat) or the
 * alert itself (--alert-to stdout, piped to mail or saved to a file, which must hold the alert alone).
 */
const notesOf = (run: ScanRun, io: CliIo) =>
  run.json || run.chat || (run.delivery.kind === 'local' && run.delivery.target.kind === 'stdout')
    ? io.stderr
    : io.stdout;

/** `published alert <id> to <topic>`, `delivered the alert to stdout`, `appended the alert to FILE`. */
function deliveredLine(delivery: Delivery, published: Published, why?: readonly string[]): string {
  const reason = why?.length ? ` (${why.join(', ')})` : '';
  const cut = published.findingsCut ? ` (${published.findingsCut} findings cut to fit SNS's 256 KB)` : '';
  if (delivery.kind === 'sns')
    return `published alert ${published.messageId} to ${delivery.topicArn}${reason}${cut}`;
  if (delivery.kind === 'webhook') return `posted the alert to the ${published.messageId}${reason}${cut}`;
  const where =
    delivery.kind === 'local' && delivery.target.kind === 'file'
      ? `appended the alert to ${delivery.target.path}`
      : 'delivered the alert to stdout';
  return `${where}${reason}${cut}`;
}

/** One line per group's own message, and one per SMS held by quiet hours. */
function sentLines(delivery: Delivery, sent: readonly SentAlert[]): string {
  return sent
    .map((s) => {
      const group =
        s.group === undefined
          ? ''
          : `${deliveredLine(delivery, s).replace(/\balert\b/, `alert of group ${s.group}`)}\n`;
      return `${group}${s.held ? `SMS held by quiet hours${s.group ? ` (group ${s.group})` : ''}: ${s.held}\n` : ''}`;
    })
    .join('');
}

/**
 * The digest and the SMS a dry run prints in place of delivering them, for the account and each
 * group with recipients of its own; with --chat, the chat message of the account's.
 */
function printDryRun(report: Report, settings: ScanSettings, io: CliIo, chat: boolean, now: number): void {
  const input = { settings, now, decided: true };
  const [first, ...groups] = plannedAlerts(report, input);
  if (!first) return;
  const options = {
    timeZone: settings.timeZone,
    ...(settings.accountLabel ? { accountLabel: settings.accountLabel } : {}),
  };
  if (chat) {
    io.stdout(
      `${JSON.stringify(chatNotificationOf(alertMessageOf(first, input).alert, options), null, 2)}\n`,
    );
    return;
  }
  for (const planned of [first, ...groups]) {
    const { alert, heldUntil } = alertMessageOf(planned, input);
    const label = groupLabel(settings.accountLabel, planned.group);
    const sms = (JSON.parse(alert.message) as { sms: string }).sms;
    io.stdout(
      `${planned.group ? `\n=== the message of group ${planned.group} (its own recipients) ===\n` : ''}${renderDigest(planned.report, { timeZone: settings.timeZone, ...(label ? { accountLabel: label } : {}) })}\n\n` +
        `--- SMS (critical only, as a phone receives it${heldUntil ? `; held by quiet hours until ${heldUntil} ${settings.timeZone}` : ''}) ---\n${smsAsDelivered(sms)}\n`,
    );
  }
}

/** A scan without memory: read, keep the report, deliver if the notify policy says so. */
async function scanAlone(run: ScanRun, io: CliIo, place?: AccountPlace): Promise<Report> {
  const { settings } = run.job;
  const read = await runScanJob(run.job);
  // A report that carries links is kept where `serve` looks by default, so its report_url leads to it.
  const reports = place
    ? place.reports
    : reportStoreFor({ env: io.env, cwd: io.cwd }, read.report_url === undefined);
  const { report, alert } = await finishReport({ report: read, ...(reports ? { reports } : {}) });
  // In pieces: at a million domains the report is some 100 MB, which one string would hold twice over.
  if (run.json && !place) for (const piece of prettyReportJson(report, '\n')) io.stdout(piece);
  const delivery = alertDeliveryOf(run.delivery, settings, io);
  if (!delivery) {
    if (!run.json) printDryRun(alert, settings, io, run.chat, run.job.now);
    return report;
  }
  const outcome = await deliverAlert(alert, { settings, now: handOver(run) }, delivery);
  notesOf(
    run,
    io,
  )(
    outcome.published
      ? `${deliveredLine(run.delivery, outcome)}\n${sentLines(run.delivery, outcome.sent)}`
      : `no alert published: ${outcome.reason}\n`,
  );
  return report;
}

/**
 * `scan --state …`: compare with the last scan, deliver what is news, then save the state.
 * Undefined when another scan saved a later one meanwhile: that scan's outcome stands, not this one's.
 * A state whose account-wide part is damaged is alerted on as a first scan, not written, and then
 * fails the run (the outcome's `damaged`), as an incomplete report does in scanOnce.
 */
async function scanWithMemory(
  run: ScanRun,
  location: StateLocation,
  io: CliIo,
  place?: AccountPlace,
): Promise<Report | undefined> {
  const { settings } = run.job;
  const scope = place?.scope ?? settings.resellerBaseUrl;
  const dynamodb = () => io.dynamodb?.() ?? dynamoDbClientFromEnv(io.env);
  const store = openStateStore(location, scope, dynamodb, io.signal);
  const delivery = alertDeliveryOf(run.delivery, run.job.settings, io);
  const send = delivery?.send;
  const reports = place
    ? place.reports
    : reportStoreFor(
        { env: io.env, stateFlag: run.stateFlag, cwd: io.cwd },
        settings.linkBaseUrl === undefined,
      );
  const { result, published, saved, conflicts, superseded, damaged } = await runStatefulScan({
    job: run.job,
    store,
    policy: loadStatePolicy(io.env, settings.minSeverity, settings.policies),
    // Kept under the lease, before the alert goes out: its report_json_url must find it.
    ...(delivery
      ? {
          publish: (report: Report) => publishAlert(report, { settings, now: handOver(run) }, delivery),
          ...(reports ? { keep: (r) => reports.put(r) } : {}),
        }
      : {}),
    ...(run.allowClockSkew ? { allowClockSkew: true } : {}),
    ...(place ? { scope } : {}),
    ...(place?.rebind ? { rebind: place.rebind } : {}),
  });
  const say = notesOf(run, io);
  const print = run.json && !place;
  if (superseded) {
    // The report as read is still printed; the stored one (the later scan's) is kept.
    if (print) for (const piece of prettyReportJson(result.report, '\n')) io.stdout(piece);
    say(`no alert published and state not written: ${superseded}\n`);
    return undefined;
  }
  // A dry run keeps the report too: the report_url it prints must lead to it.
  if (!send) await reports?.put(result.report);
  if (conflicts > 0)
    say(
      `another scan moved the state on while this one ran: re-read it ${conflicts} time${conflicts === 1 ? '' : 's'} before deciding\n`,
    );
  if (print) for (const piece of prettyReportJson(result.report, '\n')) io.stdout(piece);
  if (!send) {
    if (!run.json)
      printDryRun(alertView(result.report, result.silenced), settings, io, run.chat, run.job.now);
    say(
      `state in ${store.location} not written (--dry-run); a real run would ${result.publish ? 'publish' : 'publish nothing'}: ${result.why.join(', ')}\n`,
    );
    if (damaged) throw damaged;
    return result.report;
  }
  say(
    `${published ? deliveredLine(run.delivery, published, result.why) : `no alert published: ${result.why.join(', ') || 'nothing new'}`}\n`,
  );
  if (saved) say(`state saved to ${store.location}\n`);
  if (damaged) {
    say(
      `state in ${store.location} not written: it cannot be read, and is left as it is for a person to look at\n`,
    );
    throw damaged;
  }
  return result.report;
}
