import { createHash } from 'node:crypto';
import { Aws, Duration, Stack } from 'aws-cdk-lib';
import * as chatbot from 'aws-cdk-lib/aws-chatbot';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { filterPolicyOf, type TopicFeatures } from '../functions/core/alerts/groups';
import type { WebhookSpec } from '../functions/core/alerts/webhook-delivery';
import { ENV, METRICS } from '../functions/core/scan/config';
import { subscriptionFilter } from './alerts';
import { CustomMetricFactory } from './metrics';
import { deadLetterAlarm, deadLetterQueue } from './scanner';
import { SecretParameter } from './secret-parameter';
import { SentinelFunction } from './sentinel-function';
import { grantTopicKey } from './topic-key';
import type { Watchdog } from './watchdog';

/** A Slack channel, as Amazon Q Developer in chat applications names it once the workspace is authorised. */
export interface SlackChannel {
  /** The workspace id (T…), shown in the console after the one-time authorisation. */
  readonly workspaceId: string;
  /** The channel id (C…), from the channel's details in Slack. */
  readonly channelId: string;
}

/** A Teams channel, as Amazon Q Developer in chat applications names it once the tenant is authorised. */
export interface TeamsChannel {
  readonly teamId: string;
  readonly tenantId: string;
  /** The channel id from the channel's link, URL-encoded as the console shows it (19%3a…%40thread.tacv2). */
  readonly channelId: string;
}

export interface ChatChannelsProps {
  /** Encrypts the chat topic (the alert topic's key). */
  readonly key: kms.IKey;
  /** @default - no Slack channel */
  readonly slack?: SlackChannel;
  /** @default - no Teams channel */
  readonly teams?: TeamsChannel;
  /** The deployment's name: the readable part of the channel configurations' names. */
  readonly configurationName: string;
}

/** AWS's managed policy that allows nothing: the guardrail of the channels. */
const DENY_ALL = `arn:${Aws.PARTITION}:iam::aws:policy/AWSDenyAll`;

/**
 * The chat topic and the Slack and Teams channels subscribed to it through Amazon Q Developer in chat
 * applications (AWS Chatbot). The scan publishes each alert here as a custom notification; the
 * service posts it to the channels, threaded. Nobody in the channel can act on AWS through it: the
 * channel role has no permissions and the guardrail policy allows nothing.
 */
export class ChatChannels extends Construct {
  readonly topic: sns.Topic;
  /** The role the channels act with: no permissions at all (notifications need none). */
  readonly role: iam.Role;
  readonly slack?: chatbot.CfnSlackChannelConfiguration;
  readonly teams?: chatbot.CfnMicrosoftTeamsChannelConfiguration;

  constructor(scope: Construct, id: string, props: ChatChannelsProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', {
      displayName: 'domain-sentinel chat',
      enforceSSL: true,
      masterKey: props.key,
    });
    this.role = new iam.Role(this, 'ChannelRole', {
      assumedBy: new iam.ServicePrincipal('chatbot.amazonaws.com'),
      description: 'domain-sentinel chat channels: notifications only, no permissions',
    });
    const name = (suffix: string, ...replacedBy: string[]) =>
      channelConfigurationName(this, props.configurationName, suffix, replacedBy);
    const common = {
      iamRoleArn: this.role.roleArn,
      snsTopicArns: [this.topic.topicArn],
      guardrailPolicies: [DENY_ALL],
      loggingLevel: 'NONE',
      userRoleRequired: false,
    };
    if (props.slack)
      this.slack = new chatbot.CfnSlackChannelConfiguration(this, 'Slack', {
        ...common,
        configurationName: name('slack', props.slack.workspaceId),
        slackWorkspaceId: props.slack.workspaceId,
        slackChannelId: props.slack.channelId,
      });
    if (props.teams)
      this.teams = new chatbot.CfnMicrosoftTeamsChannelConfiguration(this, 'Teams', {
        ...common,
        configurationName: name('teams', props.teams.teamId, props.teams.tenantId),
        teamId: props.teams.teamId,
        teamsTenantId: props.teams.tenantId,
        teamsChannelId: props.teams.channelId,
      });
  }

  /** Lets `fn` publish the chat message, and tells it where: the grant and CHAT_TOPIC_ARN together. */
  grantPublish(fn: lambda.Function): void {
    fn.addEnvironment(ENV.chatTopicArn, this.topic.topicArn);
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['sns:Publish'], resources: [this.topic.topicArn] }),
    );
    if (this.topic.masterKey) grantTopicKey(fn, this.topic.masterKey);
  }
}

/** The longest region name (ap-southeast-4 and its like), for a name whose region is only known at deploy. */
const REGION_CHARS = 16;

/**
 * A channel configuration's name, unique in the account: Amazon Q Developer keys configurations by
 * name across the whole account (every region), so the name carries the deployment (the stack and
 * the construct's path), the region, and a hash of the properties whose change replaces the
 * configuration (a new workspace or team): CloudFormation creates the replacement before it deletes
 * the old one, which a name that stayed the same would refuse. At most 128 characters of
 * A-Z a-z 0-9 _ -.
 */
export function channelConfigurationName(
  scope: Construct,
  deploymentName: string,
  suffix: string,
  replacedBy: readonly string[],
): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([deploymentName, ...replacedBy]))
    .digest('hex')
    .slice(0, 8);
  const readable = deploymentName.replace(/[^A-Za-z0-9_-]/g, '-');
  const room = 128 - REGION_CHARS - hash.length - suffix.length - 3;
  return `${readable.slice(0, room)}-${Stack.of(scope).region}-${hash}-${suffix}`;
}

export interface WebhookSubscriberProps {
  /** Path of the Lambda entry (functions/handlers/webhook.ts). */
  readonly entry: string;
  /** The alert topic: each webhook gets its own queue subscribed to it. */
  readonly alertTopic: sns.ITopic;
  /**
   * The deployment's webhooks, and those of a policy's group (`group`: its messages alone; with
   * `account`, a policy of that account's own, from the accounts file).
   */
  readonly webhooks: ReadonlyArray<WebhookSpec & { readonly group?: string; readonly account?: string }>;
  /** What else the scan publishes, which each queue's filter must reckon with. @default - neither groups nor quiet hours */
  readonly features?: TopicFeatures;
  /** The SecureString that signs the json format; needed when a json webhook is listed. */
  readonly signingKeyParameterName: string;
  /** KMS key of the SecureStrings. @default - the account's aws/ssm key, through SSM only */
  readonly kmsKeyArn?: string;
  readonly timeZone: string;
  /** @default - none */
  readonly accountLabel?: string;
  readonly deploymentName: string;
}

/**
 * The largest message a webhook's queue (and its dead-letter queue) takes: SQS's most, 1 MiB. SNS
 * delivers the alert in its envelope (raw delivery off): the `default` JSON once more escaped, with
 * the subject, attributes, signature and URLs, some 1 to 3 KB more than the publish SNS counted. An
 * alert of a large account fills the publish to within a few hundred bytes of SNS's 256 KiB, so at
 * SQS's default of 256 KiB such an alert would not fit the queue.
 */
export const WEBHOOK_QUEUE_MESSAGE_BYTES = 1_048_576;

/** Deliveries of one alert to one webhook before it is parked in the dead-letter queue. */
export const WEBHOOK_MAX_RECEIVES = 4;
const FUNCTION_TIMEOUT = Duration.seconds(30);

/**
 * The webhook subscriber: one SQS queue per webhook on the alert topic (so a webhook that fails is
 * retried alone, and the others are not posted to twice), one function that posts each alert in its
 * webhook's format, and one dead-letter queue for what no retry delivered. The function may read its
 * webhooks' SecureStrings and consume its queues, nothing else.
 */
export class WebhookSubscriber extends Construct {
  readonly fn: SentinelFunction;
  readonly queues: sqs.Queue[] = [];
  readonly deadLetters: sqs.Queue;
  readonly parameters: SecretParameter[] = [];
  /** The metrics the function emits (the webhooks that refused an alert). */
  readonly metrics: CustomMetricFactory;

  constructor(scope: Construct, id: string, props: WebhookSubscriberProps) {
    super(scope, id);
    this.metrics = new CustomMetricFactory(METRICS.webhookService, props.deploymentName);
    this.deadLetters = deadLetterQueue(this, 'DeadLetters', WEBHOOK_QUEUE_MESSAGE_BYTES);
    this.fn = new SentinelFunction(this, 'Function', {
      entry: props.entry,
      description: 'domain-sentinel: posts each alert to its webhooks (Slack, Teams, signed JSON)',
      serviceName: 'domain-sentinel-webhook',
      timeout: FUNCTION_TIMEOUT,
      environment: {
        [ENV.timeZone]: props.timeZone,
        [ENV.deploymentName]: props.deploymentName,
        POWERTOOLS_METRICS_NAMESPACE: METRICS.namespace,
        ...(props.accountLabel ? { [ENV.accountLabel]: props.accountLabel } : {}),
      },
    });
    const kms = props.kmsKeyArn ? { kmsKeyArn: props.kmsKeyArn } : {};
    const targets = props.webhooks.map((webhook, index) => {
      const queue = new sqs.Queue(this, `Queue${index}`, {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        maxMessageSizeBytes: WEBHOOK_QUEUE_MESSAGE_BYTES,
        // Six times the function's timeout, as Lambda advises for a queue it polls.
        visibilityTimeout: Duration.seconds(FUNCTION_TIMEOUT.toSeconds() * 6),
        deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: WEBHOOK_MAX_RECEIVES },
      });
      const scope = {
        ...(webhook.account ? { accounts: [webhook.account] } : {}),
        ...(webhook.group ? { groups: [webhook.group] } : {}),
        sms: false,
      };
      const filterPolicy = subscriptionFilter(
        filterPolicyOf(scope, props.features ?? { groups: false, quietHours: false }),
        `webhook ${webhook.parameter}`,
      );
      props.alertTopic.addSubscription(
        new subscriptions.SqsSubscription(queue, { rawMessageDelivery: false, filterPolicy }),
      );
      this.fn.addEventSource(new SqsEventSource(queue, { batchSize: 1, reportBatchItemFailures: true }));
      this.queues.push(queue);
      const parameter = new SecretParameter(this, `Url${index}`, {
        parameterName: webhook.parameter,
        ...kms,
      });
      parameter.grantDecryptedRead(this.fn);
      this.parameters.push(parameter);
      return { format: webhook.format, parameter: webhook.parameter, queue: queue.queueArn };
    });
    this.fn.addEnvironment(ENV.webhookTargets, Stack.of(this).toJsonString(targets));
    if (props.webhooks.some((w) => w.format === 'json')) {
      const signingKey = new SecretParameter(this, 'SigningKey', {
        parameterName: props.signingKeyParameterName,
        ...kms,
      });
      signingKey.grantRead(this.fn, ENV.webhookSigningKeyParameter);
      this.parameters.push(signingKey);
    }
  }

  /** Its alarms on the ops topic: alerts parked in the dead-letter queue, and webhooks that answer 4xx. */
  watchWith(watchdog: Watchdog): void {
    watchdog.alarm(
      'WebhookDeadLetters',
      deadLetterAlarm(
        this.deadLetters,
        'Alerts no webhook retry delivered',
        'an alert one webhook did not get: fix its URL parameter, then redrive the queue (docs/chat.md)',
      ),
    );
    watchdog.alarm('WebhookRejected', {
      description:
        'A webhook refused an alert (HTTP 4xx): its URL in SSM is wrong, revoked or moved; the function log names the parameter. Fix it, then redrive the webhook dead-letter queue.',
      metric: this.metrics.metric(METRICS.webhookRejected, { period: Duration.minutes(5) }),
    });
  }
}
