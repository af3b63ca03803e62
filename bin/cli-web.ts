import { S3Client } from '@aws-sdk/client-s3';
import type { ProxyHandler } from '../functions/adapters/local-server';
import { FolderReportStore, S3ReportStore } from '../functions/adapters/report-stores';
import { createWebApp } from '../functions/adapters/web-app';
import type { ActionStore } from '../functions/core/actions';
import { settingsFromEnv } from '../functions/core/config';
import { REPORT_ENV, type ReportStore } from '../functions/core/report-store';
import type { SecretSource } from '../functions/core/secrets';

/**
 * The command line's side of the web links: where the report is kept, and (once the state store
 * is there) snooze and acknowledge. Kept apart from cli.ts, which calls in here.
 */

/**
 * The report store the command line uses: `REPORT_DIR` (a folder), else `REPORT_BUCKET` (S3, as
 * the stack's scan), else a folder beside the state file when the state is a file, else none.
 */
export function reportStoreFromEnv(env: NodeJS.ProcessEnv, stateFile?: string): ReportStore | null {
  const dir = env[REPORT_ENV.dir]?.trim();
  if (dir) return new FolderReportStore(dir);
  const bucket = env[REPORT_ENV.bucket]?.trim();
  if (bucket) {
    const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
    return new S3ReportStore(
      new S3Client({ ...(endpoint ? { endpoint, forcePathStyle: true } : {}) }),
      bucket,
    );
  }
  if (stateFile) return new FolderReportStore(`${stateFile}.reports`);
  return null;
}

/** `sentinel serve`'s handler: the web Lambda's app with the command line's stores. */
export function webAppForServe(
  env: NodeJS.ProcessEnv,
  secrets: SecretSource,
  log: (message: string, entry: Record<string, unknown>) => void,
): ProxyHandler {
  return createWebApp({
    settings: () => settingsFromEnv(env),
    secrets,
    actions: () => actionStoreFromEnv(env),
    reports: () => reportStoreFromEnv(env),
    log,
  });
}

/** The snoozes and acknowledgements of the state store `STATE` names; null without one. */
export function actionStoreFromEnv(_env: NodeJS.ProcessEnv): ActionStore | null {
  return null;
}
