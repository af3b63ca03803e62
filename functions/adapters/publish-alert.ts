import { shouldNotify } from '../core/alerts/alert';
import { buildAlertMessage } from '../core/alerts/message';
import type { StatefulReport } from '../core/memory/state';
import type { ScanSettings } from '../core/scan/config';
import type { Report } from '../core/scan/scan';
import type { AlertSender } from './sns-publish';

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
 * which would make every run fail and alert nobody). A report without memory is left as it is.
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
    },
  };
}

/**
 * The one way a scan's alert goes out, with memory or without: the one message built for SNS
 * (functions/core/alerts/alert.ts) from the report as alerts see it, delivered through `send`
 * (SNS, a webhook, stdout or a file). A failure is the sender's PublishError.
 */
export async function publishAlert(
  report: Report,
  settings: ScanSettings,
  send: AlertSender,
): Promise<Published> {
  const alert = buildAlertMessage(capForMessage(report), {
    timeZone: settings.timeZone,
    ...(settings.accountLabel ? { accountLabel: settings.accountLabel } : {}),
  });
  return { messageId: await send(alert), findingsCut: alert.findingsCut };
}

export type DeliveryOutcome =
  | ({ readonly published: true } & Published)
  | { readonly published: false; readonly reason: string };

/** A scan without memory: the alert published when the notify policy says so (something at MIN_SEVERITY). */
export async function deliverAlert(
  report: Report,
  settings: ScanSettings,
  send: AlertSender,
): Promise<DeliveryOutcome> {
  if (!shouldNotify(report, settings.minSeverity))
    return { published: false, reason: `nothing at ${settings.minSeverity} or above` };
  return { published: true, ...(await publishAlert(report, settings, send)) };
}
