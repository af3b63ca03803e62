import { Duration, TimeZone } from 'aws-cdk-lib';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS } from '../functions/core/config';
import { SentinelFunction } from './sentinel-function';

export interface ScannerProps {
  readonly entry: string;
  /** EventBridge Scheduler expression, e.g. `cron(0 6 * * ? *)`. */
  readonly schedule: string;
  /** IANA zone the cron expression is read in. */
  readonly timeZone: string;
  /** Environment of the scan: base URL, thresholds, mode (secrets and topic are added by their constructs). */
  readonly environment: Readonly<Record<string, string>>;
}

/** A queue that only ever holds failed events: encrypted, TLS-only, kept 14 days for a person to look at. */
export function deadLetterQueue(scope: Construct, id: string): sqs.Queue {
  return new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
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

  constructor(scope: Construct, id: string, props: ScannerProps) {
    super(scope, id);
    this.failedRuns = deadLetterQueue(this, 'FailedRuns');
    this.scheduleDeadLetters = deadLetterQueue(this, 'ScheduleDeadLetters');

    this.fn = new SentinelFunction(this, 'Function', {
      entry: props.entry,
      description: 'domain-sentinel: scans the reseller account and publishes one alert',
      serviceName: 'domain-sentinel-scan',
      // 512 MB: the scan is network-bound, but Lambda gives CPU in proportion to memory, and JSON
      // parsing of 100 000 domains wants a little more than the 128 MB default (peak RSS ~150 MB, see README).
      memorySize: 512,
      // 5 minutes: 100 000 domains at 100 per page and 4 in flight take ~15 s at 50 ms latency; the rest is
      // room for retries with backoff. The scan stops itself 20 s before this to fail with a clear message.
      timeout: Duration.minutes(5),
      environment: { ...props.environment, POWERTOOLS_METRICS_NAMESPACE: METRICS.namespace },
      // Two scans never overlap: a second invocation is throttled and retried by the async queue.
      reservedConcurrentExecutions: 1,
    });
    this.fn.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(2),
      onFailure: new destinations.SqsDestination(this.failedRuns),
    });

    this.schedule = new scheduler.Schedule(this, 'Schedule', {
      description: 'domain-sentinel scan',
      schedule: scheduler.ScheduleExpression.expression(props.schedule, TimeZone.of(props.timeZone)),
      target: new targets.LambdaInvoke(this.fn, {
        retryAttempts: 3,
        maxEventAge: Duration.hours(1),
        deadLetterQueue: this.scheduleDeadLetters,
      }),
    });
  }
}
