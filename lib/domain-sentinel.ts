import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { parseWebhookSpec } from '../functions/core/alerts/webhook-delivery';
import type { Severity } from '../functions/core/findings/classify';
import { ACCOUNT_DIRECTORY_KEY, type AccountScanInput } from '../functions/core/scan/accounts';
import { ENV } from '../functions/core/scan/config';
import type { Policies } from '../functions/core/scan/policies';
import { AccountGroups } from './account-groups';
import { AccountSettings as AccountSettingsOwner } from './account-settings';
import { SCAN_DURATION_ALARM_SHARE, watchDeployment } from './alarms';
import { AlertTopic, alertRecipients, policyGroups } from './alerts';
import { ChatChannels, WebhookSubscriber } from './chat';
import { type AccountSettings, parseSentinelSettings, type ResolvedSettings } from './config';
import { SentinelDashboard } from './dashboard';
import { armDeadMan } from './dead-man';
import {
  accountItems,
  type CopyOfApp,
  checkCollision,
  deploymentNameOf,
  environmentOf,
  requireAlertSubscriber,
} from './deployment-checks';
import { HeldSms } from './held-sms';
import { limitProblems } from './limits';
import { ReportBucket } from './report-bucket';
import { Scanner } from './scanner';
import { SecretParameter } from './secret-parameter';
import { StateTable, servedPartitions } from './state-table';
import { Watchdog } from './watchdog';
import { WebApi } from './web-api';

export { NO_ACCOUNT_SUBSCRIBER, NO_ALERT_SUBSCRIBER } from './deployment-checks';

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
  /** The dead-man alarm's wait for a scan when longer than the schedule's longest gap, which it always waits (plus an hour). @default - the schedule's longest gap */
  readonly scanIntervalHours?: number;
  /** A domain expiring within this many days is reported. @default 30 */
  readonly expiryDays?: number;
  /** Expiring without auto-renew within this many days is critical. @default 7 */
  readonly criticalDays?: number;
  /** Lowest severity that makes the scan publish. @default 'warning' */
  readonly minSeverity?: Severity;
  /** E-mail addresses that get the digest. @default - none */
  readonly alertEmails?: readonly string[];
  /** E.164 numbers that get an SMS for critical findings. @default - none */
  readonly alertSmsNumbers?: readonly string[];
  /** E-mail addresses that get the alarms about the scan itself. @default - the alertEmails (none of either: synth warns) */
  readonly opsEmails?: readonly string[];
  /** Name of the account in subjects, digests and SMS. @default - none */
  readonly accountLabel?: string;
  /** Restore periods by TLD over the built-in table (docs/deadlines.md), as QUARANTINE_DAYS takes them: `nl=40,shop=30`. @default - the built-in table only */
  readonly quarantineDays?: string;
  /** Reserved concurrency of the scan function. @default - none (a new account has none to reserve) */
  readonly scanReservedConcurrency?: number;
  /**
   * The scan function's timeout in minutes (1 to 15): what an account too large or a reseller too
   * slow for the default needs (a read the time runs out in is alerted incomplete, and the run fails
   * saying to raise this). @default 5, 15 with registryCheck
   */
  readonly scanTimeoutMinutes?: number;
  /**
   * SNS's "Filter policies per topic" of the account and region, once raised through Service Quotas:
   * the synth refuses more subscriptions with a filter on one topic. @default 200 - SNS's default
   */
  readonly snsFilterPoliciesPerTopic?: number;
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
   * This deployment owns what exists once per account and region, and may overwrite it: API
   * Gateway's CloudWatch Logs role (the account setting `cloudwatchRoleArn`, which the web API
   * stage's own access and execution logs need) and, with SMS recipients, SNS's SMS delivery-status
   * logging (the SMS attributes `DeliveryStatusIAMRole` and `DeliveryStatusSuccessSamplingRate`).
   * Each is cleared when the stack is destroyed if it still names the stack's role (another
   * team's role put there since is left). Leave it off in an account where another team
   * owns them (docs/deploy.md says what works either way).
   * @default false - the account's settings are left alone: no stage logs, no SMS delivery-status logs
   */
  readonly ownAccountSettings?: boolean;
  /**
   * A regional AWS WAF web ACL (in the stack's region and account; from code, a `CfnWebACL`'s
   * `attrArn` too) the web API's stage is associated with: its
   * per-address rate rules keep a flood from one address from crowding out real clicks, which the
   * stage's throttle alone (the whole API's) cannot (docs/security.md).
   * @default - no web ACL: the stage's throttle only
   */
  readonly webAclArn?: string;
  /**
   * The state table an earlier deployment kept when it was destroyed (its output StateTableName):
   * adopted instead of a new one, so the redeployed scan remembers what it announced.
   * @default - a new table, kept when the stack is destroyed
   */
  readonly stateTableName?: string;
  /**
   * The report bucket an earlier deployment kept when it was destroyed (its output
   * ReportBucketName): adopted instead of a new one.
   * @default - a new bucket, kept when the stack is destroyed
   */
  readonly reportBucketName?: string;
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
  /**
   * Quiet hours for SMS (docs/policies.md), `22:00-07:00` in timeZone: an SMS waits until the
   * window ends unless a deadline is within 48 hours. The stack adds an EventBridge Scheduler group
   * the scan holds each SMS in, and the role that publishes it when the window ends.
   * @default - none: an SMS goes out with its alert
   */
  readonly smsQuietHours?: string;
  /**
   * SSM SecureString holding the heartbeat URL (docs/policies.md): the scan GETs it after every
   * complete scan and `URL/fail` after a failed one. @default - no heartbeat
   */
  readonly heartbeatUrlParameterName?: string;
  /**
   * Check domains against their registry's RDAP too (docs/registry.md): the scan function then
   * reaches IANA's bootstrap and the registries' RDAP servers over the internet, and may run 15
   * minutes. @default false
   */
  readonly registryCheck?: boolean;
  /** With registryCheck: most domains looked up per scan. @default 2000 */
  readonly rdapQueryBudget?: number;
  /** With registryCheck: days over which the rotating sample covers the account. @default 30 */
  readonly registryCheckDays?: number;
}

/** Copies made so far per app, to refuse two that would collide in one account and region. */
const COPIES = new WeakMap<Construct, CopyOfApp[]>();

/** What to change when a deployment would pass an AWS limit (lib/limits.ts names the limit and the count). */
const LIMIT_ADVICE =
  'give the accounts fewer recipients of their own, shorten their apiKeyParameter names, or split the accounts over two deployments (docs/accounts.md#limits)';

/**
 * domain-sentinel as one construct: the scheduled scan and its alerts, the web API of its links
 * (restore, snooze, acknowledge, report, calendar), the state table and report bucket, and the
 * alarms and dashboard that watch them. Instantiate it in any stack; copies (reseller accounts) can
 * live side by side in one account and region, or in two regions: every physical name is
 * CloudFormation's or carries the stack (and, where a name is account-wide, the region), every
 * metric carries the copy's `deploymentName`, and nothing of the account's own settings is touched
 * unless `ownAccountSettings` says this copy owns them.
 */
export class DomainSentinel extends Construct {
  /** The props, validated, with defaults and derived values filled in. */
  readonly settings: ResolvedSettings;
  /** Tells this copy's metrics apart from another's in the same account and region: the dimension `deployment`. */
  readonly deploymentName: string;
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
  /** The account's and region's own settings, when this copy owns them (ownAccountSettings). */
  readonly accountSettings?: AccountSettingsOwner;
  /** Several accounts: each account's alarms and recipients, in nested stacks. */
  readonly accountGroups?: AccountGroups;
  readonly apiKey: SecretParameter;
  readonly signingKey: SecretParameter;
  /** Quiet hours for SMS: the scheduler group and role that hold and release an SMS (smsQuietHours). */
  readonly heldSms?: HeldSms;
  /** The heartbeat URL's SecureString, which the scan reads (heartbeatUrlParameterName). */
  readonly heartbeatUrl?: SecretParameter;
  /**
   * Several accounts: each account's item of the state machine (its name, its key's parameter and
   * its own settings), and its key parameter, which the scan and web functions may read, and no other.
   */
  readonly accounts?: ReadonlyArray<{ readonly item: AccountScanInput; readonly key: SecretParameter }>;

  constructor(scope: Construct, id: string, props: DomainSentinelProps) {
    super(scope, id);
    const settings = parseSentinelSettings(props);
    this.settings = settings;
    this.deploymentName = deploymentNameOf(this);
    const items = accountItems(settings);
    this.joinCopies(settings);

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
    const recipients = alertRecipients(settings);
    this.alerts = new AlertTopic(this, 'Alerts', { key: this.topicKey, ...recipients });
    // The functions read policies as POLICIES takes them: JSON text (parseWith bounded its length).
    const policiesText = settings.policies ? JSON.stringify(settings.policies) : undefined;
    // The id stays 'Restore': the API's logical id, and so the URL in every link already sent, stays the same.
    this.web = new WebApi(this, 'Restore', {
      entry: `${FUNCTIONS_DIR}/handlers/web.ts`,
      resellerBaseUrl: settings.resellerBaseUrl,
      expiryDays: settings.expiryDays,
      criticalDays: settings.criticalDays,
      quarantineDays: settings.quarantineDays,
      ...(policiesText ? { policies: policiesText } : {}),
      timeZone: settings.timeZone,
      apiName: `${this.deploymentName.replaceAll('/', '-')}-restore`,
      stageLogs: settings.ownAccountSettings,
      webAclArn: settings.webAclArn,
      deploymentName: this.deploymentName,
      accounts: items !== undefined,
    });
    this.scan = new Scanner(this, 'Scan', {
      entry: `${FUNCTIONS_DIR}/handlers/scan.ts`,
      schedule: settings.schedule,
      timeZone: settings.timeZone,
      resellerBaseUrl: settings.resellerBaseUrl,
      linkBaseUrl: this.web.url,
      expiryDays: settings.expiryDays,
      criticalDays: settings.criticalDays,
      minSeverity: settings.minSeverity,
      accountLabel: settings.accountLabel,
      quarantineDays: settings.quarantineDays,
      ...(policiesText ? { policies: policiesText } : {}),
      reservedConcurrency: settings.scanReservedConcurrency,
      timeoutMinutes: settings.scanTimeoutMinutes,
      deploymentName: this.deploymentName,
      ...(settings.registryCheck
        ? {
            registryCheck: {
              queryBudget: settings.rdapQueryBudget,
              days: settings.registryCheckDays,
            },
          }
        : {}),
      ...(items ? { accounts: items, accountConcurrency: settings.accountConcurrency } : {}),
    });
    this.chat = this.chatChannels(settings);
    this.grantKeysAndTopics();
    this.state = new StateTable(this, 'State', { tableName: settings.stateTableName });
    this.reports = new ReportBucket(this, 'Reports', { bucketName: settings.reportBucketName });
    this.grantMemory(items);

    this.watchdog = new Watchdog(this, 'Watchdog', {
      key: this.topicKey,
      // Without ops recipients, the people the alerts reach learn that the scan failed or stopped.
      emails: settings.opsEmails.length ? settings.opsEmails : settings.alertEmails,
      deploymentName: this.deploymentName,
    });
    const smsNumbers = [
      ...settings.alertSmsNumbers,
      ...(settings.accounts ?? []).flatMap((a) => a.alertSmsNumbers ?? []),
    ];
    // The schedule's longest gap, followed run by run in its zone (a weekend, a clock change);
    // none when CloudWatch cannot watch so long and the heartbeat's outside service does.
    const deadManInterval = settings.scanIntervalHours;
    watchDeployment(this.watchdog, {
      scan: this.scan,
      web: this.web.metrics,
      alerts: this.alerts.metrics,
      intervalHours: deadManInterval,
      accounts: items !== undefined,
      ...(smsNumbers.length > 0 ? { smsSpendAlarmUsd: settings.smsSpendAlarmUsd } : {}),
    });
    if (settings.accounts)
      this.accountGroups = new AccountGroups(this, 'AccountGroups', {
        accounts: settings.accounts,
        everyone: { emails: settings.alertEmails, smsNumbers: settings.alertSmsNumbers },
        alertTopic: this.alerts.topic,
        partial: this.alerts.partial,
        watchdog: this.watchdog,
        scan: this.scan.metrics,
        intervalHours: deadManInterval,
        runTimeout: this.scan.accountScans?.timeout ?? Duration.hours(6),
        features: recipients.features,
      });
    ({ heldSms: this.heldSms, heartbeatUrl: this.heartbeatUrl } = this.holdAndBeat(settings));
    // Several accounts: each account's switch is armed beside its alarm, in its group's stack.
    if (!items && deadManInterval !== undefined) armDeadMan(this.watchdog, this.scan.metrics);
    this.webhooks = this.webhookSubscriber(settings);
    if (settings.ownAccountSettings)
      this.accountSettings = new AccountSettingsOwner(this, 'AccountSettings', {
        stage: this.web.api.deploymentStage,
        smsDeliveryStatus: smsNumbers.length > 0,
      });
    this.dashboard = new SentinelDashboard(this, 'Dashboard', {
      scan: this.scan.metrics,
      web: this.web.metrics,
      alerts: this.alerts.metrics,
      durationAlarmShare: SCAN_DURATION_ALARM_SHARE,
      accounts: items !== undefined,
    });
    this.addOutputs();
    // A chat channel is a subscriber too, on the chat topic.
    requireAlertSubscriber(
      this,
      this.alerts.topic,
      (items ?? []).map((i) => i.account),
      settings.alertSubscribersOutsideStack || this.chat !== undefined,
    );
    this.acknowledgeUnavoidable(Stack.of(this));
    this.node.addValidation({
      validate: () =>
        limitProblems(this, LIMIT_ADVICE, { filterPoliciesPerTopic: settings.snsFilterPoliciesPerTopic }),
    });
  }

  /** Whether this copy owns the account's and region's own settings. */
  get ownAccountSettings(): boolean {
    return this.settings.ownAccountSettings;
  }

  /** The functions' keys (each account's, or the deployment's one), the signing key, and the topics they publish to. */
  private grantKeysAndTopics(): void {
    for (const fn of [this.web.fn, this.scan.fn]) {
      // Several accounts: each account's key and no deployment-wide one (each invocation names its account's).
      if (this.accounts)
        SecretParameter.grantReadAll(
          fn,
          this.accounts.map((a) => a.key),
        );
      else this.apiKey.grantRead(fn, ENV.apiKeyParameter);
      this.signingKey.grantRead(fn, ENV.linkSigningKeyParameter);
    }
    this.alerts.grantPublish(this.scan.fn);
    this.chat?.grantPublish(this.scan.fn);
  }

  /**
   * Quiet hours' scheduler (the group a held SMS waits in, the role that publishes it, their alarm)
   * and the heartbeat URL's parameter, for the scan, when the settings ask for them.
   */
  private holdAndBeat(settings: ResolvedSettings): { heldSms?: HeldSms; heartbeatUrl?: SecretParameter } {
    const out: { heldSms?: HeldSms; heartbeatUrl?: SecretParameter } = {};
    if (settings.smsQuietHours) {
      out.heldSms = new HeldSms(this, 'HeldSms', { topic: this.alerts.topic, key: this.topicKey });
      out.heldSms.grantHold(this.scan.fn, settings.smsQuietHours);
      this.watchdog.alarm('HeldSmsNotPublished', out.heldSms.undelivered);
    }
    if (settings.heartbeatUrlParameterName) {
      out.heartbeatUrl = new SecretParameter(this, 'HeartbeatUrl', {
        parameterName: settings.heartbeatUrlParameterName,
        ...(settings.secretsKmsKeyArn ? { kmsKeyArn: settings.secretsKmsKeyArn } : {}),
      });
      out.heartbeatUrl.grantRead(this.scan.fn, ENV.heartbeatUrlParameter);
    }
    return out;
  }

  /** The state table and the report bucket, for the scan and the web function. */
  private grantMemory(items: AccountScanInput[] | undefined): void {
    // Each function in the partitions of the deployment's account(s) alone: the scan keeps an
    // account's state under the scope it derives (the base URL, or `account <name> at <url>`), and
    // snooze and acknowledge links write to the same state, through the store's conditional steps.
    const partitions = servedPartitions(this.settings.resellerBaseUrl, items);
    this.state.grantReadWrite(this.scan.fn, partitions);
    this.state.grantReadWrite(this.web.fn, partitions);
    if (!items) {
      this.reports.grantWrite(this.scan.fn);
      this.reports.grantReadLatest(this.web.fn);
      return;
    }
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
  }

  /** The webhook subscriber and its alarms, when the settings list webhooks. */
  private webhookSubscriber(settings: ResolvedSettings): WebhookSubscriber | undefined {
    // The deployment's webhooks, then each group's own (its messages alone), then those of each
    // account's own policies (that account's group messages alone).
    const specs = [
      ...settings.webhooks.map(parseWebhookSpec),
      ...alertRecipients(settings).groups.flatMap(({ name, webhooks = [] }) =>
        webhooks.map((w) => ({ ...parseWebhookSpec(w), group: name })),
      ),
      ...(settings.accounts ?? []).flatMap((account) =>
        policyGroups(account.policies).flatMap(({ name, webhooks = [] }) =>
          webhooks.map((w) => ({ ...parseWebhookSpec(w), group: name, account: account.name })),
        ),
      ),
    ];
    if (specs.length === 0) return undefined;
    const webhooks = new WebhookSubscriber(this, 'Webhooks', {
      entry: `${FUNCTIONS_DIR}/handlers/webhook.ts`,
      alertTopic: this.alerts.topic,
      webhooks: specs,
      features: alertRecipients(settings).features,
      signingKeyParameterName: settings.webhookSigningKeyParameterName,
      timeZone: settings.timeZone,
      deploymentName: this.deploymentName,
      ...(settings.accountLabel ? { accountLabel: settings.accountLabel } : {}),
      ...(settings.secretsKmsKeyArn ? { kmsKeyArn: settings.secretsKmsKeyArn } : {}),
    });
    webhooks.watchWith(this.watchdog);
    return webhooks;
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

  /** Registers this copy with the others of its app; one that would collide with an earlier copy fails the synth. */
  private joinCopies(settings: ResolvedSettings): void {
    const root = this.node.root;
    const copies = COPIES.get(root) ?? [];
    const copy = { path: this.node.path, environment: environmentOf(Stack.of(this)), settings };
    checkCollision(copy, copies);
    COPIES.set(root, [...copies, copy]);
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
      description:
        'Memory between scans, kept when the stack is destroyed: redeploy with stateTableName=<this> to keep it; reset: sentinel state reset dynamodb:<this> --yes',
    });
    new CfnOutput(this, 'ReportBucketName', {
      value: this.reports.bucket.bucketName,
      description:
        'Reports, kept when the stack is destroyed: redeploy with reportBucketName=<this> to keep them',
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
