import { type AlertMessage, buildAlertMessage } from '../core/alerts/alert';
import { groupLabel, type PlannedAlert, planAlerts, smsDisposition } from '../core/alerts/groups';
import { ConfigError } from '../core/base/errors';
import { signRestoreLink } from '../core/links/links';
import type { SecretSource } from '../core/links/secrets';
import { ResellerClient } from '../core/reseller/client';
import { ENV, type ScanSettings } from '../core/scan/config';
import { type PolicySet, resolvePolicies } from '../core/scan/policies';
import { attachLinks } from '../core/scan/report-links';
import { type Report, type ScanOptions, scanAccount } from '../core/scan/scan';
import type { SmsHolder } from './held-sms';
import type { AlertSender } from './sns-publish';

/** Everything one scan needs besides settings: secrets and the run's clock and budget. */
export interface ScanJobInput {
  readonly settings: ScanSettings;
  /** The API key, and the link signing keys when settings.linkBaseUrl is set. */
  readonly secrets: SecretSource;
  /** The instant the rules evaluate against. */
  readonly now: number;
  /** Epoch ms by which the scan must have read the account. */
  readonly deadline?: number;
  readonly fetch?: typeof fetch;
  /**
   * Sees every domain read (memory between scans). Forces full mode: only a read of the whole
   * account proves that a domain left it.
   */
  readonly observe?: ScanOptions['observe'];
  /** The account's name when the deployment scans several: the report's `source.account`. */
  readonly account?: string;
}

/** Builds the reseller client from settings and runs the scan: the one path the CLI and the Lambda share. */
export async function runScanJob(input: ScanJobInput): Promise<Report> {
  const { settings } = input;
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey: await input.secrets.apiKey(),
    perPage: settings.perPage,
    concurrency: settings.concurrency,
    timeoutMs: settings.requestTimeoutMs,
    ...(input.deadline !== undefined ? { deadline: input.deadline } : {}),
    ...(input.fetch ? { fetch: input.fetch } : {}),
    maxResponseBytes: settings.maxResponseMb * 1024 * 1024,
  });
  const linkBaseUrl = settings.linkBaseUrl;
  const keys = linkBaseUrl ? await input.secrets.signingKeys() : undefined;
  const restoreLinkFor =
    linkBaseUrl && keys?.length
      ? (domain: string) =>
          signRestoreLink({
            baseUrl: linkBaseUrl,
            domain,
            keys,
            now: input.now,
            ttlSeconds: settings.linkTtlDays * 86_400,
          })
      : undefined;
  const report = await scanAccount({
    client,
    now: input.now,
    policy: {
      expiryDays: settings.expiryDays,
      criticalDays: settings.criticalDays,
      quarantineDays: settings.quarantineDays,
    },
    ...(settings.policies ? { policies: policySetOf(settings) } : {}),
    mode: input.observe ? 'full' : settings.scanMode,
    ...(input.observe ? { observe: input.observe } : {}),
    ...(restoreLinkFor ? { restoreLinkFor } : {}),
    ...(input.deadline !== undefined
      ? { timeBudgetSeconds: Math.round((input.deadline - Date.now()) / 1000) }
      : {}),
  });
  // With memory, the comparison may still change a finding (a renewal_failed only memory knows):
  // the stateful scan signs the links once it has (signReportLinks), so each acts on what is shown.
  const named = input.account ? { ...report, source: { ...report.source, account: input.account } } : report;
  return input.observe ? named : signReportLinks(named, input, { silencing: false });
}

/**
 * The report with every signed link it can carry (functions/core/scan/report-links.ts), when
 * LINK_BASE_URL is set; `silencing` offers snooze and acknowledge, which need the state store;
 * `owned` sets the links on the report's own finding objects (attachLinks).
 */
export async function signReportLinks<R extends Report>(
  report: R,
  input: Pick<ScanJobInput, 'settings' | 'secrets' | 'now'>,
  how: { readonly silencing: boolean; readonly owned?: boolean },
): Promise<R> {
  const { settings } = input;
  const keys = settings.linkBaseUrl ? await input.secrets.signingKeys() : undefined;
  return settings.linkBaseUrl && keys?.length
    ? attachLinks(
        report,
        {
          baseUrl: settings.linkBaseUrl,
          keys,
          now: input.now,
          ttlDays: settings.linkTtlDays,
          silencing: how.silencing,
        },
        how.owned,
      )
    : report;
}

/** The settings' policies resolved against the deployment's own thresholds (none: an empty set). */
export function policySetOf(settings: ScanSettings): PolicySet {
  return resolvePolicies(settings.policies, {
    classify: {
      expiryDays: settings.expiryDays,
      criticalDays: settings.criticalDays,
      quarantineDays: settings.quarantineDays,
    },
    minSeverity: settings.minSeverity,
  });
}

/** One message sent: its id, and what was cut or held. */
export interface SentAlert {
  /** The group whose own message it was; absent: the account's. */
  readonly group?: string;
  readonly messageId: string;
  readonly findingsCut: number;
  /** Where its SMS waits for the end of the quiet hours, when it does. */
  readonly held?: string;
}

export type DeliveryOutcome =
  | {
      readonly published: true;
      /** The account's message. */
      readonly messageId: string;
      readonly findingsCut: number;
      /** Every message sent, the account's first. */
      readonly sent: readonly SentAlert[];
    }
  | { readonly published: false; readonly reason: string };

/** How this run's messages are delivered. */
export interface AlertDelivery {
  readonly send: AlertSender;
  /** Whether the groups' own messages go this way too (a command-line webhook is the deployment's own). @default true */
  readonly groups?: boolean;
  /** Schedules an SMS held by quiet hours; without one, SMS_QUIET_HOURS is refused before the scan (checkQuietHours). */
  readonly holdSms?: SmsHolder;
}

/** What the planner and the renderer need from the run. */
export interface PlanInput {
  readonly settings: ScanSettings;
  /** The scan's instant: quiet hours are judged at it. */
  readonly now: number;
  /** The memory between scans decided to publish. @default false */
  readonly decided?: boolean;
}

/** The messages of this scan (planAlerts), with the settings' levels and policies. */
export const plannedAlerts = <R extends Report>(report: R, input: PlanInput): PlannedAlert<R>[] =>
  planAlerts(report, {
    minSeverity: input.settings.minSeverity,
    ...(input.settings.policies ? { policies: policySetOf(input.settings) } : {}),
    ...(input.decided ? { decided: true } : {}),
  });

/** The SNS message of one planned alert: rendered in the zone, labelled with its group, its SMS disposition set. */
export function alertMessageOf(
  planned: PlannedAlert<Report>,
  input: PlanInput,
): { readonly alert: AlertMessage; readonly heldUntil?: string } {
  const { settings } = input;
  const label = groupLabel(settings.accountLabel, planned.group);
  const built = buildAlertMessage(planned.report, {
    timeZone: settings.timeZone,
    ...(label ? { accountLabel: label } : {}),
  });
  const sms = smsDisposition(planned.report, {
    ...(settings.smsQuietHours ? { hours: settings.smsQuietHours } : {}),
    timeZone: settings.timeZone,
    now: input.now,
  });
  if (!sms) return { alert: built };
  const alert = { ...built, attributes: { ...built.attributes, sms: sms.sms } };
  return sms.sms === 'held' ? { alert, heldUntil: sms.until } : { alert };
}

/**
 * Refuses quiet hours where a held SMS could not be delivered later: a delivery with SMS
 * subscribers (SNS) needs the scheduler the stack sets up (HELD_SMS_SCHEDULE_GROUP, HELD_SMS_ROLE_ARN).
 */
export function checkQuietHours(settings: ScanSettings, delivery: Pick<AlertDelivery, 'holdSms'>): void {
  if (settings.smsQuietHours && !delivery.holdSms)
    throw new ConfigError(
      `${ENV.smsQuietHours} holds an SMS until the window ends, which takes EventBridge Scheduler: set ${ENV.heldSmsScheduleGroup} and ${ENV.heldSmsRoleArn} (the stack sets them for its scan), deliver with --alert-to, or unset ${ENV.smsQuietHours}`,
    );
}

/**
 * Delivers this scan's messages (planAlerts): the account's first, then each group's. A message
 * whose SMS quiet hours hold goes out at once with `sms` = `held` (the SMS subscriptions skip it),
 * and its SMS is handed to the holder to be sent when the window ends. Throws PublishError on a
 * failure: the run fails and the next one says it all again.
 */
export async function deliverAlerts(
  report: Report,
  input: PlanInput,
  delivery: AlertDelivery,
): Promise<DeliveryOutcome> {
  const plan = plannedAlerts(report, input);
  if (plan.length === 0)
    return { published: false, reason: `nothing at ${input.settings.minSeverity} or above` };
  const sent = await deliverPlanned(plan, input, delivery);
  const first = sent[0] as SentAlert;
  return { published: true, messageId: first.messageId, findingsCut: first.findingsCut, sent };
}

/** Sends planned messages in their order (the account's first); a group's only where `delivery.groups` allows. */
export async function deliverPlanned(
  plan: readonly PlannedAlert<Report>[],
  input: PlanInput,
  delivery: AlertDelivery,
): Promise<SentAlert[]> {
  const sent: SentAlert[] = [];
  for (const planned of plan) {
    if (planned.group !== undefined && delivery.groups === false) continue;
    const { alert, heldUntil } = alertMessageOf(planned, input);
    const messageId = await delivery.send(alert);
    let held: string | undefined;
    if (heldUntil !== undefined) {
      if (!delivery.holdSms) checkQuietHours(input.settings, delivery);
      held = await delivery.holdSms?.({
        text: (JSON.parse(alert.message) as { sms: string }).sms,
        attributes: alert.attributes,
        until: heldUntil,
        timeZone: input.settings.timeZone,
      });
    }
    sent.push({
      ...(planned.group ? { group: planned.group } : {}),
      messageId,
      findingsCut: alert.findingsCut,
      ...(held ? { held } : {}),
    });
  }
  return sent;
}
