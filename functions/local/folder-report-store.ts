import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DamagedReportError,
  generatedAtOf,
  LATEST_REPORT_KEY,
  LATEST_VIEW_KEY,
  REPORT_HEAD_BYTES,
  type ReportStore,
  ReportStoreError,
  reportTexts,
  viewFromText,
  type WholeReport,
} from '../core/memory/report-store';
import type { ReportView, ViewSelection } from '../core/memory/report-view';
import type { Report } from '../core/scan/scan';

/** The latest report in a folder: each text written to a temporary file, flushed, then renamed over the old one. */
export class FolderReportStore implements ReportStore {
  constructor(readonly location: string) {}

  async put(report: Report): Promise<void> {
    const made = reportTexts(report);
    for (const [name, pieces] of [
      [LATEST_REPORT_KEY, made.report],
      [LATEST_VIEW_KEY, made.view],
    ] as const) {
      const target = join(this.location, name);
      const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        await mkdir(this.location, { recursive: true });
        const file = await open(temp, 'wx', 0o600);
        try {
          for (const piece of pieces()) await file.write(piece);
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
  }

  async whole(): Promise<WholeReport | null> {
    const path = join(this.location, LATEST_REPORT_KEY);
    let head: string;
    try {
      const file = await open(path, 'r');
      try {
        const buffer = Buffer.alloc(REPORT_HEAD_BYTES);
        const { bytesRead } = await file.read(buffer, 0, REPORT_HEAD_BYTES, 0);
        head = buffer.subarray(0, bytesRead).toString('utf8');
      } finally {
        await file.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new ReportStoreError(`could not read ${path}: ${(error as Error).message}`, { cause: error });
    }
    const generated = generatedAtOf(head);
    if (generated === null)
      throw new DamagedReportError(`the report in ${path} is not a domain-sentinel report (no generated_at)`);
    // The folder keeps the latest alone: a scan that saved since is a newer report, never served for this one.
    const text = async () => {
      const now = await readReportFile(path);
      return now !== null && generatedAtOf(now.slice(0, REPORT_HEAD_BYTES)) === generated ? now : null;
    };
    return { generated_at: generated, text };
  }

  async view(selection: ViewSelection): Promise<ReportView | null> {
    // A filter reads the report; the page and the feed read the view kept beside it.
    for (const name of [selection.query?.trim() ? LATEST_REPORT_KEY : LATEST_VIEW_KEY]) {
      const path = join(this.location, name);
      const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 });
      try {
        await new Promise<void>((resolve, reject) => {
          stream.once('open', () => resolve());
          stream.once('error', reject);
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw new ReportStoreError(`could not read ${path}: ${(error as Error).message}`, { cause: error });
      }
      try {
        return await viewFromText(stream as AsyncIterable<string>, selection, path);
      } finally {
        stream.destroy();
      }
    }
    return null;
  }
}

/** A file of the report folder as text, or null when there is none yet; any other failure is a ReportStoreError. */
export async function readReportFile(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ReportStoreError(`could not read ${path}: ${(error as Error).message}`, { cause: error });
  }
}
