import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReportStoreError } from '../../functions/core/memory/report-store';
import { FolderAccountSummaries } from '../../functions/local/folder-account-summaries';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'sentinel-summaries-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const summaryOf = (account: string) => ({
  account,
  generated_at: '2026-11-26T06:00:00.000Z',
  summary: { critical: 3, warning: 1, info: 0 },
  problems: 0,
  domains_scanned: 120,
});

describe('the accounts’ summaries in a report folder', () => {
  it('reads back what was put, under its own account', async () => {
    const store = new FolderAccountSummaries(root);
    await store.put(summaryOf('brand-a'));
    expect(await store.get('brand-a')).toEqual(summaryOf('brand-a'));
    expect(await store.get('brand-b')).toBeNull();
  });

  it('refuses a summary of another account found under this one, rather than show its counts under this name', async () => {
    const store = new FolderAccountSummaries(root);
    await store.put(summaryOf('brand-a'));
    // A folder copied by hand to seed a new account: its counts are brand-a's, not brand-b's.
    await mkdir(join(root, 'accounts', 'brand-b'), { recursive: true });
    await copyFile(
      join(root, 'accounts', 'brand-a', 'summary.json'),
      join(root, 'accounts', 'brand-b', 'summary.json'),
    );
    const error = await store.get('brand-b').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReportStoreError);
    expect((error as Error).message).toMatch(
      /^the account summary in .*brand-b.summary\.json is of account brand-a, not brand-b$/,
    );
  });
});
