import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { ALERT_TOPIC_DISPLAY_NAME } from '../functions/core/alerts/alert';
import { ENV } from '../functions/core/scan/config';

export interface AlertTopicProps {
  /** Encrypts the topic at rest. */
  readonly key: kms.IKey;
  /** @default - none */
  readonly emails?: readonly string[];
  /** Receive only messages whose `severity` attribute is `critical`. @default - none */
  readonly smsNumbers?: readonly string[];
}

/** The topic the scan publishes its one alert per run to, with its e-mail and SMS subscribers. */
export class AlertTopic extends Construct {
  readonly topic: sns.Topic;

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
  }

  /**
   * Each account's own recipients (docs/accounts.md): a subscription whose filter policy on the
   * `account` attribute lets only that account's messages through (an SMS also only critical
   * ones). A recipient of several accounts gets one subscription for all of them (SNS keeps one
   * subscription per endpoint and topic); one the topic already sends everything is left as it is.
   */
  subscribeAccounts(
    accounts: ReadonlyArray<{
      readonly name: string;
      readonly emails?: readonly string[];
      readonly smsNumbers?: readonly string[];
    }>,
    everything: { readonly emails: readonly string[]; readonly smsNumbers: readonly string[] },
  ): void {
    const byEndpoint = (
      pick: (a: (typeof accounts)[number]) => readonly string[] | undefined,
      all: readonly string[],
    ) => {
      const out = new Map<string, string[]>();
      for (const account of accounts)
        for (const endpoint of pick(account) ?? [])
          if (!all.includes(endpoint)) out.set(endpoint, [...(out.get(endpoint) ?? []), account.name]);
      return out;
    };
    const account = (names: string[]) => sns.SubscriptionFilter.stringFilter({ allowlist: names });
    for (const [email, names] of byEndpoint((a) => a.emails, everything.emails))
      this.topic.addSubscription(
        new subscriptions.EmailSubscription(email, { filterPolicy: { account: account(names) } }),
      );
    for (const [number, names] of byEndpoint((a) => a.smsNumbers, everything.smsNumbers))
      this.topic.addSubscription(
        new subscriptions.SmsSubscription(number, {
          filterPolicy: {
            account: account(names),
            severity: sns.SubscriptionFilter.stringFilter({ allowlist: ['critical'] }),
          },
        }),
      );
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
