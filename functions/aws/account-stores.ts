import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { ConfigError } from '../core/base/errors';
import { parseAccountSummary, REPORT_ENV, ReportStoreError } from '../core/memory/report-store';
import {
  ACCOUNT_DIRECTORY_KEY,
  ACCOUNT_SUMMARY_KEY,
  type AccountDirectory,
  AccountDirectorySchema,
  type AccountSummary,
  type AccountSummaryStore,
  accountReportPrefix,
} from '../core/scan/accounts';
import { ENV } from '../core/scan/config';
import type { AccountWebStores } from '../handlers/accounts-web';
import type { AccountScanDeps } from '../handlers/scheduled-scan';
import { StateActionStore } from '../use-cases/state-action-store';
import { DynamoDbStateStore } from './dynamodb-state-store';
import { S3ReportStore } from './s3-report-store';
import { SsmSecretSource } from './secrets';

/**
 * What the web function knows of several accounts: the deployment's accounts (`accounts.json`,
 * written at deploy) and each account's summary for the overview page (written by its scan beside
 * its latest report). In S3 in AWS, in the report folder on a laptop.
 */

const describe = (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`;

/** The summaries in the report bucket, under each account's prefix. */
export class S3AccountSummaries implements AccountSummaryStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async put(summary: AccountSummary): Promise<void> {
    const key = accountReportPrefix(summary.account) + ACCOUNT_SUMMARY_KEY;
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: JSON.stringify(summary),
          ContentType: 'application/json; charset=utf-8',
        }),
      );
    } catch (error) {
      throw new ReportStoreError(`could not write s3://${this.bucket}/${key}: ${describe(error)}`, {
        cause: error,
      });
    }
  }

  async get(account: string): Promise<AccountSummary | null> {
    const key = accountReportPrefix(account) + ACCOUNT_SUMMARY_KEY;
    const text = await getText(this.client, this.bucket, key);
    return text === null ? null : parseAccountSummary(text, `s3://${this.bucket}/${key}`);
  }
}

/** Reads the deployment's accounts from the report bucket; the stack writes them there at deploy. */
export async function readS3AccountDirectory(client: S3Client, bucket: string): Promise<AccountDirectory> {
  const where = `s3://${bucket}/${ACCOUNT_DIRECTORY_KEY}`;
  const text = await getText(client, bucket, ACCOUNT_DIRECTORY_KEY);
  if (text === null)
    throw new ReportStoreError(`${where} is missing: the deploy writes it; deploy the stack again`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ReportStoreError(`${where} is not JSON (${(error as Error).message}); deploy the stack again`);
  }
  const parsed = AccountDirectorySchema.safeParse(value);
  if (!parsed.success)
    throw new ReportStoreError(
      `${where} is not a list of accounts (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}); deploy the stack again`,
    );
  return parsed.data;
}

async function getText(client: S3Client, bucket: string, key: string): Promise<string | null> {
  try {
    const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return (await answer.Body?.transformToString('utf-8')) ?? '';
  } catch (error) {
    if (error instanceof NoSuchKey || (error as Error).name === 'NoSuchKey') return null;
    throw new ReportStoreError(`could not read s3://${bucket}/${key}: ${describe(error)}`, { cause: error });
  }
}

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
 */
export function awsAccountScanDeps(
  ssm: SSMClient,
  s3: S3Client,
  env: NodeJS.ProcessEnv,
  bucket: string | undefined,
): AccountScanDeps {
  const sources = new Map<string, SsmSecretSource>();
  return {
    directory: bucket
      ? () => readS3AccountDirectory(s3, bucket)
      : () =>
          Promise.reject(
            new ConfigError(
              `${REPORT_ENV.bucket} is not set: the scan of an account checks its input against the deployment's ${ACCOUNT_DIRECTORY_KEY} in the report bucket`,
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
          reports: (account: string) => new S3ReportStore(s3, bucket, accountReportPrefix(account)),
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
