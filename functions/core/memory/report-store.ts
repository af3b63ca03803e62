import { SentinelError } from '../base/errors';
import { notJsonReason } from '../base/json';
import { type AccountSummary, AccountSummarySchema } from '../scan/accounts';
import type { Report } from '../scan/scan';
import { ReportTextError, readReportText, reportLines } from './report-json';
import { type ReportView, ReportViewBuilder, ViewDataError, type ViewSelection, viewOf } from './report-view';

/**
 * Where the latest full report is kept for the report page and the calendar feed: a folder beside
 * the state file on a laptop, an S3 bucket in AWS (functions/local/folder-report-store.ts,
 * functions/aws/s3-report-store.ts).
 */
export interface ReportStore {
  /** For messages: the folder or `s3://bucket/prefix`. */
  readonly location: string;
  /** Keeps `report` as the latest (and its view, see {@link LATEST_VIEW_KEY}), written in pieces. */
  put(report: Report): Promise<void>;
  /**
   * What the page or the feed shows of the report last put, read one element at a time: from the
   * view kept beside it, or (a filter) from the report.
   */
  view(selection: ViewSelection): Promise<ReportView | null>;
  /**
   * The report last put, whole, for a program (`report.json`, the claim check of an alert too small
   * for it): its `generated_at` and its stored text, or a short-lived URL to fetch the text from
   * (S3: no Lambda answer holds a large report). Null before the first. The text or the URL is of
   * that report, never of one a scan put after it: null once it is no longer kept.
   *
   * @param of the report an alert was made from (its `generated_at`): where an older report is
   *   still kept (S3's `reports/`), that one, so an alert read after the next scan still finds the
   *   rest of its own report; a folder keeps the latest alone.
   */
  whole(of?: string): Promise<WholeReport | null>;
}

/** Where the whole stored report is: its time, and its text or a URL that serves it. */
export interface WholeReport {
  readonly generated_at: string;
  /** The stored text of this report (a folder), or null once a newer one replaced it. */
  readonly text?: () => Promise<string | null>;
  /**
   * A short-lived URL that serves this report's stored text (S3, presigned: its copy under
   * `reports/`, which no scan overwrites), or null once that copy expired. Good for `method` alone
   * (S3 signs the method: a URL presigned for GET answers HEAD 403), GET unless told.
   */
  readonly url?: (method?: 'GET' | 'HEAD') => Promise<string | null>;
}

/** How long a presigned URL to the whole report stays valid: long enough to follow a redirect. */
export const WHOLE_REPORT_URL_SECONDS = 300;

/**
 * The `generated_at` of stored report text from its first line (the stored form puts the small
 * fields before the lists, see report-json.ts); null when the text does not start as a report does.
 */
export function generatedAtOf(head: string): string | null {
  const line = head.split('\n', 1)[0] ?? '';
  const opening = /,?"(?:findings|problems|changes|resolved)":\[$/.exec(line);
  if (!opening) return null;
  try {
    const value = JSON.parse(`${line.slice(0, opening.index)}}`) as { generated_at?: unknown };
    return typeof value.generated_at === 'string' ? value.generated_at : null;
  } catch {
    return null;
  }
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
/**
 * The latest report as the page and the feed read it (report-view.ts): the critical and warning
 * findings an answer can show, the first info findings, the rest counted. At 1 000 000 domains some 16 MB beside a
 * report of 100 MB, so the web function reads a sixth of it; only a filter reads the report.
 */
export const LATEST_VIEW_KEY = 'latest-view.json';
/**
 * A report's `generated_at` as a scan writes it (Date's ISO form): what a link's `of`, which is not
 * signed, must be before it names a key under `reports/`.
 */
export const REPORT_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z$/;

/** Where each report is kept as well, by its time; the bucket's lifecycle rule expires them. */
export const reportHistoryKey = (report: Pick<Report, 'generated_at'>) =>
  `reports/${report.generated_at.replace(/[:.]/g, '-')}.json`;

/**
 * The stored report is not a report the page and the feed can show: not JSON, or a field they
 * rely on is missing or wrong. Nothing but the next scan mends it, so it is answered with 503 and
 * logged as an error (the ops alarm sees it), never as the page it cannot be.
 */
export class DamagedReportError extends ReportStoreError {
  override readonly name: string = 'DamagedReportError';
}

/**
 * Reads stored report text (a report or a view, in the stored form) into the view `selection`
 * asks for. What is not a report the page and the feed can show is refused as
 * DamagedReportError, with the place and the reason.
 */
export async function viewFromText(
  chunks: AsyncIterable<string>,
  selection: ViewSelection,
  where: string,
): Promise<ReportView> {
  const builder = new ReportViewBuilder(selection);
  try {
    await readReportText(chunks, builder);
    return builder.result();
  } catch (error) {
    if (error instanceof ReportTextError && /is not JSON/.test(error.message))
      throw new DamagedReportError(`the report in ${where} is not JSON (${error.message})`, { cause: error });
    if (error instanceof ReportTextError || error instanceof ViewDataError)
      throw new DamagedReportError(
        `the report in ${where} is not a domain-sentinel report (${error.message})`,
        { cause: error },
      );
    throw error;
  }
}

/**
 * The two texts a report is kept as: the report in its stored form, and its view (what the page
 * and the feed show without a filter). Each is made in pieces, as often as it is written: never
 * held whole (at 1 000 000 domains the report is some 100 MB).
 */
export function reportTexts(report: Report): {
  report: () => Iterable<string>;
  view: () => Iterable<string>;
} {
  const view = viewOf(report, { purpose: 'page' });
  return { report: () => reportLines(report), view: () => reportLines(view) };
}

/** Bytes read to find a stored report's `generated_at`: its first line, the small fields, is far shorter. */
export const REPORT_HEAD_BYTES = 64 * 1024;

/** Account `account`'s summary as stored beside its report (JSON); the error names `where` when it is not one, or not its. */
export function parseAccountSummary(text: string, where: string, account: string): AccountSummary {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ReportStoreError(`the account summary in ${where} is not JSON (${notJsonReason(error)})`);
  }
  const parsed = AccountSummarySchema.safeParse(value);
  if (!parsed.success)
    throw new ReportStoreError(
      `the account summary in ${where} is not one (${parsed.error.issues[0]?.message})`,
    );
  // Copied from another account's folder or prefix: its counts are that account's, not this one's.
  if (parsed.data.account !== account)
    throw new ReportStoreError(
      `the account summary in ${where} is of account ${parsed.data.account}, not ${account}`,
    );
  return parsed.data;
}
