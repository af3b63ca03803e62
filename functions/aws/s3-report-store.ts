import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import {
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { errorLine } from '../core/base/errors';
import {
  DamagedReportError,
  generatedAtOf,
  LATEST_REPORT_KEY,
  LATEST_VIEW_KEY,
  REPORT_HEAD_BYTES,
  REPORT_TIME,
  type ReportStore,
  ReportStoreError,
  reportHistoryKey,
  reportTexts,
  viewFromText,
  WHOLE_REPORT_URL_SECONDS,
  type WholeReport,
} from '../core/memory/report-store';
import type { ReportView, ViewSelection } from '../core/memory/report-view';
import type { Report } from '../core/scan/scan';
import { type SdkTimeouts, uploadTimeoutMs } from './sdk-timeouts';

/**
 * Whether S3 answered that the object is not there: NoSuchKey to a GET; to a HEAD (`head`), which
 * has no body to name the error in, NotFound.
 */
export const noSuchObject = (error: unknown, head = false): boolean =>
  error instanceof NoSuchKey ||
  (error as Error)?.name === 'NoSuchKey' ||
  (head && (error instanceof NotFound || (error as Error)?.name === 'NotFound'));

/** Length and CRC32 (base64, as S3 takes it) of a text made in pieces, from one pass over it. */
function measure(pieces: Iterable<string>): { length: number; crc32: string } {
  let length = 0;
  let crc = 0;
  for (const piece of pieces) {
    const bytes = Buffer.from(piece, 'utf8');
    length += bytes.length;
    crc = crc32(bytes, crc);
  }
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc >>> 0);
  return { length, crc32: out.toString('base64') };
}

/**
 * The latest report in S3 as `latest.json` with its view beside it (`latest-view.json`), and each
 * report under `reports/` as well, where the bucket's lifecycle rule expires it. Encrypted at rest
 * by the bucket's own default. Each object is streamed with its length and CRC32 given (measured
 * in a first pass), so S3 checks what it received and nothing holds the text whole.
 */
export class S3ReportStore implements ReportStore {
  readonly location: string;

  /**
   * @param prefix where this store's keys start (an account's own folder, see accountReportPrefix); '' for the bucket's root
   * @param uploads the client's timeouts, when it has any: each report's PutObject is then given the
   *   time its size takes at their slowest pace (uploadTimeoutMs), not the client's time for a small call
   */
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix = '',
    private readonly uploads?: SdkTimeouts,
  ) {
    this.location = `s3://${bucket}${prefix ? `/${prefix.replace(/\/$/, '')}` : ''}`;
  }

  async put(report: Report): Promise<void> {
    const made = reportTexts(report);
    const whole = measure(made.report());
    try {
      // History first: a latest.json never points past what the history holds; the view last.
      for (const [key, pieces, size] of [
        [reportHistoryKey(report), made.report, whole],
        [LATEST_REPORT_KEY, made.report, whole],
        [LATEST_VIEW_KEY, made.view, measure(made.view())],
      ] as const) {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: this.prefix + key,
            Body: Readable.from(
              (function* () {
                for (const piece of pieces()) yield Buffer.from(piece, 'utf8');
              })(),
            ),
            ContentLength: size.length,
            ChecksumCRC32: size.crc32,
            ContentType: 'application/json; charset=utf-8',
          }),
          this.uploads ? { requestTimeout: uploadTimeoutMs(this.uploads, size.length) } : {},
        );
      }
    } catch (error) {
      throw new ReportStoreError(`could not write the report to ${this.location}: ${errorLine(error)}`, {
        cause: error,
      });
    }
  }

  async whole(of?: string): Promise<WholeReport | null> {
    const key = this.prefix + LATEST_REPORT_KEY;
    let head: string;
    try {
      // The first line holds the small fields: a range read, never the whole report.
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=0-${REPORT_HEAD_BYTES - 1}` }),
      );
      head = (await answer.Body?.transformToString('utf-8')) ?? '';
    } catch (error) {
      if (noSuchObject(error)) return null;
      throw new ReportStoreError(`could not read the report from ${this.location}: ${errorLine(error)}`, {
        cause: error,
      });
    }
    const generated = generatedAtOf(head);
    if (generated === null)
      throw new DamagedReportError(
        `the report in ${this.location}/${LATEST_REPORT_KEY} is not a domain-sentinel report (no generated_at)`,
      );
    // An older report an alert names is served from its copy under reports/ while the lifecycle
    // rule keeps it (the claim check of an alert read after the next scan); null once it expired.
    const named = of !== undefined && of !== generated && REPORT_TIME.test(of) ? of : generated;
    return { generated_at: named, url: (method) => this.historyUrl(named, method) };
  }

  /**
   * A presigned URL of the report of `generatedAt` as kept under `reports/`: latest.json is
   * overwritten by the next scan, a history object never is, so the URL serves that report even
   * when a scan saves before it is followed. Null once the lifecycle rule expired it. Signed with
   * the web function's own role, which may read latest.json, its view and reports/: the URL can
   * read no more.
   */
  private async historyUrl(generatedAt: string, method: 'GET' | 'HEAD' = 'GET'): Promise<string | null> {
    const key = this.prefix + reportHistoryKey({ generated_at: generatedAt });
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (error) {
      if (noSuchObject(error, true)) return null;
      throw new ReportStoreError(`could not read the report from ${this.location}: ${errorLine(error)}`, {
        cause: error,
      });
    }
    const input = {
      Bucket: this.bucket,
      Key: key,
      ResponseContentType: 'application/json; charset=utf-8',
      ResponseCacheControl: 'no-store',
    };
    // S3 checks the method a URL was signed for: one for GET answers a HEAD 403.
    return getSignedUrl(
      this.client,
      method === 'HEAD' ? new HeadObjectCommand(input) : new GetObjectCommand(input),
      {
        expiresIn: WHOLE_REPORT_URL_SECONDS,
      },
    );
  }

  async view(selection: ViewSelection): Promise<ReportView | null> {
    // A filter reads the report; the page and the feed read the view kept beside it.
    for (const key of [selection.query?.trim() ? LATEST_REPORT_KEY : LATEST_VIEW_KEY]) {
      let body: Readable;
      try {
        const answer = await this.client.send(
          new GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
        );
        body = answer.Body as Readable;
      } catch (error) {
        if (noSuchObject(error)) continue;
        throw new ReportStoreError(`could not read the report from ${this.location}: ${errorLine(error)}`, {
          cause: error,
        });
      }
      body.setEncoding('utf8');
      try {
        return await viewFromText(body as AsyncIterable<string>, selection, `${this.location}/${key}`);
      } finally {
        body.destroy();
      }
    }
    return null;
  }
}
