import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Token, Validations } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { ENV } from '../functions/core/config';
import { AlertTopic } from './alerts';
import type { StackConfig } from './config';
import { ReportBucket } from './report-bucket';
import { Scanner } from './scanner';
import { SecretParameter } from './secret-parameter';
import { StateTable } from './state-table';
import { Watchdog } from './watchdog';
import { WebApi } from './web-api';

export interface DomainSentinelStackProps extends StackProps {
  readonly config: StackConfig & { readonly scanIntervalHours: number };
  /** Directory holding scan.ts and restore.ts. */
  readonly functionsDir: string;
}

/** domain-sentinel in one stack: the scheduled scan, its alerts, the web API of its links, the report bucket and the alarms that watch them. */
export class DomainSentinelStack extends Stack {
  readonly scan: Scanner;
  /** Every link of the alerts: restore, snooze, acknowledge, report page, calendar feed. */
  readonly web: WebApi;
  readonly reports: ReportBucket;
  readonly alerts: AlertTopic;
  readonly watchdog: Watchdog;
  /** Encrypts both topics. */
  readonly topicKey: kms.Key;
  readonly state: StateTable;
  private readonly config: DomainSentinelStackProps['config'];

  constructor(scope: Construct, id: string, props: DomainSentinelStackProps) {
    super(scope, id, props);
    const { config } = props;
    this.config = config;

    // One customer-managed key for both topics: CloudWatch alarms can publish to an encrypted
    // topic only through a key whose policy lets CloudWatch use it (the Watchdog grants that),
    // which AWS-managed keys do not allow. Destroy schedules its deletion (7 days, the shortest
    // wait) instead of leaving a key that is billed monthly and protects nothing.
    const topicKey = new kms.Key(this, 'TopicKey', {
      enableKeyRotation: true,
      description: 'domain-sentinel SNS topics',
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    this.topicKey = topicKey;

    const apiKey = new SecretParameter(this, 'ResellerApiKey', {
      parameterName: config.apiKeyParameterName,
      ...(config.secretsKmsKeyArn ? { kmsKeyArn: config.secretsKmsKeyArn } : {}),
    });
    const signingKey = new SecretParameter(this, 'LinkSigningKey', {
      parameterName: config.linkSigningKeyParameterName,
      ...(config.secretsKmsKeyArn ? { kmsKeyArn: config.secretsKmsKeyArn } : {}),
    });

    this.alerts = new AlertTopic(this, 'Alerts', {
      key: topicKey,
      emails: config.alertEmails,
      smsNumbers: config.alertSmsNumbers,
    });

    // The id stays 'Restore': the API's logical id, and so the URL in every link already sent, stays the same.
    this.web = new WebApi(this, 'Restore', {
      entry: `${props.functionsDir}/restore.ts`,
      resellerBaseUrl: config.resellerBaseUrl,
      expiryDays: config.expiryDays,
      criticalDays: config.criticalDays,
    });
    apiKey.grantRead(this.web.fn, ENV.apiKeyParameter);
    signingKey.grantRead(this.web.fn, ENV.linkSigningKeyParameter);

    this.scan = new Scanner(this, 'Scan', {
      entry: `${props.functionsDir}/scan.ts`,
      schedule: config.schedule,
      timeZone: config.timeZone,
      resellerBaseUrl: config.resellerBaseUrl,
      linkBaseUrl: this.web.url,
      expiryDays: config.expiryDays,
      criticalDays: config.criticalDays,
      minSeverity: config.minSeverity,
      scanMode: config.scanMode,
      accountLabel: config.accountLabel,
      reservedConcurrency: config.scanReservedConcurrency,
    });
    apiKey.grantRead(this.scan.fn, ENV.apiKeyParameter);
    signingKey.grantRead(this.scan.fn, ENV.linkSigningKeyParameter);
    this.alerts.grantPublish(this.scan.fn);
    this.state = new StateTable(this, 'State');
    this.state.grantReadWrite(this.scan.fn);
    // Snooze and acknowledge links write to the same state, through the store's conditional steps.
    this.state.grantReadWrite(this.web.fn);

    this.reports = new ReportBucket(this, 'Reports');
    this.reports.grantWrite(this.scan.fn);
    this.reports.grantReadLatest(this.web.fn);

    this.watchdog = new Watchdog(this, 'Watchdog', { key: topicKey, emails: config.opsEmails });
    this.watchdog.watchErrors('ScanErrors', this.scan.fn, 'The domain-sentinel scan');
    this.watchdog.watchCompletion('ScanNotCompleted', config.scanIntervalHours);
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
      description:
        'Run a scan now: aws lambda invoke --function-name <this> --invocation-type Event /dev/null',
    });

    this.acknowledgeUnavoidable();
  }

  /** cdk-nag findings that are the design, each acknowledged exactly, with the reason a security reviewer can check. */
  private acknowledgeUnavoidable(): void {
    // cdk-nag names the resource as the template has it: a concrete account or region (cdk deploy
    // with credentials sets CDK_DEFAULT_ACCOUNT) as itself, an environment-agnostic one as <AWS::…>.
    const region = Token.isUnresolved(this.region) ? '<AWS::Region>' : this.region;
    const account = Token.isUnresolved(this.account) ? '<AWS::AccountId>' : this.account;
    const ssmKeyFinding = `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:${region}:${account}:key/*]`;
    if (!this.config.secretsKmsKeyArn) {
      for (const fn of [this.scan.fn, this.web.fn]) {
        Validations.of(fn.role as iam.Role).acknowledge({
          id: ssmKeyFinding,
          reason:
            "kms:Decrypt on the account's aws/ssm key, whose id is unknown at synth, limited by kms:ViaService to SSM and by " +
            'kms:EncryptionContext:PARAMETER_ARN to the exact parameter; set context secretsKmsKeyArn to name the key instead.',
        });
      }
    }
    Validations.of(this).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.scan.fn.node.defaultChild as CfnFunction)}.Arn>:*]`,
      reason:
        "EventBridge Scheduler's Lambda target grants lambda:InvokeFunction on the scan function and its versions (ARN:*); " +
        'it is this one function and nothing else.',
    });
    Validations.of(this.web.api).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        "API Gateway's account-level CloudWatch role needs AmazonAPIGatewayPushToCloudWatchLogs, the policy AWS publishes for " +
        'exactly that role, so the stage can write its error and access logs; the functions themselves have no managed policies.',
    });
    for (const queue of [this.scan.failedRuns, this.scan.scheduleDeadLetters]) {
      Validations.of(queue).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason:
          "This queue is itself a dead-letter queue (the schedule's, or the scan's on-failure destination).",
      });
    }
  }
}
