import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { DEFAULT_POLICY } from '../../functions/core/findings/classify';
import { ResellerClient } from '../../functions/core/reseller/client';
import { loadScanSettings, settingsFromEnv } from '../../functions/core/scan/config';
import { scanAccount } from '../../functions/core/scan/scan';
import { FileStateStore } from '../../functions/local/file-state-store';
import type { Portfolio, RawRecord } from '../../functions/simulator/portfolio';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../functions/simulator/server';
import { runStatefulScan } from '../../functions/use-cases/stateful-scan';
import { DEFAULT_STATE_POLICY } from '../support/whole-state';

/**
 * After a whole read, the remembered domains it did not list are looked up by name before they are
 * announced as gone. The API documentation does not say what a `domain_name` search without a hit
 * answers, nor that every server searches by it: a server that answers such a search 404, or one
 * that ignores the parameter (and answers each lookup with the whole account), must not keep a
 * domain that really left from being announced, run after run.
 */

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const KEY = 'sk_unlisted_lookups_4f2a91';

const record = (name: string): RawRecord => ({
  domain_name: name,
  status: ['registered'],
  date_expiry: '2028-01-01T00:00:00Z',
  auto_renew: true,
});
const names = (n: number) => Array.from({ length: n }, (_, i) => `d${String(i).padStart(4, '0')}.nl`);
const portfolio = (domains: readonly string[]): Portfolio => ({
  domains: domains.map(record),
  contacts: [],
  truth: { findings: [], problems: [] },
});

let dir: string;
let sim: Simulator | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sentinel-unlisted-'));
});
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function simulator(domains: readonly string[], options: Partial<SimulatorOptions> = {}) {
  sim = await startSimulator({ portfolio: portfolio(domains), apiKey: KEY, ...options });
  return sim;
}

function scan(store: FileStateStore, url: string, now: number) {
  return runStatefulScan({
    job: {
      settings: loadScanSettings(settingsFromEnv({ RESELLER_BASE_URL: url, SCAN_MODE: 'full' })),
      secrets: new EnvSecretSource({ RESELLER_API_KEY: KEY }),
      now,
    },
    store,
    policy: DEFAULT_STATE_POLICY,
    publish: async () => ({ messageId: 'm', findingsCut: 0 }),
  });
}

const changesOf = (report: { changes: ReadonlyArray<{ domain_name: string; kind: string }> }) =>
  report.changes.map((c) => `${c.domain_name} ${c.kind}`);
const lookups = (s: Simulator) => s.requests.filter((r) => r.query.has('domain_name'));
const domainRequests = (s: Simulator) => s.requests.filter((r) => r.path === '/v2/domains').length;

describe('a server that answers a domain_name search without a hit 404', () => {
  it('announces a domain that left, once a search for a domain the read listed finds it', async () => {
    const s = await simulator(['a.nl', 'gone.nl', 'z.nl'], { notFoundWithoutHit: true });
    const store = new FileStateStore(join(dir, 'state.json'));
    await scan(store, s.url, NOW);
    s.updateDomain('gone.nl', null);

    const { result } = await scan(store, s.url, NOW + DAY);
    expect(result.report.source.incomplete).toBeUndefined();
    expect(changesOf(result.report)).toEqual(['gone.nl left_account']);
    // Both spellings of gone.nl answered 404; one search for a.nl (the control) answered it.
    expect(lookups(s).map((r) => r.query.get('domain_name'))).toEqual(['gone.nl', 'gone.nl.', 'a.nl']);
  });

  it('judges nobody gone, marked incomplete, when the search for a domain the read listed is answered 404 too', async () => {
    const s = await simulator(['a.nl', 'gone.nl', 'z.nl']);
    const store = new FileStateStore(join(dir, 'state.json'));
    await scan(store, s.url, NOW);
    s.updateDomain('gone.nl', null);
    s.injectFault({
      fault: { kind: 'status', status: 404 },
      match: (r) => r.query.has('domain_name'),
      times: 100,
    });

    const { result } = await scan(store, s.url, NOW + DAY);
    expect(result.report.source.incomplete).toMatch(
      /^the domains the read did not list could not be looked up \(not found \(HTTP 404\): domain list page 1.*; a search for a\.nl, which the read listed, failed too \(not found \(HTTP 404\).*\), so its 404 does not say a domain is not there\): the domains read were checked, but none is judged to have left the account$/,
    );
    expect(changesOf(result.report)).toEqual([]);
    // gone.nl in two spellings, then a.nl: its 404 settles it, z.nl (the last listed) is not asked.
    expect(lookups(s)).toHaveLength(3);
  });
});

describe('a server that answers 404 without a hit, whose first listed name cannot be searched', () => {
  // a.nl, the first name the read lists, is answered 400 or 422 (a name its search refuses): with it
  // the only check of the search, gone.nl was never announced, run after run. (A 404 for a.nl is
  // another matter: it shows the server's 404 is not "no hit", tested above.)
  const refusing = (s: Simulator, status: number, name = 'a.nl') =>
    s.injectFault({
      fault: { kind: 'status', status },
      match: (r) => (r.query.get('domain_name') ?? '').startsWith(name),
      times: 100,
    });

  it.each([400, 422])(
    'announces a domain that left once a search for another listed name finds it (%i)',
    async (status) => {
      const s = await simulator(['a.nl', 'gone.nl', 'z.nl'], { notFoundWithoutHit: true });
      const store = new FileStateStore(join(dir, 'state.json'));
      await scan(store, s.url, NOW);
      s.updateDomain('gone.nl', null);
      refusing(s, status);

      const { result } = await scan(store, s.url, NOW + DAY);
      expect(result.report.source.incomplete).toBeUndefined();
      expect(changesOf(result.report)).toEqual(['gone.nl left_account']);
      expect(lookups(s).map((r) => r.query.get('domain_name'))).toEqual([
        'gone.nl',
        'gone.nl.',
        'a.nl',
        'z.nl',
      ]);
    },
  );

  it('judges nobody gone, marked incomplete, when neither listed name searched is found', async () => {
    const s = await simulator(['a.nl', 'gone.nl', 'z.nl'], { notFoundWithoutHit: true });
    const store = new FileStateStore(join(dir, 'state.json'));
    await scan(store, s.url, NOW);
    s.updateDomain('gone.nl', null);
    refusing(s, 400);
    refusing(s, 404, 'z.nl');

    const { result } = await scan(store, s.url, NOW + DAY);
    expect(result.report.source.incomplete).toMatch(
      /; a search for a\.nl, which the read listed, failed too \(.*HTTP 400.*\), and a search for z\.nl, which the read listed, failed too \(.*HTTP 404.*\), so its 404 does not say a domain is not there\)/,
    );
    expect(changesOf(result.report)).toEqual([]);
  });

  it('checks the search once when the read listed one name only', async () => {
    const s = await simulator(['a.nl', 'gone.nl'], { notFoundWithoutHit: true });
    const store = new FileStateStore(join(dir, 'state.json'));
    await scan(store, s.url, NOW);
    s.updateDomain('gone.nl', null);
    refusing(s, 400);

    const { result } = await scan(store, s.url, NOW + DAY);
    expect(result.report.source.incomplete).toMatch(
      /; a search for a\.nl, which the read listed, failed too \(.*\), so its 404/,
    );
    expect(lookups(s).map((r) => r.query.get('domain_name'))).toEqual(['gone.nl', 'gone.nl.', 'a.nl']);
  });
});

describe('a server that ignores domain_name', () => {
  const ignoring = { searchSemantics: 'ignore', ignoredSearchParameters: ['domain_name'] } as const;

  it('announces the domains that left after one whole read more, not a whole read per name and spelling', async () => {
    // 2 000 domains, 20 pages: ten names looked up one by one, two spellings each, would read the
    // whole account 20 times (some 400 requests).
    const all = names(2_000);
    const s = await simulator(all, ignoring);
    const store = new FileStateStore(join(dir, 'state.json'));
    await scan(store, s.url, NOW);
    const firstScan = domainRequests(s);
    const left = all.filter((_, i) => i % 150 === 7);
    for (const name of left) s.updateDomain(name, null);

    const before = s.requests.length;
    const { result } = await scan(store, s.url, NOW + DAY);
    expect(result.report.source.incomplete).toBeUndefined();
    expect(changesOf(result.report)).toEqual(left.map((name) => `${name} left_account`));
    // The read (1 990 domains: 20 pages, the last not full, and page 1 sorted the other way), one
    // lookup (its page 1 lists other names), and one whole read of the domain list with its other
    // end; the first scan's 20 pages, the empty 21st and page 1 sorted the other way (its last
    // page was full).
    const domainsRead = s.requests.slice(before).filter((r) => r.path === '/v2/domains').length;
    expect(firstScan).toBe(22);
    expect(lookups(s)).toHaveLength(1);
    expect(domainsRead).toBe(20 + 1 + 1 + 20 + 1);
  });

  it('does not judge gone a domain the whole read lists after all, and reads the account once more', async () => {
    const all = names(2_000);
    const s = await simulator(all, ignoring);
    const client = new ResellerClient({ baseUrl: s.url, apiKey: KEY });
    // d1999.nl is in the account (the read missed it as the pages moved); the others left.
    const report = await scanAccount({
      client,
      now: NOW,
      policy: DEFAULT_POLICY,
      mode: 'full',
      unlisted: async () => ['gone1.nl', 'gone2.nl', 'gone3.nl', 'd1999.nl'],
    });
    expect(report.source.incomplete).toMatch(
      /^d1999\.nl is in the account, but the pages read did not list it/,
    );
    // Each of the two reads: 20 pages and the empty one after them, one lookup, and one whole read
    // more (which stops at page 20, where it finds d1999.nl; the page after it may have left).
    expect(lookups(s)).toHaveLength(2);
    expect(domainRequests(s)).toBeGreaterThanOrEqual(2 * (21 + 1 + 20));
    expect(domainRequests(s)).toBeLessThanOrEqual(2 * (21 + 1 + 21));
  });
});
