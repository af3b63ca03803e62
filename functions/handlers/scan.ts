import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SNSClient } from '@aws-sdk/client-sns';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { Context } from 'aws-lambda';
import { sentinelMetrics } from '../aws/metrics';
import { S3ReportStore } from '../aws/s3-report-store';
import { SCAN_SDK_TIMEOUTS, type ScanSdkTimeouts, timedClientConfig } from '../aws/sdk-timeouts';
import { SsmSecretSource } from '../aws/secrets';
import { REPORT_ENV } from '../core/memory/report-store';
import { METRICS } from '../core/scan/config';
import { awsAccountScanDeps } from './account-deps';
import { handleScheduledScan, type ScheduledScanResult } from './scheduled-scan';

/**
 * The scan function's handler over `env`, each AWS client bounded by its `timeouts` (a test gives
 * small ones): a publish or a write that never answers fails the run with the scan's own error
 * inside the time it keeps back, rather than running into Lambda's timeout. Called once at module
 * scope: the clients live as long as the container, reused by warm invocations.
 */
export function createScanEntry(
  env: NodeJS.ProcessEnv,
  timeouts: ScanSdkTimeouts = SCAN_SDK_TIMEOUTS,
): (event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<ScheduledScanResult> {
  const logger = new Logger({ serviceName: 'domain-sentinel-scan' });
  const metrics = sentinelMetrics(METRICS.service, env);
  const sns = new SNSClient(timedClientConfig(timeouts.sns));
  const dynamodb = new DynamoDBClient(timedClientConfig(timeouts.dynamodb));
  const ssm = new SSMClient(timedClientConfig(timeouts.ssm));
  const s3 = new S3Client(timedClientConfig(timeouts.s3));
  const scheduler = new SchedulerClient(timedClientConfig(timeouts.scheduler));
  const secrets = new SsmSecretSource(ssm, env);
  const bucket = env[REPORT_ENV.bucket];
  const reports = bucket ? new S3ReportStore(s3, bucket, '', timeouts.s3) : undefined;
  const accounts = awsAccountScanDeps(ssm, s3, env, bucket, timeouts.s3);
  return (event, context) =>
    handleScheduledScan(
      {
        env,
        secrets,
        sns,
        dynamodb,
        logger,
        metrics,
        accounts,
        scheduler,
        heartbeatUrl: () => secrets.heartbeatUrl(),
        ...(reports ? { reports } : {}),
      },
      context.getRemainingTimeInMillis(),
      event,
    );
}

/** EventBridge Scheduler invokes this with nothing the scan needs; the state machine with one account's input. */
export const handler = createScanEntry(process.env);
