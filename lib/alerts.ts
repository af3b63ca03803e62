import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { ALERT_TOPIC_DISPLAY_NAME } from '../functions/core/alerts/alert';
import { type FilterPolicy, filterPolicyOf, type TopicFeatures } from '../functions/core/alerts/groups';
import { ConfigError } from '../functions/core/base/errors';
import { ENV } from '../functions/core/scan/config';
import { hasRecipients, type Policies } from '../functions/core/scan/policies';
import { type MetricReading, metricOptions } from './metrics';
import { grantTopicKey } from './topic-key';

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
  /**
   * The recipients of each policy's own group (docs/policies.md): they receive only the messages
   * whose `group` attribute is the policy's name. An endpoint of the deployment's own gets every
   * domain already, in the account's message. @default - none
   */
  readonly groups?: readonly GroupRecipients[];
  /**
   * What else the scan publishes, which every subscription's filter must reckon with (the groups'
   * own messages, SMS held and released by quiet hours). @default - neither
   */
  readonly features?: TopicFeatures;
}

/** One policy's own recipients. */
export interface GroupRecipients {
  /** The policy's name: the `group` attribute of its messages. */
  readonly name: string;
  readonly emails?: readonly string[];
  readonly smsNumbers?: readonly string[];
  /** Its webhooks (`FORMAT:/ssm/parameter`): the webhook subscriber's, not the topic's. */
  readonly webhooks?: readonly string[];
}

/** The deployment's settings the alert topic's subscriptions come from. */
export interface RecipientSettings {
  readonly alertEmails: readonly string[];
  readonly alertSmsNumbers: readonly string[];
  readonly policies?: Policies;
  readonly accounts?: ReadonlyArray<{ readonly name: string; readonly policies?: Policies }>;
  readonly smsQuietHours?: string;
}

/** The groups of `policies` with recipients of their own (a let-lapse group has none: nothing of it is sent). */
export function policyGroups(policies: Policies | undefined): GroupRecipients[] {
  return withRecipients(policies).map((p) => ({
    name: p.name,
    emails: p.alertEmails ?? [],
    smsNumbers: p.alertSmsNumbers ?? [],
    webhooks: p.webhooks ?? [],
  }));
}

const withRecipients = (policies: Policies | undefined) =>
  (policies?.policies ?? []).filter((p) => !p.letLapse && hasRecipients(p));

/**
 * The alert topic's recipients from the settings: the deployment's own, the escalation recipients
 * and each policy group's (docs/policies.md), and what the scan publishes besides the account's
 * message (groups' own messages, once any policy, the deployment's or an account's, has recipients;
 * SMS held and released by quiet hours).
 */
export function alertRecipients(
  settings: RecipientSettings,
): Omit<AlertTopicProps, 'key'> & { readonly groups: GroupRecipients[]; readonly features: TopicFeatures } {
  refuseAccountRecipients(settings);
  const escalation = settings.policies?.escalation;
  return {
    emails: settings.alertEmails,
    smsNumbers: settings.alertSmsNumbers,
    ...(escalation
      ? { escalation: { emails: escalation.alertEmails ?? [], smsNumbers: escalation.alertSmsNumbers ?? [] } }
      : {}),
    groups: policyGroups(settings.policies),
    features: {
      groups: [settings.policies, ...(settings.accounts ?? []).map((a) => a.policies)].some(
        (p) => withRecipients(p).length > 0,
      ),
      quietHours: settings.smsQuietHours !== undefined,
    },
  };
}

/**
 * Refuses what the accounts' own policies ask of recipients that no subscription could honour. An
 * account's group with recipients of the name of a deployment's group with recipients: the
 * deployment group's filter (`group` = its name, any account) would take the account's group
 * messages too. Escalation recipients in an account's policies: escalations are filtered on
 * `escalation` alone, so only the deployment's escalation recipients are subscribed (they get every
 * account's); refusing is smaller than a filter per account that must not overlap any other.
 */
function refuseAccountRecipients(settings: RecipientSettings): void {
  const deploymentGroups = new Set(withRecipients(settings.policies).map((p) => p.name));
  for (const account of settings.accounts ?? []) {
    const clash = withRecipients(account.policies).find((p) => deploymentGroups.has(p.name));
    if (clash)
      throw new ConfigError(
        `invalid accounts: account ${account.name}'s own policy ${clash.name} has the name of the deployment's policy ${clash.name}, which has recipients of its own; their filter (group ${clash.name}, any account) cannot tell the two apart, so they would get ${account.name}'s ${clash.name} messages too: rename one of the two policies`,
      );
    const escalation = account.policies?.escalation;
    const escalates = [...(escalation?.alertEmails ?? []), ...(escalation?.alertSmsNumbers ?? [])];
    if (escalates.length > 0)
      throw new ConfigError(
        `invalid accounts: account ${account.name}'s policies list escalation recipients (${escalates.join(', ')}); escalation recipients are the deployment's (policies.escalation of the settings), who get every account's escalations: list them there, and keep only afterHours and withinDays in the account's escalation`,
      );
  }
}

/**
 * The most combinations of values one filter policy may have: the product of the number of values
 * of each key ("Filter policy complexity", https://docs.aws.amazon.com/sns/latest/dg/subscription-filter-policy-constraints.html).
 * SNS refuses a larger one when CloudFormation creates the subscription, half-way through a deploy.
 */
export const SNS_FILTER_COMBINATIONS = 150;

/**
 * A filter policy of functions/core/alerts/groups.ts as CDK takes it (undefined: none), for the
 * subscription of `endpoint` (`email x@example.nl`, `sms +316…`, `webhook slack:/…`). Every
 * subscription of the alert topic is made with it, so here a filter SNS would refuse is refused
 * at synth, naming the endpoint.
 */
export function subscriptionFilter(
  policy: FilterPolicy | undefined,
  endpoint: string,
): Record<string, sns.SubscriptionFilter> | undefined {
  if (!policy) return undefined;
  const sizes = Object.entries(policy).map(([key, conditions]) => ({ key, values: conditions.length }));
  const combinations = sizes.reduce((product, { values }) => product * values, 1);
  if (combinations > SNS_FILTER_COMBINATIONS)
    throw new ConfigError(
      `invalid DomainSentinel props: the filter policy of ${endpoint} has ${combinations} combinations of values (${sizes.map((s) => `${s.key} ${s.values}`).join(' × ')}), SNS allows at most ${SNS_FILTER_COMBINATIONS}: give it fewer accounts or groups, or list it among the deployment's alertEmails / alertSmsNumbers, which get everything unfiltered by account`,
    );
  return Object.fromEntries(
    Object.entries(policy).map(([name, conditions]) => [name, new sns.SubscriptionFilter([...conditions])]),
  );
}

/** Each endpoint of the groups with the groups it serves (SNS keeps one subscription per endpoint and topic). */
export function groupsByEndpoint(
  groups: readonly GroupRecipients[],
  pick: (g: GroupRecipients) => readonly string[] | undefined,
  skip: readonly string[],
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const group of groups)
    for (const endpoint of pick(group) ?? [])
      if (!skip.includes(endpoint)) out.set(endpoint, [...(out.get(endpoint) ?? []), group.name]);
  return out;
}

/**
 * The topic the scan publishes its alerts to, with its e-mail and SMS subscribers. Every
 * subscription's filter policy is filterPolicyOf's (functions/core/alerts/groups.ts), the one the
 * integration tests route fauxqs with: the deployment's recipients take the account's messages
 * (`group` absent), a group's its own (`group` = its name), an SMS only critical ones.
 */
export class AlertTopic extends Construct {
  readonly topic: sns.Topic;
  /** What the alarms and the dashboard watch of the topic. */
  readonly metrics: AlertMetrics;
  /**
   * The endpoints subscribed here with a filter of part of the messages (a deployment group's, an
   * escalation recipient's): another subscription of theirs (an account's) could not be made.
   */
  readonly partial: string[] = [];

  constructor(scope: Construct, id: string, props: AlertTopicProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', {
      displayName: ALERT_TOPIC_DISPLAY_NAME,
      enforceSSL: true,
      masterKey: props.key,
    });
    const features = props.features ?? { groups: false, quietHours: false };
    const emails = props.emails ?? [];
    const smsNumbers = props.smsNumbers ?? [];
    for (const email of emails)
      this.topic.addSubscription(
        new subscriptions.EmailSubscription(email, {
          filterPolicy: subscriptionFilter(filterPolicyOf({ sms: false }, features), `email ${email}`),
        }),
      );
    for (const number of smsNumbers)
      this.topic.addSubscription(
        new subscriptions.SmsSubscription(number, {
          filterPolicy: subscriptionFilter(filterPolicyOf({ sms: true }, features), `sms ${number}`),
        }),
      );
    const groupEmails = groupsByEndpoint(props.groups ?? [], (g) => g.emails, emails);
    const groupNumbers = groupsByEndpoint(props.groups ?? [], (g) => g.smsNumbers, smsNumbers);
    for (const [email, groups] of groupEmails)
      this.topic.addSubscription(
        new subscriptions.EmailSubscription(email, {
          filterPolicy: subscriptionFilter(
            filterPolicyOf({ groups, sms: false }, features),
            `email ${email}`,
          ),
        }),
      );
    for (const [number, groups] of groupNumbers)
      this.topic.addSubscription(
        new subscriptions.SmsSubscription(number, {
          filterPolicy: subscriptionFilter(filterPolicyOf({ groups, sms: true }, features), `sms ${number}`),
        }),
      );
    this.subscribeEscalations(props, features, [...groupEmails.keys(), ...groupNumbers.keys()]);
    this.partial.push(
      ...groupEmails.keys(),
      ...groupNumbers.keys(),
      ...(props.escalation?.emails ?? []).filter((e) => !emails.includes(e)),
      ...(props.escalation?.smsNumbers ?? []).filter((n) => !smsNumbers.includes(n)),
    );
    this.metrics = new AlertMetrics(this.topic);
  }

  /**
   * The escalation recipients: the account's messages whose `escalation` is `true`. An endpoint of
   * a group's too is refused: its one subscription cannot take both its group's messages and the
   * account's escalations.
   */
  private subscribeEscalations(
    props: AlertTopicProps,
    features: TopicFeatures,
    groupEndpoints: readonly string[],
  ): void {
    const escalations = (sms: boolean, endpoint: string) =>
      subscriptionFilter({ ...filterPolicyOf({ sms }, features), escalation: ['true'] }, endpoint);
    const both = [...(props.escalation?.emails ?? []), ...(props.escalation?.smsNumbers ?? [])].filter(
      (endpoint) => groupEndpoints.includes(endpoint),
    );
    if (both.length > 0)
      throw new ConfigError(
        `invalid DomainSentinel props: ${both.join(', ')} is both an escalation recipient and a group's (policies); SNS keeps one subscription per address, whose filter cannot take both: list it in one place, or among alertEmails / alertSmsNumbers, which get everything`,
      );
    for (const email of props.escalation?.emails ?? [])
      if (!props.emails?.includes(email))
        this.topic.addSubscription(
          new subscriptions.EmailSubscription(email, { filterPolicy: escalations(false, `email ${email}`) }),
        );
    for (const number of props.escalation?.smsNumbers ?? [])
      if (!props.smsNumbers?.includes(number))
        this.topic.addSubscription(
          new subscriptions.SmsSubscription(number, { filterPolicy: escalations(true, `sms ${number}`) }),
        );
  }

  /** Lets `fn` publish here, and tells it where: the grant and the environment variable together. */
  grantPublish(fn: lambda.Function): void {
    fn.addEnvironment(ENV.alertTopicArn, this.topic.topicArn);
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['sns:Publish'], resources: [this.topic.topicArn] }),
    );
    if (this.topic.masterKey) grantTopicKey(fn, this.topic.masterKey);
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
