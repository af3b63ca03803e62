import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SNSClient } from '@aws-sdk/client-sns';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { Context } from 'aws-lambda';
import { sentinelMetrics } from '../aws/metrics';
import { S3ReportStore } from '../aws/s3-report-store';
import { SsmSecretSource } from '../aws/secrets';
import { REPORT_ENV } from '../core/memory/report-store';
import { METRICS } from '../core/scan/config';
import { awsAccountScanDeps } from './account-deps';
import { handleScheduledScan } from './scheduled-scan';

// Clients at module scope: created once per container, reused by warm invocations.
const logger = new Logger({ serviceName: 'domain-sentinel-scan' });
const metrics = sentinelMetrics(METRICS.service, process.env);
const sns = new SNSClient({});
const dynamodb = new DynamoDBClient({});
const ssm = new SSMClient({});
const s3 = new S3Client({});
const scheduler = new SchedulerClient({});
const secrets = new SsmSecretSource(ssm, process.env);
const bucket = process.env[REPORT_ENV.bucket];
const reports = bucket ? new S3ReportStore(s3, bucket) : undefined;
const accounts = awsAccountScanDeps(ssm, s3, process.env, bucket);

/** EventBridge Scheduler invokes this with nothing the scan needs; the state machine with one account's input. */
export const handler = async (event: unknown, context: Context) =>
  handleScheduledScan(
    {
      env: process.env,
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
