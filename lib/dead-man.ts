import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as cr from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import { ConfigError } from '../functions/core/base/errors';
import { METRICS } from '../functions/core/scan/config';
import type { ScanMetrics } from './scanner';
import { ALARM_MAX_HOURS, DEAD_MAN_GRACE_HOURS } from './schedule';
import { sdkCall } from './sdk-call';
import type { AlarmSpec } from './watchdog';

/** The metric the deploy puts once, so the dead-man alarm waits for the first scheduled scan. */
export const DEAD_MAN_ARMED_METRIC = 'DeadManArmed';

/**
 * The dead-man switch: no ScanCompleted (of `account`, or of the deployment) in any of the last
 * `intervalHours + graceHours` hours. Missing data breaches, so a scan that stopped running (not just
 * one that failed) raises the alarm. The deploy's DeadManArmed data point ({@link armDeadMan}) counts
 * like a completed scan. The grace is an hour for the deployment's own scan (it takes minutes); for
 * one account of several, the state machine's execution timeout: an account scanned first one day
 * may be scanned last the next, after rounds of scans that took all their time.
 */
export function deadManAlarm(
  metrics: ScanMetrics,
  intervalHours: number,
  account?: string,
  graceHours = DEAD_MAN_GRACE_HOURS,
): AlarmSpec {
  const hours = intervalHours + graceHours;
  // The alarm waits `hours` whole periods, and CloudWatch watches at most 7 days of them.
  if (hours > ALARM_MAX_HOURS)
    throw new ConfigError(
      `invalid accounts: the dead-man alarm of account ${account} would wait ${intervalHours} hours between scans and ${graceHours} more for an execution of the accounts' state machine (its timeout), ${hours} in all, and a CloudWatch alarm watches at most ${ALARM_MAX_HOURS} hours (7 days): scan at least every ${ALARM_MAX_HOURS - graceHours} hours`,
    );
  return {
    description: account
      ? `No scan of account ${account} has completed in ${hours} hours: the schedule may be disabled, or its every run failed (its ScanFailed alarm and the state machine's executions say why).`
      : `No domain-sentinel scan has completed in ${hours} hours: the schedule may be disabled, or every run failed.`,
    metric: new cloudwatch.MathExpression({
      expression: 'FILL(completed, 0) + FILL(armed, 0)',
      usingMetrics: {
        completed: metrics.completed(account),
        armed: metrics.metric(DEAD_MAN_ARMED_METRIC, {}, account),
      },
      period: Duration.hours(1),
      label: 'Scans completed (and the deploy)',
    }),
    comparison: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
    periods: hours,
    missing: cloudwatch.TreatMissingData.BREACHING,
  };
}

/**
 * A new deployment has had no scan yet, so the deploy puts one DeadManArmed data point that counts
 * like a completed scan: the switch cannot fire before the first scheduled run can have happened,
 * and fires if that run does not complete. One call per switch (the deployment's, or one account's),
 * made only when that switch is created: an account added later is armed by its own call, and a
 * deploy never arms a switch that exists already, which would hide a scan that stopped (and tell
 * the ops topic OK) for a whole interval. Running a first scan during the deploy instead would
 * alert before anyone could confirm the e-mail subscription.
 */
export function armDeadMan(scope: Construct, metrics: ScanMetrics, account?: string): cr.AwsCustomResource {
  const call: cr.AwsSdkCall = {
    service: 'CloudWatch',
    action: 'putMetricData',
    parameters: {
      Namespace: METRICS.namespace,
      MetricData: [
        {
          MetricName: DEAD_MAN_ARMED_METRIC,
          Dimensions: Object.entries(metrics.dimensions(account)).map(([Name, Value]) => ({ Name, Value })),
          Value: 1,
          Unit: 'Count',
        },
      ],
    },
    physicalResourceId: cr.PhysicalResourceId.of(
      `${metrics.deploymentName}/${DEAD_MAN_ARMED_METRIC}${account ? `/${account}` : ''}`,
    ),
  };
  return sdkCall(scope, account ? `DeadManArmed-${account}` : 'DeadManArmed', {
    onCreate: call,
    statements: [
      new iam.PolicyStatement({
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: { StringEquals: { 'cloudwatch:namespace': METRICS.namespace } },
      }),
    ],
  });
}
