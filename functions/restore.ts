import { Logger } from '@aws-lambda-powertools/logger';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { S3ReportStore } from './adapters/report-stores';
import { SsmSecretSource } from './adapters/secrets';
import { createWebApp } from './adapters/web-app';
import { settingsFromEnv } from './core/config';
import { REPORT_ENV } from './core/report-store';

const logger = new Logger({ serviceName: 'domain-sentinel-web' });
const bucket = process.env[REPORT_ENV.bucket];
const reports = bucket ? new S3ReportStore(new S3Client({}), bucket) : null;

/** API Gateway (REST, proxy integration) invokes this for every link: restore, snooze, acknowledge, report, calendar. */
export const handler = createWebApp({
  settings: () => settingsFromEnv(process.env),
  secrets: new SsmSecretSource(new SSMClient({}), process.env),
  actions: () => null,
  reports: () => reports,
  log: (message, entry) =>
    Number(entry.status) >= 500 ? logger.error(message, { ...entry }) : logger.info(message, { ...entry }),
});
