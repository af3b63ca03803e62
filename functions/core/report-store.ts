import * as z from 'zod';
import { SentinelError } from './errors';
import type { Report } from './scan';

/**
 * Where the latest full report is kept for the report page and the calendar feed: a folder beside
 * the state file on a laptop, an S3 bucket in AWS (functions/adapters/report-stores.ts).
 */
export interface ReportStore {
  /** For messages: the folder or `s3://bucket/prefix`. */
  readonly location: string;
  put(report: Report): Promise<void>;
  /** The report last put, or null before the first. */
  latest(): Promise<Report | null>;
}

/** A report could not be kept or read back. */
export class ReportStoreError extends SentinelError {
  override readonly name: string = 'ReportStoreError';
}

/** Environment of the report store, shared by the functions, the constructs and the command line. */
export const REPORT_ENV = {
  /** Bucket of the S3 store (the stack sets it). */
  bucket: 'REPORT_BUCKET',
  /** Folder of the local store; defaults to one beside the state file. */
  dir: 'REPORT_DIR',
} as const;

/** The object key (S3) or file name (folder) of the latest report. */
export const LATEST_REPORT_KEY = 'latest.json';
/** Where each report is kept as well, by its time; the bucket's lifecycle rule expires them. */
export const reportHistoryKey = (report: Report) =>
  `reports/${report.generated_at.replace(/[:.]/g, '-')}.json`;

// Only what the page and the feed rely on is checked; the rest is kept as it was written.
const StoredReport = z
  .object({
    generated_at: z.string(),
    now: z.string(),
    summary: z.object({ critical: z.number(), warning: z.number(), info: z.number() }),
    findings: z.array(z.object({ kind: z.string(), severity: z.string() }).passthrough()),
    problems: z.array(z.unknown()),
  })
  .passthrough();

/** Parses a stored report; one that is not a report fails with the place and the reason. */
export function parseStoredReport(text: string, where: string): Report {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ReportStoreError(`the report in ${where} is not JSON (${(error as Error).message})`, {
      cause: error,
    });
  }
  const parsed = StoredReport.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ReportStoreError(
      `the report in ${where} is not a domain-sentinel report (${issue ? `${issue.path.join('.') || 'root'}: ${issue.message}` : 'invalid'})`,
    );
  }
  return parsed.data as unknown as Report;
}
