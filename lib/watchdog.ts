import { Annotations, Arn, ArnFormat, Duration, Lazy, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { METRICS } from '../functions/core/scan/config';
import { sdkCall } from './sdk-call';

export interface WatchdogProps {
  /** Encrypts the ops topic; the watchdog lets CloudWatch use it for its alarms. */
  readonly key: kms.IKey;
  /** @default - none: synth warns, and alarms wait on the topic for a subscriber (e.g. a pager's HTTPS endpoint) */
  readonly emails?: readonly string[];
  /**
   * The deployment's name: the `deployment` dimension of its metrics, and the prefix of its alarms'
   * names (`<name>/ScanErrors`), which the key policy binds CloudWatch to.
   * @default - the stack's name
   */
  readonly deploymentName?: string;
}

/** The metric the deploy puts once, so the dead-man alarm waits for the first scheduled scan. */
export const DEAD_MAN_ARMED_METRIC = 'DeadManArmed';

/** Id of the synth warning when the ops topic has no subscriber (acknowledge it to silence it). */
export const NO_OPS_SUBSCRIBER_WARNING = 'domain-sentinel:no-ops-subscriber';

/**
 * Watches the watcher: alarms to an ops topic when the scan fails, when it has not completed in its
 * expected interval (a dead-man switch, so a deleted schedule or a broken deploy is noticed), when
 * failed events wait in a dead-letter queue, or when alerts could not be delivered.
 */
export class Watchdog extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly deploymentName: string;
  private readonly action: actions.SnsAction;

  constructor(scope: Construct, id: string, props: WatchdogProps) {
    super(scope, id);
    this.deploymentName = props.deploymentName ?? Stack.of(this).stackName;
    this.topic = new sns.Topic(this, 'OpsTopic', {
      displayName: 'domain-sentinel operations',
      enforceSSL: true,
      masterKey: props.key,
    });
    for (const email of props.emails ?? [])
      this.topic.addSubscription(new subscriptions.EmailSubscription(email));
    if ((props.emails ?? []).length === 0) {
      Annotations.of(this).addWarningV2(
        NO_OPS_SUBSCRIBER_WARNING,
        'No opsEmails configured: alarms (scan failed, scan did not run, restore errors) reach only the ops topic ' +
          '(output OpsTopicArn) and nobody is told. Subscribe something to it, or deploy with -c opsEmails=you@example.nl.',
      );
    }
    this.allowAlarmsToPublish(props.key);
    this.action = new actions.SnsAction(this.topic);
  }

  /**
   * CloudWatch publishes alarm notifications as the service principal, which the topic's own policy
   * must allow (enforceSSL's policy allows nobody), and it encrypts them with the topic's key.
   */
  private allowAlarmsToPublish(key: kms.IKey): void {
    const cloudwatchService = new iam.ServicePrincipal('cloudwatch.amazonaws.com');
    // Confused deputy: only this account's alarms, and of those only the ones this construct made.
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowAlarmsOfThisStackToPublish',
        principals: [cloudwatchService],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
          ArnEquals: {
            'aws:SourceArn': Lazy.list({ produce: () => this.alarms.map((alarm) => alarm.alarmArn) }),
          },
        },
      }),
    );
    // The key, too, only for this account's alarms of this deployment. The alarms' ARNs cannot be
    // listed here (the key would depend on the alarms, which depend on the topic, which depends on
    // the key), so their names carry the deployment's prefix and the condition matches that.
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowAlarmsOfThisStackToEncrypt',
        principals: [cloudwatchService],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: {
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
          ArnLike: { 'aws:SourceArn': this.alarmArn('*') },
        },
      }),
    );
  }

  /** The ARN of this watchdog's alarm `id` (or a pattern, with `*`). */
  alarmArn(id: string): string {
    return Arn.format(
      {
        service: 'cloudwatch',
        resource: 'alarm',
        resourceName: `${this.deploymentName}/${id}`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      },
      Stack.of(this),
    );
  }

  /** The dimensions of the scan's own metrics (functions/adapters/metrics.ts). */
  get scanDimensions(): Record<string, string> {
    return { service: METRICS.service, [METRICS.deploymentDimension]: this.deploymentName };
  }

  private add(id: string, props: cloudwatch.AlarmProps): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, { alarmName: `${this.deploymentName}/${id}`, ...props });
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    this.alarms.push(alarm);
    return alarm;
  }

  /** Any failed invocation of `fn` within an hour. */
  watchErrors(id: string, fn: lambda.IFunction, what: string): cloudwatch.Alarm {
    return this.add(id, {
      alarmDescription: `${what} failed; its log group says why.`,
      metric: fn.metricErrors({ period: Duration.hours(1), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * The dead-man switch: no ScanCompleted in any of the last `intervalHours + 1` hours. Missing data
   * breaches, so a scan that stopped running (not just one that failed) raises the alarm.
   *
   * A new deployment has had no scan yet, so the deploy puts one DeadManArmed data point (a
   * deploy-time call, on create only) that counts like a completed scan: the alarm cannot fire
   * before the first scheduled run can have happened, and fires if that run does not complete.
   * Running a first scan during the deploy instead would alert before anyone could confirm the
   * e-mail subscription, and with memory between scans those findings would not be sent again.
   */
  watchCompletion(id: string, intervalHours: number, account?: string): cloudwatch.Alarm {
    const hours = intervalHours + 1;
    // An account of several has its own switch: its scans carry its name as a dimension.
    const dimensions = account
      ? { ...this.scanDimensions, [METRICS.accountDimension]: account }
      : this.scanDimensions;
    const metric = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName,
        dimensionsMap: dimensions,
        statistic: 'Sum',
        period: Duration.hours(1),
      });
    sdkCall(this, `${id}Armed`, {
      onCreate: {
        service: 'CloudWatch',
        action: 'putMetricData',
        parameters: {
          Namespace: METRICS.namespace,
          MetricData: [
            {
              MetricName: DEAD_MAN_ARMED_METRIC,
              Dimensions: Object.entries(dimensions).map(([Name, Value]) => ({ Name, Value })),
              Value: 1,
              Unit: 'Count',
            },
          ],
        },
        physicalResourceId: cr.PhysicalResourceId.of(
          `${this.deploymentName}/${DEAD_MAN_ARMED_METRIC}${account ? `/${account}` : ''}`,
        ),
      },
      statements: [
        new iam.PolicyStatement({
          actions: ['cloudwatch:PutMetricData'],
          resources: ['*'],
          conditions: { StringEquals: { 'cloudwatch:namespace': METRICS.namespace } },
        }),
      ],
    });
    return this.add(id, {
      alarmDescription: account
        ? `No scan of account ${account} has completed in ${hours} hours: the schedule may be disabled, or its every run failed (its ScanFailed alarm and the state machine's executions say why).`
        : `No domain-sentinel scan has completed in ${hours} hours: the schedule may be disabled, or every run failed.`,
      metric: new cloudwatch.MathExpression({
        expression: 'FILL(completed, 0) + FILL(armed, 0)',
        usingMetrics: { completed: metric(METRICS.scanCompleted), armed: metric(DEAD_MAN_ARMED_METRIC) },
        period: Duration.hours(1),
        label: 'Scans completed (and the deploy)',
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: hours,
      datapointsToAlarm: hours,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
  }

  /** Any count of a custom metric a function of this deployment emits as `service` (e.g. WebhookRejected). */
  watchCount(id: string, metricName: string, service: string, what: string): cloudwatch.Alarm {
    return this.add(id, {
      alarmDescription: what,
      metric: new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName,
        dimensionsMap: { service, [METRICS.deploymentDimension]: this.deploymentName },
        statistic: 'Sum',
        period: Duration.minutes(5),
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * A restore attempt the audit trail could not keep: the web function answers the restore as it
   * went (200 for one done), so neither its errors nor the API's 5xx see it; its WebOutcome data
   * point does.
   */
  watchAuditFailures(id: string): cloudwatch.Alarm {
    return this.add(id, {
      alarmDescription:
        'A restore attempt could not be kept in the audit trail (the state table could not be written); the web function’s log holds the attempt (outcome audit_failed) and why.',
      metric: auditFailuresMetric(this.deploymentName),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /** Anything waiting in a dead-letter queue; `each` says what one message is. */
  watchQueue(
    id: string,
    queue: sqs.IQueue,
    what: string,
    each = 'a scan that did not run',
  ): cloudwatch.Alarm {
    return this.add(id, {
      alarmDescription: `${what}: messages are waiting in ${queue.node.path}; each is ${each}.`,
      metric: queue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * Server errors of an API stage. The restore function answers a failed restore with a 5xx page
   * instead of throwing, so the function's Errors metric never sees it; API Gateway's 5XXError does.
   */
  watchApiServerErrors(id: string, stage: apigateway.Stage, what: string): cloudwatch.Alarm {
    return this.add(id, {
      alarmDescription: `${what} answered with a server error (5xx): a restore failed or its outcome is unknown; the function's log says which domain and why.`,
      metric: stage.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /** Notifications SNS could not deliver (e-mail bounced, SMS refused, …). */
  watchDelivery(id: string, topic: sns.ITopic): cloudwatch.Alarm {
    return this.add(id, {
      alarmDescription: 'Alerts could not be delivered to one or more subscribers.',
      metric: topic.metricNumberOfNotificationsFailed({ period: Duration.hours(1), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /** Any throttled invocation of `fn`: a scan that Lambda refused to start, or a link that got a 429 page. */
  watchThrottles(id: string, fn: lambda.IFunction, what: string): cloudwatch.Alarm {
    return this.add(id, {
      alarmDescription: `${what} was throttled by Lambda (concurrency limit reached).`,
      metric: fn.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /** A run of `fn` that took more than `share` of its timeout: the next larger account would not finish. */
  watchDuration(id: string, fn: lambda.Function, share: number, what: string): cloudwatch.Alarm {
    const timeoutMs = (fn.timeout ?? Duration.seconds(3)).toMilliseconds();
    return this.add(id, {
      alarmDescription: `${what} took more than ${Math.round(share * 100)} % of its ${timeoutMs / 1000} s timeout; raise the timeout, or give the scan function more memory (Lambda gives CPU with it).`,
      metric: fn.metricDuration({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: Math.round(timeoutMs * share),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * The account's month-to-date SMS spend (SNS publishes it per account and region) at `usd`. New
   * accounts may spend 1 USD a month on SMS; past the limit SNS stops sending them without an error.
   */
  watchSmsSpend(id: string, usd: number): cloudwatch.Alarm {
    return this.add(id, {
      alarmDescription: `SMS spending this month reached ${usd} USD; at the account's SMS spend limit (1 USD for a new account) SNS stops sending SMS.`,
      metric: new cloudwatch.Metric({
        namespace: 'AWS/SNS',
        metricName: 'SMSMonthToDateSpentUSD',
        statistic: 'Maximum',
        period: Duration.hours(1),
      }),
      threshold: usd,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * A scan of one account of several failed (after its retry): the state machine counts it as
   * ScanFailed with the account's name, so this alarm names the account whatever failed (its key,
   * its reseller, a timeout), and the others' scans go on.
   */
  watchAccountFailures(id: string, account: string): cloudwatch.Alarm {
    return this.add(id, {
      alarmDescription: `The scan of account ${account} failed: its reseller could not be read (a refused key, the reseller down, a timeout); the state machine's execution and the scan function's log say why. The other accounts were scanned.`,
      metric: new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName: METRICS.scanFailed,
        dimensionsMap: { ...this.scanDimensions, [METRICS.accountDimension]: account },
        statistic: 'Sum',
        period: Duration.hours(1),
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /** An execution of the accounts' state machine that failed, timed out or was aborted as a whole. */
  watchStateMachine(id: string, stateMachine: sfn.IStateMachine): cloudwatch.Alarm {
    const period = Duration.hours(1);
    return this.add(id, {
      alarmDescription:
        "The state machine that scans the accounts failed as a whole (not one account's scan: those are caught); its execution history says at which state.",
      metric: new cloudwatch.MathExpression({
        expression: 'FILL(failed, 0) + FILL(timedOut, 0) + FILL(aborted, 0)',
        usingMetrics: {
          failed: stateMachine.metricFailed({ period, statistic: 'Sum' }),
          timedOut: stateMachine.metricTimedOut({ period, statistic: 'Sum' }),
          aborted: stateMachine.metricAborted({ period, statistic: 'Sum' }),
        },
        period,
        label: 'Executions failed, timed out or aborted',
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}

/** The web function's count of restore attempts the audit trail could not keep: the alarm's and the dashboard's. */
export function auditFailuresMetric(
  deploymentName: string,
  options: { readonly period?: Duration; readonly label?: string } = {},
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS.namespace,
    metricName: METRICS.webOutcome,
    dimensionsMap: {
      service: METRICS.webService,
      [METRICS.deploymentDimension]: deploymentName,
      action: 'restore',
      outcome: METRICS.auditFailedOutcome,
    },
    statistic: 'Sum',
    period: options.period ?? Duration.minutes(5),
    // A label makes an alarm's metric a math expression in the template: only the dashboard's has one.
    ...(options.label ? { label: options.label } : {}),
  });
}
