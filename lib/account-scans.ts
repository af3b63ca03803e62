import { createHash } from 'node:crypto';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { ConfigError } from '../functions/core/base/errors';
import { type AccountScanInput, AccountScanInputSchema, MAX_ACCOUNTS } from '../functions/core/scan/accounts';
import { METRICS } from '../functions/core/scan/config';
import { runOutcome } from './metrics';

export interface AccountScansProps {
  /** The scan function; each account is one invocation of it. */
  readonly scan: lambda.IFunction;
  /** Its timeout: a task waits this long (and a little more) for one account. */
  readonly scanTimeout: Duration;
  /** One item per account: exactly what its invocation is given (the scan function's input). */
  readonly accounts: readonly AccountScanInput[];
  /** Accounts scanned at once. */
  readonly maxConcurrency: number;
  /** The `deployment` dimension of the failure metric. */
  readonly deploymentName: string;
}

/** States of the definition, by name: the tests read the definition by these. */
export const ACCOUNT_SCAN_STATES = {
  accounts: 'Accounts',
  map: 'ScanEachAccount',
  scan: 'ScanAccount',
  recordFailure: 'RecordFailure',
  failed: 'AccountFailed',
  recordSuccess: 'RecordSuccess',
  successNotRecorded: 'SuccessNotRecorded',
} as const;

/**
 * The state machine's log group: under `/aws/vendedlogs/`, for which Step Functions adds nothing to
 * the account's one CloudWatch Logs resource policy (5 120 characters, shared by every team's vended
 * logs in the account and region; full, it fails the deploy). Named after the deployment (a stack's
 * name is unique in its account and region), in the characters CloudWatch Logs allows, with a hash of
 * the name as it was so that two deployments never share one.
 */
export function vendedLogGroupName(deploymentName: string): string {
  const readable = deploymentName.replace(/[^A-Za-z0-9._\-/#]/g, '-').slice(0, 200);
  const hash = createHash('sha256').update(deploymentName).digest('hex').slice(0, 8);
  return `/aws/vendedlogs/states/${readable}-${hash}`;
}

/** The retry of a failed account's scan waits this long. */
const RETRY_INTERVAL = Duration.minutes(2);

/**
 * How long an execution may run: six hours, or longer when the accounts' rounds need it. Each round
 * of `concurrency` accounts may take two tasks that time out, the retry's wait and the failure's
 * metric; an execution cut before its last round leaves those accounts unscanned and unalerted.
 */
export function executionTimeout(accounts: number, concurrency: number, taskTimeout: Duration): Duration {
  const round = 2 * taskTimeout.toSeconds() + RETRY_INTERVAL.toSeconds() + 60;
  const needed = Math.ceil(accounts / concurrency) * round + 30 * 60;
  return Duration.seconds(Math.max(6 * 3600, needed));
}

/**
 * One scan per account, on AWS's own engine: a Step Functions state machine whose Map runs the
 * scan function once per account of the accounts file, at most `maxConcurrency` at once. An
 * account whose scan fails (after a retry) is caught in its own branch: the failure is counted as
 * the `ScanFailed` metric with the account as a dimension (its alarm names the account), and the
 * others go on; the execution as a whole succeeds. A scan that completes counts 0 there, which is
 * what clears the account's alarm.
 *
 * Inline Map, not Distributed: the accounts are known at synth (at most {@link MAX_ACCOUNTS}),
 * every one of them is scanned in each execution, and an account's branch writes at most some
 * 20 history events (its task, a retry, the failure's metric; 12 for a scan and its count of 0),
 * so even the largest deployment stays near 1 200 of an execution's 25 000; a Distributed Map
 * would add a child execution per account (and its cost and permissions) for concurrency this
 * needs none of (at most 40 at once, the inline Map's own bound).
 */
export class AccountScans extends Construct {
  readonly stateMachine: sfn.StateMachine;
  /** How long an execution may run ({@link executionTimeout}): an account may be scanned this much later one day than the day before. */
  readonly timeout: Duration;
  /** The items, as the definition holds them. */
  readonly items: readonly AccountScanInput[];

  constructor(scope: Construct, id: string, props: AccountScansProps) {
    super(scope, id);
    if (props.accounts.length === 0 || props.accounts.length > MAX_ACCOUNTS)
      throw new ConfigError(
        `a state machine scans 1 to ${MAX_ACCOUNTS} accounts, not ${props.accounts.length}`,
      );
    // Each item is checked as the scan function will check it: a bad one fails the synth, not a scan.
    this.items = props.accounts.map((item) => AccountScanInputSchema.parse(item));

    const accounts = new sfn.Pass(this, ACCOUNT_SCAN_STATES.accounts, {
      comment: 'The accounts of the accounts file, as deployed (an execution’s own input is not used)',
      // Names only: each scan reads its item from the deployed accounts.json (see AccountScanEventSchema).
      result: sfn.Result.fromObject({ accounts: this.items.map((item) => ({ account: item.account })) }),
    });
    const taskTimeout = props.scanTimeout.plus(Duration.seconds(30));
    const scan = new tasks.LambdaInvoke(this, ACCOUNT_SCAN_STATES.scan, {
      lambdaFunction: props.scan,
      payload: sfn.TaskInput.fromObject({ account: sfn.JsonPath.stringAt('$.account') }),
      outputPath: '$.Payload',
      taskTimeout: sfn.Timeout.duration(taskTimeout),
    });
    // A transient failure (the reseller down for a moment) gets one more try a little later.
    scan.addRetry({
      errors: [sfn.Errors.ALL],
      interval: RETRY_INTERVAL,
      maxAttempts: 1,
      backoffRate: 1,
    });
    const recordFailure = scanFailedMetric(this, ACCOUNT_SCAN_STATES.recordFailure, 1, props.deploymentName);
    // A scan that completed counts 0 failures: the account's alarm, which keeps its state through
    // the hours without data, clears on it. A put that fails after its retries is let go: the scan
    // was done, and the other accounts' branches must not stop over a metric.
    const recordSuccess = scanFailedMetric(
      this,
      ACCOUNT_SCAN_STATES.recordSuccess,
      0,
      props.deploymentName,
    ).addCatch(new sfn.Pass(this, ACCOUNT_SCAN_STATES.successNotRecorded), {
      errors: [sfn.Errors.ALL],
      resultPath: sfn.JsonPath.DISCARD,
    });
    const failed = new sfn.Pass(this, ACCOUNT_SCAN_STATES.failed, {
      parameters: {
        account: sfn.JsonPath.stringAt('$.account'),
        failed: true,
        error: sfn.JsonPath.stringAt('$.error.Error'),
      },
    });
    scan.addCatch(recordFailure.next(failed), { errors: [sfn.Errors.ALL], resultPath: '$.error' });

    const map = new sfn.Map(this, ACCOUNT_SCAN_STATES.map, {
      itemsPath: '$.accounts',
      maxConcurrency: props.maxConcurrency,
    });
    map.itemProcessor(scan.next(recordSuccess));

    const logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: vendedLogGroupName(props.deploymentName),
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.timeout = executionTimeout(this.items.length, props.maxConcurrency, taskTimeout);
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      comment: 'domain-sentinel: scans each account of the accounts file',
      definitionBody: sfn.DefinitionBody.fromChainable(accounts.next(map)),
      // Every account's scan, its retry and the failure's metric, well inside: a stuck one is cut.
      timeout: this.timeout,
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: true },
    });
    this.stateMachine.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: { StringEquals: { 'cloudwatch:namespace': METRICS.namespace } },
      }),
    );
    this.acknowledge(props.scan);
  }

  /**
   * The last executions' outcome ({@link runOutcome}): per hour in which an execution ended, 0 when
   * one succeeded, else how many failed, timed out or were aborted as a whole (an account's failed
   * scan is caught, not counted here); no data point for an hour in which none ended.
   */
  executionsFailed(): cloudwatch.MathExpression {
    const reading = { period: Duration.hours(1), statistic: 'Sum' };
    return runOutcome(
      { succeeded: this.stateMachine.metricSucceeded(reading) },
      {
        failed: this.stateMachine.metricFailed(reading),
        timedOut: this.stateMachine.metricTimedOut(reading),
        aborted: this.stateMachine.metricAborted(reading),
      },
      'Executions failed, timed out or aborted (0: the last succeeded)',
    );
  }

  private acknowledge(scan: lambda.IFunction): void {
    const role = this.stateMachine.role as iam.Role;
    const fnId = Stack.of(this).getLogicalId(scan.node.defaultChild as lambda.CfnFunction);
    for (const [id, reason] of [
      [
        `AwsSolutions-IAM5[Resource::<${fnId}.Arn>:*]`,
        'lambda:InvokeFunction on the scan function and its versions (ARN:*), as the Lambda task grants it; this one function only.',
      ],
      [
        'AwsSolutions-IAM5[Resource::*]',
        'cloudwatch:PutMetricData (limited by cloudwatch:namespace to DomainSentinel) and the CloudWatch Logs delivery ' +
          'actions of the execution log have no resource-level permissions: * is the only resource they accept.',
      ],
    ] as const)
      Validations.of(role).acknowledge({ id, reason });
    Validations.of(this.stateMachine).acknowledge({
      id: 'AwsSolutions-SF2',
      reason:
        'X-Ray would trace one Lambda invocation per account a day; the execution history, its log (ALL events) and the ' +
        "scan function's own logs and metrics already show each account's run.",
    });
  }
}

/**
 * The task that puts `ScanFailed` for the account of its input (`$.account`): 1 for a scan that
 * failed through its retry, 0 for one that completed. Its output is its input.
 */
function scanFailedMetric(
  scope: Construct,
  id: string,
  value: 0 | 1,
  deploymentName: string,
): sfn.CustomState {
  return new sfn.CustomState(scope, id, {
    stateJson: {
      Type: 'Task',
      Comment:
        value === 1
          ? 'Counts the failed scan with the account as a dimension: its own alarm names it'
          : 'Counts no failure for the account whose scan completed: its alarm clears on it',
      Resource: `arn:${Stack.of(scope).partition}:states:::aws-sdk:cloudwatch:putMetricData`,
      Parameters: {
        Namespace: METRICS.namespace,
        MetricData: [
          {
            MetricName: METRICS.scanFailed,
            Dimensions: [
              { Name: 'service', Value: METRICS.service },
              { Name: METRICS.deploymentDimension, Value: deploymentName },
              { Name: METRICS.accountDimension, 'Value.$': '$.account' },
            ],
            Value: value,
            Unit: 'Count',
          },
        ],
      },
      ResultPath: null,
      Retry: [{ ErrorEquals: ['States.ALL'], IntervalSeconds: 5, MaxAttempts: 3, BackoffRate: 2 }],
    },
  });
}
