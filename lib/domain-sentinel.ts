import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { parseWebhookSpec } from '../functions/core/alerts/webhook-delivery';
import { ConfigError } from '../functions/core/base/errors';
import type { Severity } from '../functions/core/findings/classify';
import {
  ACCOUNT_DIRECTORY_KEY,
  ACCOUNT_SCAN_SETTINGS,
  type AccountScanInput,
} from '../functions/core/scan/accounts';
import { ENV } from '../functions/core/scan/config';
import type { Policies } from '../functions/core/scan/policies';
import type { ScanMode } from '../functions/core/scan/scan';
import { AlertTopic } from './alerts';
import { ChatChannels, WebhookSubscriber } from './chat';
import { type AccountSettings, parseSentinelSettings, type ResolvedSettings } from './config';
import { SentinelDashboard } from './dashboard';
import { ReportBucket } from './report-bucket';
import { Scanner } from './scanner';
import { keyPolicyCount, MAX_KEY_POLICIES, SecretParameter } from './secret-parameter';
import { SmsDeliveryStatusLogging } from './sms-delivery-logging';
import { StateTable } from './state-table';
import { Watchdog } from './watchdog';
import { WebApi } from './web-api';

/** Where the Lambda entries are, beside this package's lib/. */
const FUNCTIONS_DIR = fileURLToPath(new URL('../functions', import.meta.url));

/**
 * The settings of one domain-sentinel, as props. The names are those of `-c key=value` and of a
 * settings file, and one schema (lib/config.ts) validates all three: a bad value fails the synth
 * naming the key.
 */
export interface DomainSentinelProps {
  /** Base URL of the reseller API (https), without /v2. */
  readonly resellerBaseUrl: string;
  /** SSM SecureString holding the reseller API key. @default '/domain-sentinel/reseller-api-key' */
  readonly apiKeyParameterName?: string;
  /** SSM SecureString holding the link signing key(s). @default '/domain-sentinel/link-signing-key' */
  readonly linkSigningKeyParameterName?: string;
  /** KMS key of both SecureStrings, to scope decryption to it. @default - any key, through SSM only, for these parameters only */
  readonly secretsKmsKeyArn?: string;
  /** EventBridge Scheduler expression of the scan, in `timeZone`. @default 'cron(0 6 * * ? *)' */
  readonly schedule?: string;
  /** IANA zone of the schedule and of the dates in alerts. @default 'UTC' */
  readonly timeZone?: string;
  /** Longest expected gap between scans; the dead-man alarm fires after it plus an hour. @default - from a rate() schedule, else 24 */
  readonly scanIntervalHours?: number;
  /** A domain expiring within this many days is reported. @default 30 */
  readonly expiryDays?: number;
  /** Expiring without auto-renew within this many days is critical. @default 7 */
  readonly criticalDays?: number;
  /** Lowest severity that makes the scan publish. @default 'warning' */
  readonly minSeverity?: Severity;
  /** How the scan reads the account. @default 'auto' */
  readonly scanMode?: ScanMode;
  /** E-mail addresses that get the digest. @default - none */
  readonly alertEmails?: readonly string[];
  /** E.164 numbers that get an SMS for critical findings. @default - none */
  readonly alertSmsNumbers?: readonly string[];
  /** E-mail addresses that get the alarms about the scan itself. @default - none: synth warns */
  readonly opsEmails?: readonly string[];
  /** Name of the account in subjects, digests and SMS. @default - none */
  readonly accountLabel?: string;
  /** Restore periods by TLD over the built-in table (docs/deadlines.md), as QUARANTINE_DAYS takes them: `nl=40,shop=30`. @default - the built-in table only */
  readonly quarantineDays?: string;
  /** Reserved concurrency of the scan function. @default - none (a new account has none to reserve) */
  readonly scanReservedConcurrency?: number;
  /**
   * The alert topic is subscribed outside the stack (output AlertTopicArn), so a synth without
   * alertEmails, alertSmsNumbers or a subscription in code is not a mistake.
   * @default false - such a synth fails, saying how to add a subscriber
   */
  readonly alertSubscribersOutsideStack?: boolean;
  /** Month-to-date SMS spend (USD) at which the SMS spend alarm fires; only with alertSmsNumbers. @default 0.8 */
  readonly smsSpendAlarmUsd?: number;
  /** Slack workspace id (T…) of Amazon Q Developer in chat applications; with slackChannelId. @default - no Slack channel */
  readonly slackWorkspaceId?: string;
  /** Slack channel id (C…) the chat message goes to. @default - no Slack channel */
  readonly slackChannelId?: string;
  /** Teams team id (a GUID); with teamsTenantId and teamsChannelId. @default - no Teams channel */
  readonly teamsTeamId?: string;
  /** Teams tenant id (a GUID). @default - no Teams channel */
  readonly teamsTenantId?: string;
  /** Teams channel id, URL-encoded (19%3a…%40thread.tacv2). @default - no Teams channel */
  readonly teamsChannelId?: string;
  /** Webhooks each alert is posted to: `slack:/ssm/param`, `teams:/ssm/param`, `json:/ssm/param` (docs/chat.md). @default - none */
  readonly webhooks?: readonly string[];
  /** SSM SecureString holding the key that signs json webhooks. @default '/domain-sentinel/webhook-signing-key' */
  readonly webhookSigningKeyParameterName?: string;
  /**
   * This copy sets what exists once per account and region: API Gateway's CloudWatch Logs role
   * and (when it has alertSmsNumbers) SNS's SMS delivery-status logging. false in every copy but
   * one when several are deployed from separate apps into one account and region.
   * @default - true for each of them, unless an earlier DomainSentinel of the same app, account and region made it
   */
  readonly ownsAccountSettings?: boolean;
  /**
   * Several reseller accounts (docs/accounts.md): the accounts file's path, or its accounts. One
   * schedule starts a state machine that scans each account once, with its own key parameter,
   * state, report, links and `account` message attribute; each account's own recipients get only
   * its alerts. @default - one account: resellerBaseUrl with apiKeyParameterName
   */
  readonly accounts?: string | readonly AccountSettings[];
  /** Accounts scanned at once (the state machine Map's MaxConcurrency); only with accounts. @default 4 */
  readonly accountConcurrency?: number;
  /**
   * Policies per domain group (docs/policies.md): the object, or the path of a JSON file holding
   * it. Each group with recipients of its own gets its own subscriptions, filtered on the `group`
   * message attribute. @default - none: every domain has the deployment's settings
   */
  readonly policies?: string | Policies;
}

/** A scan that takes more than this share of its timeout raises an alarm: the account outgrows it. */
const SCAN_DURATION_ALARM_SHARE = 0.8;

/** Copies made so far per app and environment, to share what exists once per account and region. */
const COPIES = new WeakMap<Construct, DomainSentinel[]>();

/** `account/region` as the template has them; an environment-agnostic part is one unknown. */
const environmentOf = (stack: Stack) =>
  `${Token.isUnresolved(stack.account) ? '*' : stack.account}/${Token.isUnresolved(stack.region) ? '*' : stack.region}`;

/**
 * domain-sentinel as one construct: the scheduled scan and its alerts, the web API of its links
 * (restore, snooze, acknowledge, report, calendar), the state table and report bucket, and the
 * alarms and dashboard that watch them. Instantiate it in any stack; two copies (two reseller
 * accounts) can live in one account and region: every physical name is CDK's, every metric carries
 * the copy's `deploymentName`, and what exists once per account is owned by one copy.
 */
export class DomainSentinel extends Construct {
  /** The props, validated, with defaults and derived values filled in. */
  readonly settings: ResolvedSettings;
  /** Tells this copy's metrics apart from another's in the same account and region: the dimension `deployment`. */
  readonly deploymentName: string;
  /** Whether this copy owns API Gateway's CloudWatch role of the account and region (see DomainSentinelProps.ownsAccountSettings). */
  readonly ownsAccountSettings: boolean;
  readonly scan: Scanner;
  /** Every link of the alerts: restore, snooze, acknowledge, report page, calendar feed. */
  readonly web: WebApi;
  readonly reports: ReportBucket;
  readonly alerts: AlertTopic;
  /** The chat topic and its Slack/Teams channels, when the settings name a channel. */
  readonly chat?: ChatChannels;
  /** The webhook subscriber, when the settings list webhooks. */
  readonly webhooks?: WebhookSubscriber;
  readonly watchdog: Watchdog;
  /** Encrypts both topics. */
  readonly topicKey: kms.Key;
  readonly state: StateTable;
  /** Scan, findings, requests, publishes, web outcomes and errors of this copy. */
  readonly dashboard: SentinelDashboard;
  /** SNS's SMS delivery-status logging, when this copy sends SMS and is the first in its account and region to. */
  readonly smsDeliveryStatusLogging?: SmsDeliveryStatusLogging;
  readonly apiKey: SecretParameter;
  readonly signingKey: SecretParameter;
  /**
   * Several accounts: each account's item of the state machine (its name, its key's parameter and
   * its own settings), and its key parameter, which the scan and web functions may read, and no other.
   */
  readonly accounts?: ReadonlyArray<{ readonly item: AccountScanInput; readonly key: SecretParameter }>;

  constructor(scope: Construct, id: string, props: DomainSentinelProps) {
    super(scope, id);
    const settings = parseSentinelSettings(props);
    this.settings = settings;
    const stack = Stack.of(this);
    this.deploymentName = deploymentNameOf(this);
    const items = settings.accounts ? accountItems(settings.accounts) : undefined;
    if (items) {
      checkAccountConcurrency(settings);
      checkKeyParameterNames(items);
    }
    const earlier = this.joinCopies(settings);
    // What exists once per account and region is made by the first copy that needs it.
    const owns = (made: (c: DomainSentinel) => boolean) => props.ownsAccountSettings ?? !earlier.some(made);
    this.ownsAccountSettings = owns((c) => c.ownsAccountSettings);

    // One customer-managed key for both topics: CloudWatch alarms can publish to an encrypted
    // topic only through a key whose policy lets CloudWatch use it (the Watchdog grants that),
    // which AWS-managed keys do not allow. Destroy schedules its deletion (7 days, the shortest
    // wait) instead of leaving a key that is billed monthly and protects nothing.
    this.topicKey = new kms.Key(this, 'TopicKey', {
      enableKeyRotation: true,
      description: 'domain-sentinel SNS topics',
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });

    const kmsKeyArn = settings.secretsKmsKeyArn ? { kmsKeyArn: settings.secretsKmsKeyArn } : {};
    this.apiKey = new SecretParameter(this, 'ResellerApiKey', {
      parameterName: settings.apiKeyParameterName,
      ...kmsKeyArn,
    });
    this.signingKey = new SecretParameter(this, 'LinkSigningKey', {
      parameterName: settings.linkSigningKeyParameterName,
      ...kmsKeyArn,
    });
    if (items)
      this.accounts = items.map((item) => ({
        item,
        key: new SecretParameter(this, `AccountKey-${item.account}`, {
          parameterName: item.apiKeyParameter,
          ...kmsKeyArn,
        }),
      }));

    this.alerts = new AlertTopic(this, 'Alerts', {
      key: this.topicKey,
      emails: settings.alertEmails,
      smsNumbers: settings.alertSmsNumbers,
    });
    if (settings.accounts)
      this.alerts.subscribeAccounts(
        settings.accounts.map((a) => ({
          name: a.name,
          ...(a.alertEmails ? { emails: a.alertEmails } : {}),
          ...(a.alertSmsNumbers ? { smsNumbers: a.alertSmsNumbers } : {}),
        })),
        { emails: settings.alertEmails, smsNumbers: settings.alertSmsNumbers },
      );

    // The functions read policies as POLICIES takes them: JSON text (parseWith bounded its length).
    const policiesText = settings.policies ? JSON.stringify(settings.policies) : undefined;
    // The id stays 'Restore': the API's logical id, and so the URL in every link already sent, stays the same.
    this.web = new WebApi(this, 'Restore', {
      entry: `${FUNCTIONS_DIR}/restore.ts`,
      resellerBaseUrl: settings.resellerBaseUrl,
      expiryDays: settings.expiryDays,
      criticalDays: settings.criticalDays,
      quarantineDays: settings.quarantineDays,
      ...(policiesText ? { policies: policiesText } : {}),
      timeZone: settings.timeZone,
      apiName: `${this.deploymentName.replaceAll('/', '-')}-restore`,
      cloudWatchRole: this.ownsAccountSettings,
      deploymentName: this.deploymentName,
      accounts: this.accounts !== undefined,
    });
    // Several accounts: each account's key and no deployment-wide one (each invocation names its account's).
    if (this.accounts)
      SecretParameter.grantReadAll(
        this.web.fn,
        this.accounts.map((a) => a.key),
      );
    else this.apiKey.grantRead(this.web.fn, ENV.apiKeyParameter);
    this.signingKey.grantRead(this.web.fn, ENV.linkSigningKeyParameter);

    this.scan = new Scanner(this, 'Scan', {
      entry: `${FUNCTIONS_DIR}/scan.ts`,
      schedule: settings.schedule,
      timeZone: settings.timeZone,
      resellerBaseUrl: settings.resellerBaseUrl,
      linkBaseUrl: this.web.url,
      expiryDays: settings.expiryDays,
      criticalDays: settings.criticalDays,
      minSeverity: settings.minSeverity,
      scanMode: settings.scanMode,
      accountLabel: settings.accountLabel,
      quarantineDays: settings.quarantineDays,
      ...(policiesText ? { policies: policiesText } : {}),
      reservedConcurrency: settings.scanReservedConcurrency,
      deploymentName: this.deploymentName,
      ...(items ? { accounts: items, accountConcurrency: settings.accountConcurrency } : {}),
    });
    if (this.accounts)
      SecretParameter.grantReadAll(
        this.scan.fn,
        this.accounts.map((a) => a.key),
      );
    else this.apiKey.grantRead(this.scan.fn, ENV.apiKeyParameter);
    this.signingKey.grantRead(this.scan.fn, ENV.linkSigningKeyParameter);
    this.alerts.grantPublish(this.scan.fn);
    this.chat = this.chatChannels(settings);
    this.chat?.grantPublish(this.scan.fn);
    this.state = new StateTable(this, 'State');
    this.state.grantReadWrite(this.scan.fn);
    // Snooze and acknowledge links write to the same state, through the store's conditional steps.
    this.state.grantReadWrite(this.web.fn);

    this.reports = new ReportBucket(this, 'Reports');
    if (items) {
      // Each account's reports under its own prefix; the web function learns the accounts from the deploy's copy.
      this.reports.grantWriteAccounts(
        this.scan.fn,
        items.map((i) => i.account),
      );
      this.reports.grantReadAccounts(this.web.fn);
      // The scan refuses an input that is not exactly its account's item of the deployed accounts.
      this.reports.grantReadAccountDirectory(this.scan.fn);
      const directory = this.reports.writeAccountDirectory(
        { accounts: items },
        `${this.deploymentName}/${ACCOUNT_DIRECTORY_KEY}`,
      );
      // A first deploy's schedule must not start scans before the accounts they are checked against exist.
      this.scan.schedule.node.addDependency(directory);
    } else {
      this.reports.grantWrite(this.scan.fn);
      this.reports.grantReadLatest(this.web.fn);
    }

    this.watchdog = new Watchdog(this, 'Watchdog', {
      key: this.topicKey,
      emails: settings.opsEmails,
      deploymentName: this.deploymentName,
    });
    this.watchdog.watchErrors('ScanErrors', this.scan.fn, 'The domain-sentinel scan');
    if (items && this.scan.accountScans) {
      // Per account: its own dead-man switch, and an alarm that names it when its scan fails.
      for (const { account } of items) {
        this.watchdog.watchCompletion(`ScanNotCompleted-${account}`, settings.scanIntervalHours, account);
        this.watchdog.watchAccountFailures(`ScanFailed-${account}`, account);
      }
      this.watchdog.watchStateMachine('AccountScansFailed', this.scan.accountScans.stateMachine);
    } else this.watchdog.watchCompletion('ScanNotCompleted', settings.scanIntervalHours);
    this.watchdog.watchQueue('ScanFailedRuns', this.scan.failedRuns, 'Scan runs failed after retries');
    this.watchdog.watchQueue(
      'ScheduleDeadLetters',
      this.scan.scheduleDeadLetters,
      'The schedule could not invoke the scan',
    );
    this.watchdog.watchErrors(
      'RestoreErrors',
      this.web.fn,
      'The web function (restore, snooze, acknowledge, report, calendar)',
    );
    this.watchdog.watchApiServerErrors('RestoreServerErrors', this.web.api.deploymentStage, 'The web API');
    this.watchdog.watchDelivery('AlertDeliveryFailed', this.alerts.topic);
    if (settings.webhooks.length > 0) {
      this.webhooks = new WebhookSubscriber(this, 'Webhooks', {
        entry: `${FUNCTIONS_DIR}/webhook.ts`,
        alertTopic: this.alerts.topic,
        webhooks: settings.webhooks.map(parseWebhookSpec),
        signingKeyParameterName: settings.webhookSigningKeyParameterName,
        timeZone: settings.timeZone,
        deploymentName: this.deploymentName,
        ...(settings.accountLabel ? { accountLabel: settings.accountLabel } : {}),
        ...kmsKeyArn,
      });
      this.webhooks.watchWith(this.watchdog);
    }
    this.watchdog.watchThrottles('ScanThrottled', this.scan.fn, 'The scan');
    this.watchdog.watchThrottles('WebThrottled', this.web.fn, 'The web function');
    this.watchdog.watchDuration('ScanNearTimeout', this.scan.fn, SCAN_DURATION_ALARM_SHARE, 'A scan');
    const smsNumbers = [
      ...settings.alertSmsNumbers,
      ...(settings.accounts ?? []).flatMap((a) => a.alertSmsNumbers ?? []),
    ];
    if (smsNumbers.length > 0) {
      this.watchdog.watchSmsSpend('SmsSpend', settings.smsSpendAlarmUsd);
      if (owns((c) => c.smsDeliveryStatusLogging !== undefined))
        this.smsDeliveryStatusLogging = new SmsDeliveryStatusLogging(this, 'SmsDeliveryStatusLogging');
    }

    this.dashboard = new SentinelDashboard(this, 'Dashboard', {
      scan: this.scan.fn,
      web: this.web.fn,
      stage: this.web.api.deploymentStage,
      alertTopic: this.alerts.topic,
      deploymentName: this.deploymentName,
      durationAlarmShare: SCAN_DURATION_ALARM_SHARE,
      accounts: items !== undefined,
    });

    this.addOutputs();
    // A chat channel is a subscriber too, on the chat topic.
    this.requireAlertSubscriber(settings.alertSubscribersOutsideStack || this.chat !== undefined);
    this.acknowledgeUnavoidable(stack);
  }

  /** The chat topic and its channels, when the settings name a Slack or Teams channel. */
  private chatChannels(settings: ResolvedSettings): ChatChannels | undefined {
    const slack =
      settings.slackWorkspaceId && settings.slackChannelId
        ? { workspaceId: settings.slackWorkspaceId, channelId: settings.slackChannelId }
        : undefined;
    const teams =
      settings.teamsTeamId && settings.teamsTenantId && settings.teamsChannelId
        ? {
            teamId: settings.teamsTeamId,
            tenantId: settings.teamsTenantId,
            channelId: settings.teamsChannelId,
          }
        : undefined;
    if (!slack && !teams) return undefined;
    return new ChatChannels(this, 'Chat', {
      key: this.topicKey,
      configurationName: this.deploymentName,
      ...(slack ? { slack } : {}),
      ...(teams ? { teams } : {}),
    });
  }

  /**
   * Registers this copy with the others of its app and environment: two copies reading one API key
   * would scan one reseller account twice; what exists once per account is owned by the first copy
   * unless the props say otherwise.
   */
  private joinCopies(settings: ResolvedSettings): DomainSentinel[] {
    const root = this.node.root;
    const copies = COPIES.get(root) ?? [];
    COPIES.set(root, [...copies, this]);
    const here = environmentOf(Stack.of(this));
    const same = copies.filter((c) => environmentOf(Stack.of(c)) === here);
    const mine = keyParametersOf(settings);
    const twin = same.find((c) => keyParametersOf(c.settings).some((p) => mine.includes(p)));
    if (twin) {
      const shared = keyParametersOf(twin.settings).find((p) => mine.includes(p));
      throw new ConfigError(
        `invalid DomainSentinel props: apiKeyParameterName ${shared} is already read by ${twin.node.path}; ` +
          'give each copy (each reseller account) its own apiKeyParameterName',
      );
    }
    return same;
  }

  private addOutputs(): void {
    new CfnOutput(this, 'RestoreApiUrl', {
      value: this.web.url,
      description: 'Base of every link in alerts (restore, snooze, acknowledge, report, calendar)',
    });
    new CfnOutput(this, 'AlertTopicArn', {
      value: this.alerts.topic.topicArn,
      description: 'Subscribe more endpoints here',
    });
    new CfnOutput(this, 'OpsTopicArn', {
      value: this.watchdog.topic.topicArn,
      description: 'Alarms about the scan itself',
    });
    new CfnOutput(this, 'StateTableName', {
      value: this.state.table.tableName,
      description: 'Memory between scans; reset: sentinel state reset dynamodb:<this> --yes',
    });
    new CfnOutput(this, 'ScanFunctionName', {
      value: this.scan.fn.functionName,
      description: this.scan.accountScans
        ? 'The scan function; it scans one account per invocation, as the state machine (ScanStateMachineArn) gives it'
        : 'Run a scan now: aws lambda invoke --function-name <this> --invocation-type Event /dev/null',
    });
    if (this.scan.accountScans)
      new CfnOutput(this, 'ScanStateMachineArn', {
        value: this.scan.accountScans.stateMachine.stateMachineArn,
        description: 'Scan every account now: aws stepfunctions start-execution --state-machine-arn <this>',
      });
  }

  /**
   * Fails the synth when alerts would reach nobody. It runs at synth, after the app has had its
   * chance to subscribe something in code (`sentinel.alerts.topic.addSubscription(…)`).
   */
  private requireAlertSubscriber(outsideStack: boolean): void {
    this.node.addValidation({
      validate: () => {
        if (outsideStack) return [];
        const topicArn = this.alerts.topic.topicArn;
        const subscriptions = this.node.root.node
          .findAll()
          .filter(
            (c): c is sns.CfnSubscription => c instanceof sns.CfnSubscription && c.topicArn === topicArn,
          );
        if (subscriptions.length === 0) return [NO_ALERT_SUBSCRIBER];
        // Several accounts: each needs someone who gets its alerts (a filter on account, or none).
        const covered = (account: string) =>
          subscriptions.some((s) => {
            const filter = s.filterPolicy as { account?: unknown } | undefined;
            return !filter?.account || (Array.isArray(filter.account) && filter.account.includes(account));
          });
        const alone = (this.accounts ?? []).map((a) => a.item.account).filter((a) => !covered(a));
        return alone.length ? [`${NO_ACCOUNT_SUBSCRIBER}: ${alone.join(', ')}`] : [];
      },
    });
  }

  /** cdk-nag findings that are the design, each acknowledged exactly, with the reason a security reviewer can check. */
  private acknowledgeUnavoidable(stack: Stack): void {
    // cdk-nag names the resource as the template has it: a concrete account or region (cdk deploy
    // with credentials sets CDK_DEFAULT_ACCOUNT) as itself, an environment-agnostic one as <AWS::…>.
    const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
    const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
    const ssmKeyFinding = `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:${region}:${account}:key/*]`;
    if (!this.settings.secretsKmsKeyArn) {
      for (const fn of [this.scan.fn, this.web.fn, ...(this.webhooks ? [this.webhooks.fn] : [])]) {
        Validations.of(fn.role as iam.Role).acknowledge({
          id: ssmKeyFinding,
          reason:
            "kms:Decrypt on the account's aws/ssm key, whose id is unknown at synth, limited by kms:ViaService to SSM and by " +
            'kms:EncryptionContext:PARAMETER_ARN to the exact parameter; set secretsKmsKeyArn to name the key instead.',
        });
      }
    }
    // On the stack: EventBridge Scheduler's target role is one per stack, shared by every schedule in it.
    Validations.of(stack).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(this.scan.fn.node.defaultChild as CfnFunction)}.Arn>:*]`,
      reason:
        "EventBridge Scheduler's Lambda target grants lambda:InvokeFunction on the scan function and its versions (ARN:*); " +
        'it is this one function and nothing else.',
    });
    for (const queue of [
      this.scan.failedRuns,
      this.scan.scheduleDeadLetters,
      ...(this.webhooks ? [this.webhooks.deadLetters] : []),
    ]) {
      Validations.of(queue).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason:
          "This queue is itself a dead-letter queue (the schedule's, the scan's on-failure destination, or the webhook queues').",
      });
    }
  }
}

/** The synth error when the alert topic would have no subscriber. */
export const NO_ALERT_SUBSCRIBER =
  'No one would receive alerts: the alert topic has no subscriber. Add alertEmails (-c alertEmails=you@example.nl, ' +
  'or "alertEmails": ["you@example.nl"] in the settings file) or alertSmsNumbers, or subscribe in code ' +
  '(sentinel.alerts.topic.addSubscription(...)); if you subscribe the topic yourself after the deploy ' +
  '(output AlertTopicArn), set alertSubscribersOutsideStack to true.';

/** The synth error when an account's alerts would reach nobody (the accounts follow it). */
export const NO_ACCOUNT_SUBSCRIBER =
  'No one would receive the alerts of these accounts: give each an alertEmails or alertSmsNumbers of its own in the ' +
  'accounts file, or add a recipient of every account (alertEmails beside "accounts" in the settings)';

/** The key parameters a copy reads: its accounts' own, or the deployment's one. */
const keyParametersOf = (settings: ResolvedSettings): string[] =>
  settings.accounts
    ? settings.accounts.flatMap((a) => (a.apiKeyParameter ? [a.apiKeyParameter] : []))
    : [settings.apiKeyParameterName];

/**
 * The Map starts up to `accountConcurrency` scans at once and Lambda throttles those beyond the
 * reserved concurrency; the task does not retry a throttle, so such an account would fail its scan
 * and raise its alarm with nothing wrong.
 */
function checkAccountConcurrency(settings: ResolvedSettings): void {
  const reserved = settings.scanReservedConcurrency;
  if (reserved !== undefined && reserved < settings.accountConcurrency)
    throw new ConfigError(
      `invalid DomainSentinel props: scanReservedConcurrency (${reserved}) is below accountConcurrency (${settings.accountConcurrency}): ` +
        `the state machine would start ${settings.accountConcurrency} scans at once and Lambda would throttle all but ${reserved}; ` +
        'lower accountConcurrency, or raise scanReservedConcurrency (or leave it unset)',
    );
}

/**
 * Each function lists every account's key parameter twice in its policies (see
 * SecretParameter.grantReadAll); names too long together would need more managed policies than IAM
 * attaches to a role, which only the deploy would find.
 */
function checkKeyParameterNames(items: readonly AccountScanInput[]): void {
  const names = items.map((i) => i.apiKeyParameter);
  const policies = keyPolicyCount(names);
  if (policies > MAX_KEY_POLICIES)
    throw new ConfigError(
      `invalid DomainSentinel props: the accounts' apiKeyParameter names are too long together (${names.reduce((n, name) => n + name.length, 0)} characters): ` +
        `reading them takes ${policies} IAM managed policies of 6 144 characters, and a role holds ${MAX_KEY_POLICIES} of them here; ` +
        'shorten the names (e.g. /domain-sentinel/<name>/api-key), or split the accounts over two deployments',
    );
}

/**
 * The state machine's item of each account: its name, its key's parameter and its own settings
 * (the deployment's are the scan function's environment). The stack reads each key from its own
 * parameter, so every account must name one.
 */
function accountItems(accounts: readonly AccountSettings[]): AccountScanInput[] {
  const missing = accounts.filter((a) => !a.apiKeyParameter).map((a) => a.name);
  if (missing.length > 0)
    throw new ConfigError(
      `invalid DomainSentinel props: accounts ${missing.join(', ')} have no apiKeyParameter: the stack reads each account's key from its own SSM SecureString, e.g. "apiKeyParameter": "/domain-sentinel/${missing[0]}/api-key"`,
    );
  return accounts.map((a) => {
    const settings: Record<string, string | number> = {};
    for (const name of ACCOUNT_SCAN_SETTINGS) {
      const value = a[name];
      // Policies are an object in the file and JSON text in the item, as in POLICIES.
      if (value !== undefined) settings[name] = typeof value === 'object' ? JSON.stringify(value) : value;
    }
    return { account: a.name, apiKeyParameter: a.apiKeyParameter as string, settings };
  });
}

/**
 * The stack's name, then the construct's path in it: `DomainSentinel` for the clone-and-deploy stack
 * (whose construct's id is `Default`), `Sentinels/AcmeAccount` for a copy with id `AcmeAccount`.
 */
function deploymentNameOf(construct: Construct): string {
  const stack = Stack.of(construct);
  const inStack = construct.node.scopes
    .slice(stack.node.scopes.length)
    .map((c) => c.node.id)
    .filter((id) => id !== 'Default');
  return [stack.stackName, ...inStack].join('/');
}
