import { S3Client } from '@aws-sdk/client-s3';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SNSClient } from '@aws-sdk/client-sns';
import { SCAN_SDK_TIMEOUTS, timedClientConfig } from '../functions/aws/sdk-timeouts';

/*
 * The command line's AWS clients, each bounded as the scan function's same client is
 * (functions/aws/sdk-timeouts.ts): the SDK waits for good by default, so a service that never
 * answers would hold the scan (and a state store's lease) until someone pressed Ctrl-C.
 */

/** The SNS client of a scan's alert to ALERT_TOPIC_ARN. */
export const cliSnsClient = (): SNSClient => new SNSClient(timedClientConfig(SCAN_SDK_TIMEOUTS.sns));

/** The EventBridge Scheduler client of a held SMS's schedule. */
export const cliSchedulerClient = (): SchedulerClient =>
  new SchedulerClient(timedClientConfig(SCAN_SDK_TIMEOUTS.scheduler));

/**
 * The S3 client of REPORT_BUCKET (`endpoint`: AWS_ENDPOINT_URL_S3, a local S3); a report's upload
 * gets its own size's time besides (S3ReportStore with {@link CLI_S3_TIMEOUTS}).
 */
export const cliS3Client = (endpoint: string | undefined): S3Client =>
  new S3Client({
    ...timedClientConfig(CLI_S3_TIMEOUTS),
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
  });

/** The S3 client's timeouts, for the report store's uploads. */
export const CLI_S3_TIMEOUTS = SCAN_SDK_TIMEOUTS.s3;
