import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { readS3AccountDirectory, S3AccountSummaries } from '../aws/account-stores';
import { DynamoDbStateStore } from '../aws/dynamodb-state-store';
import { S3ReportStore } from '../aws/s3-report-store';
import type { SdkTimeouts } from '../aws/sdk-timeouts';
import { SsmSecretSource } from '../aws/secrets';
import { ConfigError } from '../core/base/errors';
import { REPORT_ENV } from '../core/memory/report-store';
import { ACCOUNT_DIRECTORY_KEY, type AccountDirectory, accountReportPrefix } from '../core/scan/accounts';
import { ENV } from '../core/scan/config';
import { StateActionStore } from '../use-cases/state-action-store';
import type { AccountWebStores } from './accounts-web';
import type { AccountScanDeps } from './scheduled-scan';

/*
 * The Lambdas' dependencies for several accounts, made of the AWS adapters: what the scan function
 * (handlers/scan.ts) and the web function (handlers/web.ts) give each account.
 */

/**
 * What the scan Lambda reads one account of several with: the deployment's accounts (to check the
 * input against), the account's key from its own SSM parameter (one source per parameter, so each
 * keeps its cache across warm invocations), its own prefix of the report bucket, and the summaries
 * the overview page reads.
 *
 * The accounts are read afresh for every account's scan, not through {@link cachedDirectory}: one
 * GET per account and run costs nothing beside the scan, and a cache would refuse an account a
 * deploy has just added or changed (the scan function's containers outlive a deploy that only
 * changes the accounts), failing its scan and raising its alarm for the cache's five minutes.
 * `s3Timeouts`, the S3 client's, size each report's upload (S3ReportStore).
 */
export function awsAccountScanDeps(
  ssm: SSMClient,
  s3: S3Client,
  env: NodeJS.ProcessEnv,
  bucket: string | undefined,
  s3Timeouts?: SdkTimeouts,
): AccountScanDeps {
  const sources = new Map<string, SsmSecretSource>();
  return {
    directory: bucket
      ? () => readS3AccountDirectory(s3, bucket)
      : () =>
          Promise.reject(
            new ConfigError(
              `${REPORT_ENV.bucket} is not set: the scan of an account reads its item from the deployment's ${ACCOUNT_DIRECTORY_KEY} in the report bucket`,
            ),
          ),
    secrets: (parameter) => {
      const source =
        sources.get(parameter) ?? new SsmSecretSource(ssm, { ...env, [ENV.apiKeyParameter]: parameter });
      sources.set(parameter, source);
      return source;
    },
    ...(bucket
      ? {
          reports: (account: string) =>
            new S3ReportStore(s3, bucket, accountReportPrefix(account), s3Timeouts),
          summaries: new S3AccountSummaries(s3, bucket),
        }
      : {}),
  };
}

/** How long the web function keeps the accounts it read: they change only with a deploy. */
export const DIRECTORY_CACHE_MS = 300_000;

/** The deployment's accounts from the report bucket, read at most every {@link DIRECTORY_CACHE_MS}. */
export function cachedDirectory(
  s3: S3Client,
  bucket: string,
  clock: () => number = Date.now,
): () => Promise<AccountDirectory> {
  let kept: { at: number; directory: AccountDirectory } | undefined;
  return async () => {
    if (kept && clock() - kept.at < DIRECTORY_CACHE_MS) return kept.directory;
    const directory = await readS3AccountDirectory(s3, bucket);
    kept = { at: clock(), directory };
    return directory;
  };
}

/**
 * What the web Lambda serves one account of several with: its key from its own SSM parameter,
 * its state and audit trail in the state table under its scope, its report under its prefix.
 */
export function awsAccountWebStores(options: {
  readonly env: NodeJS.ProcessEnv;
  readonly ssm: SSMClient;
  readonly s3: S3Client;
  readonly bucket: string | undefined;
  readonly table: string | undefined;
  readonly dynamodb: DynamoDBClient | null;
  readonly log: (message: string, entry: Record<string, unknown>) => void;
}): AccountWebStores {
  const { env, ssm, s3, bucket, table, dynamodb } = options;
  const sources = new Map<string, SsmSecretSource>();
  const store = (scope: string) =>
    table && dynamodb ? new DynamoDbStateStore({ client: dynamodb, tableName: table, scope }) : null;
  return {
    env,
    secrets: (input) => {
      const source =
        sources.get(input.apiKeyParameter) ??
        new SsmSecretSource(ssm, { ...env, [ENV.apiKeyParameter]: input.apiKeyParameter });
      sources.set(input.apiKeyParameter, source);
      return source;
    },
    actions: (scope, secrets) => {
      const state = store(scope);
      return state ? new StateActionStore(state, scope, { apiKey: () => secrets.apiKey() }) : null;
    },
    reports: (account) => (bucket ? new S3ReportStore(s3, bucket, accountReportPrefix(account)) : null),
    audit: (scope) => store(scope),
    log: options.log,
  };
}
