import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { ALERT_TOPIC_DISPLAY_NAME } from '../functions/core/alerts/alert';
import { ENV } from '../functions/core/scan/config';
import { type MetricReading, metricOptions } from './metrics';

export interface AlertTopicProps {
  /** Encrypts the topic at rest. */
  readonly key: kms.IKey;
  /** @default - none */
  readonly emails?: readonly string[];
  /** Receive only messages whose `severity` attribute is `critical`. @default - none */
  readonly smsNumbers?: readonly string[];
  /**
   * Escalation recipients (the policies' `escalation`, docs/policies.md): they receive only the
   * messages whose `escalation` attribute is `true`. An endpoint already above gets those anyway.
   * @default - none
   */
  readonly escalation?: { readonly emails?: readonly string[]; readonly smsNumbers?: readonly string[] };
}

/** The topic the scan publishes its one alert per run to, with its e-mail and SMS subscribers. */
export class AlertTopic extends Construct {
  readonly topic: sns.Topic;
  /** What the alarms and the dashboard watch of the topic. */
  readonly metrics: AlertMetrics;

  constructor(scope: Construct, id: string, props: AlertTopicProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', {
      displayName: ALERT_TOPIC_DISPLAY_NAME,
      enforceSSL: true,
      masterKey: props.key,
    });
    for (const email of props.emails ?? [])
      this.topic.addSubscription(new subscriptions.EmailSubscription(email));
    for (const number of props.smsNumbers ?? []) {
      this.topic.addSubscription(
        new subscriptions.SmsSubscription(number, {
          filterPolicy: { severity: sns.SubscriptionFilter.stringFilter({ allowlist: ['critical'] }) },
        }),
      );
    }
    this.subscribeEscalations(props);
    this.metrics = new AlertMetrics(this.topic);
  }

  /** The escalation recipients: a filter policy on `escalation` = `true` (SNS keeps one subscription per endpoint). */
  private subscribeEscalations(props: AlertTopicProps): void {
    const filterPolicy = { escalation: sns.SubscriptionFilter.stringFilter({ allowlist: ['true'] }) };
    for (const email of props.escalation?.emails ?? [])
      if (!props.emails?.includes(email))
        this.topic.addSubscription(new subscriptions.EmailSubscription(email, { filterPolicy }));
    for (const number of props.escalation?.smsNumbers ?? [])
      if (!props.smsNumbers?.includes(number))
        this.topic.addSubscription(new subscriptions.SmsSubscription(number, { filterPolicy }));
  }

  /** Lets `fn` publish here, and tells it where: the grant and the environment variable together. */
  grantPublish(fn: lambda.Function): void {
    fn.addEnvironment(ENV.alertTopicArn, this.topic.topicArn);
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['sns:Publish'], resources: [this.topic.topicArn] }),
    );
    this.topic.masterKey?.grant(fn, 'kms:GenerateDataKey', 'kms:Decrypt');
  }
}

/** The alert topic's metrics (SNS's), and the account's SMS spend that SNS reports beside them. */
export class AlertMetrics {
  constructor(private readonly topic: sns.ITopic) {}

  published(reading: MetricReading = {}): cloudwatch.Metric {
    return this.topic.metricNumberOfMessagesPublished(metricOptions(reading));
  }

  delivered(reading: MetricReading = {}): cloudwatch.Metric {
    return this.topic.metricNumberOfNotificationsDelivered(metricOptions(reading));
  }

  /** Notifications SNS could not deliver (e-mail bounced, SMS refused, …). */
  failed(reading: MetricReading = {}): cloudwatch.Metric {
    return this.topic.metricNumberOfNotificationsFailed(metricOptions(reading));
  }

  /**
   * The account's month-to-date SMS spend (SNS publishes it per account and region). New accounts
   * may spend 1 USD a month on SMS; past the limit SNS stops sending them without an error.
   */
  smsMonthToDateSpend(): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/SNS',
      metricName: 'SMSMonthToDateSpentUSD',
      statistic: 'Maximum',
      period: Duration.hours(1),
    });
  }
}
