import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { errorLine } from '../core/base/errors';
import { notJsonReason } from '../core/base/json';
import { parseAccountSummary, ReportStoreError } from '../core/memory/report-store';
import {
  ACCOUNT_DIRECTORY_KEY,
  ACCOUNT_SUMMARY_KEY,
  type AccountDirectory,
  AccountDirectorySchema,
  type AccountSummary,
  type AccountSummaryStore,
  accountReportPrefix,
} from '../core/scan/accounts';
import { noSuchObject } from './s3-report-store';

/**
 * What the web function knows of several accounts: the deployment's accounts (`accounts.json`,
 * written at deploy) and each account's summary for the overview page (written by its scan beside
 * its latest report), in S3. On a laptop: functions/local/folder-account-summaries.ts.
 */

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
      throw new ReportStoreError(`could not write s3://${this.bucket}/${key}: ${errorLine(error)}`, {
        cause: error,
      });
    }
  }

  async get(account: string): Promise<AccountSummary | null> {
    const key = accountReportPrefix(account) + ACCOUNT_SUMMARY_KEY;
    const text = await getText(this.client, this.bucket, key);
    return text === null ? null : parseAccountSummary(text, `s3://${this.bucket}/${key}`, account);
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
    throw new ReportStoreError(`${where} is not JSON (${notJsonReason(error)}); deploy the stack again`);
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
    if (noSuchObject(error)) return null;
    throw new ReportStoreError(`could not read s3://${bucket}/${key}: ${errorLine(error)}`, { cause: error });
  }
}
