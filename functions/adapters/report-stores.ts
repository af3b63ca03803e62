import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  LATEST_REPORT_KEY,
  parseStoredReport,
  type ReportStore,
  ReportStoreError,
  reportHistoryKey,
} from '../core/report-store';
import type { Report } from '../core/scan';

/** The latest report in a folder: written to a temporary file, flushed, then renamed over the old one. */
export class FolderReportStore implements ReportStore {
  constructor(readonly location: string) {}

  async put(report: Report): Promise<void> {
    const target = join(this.location, LATEST_REPORT_KEY);
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await mkdir(this.location, { recursive: true });
      const file = await open(temp, 'wx', 0o600);
      try {
        await file.writeFile(JSON.stringify(report));
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw new ReportStoreError(`could not write the report to ${target}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  async latest(): Promise<Report | null> {
    const path = join(this.location, LATEST_REPORT_KEY);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new ReportStoreError(`could not read ${path}: ${(error as Error).message}`, { cause: error });
    }
    return parseStoredReport(text, path);
  }
}

/**
 * The latest report in S3 as `latest.json`, and each report under `reports/` as well, where the
 * bucket's lifecycle rule expires it. Encrypted at rest by the bucket's own default.
 */
export class S3ReportStore implements ReportStore {
  readonly location: string;

  /** @param prefix where this store's keys start (an account's own folder, see accountReportPrefix); '' for the bucket's root */
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix = '',
  ) {
    this.location = `s3://${bucket}${prefix ? `/${prefix.replace(/\/$/, '')}` : ''}`;
  }

  async put(report: Report): Promise<void> {
    const body = JSON.stringify(report);
    try {
      // History first: a latest.json never points past what the history holds.
      for (const key of [reportHistoryKey(report), LATEST_REPORT_KEY].map((k) => this.prefix + k)) {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Body: body,
            ContentType: 'application/json; charset=utf-8',
          }),
        );
      }
    } catch (error) {
      throw new ReportStoreError(`could not write the report to ${this.location}: ${describe(error)}`, {
        cause: error,
      });
    }
  }

  async latest(): Promise<Report | null> {
    let text: string;
    try {
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + LATEST_REPORT_KEY }),
      );
      text = (await answer.Body?.transformToString('utf-8')) ?? '';
    } catch (error) {
      if (error instanceof NoSuchKey || (error as Error).name === 'NoSuchKey') return null;
      throw new ReportStoreError(`could not read the report from ${this.location}: ${describe(error)}`, {
        cause: error,
      });
    }
    return parseStoredReport(text, `${this.location}/${LATEST_REPORT_KEY}`);
  }
}

const describe = (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`;
