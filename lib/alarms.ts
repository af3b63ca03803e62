import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { AlertMetrics } from './alerts';
import { deadManAlarm } from './dead-man';
import { runOutcome } from './metrics';
import { deadLetterAlarm, type Scanner } from './scanner';
import type { Watchdog } from './watchdog';
import type { WebMetrics } from './web-api';

/** Lambda's longest timeout (15 minutes): a scan at it has no timeout left to raise. */
const LAMBDA_LONGEST_MS = 900_000;

/** A scan that takes more than this share of its timeout raises an alarm: the account outgrows it. */
export const SCAN_DURATION_ALARM_SHARE = 0.8;

export interface DeploymentAlarms {
  readonly scan: Scanner;
  readonly web: WebMetrics;
  readonly alerts: AlertMetrics;
  /** The dead-man window (none: the heartbeat's service watches); the accounts' own switches are in their groups' stacks. */
  readonly intervalHours: number | undefined;
  /** Several accounts: no deployment-wide dead-man switch, an alarm on the state machine instead. */
  readonly accounts: boolean;
  /** The SMS spend alarm's threshold, when the deployment sends SMS. */
  readonly smsSpendAlarmUsd?: number;
}

const FIVE_MINUTES = { period: Duration.minutes(5) };

/**
 * The deployment's alarms on the ops topic, in the order the ops e-mails name them: what each
 * watches comes from the metric factory beside the thing it measures.
 */
export function watchDeployment(watchdog: Watchdog, parts: DeploymentAlarms): void {
  const { scan, web, alerts } = parts;
  const timeout = scan.metrics.timeout.toMilliseconds();
  // Several accounts: no ScanErrors. The state machine retries an account's failed scan and counts
  // one that fails again in the account's own ScanFailed alarm, which names it and judges its last
  // scan; Lambda's errors would repeat those, and stay on for a day after a retry that worked.
  if (!parts.accounts)
    watchdog.alarm('ScanErrors', {
      description:
        'The domain-sentinel scan failed, and no retry completed it; its log group says why. The alarm clears when a scan completes.',
      // Judges the last run, not its attempts: Lambda retries a failed scheduled run twice (a minute
      // or two apart), and a retry that completes puts ScanCompleted, which makes the hour's outcome
      // 0. Lambda's Errors alone stayed at 1 for that hour, and the alarm on until the next day's run.
      metric: runOutcome(
        { completed: scan.metrics.completed() },
        { errors: scan.metrics.errors() },
        'Scan errors (0: a scan completed)',
      ),
      // The hours without a run have no data point: they neither clear nor raise the alarm.
      missing: cloudwatch.TreatMissingData.IGNORE,
    });
  if (parts.accounts && scan.accountScans)
    watchdog.alarm('AccountScansFailed', {
      description:
        "The state machine that scans the accounts failed as a whole (not one account's scan: those are caught); its execution history says at which state.",
      metric: scan.accountScans.executionsFailed(),
      // Cleared by an execution that succeeds, not by the hours without one (see runOutcome).
      missing: cloudwatch.TreatMissingData.IGNORE,
    });
  else if (parts.intervalHours !== undefined)
    watchdog.alarm('ScanNotCompleted', deadManAlarm(scan.metrics, parts.intervalHours));
  watchdog.alarm('ScanFailedRuns', deadLetterAlarm(scan.failedRuns, 'Scan runs failed after retries'));
  watchdog.alarm(
    'ScheduleDeadLetters',
    deadLetterAlarm(scan.scheduleDeadLetters, 'The schedule could not invoke the scan'),
  );
  watchdog.alarm('RestoreErrors', {
    description:
      'The web function (restore, snooze, acknowledge, report, calendar) failed; its log group says why.',
    metric: web.errors(),
  });
  watchdog.alarm('RestoreServerErrors', {
    description:
      "The web API answered with a server error (5xx): a restore failed or its outcome is unknown; the function's log says which domain and why.",
    metric: web.serverErrors(FIVE_MINUTES),
  });
  watchdog.alarm('AuditWriteFailed', {
    description:
      'A restore attempt could not be kept in the audit trail (the state table could not be written); the web function’s log holds the attempt (outcome audit_failed) and why.',
    metric: web.auditFailures(FIVE_MINUTES),
  });
  watchdog.alarm('AlertDeliveryFailed', {
    description: 'Alerts could not be delivered to one or more subscribers.',
    metric: alerts.failed(),
  });
  watchdog.alarm('ScanThrottled', {
    description: 'The scan was throttled by Lambda (concurrency limit reached).',
    metric: scan.metrics.throttles(FIVE_MINUTES),
  });
  watchdog.alarm('WebThrottled', {
    description: 'The web function was throttled by Lambda (concurrency limit reached).',
    metric: web.throttles(FIVE_MINUTES),
  });
  watchdog.alarm('ScanNearTimeout', {
    // At Lambda's longest timeout there is nothing to raise. The function's memory is no setting:
    // 3 008 MB, sized by the bench, so the advice never names it.
    description: `A scan took more than ${Math.round(SCAN_DURATION_ALARM_SHARE * 100)} % of its ${timeout / 1000} s timeout${timeout >= LAMBDA_LONGEST_MS ? ", Lambda's longest: a read it cuts is alerted marked incomplete, and successive runs read different pages; with registryCheck, lower rdapQueryBudget" : '; raise scanTimeoutMinutes (at most 15)'}.`,
    metric: scan.metrics.duration(FIVE_MINUTES),
    threshold: Math.round(timeout * SCAN_DURATION_ALARM_SHARE),
    comparison: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
  });
  if (parts.smsSpendAlarmUsd !== undefined)
    watchdog.alarm('SmsSpend', {
      description: `SMS spending this month reached ${parts.smsSpendAlarmUsd} USD: the spend of every sender in this AWS account and region, not this deployment alone (SNS counts no spend per topic); at the account's SMS spend limit (1 USD for a new account) SNS stops sending every sender's SMS.`,
      metric: alerts.smsMonthToDateSpend(),
      threshold: parts.smsSpendAlarmUsd,
    });
}
