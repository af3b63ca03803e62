import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { loadScanSettings, settingsFromEnv } from '../../functions/core/scan/config';
import { FileStateStore } from '../../functions/local/file-state-store';
import { runStatefulScan } from '../../functions/use-cases/stateful-scan';
import { DEFAULT_STATE_POLICY } from '../support/whole-state';

/**
 * The reseller's list is read by page number. A domain that leaves a page already read while the
 * scan reads on slides every later page back by one: the record that opened the next page lands
 * on the page before, unread, and the totals still agree when another domain arrives meanwhile.
 * With memory, that record's domain would be announced as gone (critical) and its quarantine
 * resolved; it is looked up by name first, and the account is read again.
 */

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const PER_PAGE = 2;
const BASE = 'https://api.churn.test';

const healthy = (name: string) => ({
  domain_name: name,
  status: ['registered'],
  date_expiry: '2028-01-01T00:00:00Z',
  auto_renew: true,
});
const quarantined = {
  domain_name: 'c-quarantined.nl',
  status: ['quarantine'],
  date_expiry: '2026-10-01T00:00:00Z',
  date_deleted: '2026-11-01T00:00:00Z',
  auto_renew: false,
};

/** One page of the domain or contact list, as the reseller answers it. */
const body = (data: unknown[], page: number, total: number) =>
  new Response(
    JSON.stringify({
      data,
      pagination: {
        current_page: page,
        per_page: PER_PAGE,
        total_pages: Math.max(1, Math.ceil(total / PER_PAGE)),
        total_results: total,
      },
    }),
    { status: 200 },
  );

/** A reseller whose account changes once, right after page 1 of the next full read is served (`churn`). */
function reseller(names: string[]) {
  let account = [...names.map((n) => (n === quarantined.domain_name ? quarantined : healthy(n)))];
  const state = { churnNext: false, lookups: [] as string[], pageReads: 0 };
  const fetch = (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    if (url.pathname === '/v2/contacts') return body([], 1, 0);
    const name = url.searchParams.get('domain_name');
    if (name !== null) {
      state.lookups.push(name);
      const found = account.filter((d) => d.domain_name === name);
      return body(found, 1, found.length);
    }
    state.pageReads++;
    const page = Number(url.searchParams.get('page'));
    // Sorted as asked: page 1 sorted the other way (-domain_name) holds the end of the account.
    const sorted = url.searchParams.get('sort') === '-domain_name' ? [...account].reverse() : account;
    const served = body(sorted.slice((page - 1) * PER_PAGE, page * PER_PAGE), page, account.length);
    if (page === 1 && state.churnNext) {
      state.churnNext = false;
      // a.nl leaves (transferred out), zz-new.nl arrives: the totals stay the same.
      account = [...account.filter((d) => d.domain_name !== 'a.nl'), healthy('zz-new.nl')];
    }
    return served;
  }) as typeof globalThis.fetch;
  return { fetch, state, remove: (n: string) => (account = account.filter((d) => d.domain_name !== n)) };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sentinel-churn-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function scan(store: FileStateStore, fetch: typeof globalThis.fetch, now: number) {
  return runStatefulScan({
    job: {
      settings: loadScanSettings(
        settingsFromEnv({ RESELLER_BASE_URL: BASE, PER_PAGE: String(PER_PAGE), CONCURRENCY: '1' }),
      ),
      secrets: new EnvSecretSource({ RESELLER_API_KEY: 'sk_churn_0123456789abcdef' }),
      now,
      fetch,
    },
    store,
    policy: DEFAULT_STATE_POLICY,
    publish: async () => ({ messageId: 'm', findingsCut: 0 }),
  });
}

describe('a full read while a domain leaves an earlier page and another arrives', () => {
  it('reads the account again rather than announce a domain it holds as gone', async () => {
    const account = reseller(['a.nl', 'b.nl', 'c-quarantined.nl', 'd.nl', 'e.nl', 'f.nl']);
    const store = new FileStateStore(join(dir, 'state.json'));
    await scan(store, account.fetch, NOW);
    const readsBefore = account.state.pageReads;

    account.state.churnNext = true;
    const { result } = await scan(store, account.fetch, NOW + DAY);
    // The first read missed c-quarantined.nl; looked up by name, it was there: read again (3 pages).
    // Each read's last page is full, so each asks the page after it too, and page 1 sorted the other
    // way (f.nl and zz-new.nl, both read: the end of the account moved no name out of sight).
    expect(account.state.lookups).toContain('c-quarantined.nl');
    expect(account.state.pageReads - readsBefore).toBe(3 + 1 + 1 + 3 + 1 + 1);
    const changes = result.report.changes.map((c) => `${c.domain_name} ${c.kind}`);
    expect(changes).toEqual(['a.nl left_account']);
    expect(result.report.resolved.map((r) => r.domain_name)).not.toContain('c-quarantined.nl');
    expect(result.report.findings).toContainEqual(
      expect.objectContaining({ domain_name: 'c-quarantined.nl', kind: 'quarantine', change: 'ongoing' }),
    );
  });

  it('announces a domain that really left after one lookup, and looks up at most ten of many', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `d${String(i).padStart(2, '0')}.nl`);
    const account = reseller(names);
    const store = new FileStateStore(join(dir, 'state.json'));
    await scan(store, account.fetch, NOW);
    for (const name of names.slice(0, 14)) account.remove(name);
    const readsBefore = account.state.pageReads;

    const { result } = await scan(store, account.fetch, NOW + DAY);
    // One read of 8 full pages, the empty page after them and page 1 sorted the other way, ten
    // lookups (each spelling of a plain name: the name, the name with a trailing dot).
    expect(account.state.pageReads - readsBefore).toBe(8 + 1 + 1);
    expect(new Set(account.state.lookups.map((n) => n.replace(/\.$/, ''))).size).toBe(10);
    expect(result.report.changes.filter((c) => c.kind === 'left_account')).toHaveLength(14);
  });
});

describe('an account that changes on every read (faster than it can be read)', () => {
  /** Six domains, two a page; each read of page 1 makes the first domain leave, so later pages shift. */
  function shrinking() {
    let account = ['a.nl', 'b.nl', 'c-quarantined.nl', 'd.nl', 'e.nl', 'f.nl'].map(healthy);
    const state = { churn: false, quarantine: false };
    const fetch = (async (input: string | URL | Request) => {
      const url = new URL(String(input));
      if (url.pathname === '/v2/contacts') return body([], 1, 0);
      const name = url.searchParams.get('domain_name');
      if (name !== null) return body([], 1, 0);
      const page = Number(url.searchParams.get('page'));
      const records = account.map((d) =>
        state.quarantine && d.domain_name === quarantined.domain_name ? quarantined : d,
      );
      const served = body(records.slice((page - 1) * PER_PAGE, page * PER_PAGE), page, records.length);
      if (page === 1 && state.churn) account = account.slice(1);
      return served;
    }) as typeof globalThis.fetch;
    return { fetch, state };
  }

  it('alerts what it read, marked incomplete, judges nobody gone, and saves its memory', async () => {
    const account = shrinking();
    const store = new FileStateStore(join(dir, 'state.json'));
    await scan(store, account.fetch, NOW);

    // Now a.nl leaves on the first read and b.nl on the second: d.nl slides onto a page already read.
    account.state.churn = true;
    account.state.quarantine = true;
    const { result, published, saved } = await scan(store, account.fetch, NOW + DAY);
    expect(result.report.source.incomplete).toMatch(
      /^the domain list changed while it was read \(total_results changed from 5 to 4/,
    );
    // The quarantine read on page 1 is news, and goes out; d.nl (unread) and a.nl (gone) are not judged.
    expect(result.report.findings).toContainEqual(
      expect.objectContaining({ domain_name: 'c-quarantined.nl', kind: 'quarantine', change: 'new' }),
    );
    // What it read of c-quarantined.nl is said now: the memory it saves no longer shows the change.
    expect(result.report.changes.map((c) => `${c.domain_name} ${c.kind}`)).toEqual([
      'c-quarantined.nl auto_renew_turned_off',
    ]);
    expect(result.report.resolved).toEqual([]);
    expect(result.publish).toBe(true);
    expect(published).not.toBeNull();
    expect(saved).toBe(true);

    // A quiet day: read whole, the two that really left are announced, and d.nl was never lost.
    account.state.churn = false;
    const calm = await scan(store, account.fetch, NOW + 2 * DAY);
    expect(calm.result.report.source.incomplete).toBeUndefined();
    expect(calm.result.report.changes.map((c) => `${c.domain_name} ${c.kind}`)).toEqual([
      'a.nl left_account',
      'b.nl left_account',
    ]);
    expect(calm.result.report.findings).toContainEqual(
      expect.objectContaining({ domain_name: 'c-quarantined.nl', change: 'ongoing' }),
    );
  });
});
