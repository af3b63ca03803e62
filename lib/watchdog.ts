import { Annotations, Duration, Lazy, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS } from '../functions/core/config';

export interface WatchdogProps {
  /** Encrypts the ops topic; the watchdog lets CloudWatch use it for its alarms. */
  readonly key: kms.IKey;
  /** @default - none: synth warns, and alarms wait on the topic for a subscriber (e.g. a pager's HTTPS endpoint) */
  readonly emails?: readonly string[];
}

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
  private readonly action: actions.SnsAction;

  constructor(scope: Construct, id: string, props: WatchdogProps) {
    super(scope, id);
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
    // As AWS documents it for service event sources: the key alone lets CloudWatch do nothing, since
    // it can use it only through SNS, for a topic whose policy (above) lets it publish.
    key.grant(cloudwatchService, 'kms:Decrypt', 'kms:GenerateDataKey*');
  }

  private add(id: string, props: cloudwatch.AlarmProps): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, props);
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
   */
  watchCompletion(id: string, intervalHours: number): cloudwatch.Alarm {
    const hours = intervalHours + 1;
    return this.add(id, {
      alarmDescription: `No domain-sentinel scan has completed in ${hours} hours: the schedule may be disabled, or every run failed.`,
      metric: new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName: METRICS.scanCompleted,
        dimensionsMap: { service: METRICS.service },
        statistic: 'Sum',
        period: Duration.hours(1),
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: hours,
      datapointsToAlarm: hours,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
  }

  /** Anything waiting in a dead-letter queue. */
  watchQueue(id: string, queue: sqs.IQueue, what: string): cloudwatch.Alarm {
    return this.add(id, {
      alarmDescription: `${what}: messages are waiting in ${queue.node.path}; each is a scan that did not run.`,
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
}
