import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS } from '../functions/core/config';

export interface WatchdogProps {
  readonly key: kms.IKey;
  /** @default - none (subscribe later, e.g. a pager's HTTPS endpoint) */
  readonly emails?: readonly string[];
}

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
    this.action = new actions.SnsAction(this.topic);
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
