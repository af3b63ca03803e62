import { Duration, RemovalPolicy, Stack, TimeZone } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Severity } from '../functions/core/findings/classify';
import { ACCOUNT_ENV, type AccountScanInput } from '../functions/core/scan/accounts';
import { ENV, METRICS } from '../functions/core/scan/config';
import { AccountScans } from './account-scans';
import { CustomMetricFactory, type MetricReading, metricOptions } from './metrics';
import { SentinelFunction } from './sentinel-function';
import type { AlarmSpec } from './watchdog';

/**
 * What the scan needs to know. The construct turns these into the function's environment (the
 * names the function reads, from `ENV`); secrets and the alert topic add their own variables
 * through their `grantRead` / `grantPublish`.
 */
export interface ScannerProps {
  /** Path of the Lambda entry (functions/handlers/scan.ts). */
  readonly entry: string;
  /** EventBridge Scheduler expression, e.g. `cron(0 6 * * ? *)`. */
  readonly schedule: string;
  /** IANA zone the cron expression is read in, and the dates of the digest are written in. */
  readonly timeZone: string;
  /** Base URL of the reseller API (https). */
  readonly resellerBaseUrl: string;
  /** Public base of the restore endpoint; findings in quarantine carry a signed link under it. @default - no restore links */
  readonly linkBaseUrl?: string;
  /** Days before expiry a domain without auto-renew is reported. @default 30 (the function's default) */
  readonly expiryDays?: number;
  /** Days before expiry such a domain becomes critical. @default 7 (the function's default) */
  readonly criticalDays?: number;
  /** Lowest severity that makes the scan publish. @default 'warning' (the function's default) */
  readonly minSeverity?: Severity;
  /** Name of the account in subjects, digests and SMS. @default - none */
  readonly accountLabel?: string;
  /** Restore periods by TLD over the built-in table, as QUARANTINE_DAYS takes them (`nl=40,shop=30`). @default - the table only */
  readonly quarantineDays?: string;
  /** Policies per domain group as POLICIES takes them (JSON). @default - none */
  readonly policies?: string;
  /**
   * Reserved concurrency of the function; 1 makes Lambda throttle a second scan (the async queue
   * retries it later). @default - none: new accounts cannot reserve any (see docs/deploy.md)
   */
  readonly reservedConcurrency?: number;
  /** The function's timeout in minutes. @default 5, 15 with registryCheck */
  readonly timeoutMinutes?: number;
  /** The `deployment` dimension of the function's metrics (DEPLOYMENT_NAME). @default - none */
  readonly deploymentName?: string;
  /**
   * Several accounts (docs/accounts.md): the schedule starts a state machine that scans each of
   * these once (see AccountScans), and the function scans only what an invocation names.
   * @default - one account: the schedule invokes the function itself
   */
  readonly accounts?: readonly AccountScanInput[];
  /** Accounts scanned at once. @default 4 */
  readonly accountConcurrency?: number;
  /**
   * The registry check (docs/registry.md): the function also asks IANA's bootstrap and the
   * registries' RDAP servers over the internet, and gets Lambda's longest timeout for it.
   * @default - off
   */
  readonly registryCheck?: { readonly queryBudget: number; readonly days: number };
}

/**
 * A queue that only ever holds failed events: encrypted, TLS-only, kept 14 days for a person to look
 * at; `maxMessageSizeBytes` when what it parks can be larger than SQS's default 256 KiB.
 */
export function deadLetterQueue(scope: Construct, id: string, maxMessageSizeBytes?: number): sqs.Queue {
  return new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
    ...(maxMessageSizeBytes ? { maxMessageSizeBytes } : {}),
  });
}

/** An alarm on anything waiting in a dead-letter queue; `each` says what one message is. */
export function deadLetterAlarm(
  queue: sqs.IQueue,
  what: string,
  each = 'a scan that did not run',
): AlarmSpec {
  return {
    description: `${what}: messages are waiting in ${queue.node.path}; each is ${each}.`,
    metric: queue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(5),
      statistic: 'Maximum',
    }),
    // SQS sends a queue's metrics only while it is active (a message sent or an action on it within
    // about six hours): treated as fine, a dead-letter queue whose messages sit untouched would
    // report OK while they wait. Without data the alarm keeps its state; a queue drained or
    // redriven is accessed, counts 0 again, and clears it.
    missing: cloudwatch.TreatMissingData.IGNORE,
  };
}

/**
 * The scan function and its schedule. Failed runs are not lost: the schedule retries delivery and
 * parks undeliverable events in its dead-letter queue; the function retries failed runs and sends
 * the ones that still fail to its on-failure queue.
 */
export class Scanner extends Construct {
  readonly fn: SentinelFunction;
  readonly scheduleDeadLetters: sqs.Queue;
  readonly failedRuns: sqs.Queue;
  readonly schedule: scheduler.Schedule;
  /** The state machine the schedule starts, when there are several accounts. */
  readonly accountScans?: AccountScans;
  /** What the scan's alarms and the dashboard watch. */
  readonly metrics: ScanMetrics;

  constructor(scope: Construct, id: string, props: ScannerProps) {
    super(scope, id);
    this.failedRuns = deadLetterQueue(this, 'FailedRuns');
    this.scheduleDeadLetters = deadLetterQueue(this, 'ScheduleDeadLetters');

    this.fn = new SentinelFunction(this, 'Function', {
      entry: props.entry,
      description: 'domain-sentinel: scans the reseller account and publishes one alert',
      serviceName: 'domain-sentinel-scan',
      // 3 008 MB, sized by measurement (npm run bench, docs/performance.md): started as Lambda's
      // runtime starts node for each size, an unchanged scan with state of 1 000 000 domains peaked
      // at 1 017 MB of 1 024 (0.99), 1 211 of 2 048 (0.59) and 1 522 of 3 008 (0.51; issue 32's
      // target is at most 0.60). V8 collects later as the size grows, so only a measurement at the
      // size itself counts. Lambda also gives CPU in proportion to memory.
      memorySize: 3008,
      // 5 minutes: 100 000 domains at 100 per page and 4 in flight take ~15 s at 50 ms latency; the rest is
      // room for retries with backoff. The scan stops reading 20 s (and its report's uploads' time) before this to fail with a clear message.
      // The registry check paces itself to each RDAP server (2 lookups at a time): Lambda's longest.
      // A larger account or a slower reseller sets its own (scanTimeoutMinutes).
      timeout: Duration.minutes(props.timeoutMinutes ?? (props.registryCheck ? 15 : 5)),
      environment: {
        ...scanEnvironment(props),
        POWERTOOLS_METRICS_NAMESPACE: METRICS.namespace,
        ...(props.accounts ? { [ACCOUNT_ENV.accountsOnly]: 'true' } : {}),
      },
      ...(props.reservedConcurrency !== undefined
        ? { reservedConcurrentExecutions: props.reservedConcurrency }
        : {}),
    });
    this.metrics = new ScanMetrics(
      this.fn,
      props.deploymentName ?? Stack.of(this).stackName,
      props.accounts !== undefined,
    );
    this.fn.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(2),
      onFailure: new destinations.SqsDestination(this.failedRuns),
    });

    const delivery = {
      retryAttempts: 3,
      maxEventAge: Duration.hours(1),
      deadLetterQueue: this.scheduleDeadLetters,
    };
    if (props.accounts)
      this.accountScans = new AccountScans(this, 'Accounts', {
        scan: this.fn,
        scanTimeout: this.fn.timeout ?? Duration.minutes(5),
        accounts: props.accounts,
        maxConcurrency: props.accountConcurrency ?? 4,
        deploymentName: props.deploymentName ?? Stack.of(this).stackName,
      });
    // A group of its own, not the account's default group that every team's schedules share: the
    // role Scheduler assumes for the scan trusts this group alone.
    this.schedule = new scheduler.Schedule(this, 'Schedule', {
      description: 'domain-sentinel scan',
      scheduleGroup: new scheduler.ScheduleGroup(this, 'ScheduleGroup', {
        removalPolicy: RemovalPolicy.DESTROY,
      }),
      schedule: scheduler.ScheduleExpression.expression(props.schedule, TimeZone.of(props.timeZone)),
      target: this.accountScans
        ? new targets.StepFunctionsStartExecution(this.accountScans.stateMachine, delivery)
        : new targets.LambdaInvoke(this.fn, delivery),
    });
  }
}

/** The function's environment from the typed props; unset optional props leave the function's defaults. */
function scanEnvironment(props: ScannerProps): Record<string, string> {
  const optional: Array<[string, string | number | undefined]> = [
    [ENV.linkBaseUrl, props.linkBaseUrl],
    [ENV.expiryDays, props.expiryDays],
    [ENV.criticalDays, props.criticalDays],
    [ENV.minSeverity, props.minSeverity],
    [ENV.accountLabel, props.accountLabel],
    [ENV.quarantineDays, props.quarantineDays],
    [ENV.policies, props.policies],
    [ENV.deploymentName, props.deploymentName],
    [ENV.registryCheck, props.registryCheck ? 'on' : undefined],
    [ENV.rdapQueryBudget, props.registryCheck?.queryBudget],
    [ENV.registryCheckDays, props.registryCheck?.days],
  ];
  return {
    [ENV.resellerBaseUrl]: props.resellerBaseUrl,
    [ENV.timeZone]: props.timeZone,
    ...Object.fromEntries(
      optional.filter(([, value]) => value !== undefined).map(([name, value]) => [name, String(value)]),
    ),
  };
}

/**
 * The scan's metrics: Lambda's of its function, and the ones the scan emits (functions/aws/
 * metrics.ts), of the whole deployment or of one account of several.
 */
export class ScanMetrics extends CustomMetricFactory {
  constructor(
    private readonly fn: lambda.Function,
    deploymentName: string,
    /** Several accounts: every data point of the scan carries its account, so the deployment's own is a sum over them. */
    private readonly accounts = false,
  ) {
    super(METRICS.service, deploymentName);
  }

  /** A metric of the whole deployment: itself, or with several accounts the sum of the accounts'. */
  private whole(metricName: string, reading: MetricReading): cloudwatch.IMetric {
    return this.accounts
      ? this.total(metricName, [METRICS.accountDimension], reading.label)
      : this.metric(metricName, reading);
  }

  /** The function's timeout, which its duration is measured against. */
  get timeout(): Duration {
    return this.fn.timeout ?? Duration.minutes(5);
  }

  errors(reading: MetricReading = {}): cloudwatch.Metric {
    return this.fn.metricErrors(metricOptions(reading));
  }

  throttles(reading: MetricReading = {}): cloudwatch.Metric {
    return this.fn.metricThrottles(metricOptions(reading));
  }

  /** The longest run in the period. */
  duration(reading: MetricReading = {}): cloudwatch.Metric {
    return this.fn.metricDuration(metricOptions(reading, 'Maximum'));
  }

  /** Scans that completed (of one account, when given). */
  completed(account?: string, reading: MetricReading = {}): cloudwatch.Metric {
    return this.metric(METRICS.scanCompleted, reading, account);
  }

  /** Scans of one account that failed, as the state machine counts them. */
  failed(account: string, reading: MetricReading = {}): cloudwatch.Metric {
    return this.metric(METRICS.scanFailed, reading, account);
  }

  domainsScanned(reading: MetricReading = {}): cloudwatch.IMetric {
    return this.whole(METRICS.domainsScanned, reading);
  }

  unreadableRecords(reading: MetricReading = {}): cloudwatch.IMetric {
    return this.whole(METRICS.unreadableRecords, reading);
  }

  /** The critical items as the alert counts them (alerts/alert.ts criticalCount), under the metric's old name. */
  criticalFindings(reading: MetricReading = {}): cloudwatch.IMetric {
    return this.whole(METRICS.criticalFindings, reading);
  }

  warningFindings(reading: MetricReading = {}): cloudwatch.IMetric {
    return this.whole(METRICS.warningFindings, reading);
  }

  resellerRequests(reading: MetricReading = {}): cloudwatch.IMetric {
    return this.whole(METRICS.resellerRequests, reading);
  }

  resellerThrottled(reading: MetricReading = {}): cloudwatch.IMetric {
    return this.whole(METRICS.resellerThrottled, reading);
  }

  /** One line per account of a metric the scan emits with the account's name. */
  perAccount(metricName: string): cloudwatch.MathExpression {
    return this.search(metricName, [METRICS.accountDimension]);
  }
}
