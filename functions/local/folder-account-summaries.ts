import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAccountSummary, ReportStoreError } from '../core/memory/report-store';
import {
  ACCOUNT_SUMMARY_KEY,
  type AccountSummary,
  type AccountSummaryStore,
  accountReportPrefix,
} from '../core/scan/accounts';
import { readReportFile } from './folder-report-store';

/** The summaries in a report folder: `<root>/accounts/<name>/summary.json`. */
export class FolderAccountSummaries implements AccountSummaryStore {
  constructor(private readonly root: string) {}

  async put(summary: AccountSummary): Promise<void> {
    const dir = join(this.root, accountReportPrefix(summary.account));
    const target = join(dir, ACCOUNT_SUMMARY_KEY);
    const temp = `${target}.${process.pid}.tmp`;
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(temp, JSON.stringify(summary), { mode: 0o600 });
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw new ReportStoreError(`could not write ${target}: ${(error as Error).message}`, { cause: error });
    }
  }

  async get(account: string): Promise<AccountSummary | null> {
    const path = join(this.root, accountReportPrefix(account), ACCOUNT_SUMMARY_KEY);
    const text = await readReportFile(path);
    return text === null ? null : parseAccountSummary(text, path, account);
  }
}
