import { groupLabel, type PlannedAlert, planAlerts, smsDisposition } from '../core/alerts/groups';
import { type AlertMessage, buildAlertMessage } from '../core/alerts/message';
import { ConfigError } from '../core/base/errors';
import type { StatefulReport } from '../core/memory/state';
import { ENV, type ScanSettings } from '../core/scan/config';
import { type PolicySet, resolvePolicies } from '../core/scan/policies';
import type { Report } from '../core/scan/scan';

/* The ports a publish goes through: SNS implements them on AWS (functions/aws), stdout or a file on a laptop. */

/** Delivers the scan's one alert message and returns its message id: SNS in AWS, stdout or a file locally. */
export type AlertSender = (alert: AlertMessage) => Promise<string>;

/** One SMS to send when the quiet hours end. */
export interface HeldSms {
  /** The SMS body, as the message's `sms` member holds it. */
  readonly text: string;
  /** The message's attributes the SMS subscriptions filter on (account, group, severity). */
  readonly attributes: AlertMessage['attributes'];
  /** Local date and time the window ends (`2026-11-23T07:00:00`), in `timeZone`. */
  readonly until: string;
  readonly timeZone: string;
}

/** Makes sure a held SMS is sent when the window ends; returns where it waits, in words. */
export type SmsHolder = (held: HeldSms) => Promise<string>;

/** What a delivered alert came to. */
export interface Published {
  readonly messageId: string;
  /** Findings the message left out to stay within SNS's 256 KB (the report behind its link has them all). */
  readonly findingsCut: number;
}

/** Changes and resolved entries carried in one message: the JSON goes into it four times (sqs, lambda, http, https). */
export const MESSAGE_CHANGES_LIMIT = 100;

/**
 * The report as one message carries it: `changes` and `resolved` cut to `limit` each, the cut
 * stated in the report (an account emptied at once must not make every message too big for SNS,
 * which would make every run fail and alert nobody), with how many of the changes left out were
 * critical, which the alert still counts (alert.ts criticalCount). A report without memory is left as it is.
 */
export function capForMessage<R extends Report>(report: R, limit = MESSAGE_CHANGES_LIMIT): R {
  if (!('changes' in report && 'resolved' in report)) return report;
  const { changes, resolved } = report as unknown as StatefulReport;
  if (changes.length <= limit && resolved.length <= limit) return report;
  return {
    ...report,
    changes: changes.slice(0, limit),
    resolved: resolved.slice(0, limit),
    changes_truncated: {
      changes_omitted: Math.max(0, changes.length - limit),
      resolved_omitted: Math.max(0, resolved.length - limit),
      critical_changes_omitted: changes.slice(limit).filter((c) => c.severity === 'critical').length,
    },
  };
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
    criticalRepeatHours: settings.criticalRepeatHours,
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
  | ({
      readonly published: true;
      /** Every message sent, the account's first. */
      readonly sent: readonly SentAlert[];
    } & Published)
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
  const built = buildAlertMessage(capForMessage(planned.report), {
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
      `${ENV.smsQuietHours} holds an SMS until the window ends, which takes EventBridge Scheduler: set ${ENV.heldSmsScheduleGroup} and ${ENV.heldSmsRoleArn} (the group and a role Scheduler may publish with), deliver with --alert-to, or unset ${ENV.smsQuietHours}`,
    );
}

/**
 * The one way a scan's alert goes out, with memory or without, once it is decided to publish: the
 * account's message, then each group's that has something at its level (planAlerts), each built for
 * SNS (functions/core/alerts/message.ts) from the report as alerts see it and delivered through
 * `delivery.send` (SNS, a webhook, stdout or a file). A failure is the sender's PublishError.
 */
export async function publishAlert(
  report: Report,
  input: PlanInput,
  delivery: AlertDelivery,
): Promise<Published> {
  const decided = { ...input, decided: true };
  const [account] = await deliverPlanned(plannedAlerts(report, decided), decided, delivery);
  return { messageId: account?.messageId ?? '', findingsCut: account?.findingsCut ?? 0 };
}

/**
 * A scan without memory: the notify policy decides (something at MIN_SEVERITY), then this scan's
 * messages go out (planAlerts): the account's first, then each group's. A message
 * whose SMS quiet hours hold goes out at once with `sms` = `held` (the SMS subscriptions skip it),
 * and its SMS is handed to the holder to be sent when the window ends. Throws PublishError on a
 * failure: the run fails and the next one says it all again.
 */
export async function deliverAlert(
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
    // Refused before the message goes out: its SMS would wait for a release nobody schedules.
    if (heldUntil !== undefined) checkQuietHours(input.settings, delivery);
    const messageId = await delivery.send(alert);
    let held: string | undefined;
    if (heldUntil !== undefined) {
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
