import { afterEach, describe, expect, it } from 'vitest';
import { COVERAGE_PARTS, READ_PARTS } from '../../functions/core/scan/coverage';
import { generatePortfolio, type Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../functions/simulator/server';
import { findingKeys, runCli } from '../support/cli';

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'filtered-mode-key-0d9e';
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

type Mode = 'auto' | 'full' | 'filtered';
type ServerReading = Pick<SimulatorOptions, 'searchSemantics' | 'ignoredSearchParameters'>;
interface JsonReport {
  source: { mode: Mode; read: string; fallback_reason?: string; coverage?: Record<string, number> };
  findings: Array<Record<string, unknown>>;
  problems: Array<{ resource: string; key: string | null; page: number; reason: string }>;
}

/**
 * A portfolio with the edge cases appended (no date_expiry, null date_expiry, auto-renew null or
 * absent, quarantined before expiry with auto-renew on, a failed renewal expiring in 43 days). With `garbledDates`, the stress profile,
 * whose malformed records have a free-text date_expiry no search can select, so they always make
 * the proof fail (the fallback tests); without, the realistic profile, whose malformed records have
 * none (the empty search value selects them).
 */
function portfolioOf(seed: number, domains: number, garbledDates: boolean): Portfolio {
  return generatePortfolio({
    domains,
    seed,
    now: Date.parse(NOW),
    edgeCases: 25,
    profile: garbledDates ? 'stress' : 'realistic',
  });
}

async function scan(portfolio: Portfolio, reading: ServerReading, mode: Mode, json = true) {
  sim = await startSimulator({ portfolio, apiKey: KEY, maxPerPage: 50, ...reading });
  const run = await runCli(
    ['scan', ...(json ? ['--json'] : []), '--dry-run', '--now', NOW, '--mode', mode, '--per-page', '50'],
    { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY },
  );
  const domainRequests = sim.requests.filter((r) => r.path === '/v2/domains').length;
  await sim.close();
  sim = undefined;
  const report = json && run.code === 0 ? (JSON.parse(run.stdout) as JsonReport) : undefined;
  return { run, report, domainRequests };
}

/** Problems by what they say; the page is the page of whichever search read the record. */
const problemKeys = (report: JsonReport | undefined) =>
  (report?.problems ?? []).map((p) => `${p.resource} ${p.key} ${p.reason}`).sort();

const READINGS: ReadonlyArray<readonly [string, ServerReading, boolean]> = [
  ['or', { searchSemantics: 'or' }, true],
  ['and', { searchSemantics: 'and' }, true],
  ['ignore (every search parameter)', { searchSemantics: 'ignore' }, false],
  [
    'ignore (auto_renewal only)',
    { searchSemantics: 'ignore', ignoredSearchParameters: ['auto_renewal'] },
    false,
  ],
  [
    'ignore (date_expiry only)',
    { searchSemantics: 'ignore', ignoredSearchParameters: ['date_expiry'] },
    false,
  ],
  ['ignore (status only)', { searchSemantics: 'ignore', ignoredSearchParameters: ['status'] }, false],
];

describe.each(READINGS)('a server whose search semantics are %s', (_name, reading, provable) => {
  it('auto and filtered give exactly the findings and problems of full mode', async () => {
    const portfolio = portfolioOf(2, 1500, false);
    const full = await scan(portfolio, reading, 'full');
    const auto = await scan(portfolio, reading, 'auto');
    const filtered = await scan(portfolio, reading, 'filtered');

    // Full mode matches what the generator meant, edge cases included.
    expect(findingKeys(full.report as JsonReport)).toEqual(
      portfolio.truth.findings.map((f) => `${f.key} ${f.kind} ${f.severity}`).sort(),
    );
    expect(full.report?.problems.map((p) => p.key).sort()).toEqual([...portfolio.truth.problems].sort());
    // Among the edge cases: renewals that failed on domains expiring in 43 days, beyond the window.
    expect(full.report?.findings).toContainEqual(
      expect.objectContaining({ domain_name: 'edge-renewal-failed-beyond-5.nl', kind: 'renewal_failed' }),
    );

    expect(auto.run.stderr).toBe('');
    expect(auto.report?.findings).toEqual(full.report?.findings);
    expect(problemKeys(auto.report)).toEqual(problemKeys(full.report));
    if (provable) {
      expect(auto.report?.source).toMatchObject({ mode: 'auto', read: 'filtered' });
      expect(auto.report?.source.fallback_reason).toBeUndefined();
      expect(auto.domainRequests).toBeLessThan(full.domainRequests);
      // The counts, then only the pages of the parts that are read (page 1 of an empty one too). No
      // part asks its other end: each counts fewer than the whole account, so no window caps it.
      const coverage = auto.report?.source.coverage as Record<string, number>;
      expect(READ_PARTS.filter((part) => (coverage[part] as number) >= (coverage.all as number))).toEqual([]);
      const pages = READ_PARTS.reduce(
        (n, part) => n + Math.max(1, Math.ceil((coverage[part] as number) / 50)),
        0,
      );
      expect(auto.domainRequests).toBe(COVERAGE_PARTS.length + pages);

      expect(filtered.run.code).toBe(0);
      expect(filtered.report?.findings).toEqual(full.report?.findings);
      expect(problemKeys(filtered.report)).toEqual(problemKeys(full.report));
      expect(filtered.report?.source).toMatchObject({ mode: 'filtered', read: 'filtered' });
    } else {
      expect(auto.report?.source).toMatchObject({ mode: 'auto', read: 'full' });
      expect(auto.report?.source.fallback_reason).toMatch(/counted|narrow/);
      // The fallback read is full mode's read, page for page.
      expect(auto.report?.problems).toEqual(full.report?.problems);
      // The counts on top (page 1, which measured the account, is read again after them).
      expect(auto.domainRequests).toBe(full.domainRequests + COVERAGE_PARTS.length);

      // filtered, asked for by name, falls back the same way and says so.
      expect(filtered.run.code).toBe(0);
      expect(filtered.report?.findings).toEqual(full.report?.findings);
      expect(filtered.report?.problems).toEqual(full.report?.problems);
      expect(filtered.report?.source).toMatchObject({ mode: 'filtered', read: 'full' });
      expect(filtered.report?.source.fallback_reason).toBe(auto.report?.source.fallback_reason);
    }
  });
});

describe('auto mode on an account with dates no search can select', () => {
  it('reads in full, says so in the report and the digest, and loses no problem', async () => {
    const portfolio = portfolioOf(1, 600, true);
    const full = await scan(portfolio, {}, 'full');
    const auto = await scan(portfolio, {}, 'auto');
    expect(auto.report?.findings).toEqual(full.report?.findings);
    expect(auto.report?.problems).toEqual(full.report?.problems);
    expect(auto.report?.problems.length).toBeGreaterThan(0);
    expect(auto.report?.source.read).toBe('full');
    expect(auto.report?.source.fallback_reason).toMatch(
      /^the filtered read could not be proven complete: .* in none of the searches: values the server cannot compare\)$/,
    );

    const digest = await scan(portfolio, {}, 'auto', false);
    expect(digest.run.stdout).toContain(
      `The account was read in full: ${auto.report?.source.fallback_reason}.`,
    );
    const fullDigest = await scan(portfolio, {}, 'full', false);
    expect(fullDigest.run.stdout).not.toContain('read in full');
  });

  it('is the default mode', async () => {
    const portfolio = portfolioOf(1, 100, true);
    sim = await startSimulator({ portfolio, apiKey: KEY });
    const run = await runCli(['scan', '--json', '--dry-run', '--now', NOW], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
    });
    expect(JSON.parse(run.stdout).source).toMatchObject({ mode: 'auto', read: 'full' });
  });
});

describe('auto mode reads in full when that takes fewer requests', () => {
  /** `n` domains cycling through the four kinds a filtered read lists, and two healthy kinds. */
  const accountOf = (n: number, kinds: Array<Record<string, unknown>>): Portfolio => ({
    domains: Array.from({ length: n }, (_, i) => ({
      domain_name: `d${i}.nl`,
      registrant_handle: 'C1',
      ...kinds[i % kinds.length],
    })),
    contacts: [{ handle: 'C1', name: 'Anna', status: ['ok'] }],
    truth: { findings: [], problems: [] },
  });
  const far = '2027-09-01T00:00:00Z';
  const flagged = [
    { date_expiry: '2026-12-01T00:00:00Z', auto_renew: true, status: ['registered'] },
    { date_expiry: far, auto_renew: false, status: ['registered'] },
    { date_expiry: far, status: ['registered'] },
    { date_expiry: far, auto_renew: true, status: ['quarantine'] },
  ];

  it('on a small account, without counting: the page that measured it starts the read', async () => {
    const portfolio = accountOf(60, [
      ...flagged,
      ...Array(2).fill({ date_expiry: far, auto_renew: true, status: ['registered'] }),
    ]);
    const full = await scan(portfolio, {}, 'full');
    const auto = await scan(portfolio, {}, 'auto');
    expect(auto.report?.source).toEqual({
      base_url: expect.any(String),
      mode: 'auto',
      read: 'full',
      fallback_reason:
        'the account fits in 2 pages: reading the rest of it costs no more requests than the 8 counts a filtered read starts with',
    });
    expect(auto.report?.findings).toEqual(full.report?.findings);
    expect(auto.domainRequests).toBe(full.domainRequests);
    expect(auto.domainRequests).toBe(3); // two pages, and the other end of the short last one
  });

  it('when the proven parts would take more pages than the whole account; filtered reads them anyway', async () => {
    // 610 domains, 50 a page: 13 pages. The four read parts of 152 or 153 take 4 pages apiece, and
    // the empty one (no expiry) one: 17.
    const portfolio = accountOf(610, flagged);
    const full = await scan(portfolio, {}, 'full');
    const auto = await scan(portfolio, {}, 'auto');
    const filtered = await scan(portfolio, {}, 'filtered');
    expect(full.report?.findings).toHaveLength(610);
    expect(auto.report?.source).toMatchObject({
      mode: 'auto',
      read: 'full',
      fallback_reason:
        'reading only the parts that can give a finding would take 17 pages, the whole account 13',
    });
    expect(auto.report?.findings).toEqual(full.report?.findings);
    expect(auto.domainRequests).toBe(COVERAGE_PARTS.length + 13 + 1); // and the other end
    expect(filtered.report?.source).toMatchObject({ mode: 'filtered', read: 'filtered' });
    expect(filtered.report?.findings).toEqual(full.report?.findings);
    // No other end: each part counts fewer than the whole account, so no capped window ends it.
    expect(filtered.domainRequests).toBe(COVERAGE_PARTS.length + 17);
  });
});

describe('records a filtered read meets in two searches, or leaves unread', () => {
  const far = '2027-09-01T00:00:00Z';
  const healthy = Array.from({ length: 500 }, (_, i) => ({
    domain_name: `ok${i}.nl`,
    status: ['registered'],
    date_expiry: far,
    auto_renew: true,
  }));
  const accountWith = (extra: Array<Record<string, unknown>>): Portfolio => ({
    domains: [...healthy, ...extra],
    contacts: [],
    truth: { findings: [], problems: [] },
  });
  /** What every mode says about the names under test: findings and problems, severities included. */
  const about = (report: JsonReport | undefined, prefix: string) => ({
    critical:
      (report?.findings ?? []).filter(
        (f) => String(f.domain_name).startsWith(prefix) && f.severity === 'critical',
      ).length +
      (report?.problems ?? []).filter(
        (p) =>
          p.key?.toLowerCase().startsWith(prefix) && (p as { severity?: string }).severity === 'critical',
      ).length,
    items:
      (report?.findings ?? []).filter((f) => String(f.domain_name).startsWith(prefix)).length +
      (report?.problems ?? []).filter((p) => p.key?.toLowerCase().startsWith(prefix)).length,
  });

  it('keeps a second record under one name as a problem, critical when it says quarantine', async () => {
    // One name twice: registered without auto-renew (one search), quarantined with it (another).
    const portfolio = accountWith([
      { domain_name: 'twin.nl', status: ['registered'], date_expiry: far, auto_renew: false },
      { domain_name: 'twin.nl', status: ['quarantine'], date_expiry: far, auto_renew: true },
    ]);
    const full = await scan(portfolio, {}, 'full');
    expect(about(full.report, 'twin')).toEqual({ critical: 1, items: 2 });
    for (const mode of ['auto', 'filtered'] as const) {
      const run = await scan(portfolio, {}, mode);
      expect(run.report?.source.read).toBe('filtered');
      expect(about(run.report, 'twin')).toEqual({ critical: 1, items: 2 });
    }
  });

  it('reads in full when a domain it would leave unread has a status the API does not document', async () => {
    const portfolio = accountWith([
      { domain_name: 'leaving.nl', status: ['pending_delete'], date_expiry: far, auto_renew: true },
    ]);
    const full = await scan(portfolio, {}, 'full');
    const auto = await scan(portfolio, {}, 'auto');
    expect(auto.report?.source.read).toBe('full');
    expect(auto.report?.source.fallback_reason).toContain('1 with another status');
    expect(problemKeys(auto.report)).toEqual(problemKeys(full.report));
    expect(problemKeys(full.report).join('\n')).toContain(
      'leaving.nl status "pending_delete" is not one the API documents',
    );
  });

  // A status search on a list of statuses matches a domain holding the value among others (the
  // simulator, and the natural reading of the unstated rule): a registered domain with another
  // status beyond the window counts as registered and sits in the part a filtered read leaves
  // unread. An account that shows such a domain where it reads cannot be trusted on that part.
  it('reads the part it leaves unread too once a domain read holds registered beside another status', async () => {
    const soon = new Date(Date.parse(NOW) + 10 * 86_400_000).toISOString();
    const portfolio = accountWith([
      {
        domain_name: 'leaving.nl',
        status: ['registered', 'pending_delete'],
        date_expiry: far,
        auto_renew: true,
      },
      { domain_name: 'held.nl', status: ['registered', 'client_hold'], date_expiry: soon, auto_renew: false },
    ]);
    const full = await scan(portfolio, {}, 'full');
    expect(problemKeys(full.report).join('\n')).toContain(
      'leaving.nl status "pending_delete" is not one the API documents',
    );
    for (const mode of ['auto', 'filtered'] as const) {
      const run = await scan(portfolio, {}, mode);
      expect(run.report?.source.read).toBe('full');
      expect(run.report?.source.fallback_reason).toBe(
        'held.nl holds the status registered beside another ("client_hold"): a search on status may count such a domain as registered, so the part a filtered read leaves unread was read too',
      );
      expect(problemKeys(run.report)).toEqual(problemKeys(full.report));
      expect(findingKeys(run.report as JsonReport)).toEqual(findingKeys(full.report as JsonReport));
    }
  });
});

describe('the account’s vote on what date_renewal means', () => {
  it('is taken on the same domains in every mode, so a filtered read flags the renewals full mode flags', async () => {
    const day = 86_400_000;
    const now = Date.parse(NOW);
    const iso = (ms: number) => new Date(ms).toISOString();
    const domains = [
      // 500 healthy domains far out without a renewal date, and six with last year's renewal date:
      // a filtered read leaves all of them unread.
      ...Array.from({ length: 500 }, (_, i) => ({
        domain_name: `ok${i}.nl`,
        status: ['registered'],
        date_expiry: '2027-09-01T00:00:00Z',
        auto_renew: true,
      })),
      ...Array.from({ length: 6 }, (_, i) => ({
        domain_name: `far${i}.nl`,
        status: ['registered'],
        date_expiry: iso(now + (200 + i) * day),
        date_renewal: iso(now + (200 + i - 365) * day),
        auto_renew: true,
      })),
      // A renewal that failed three days ago, expiring in 20 days: the one domain the rule judges.
      {
        domain_name: 'failing.nl',
        status: ['registered'],
        date_expiry: iso(now + 20 * day),
        date_renewal: iso(now - 3 * day),
        auto_renew: true,
      },
    ];
    const portfolio: Portfolio = { domains, contacts: [], truth: { findings: [], problems: [] } };
    const full = await scan(portfolio, {}, 'full');
    const filtered = await scan(portfolio, {}, 'filtered');
    expect(filtered.report?.source.read).toBe('filtered');
    expect(full.report?.findings).toEqual([
      expect.objectContaining({ domain_name: 'failing.nl', kind: 'renewal_failed', severity: 'critical' }),
    ]);
    expect(filtered.report?.findings).toEqual(full.report?.findings);
  });
});

describe('auto mode on an account where nothing can be flagged', () => {
  it('reads no domain but page 1 of each empty part: the counts prove every domain healthy', async () => {
    const portfolio = generatePortfolio({ domains: 1500, seed: 8, now: Date.parse(NOW) });
    const healthy = portfolio.domains.filter(
      (d) =>
        !portfolio.truth.findings.some((f) => f.key === d.domain_name) &&
        !portfolio.truth.problems.includes(String(d.domain_name)),
    );
    sim = await startSimulator({ portfolio: { ...portfolio, domains: healthy }, apiKey: KEY });
    const run = await runCli(['scan', '--json', '--dry-run', '--now', NOW, '--mode', 'auto'], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
    });
    const report = JSON.parse(run.stdout);
    expect(report.findings.filter((f: { domain_name?: string }) => f.domain_name)).toEqual([]);
    expect(report.source).toMatchObject({ read: 'filtered', coverage: { all: healthy.length } });
    const domainRequests = sim.requests.filter((r) => r.path === '/v2/domains');
    // The counts, then page 1 of each part a filtered read lists, all empty: a domain moving into
    // one after the counts is read there.
    expect(domainRequests).toHaveLength(COVERAGE_PARTS.length + READ_PARTS.length);
    // Counts at per_page=1, but the whole account's, read at the scan's page size to learn the one served.
    const measured = domainRequests
      .slice(0, COVERAGE_PARTS.length)
      .filter((r) => r.query.get('per_page') !== '1');
    expect(measured.map((r) => [...r.query.keys()].sort())).toEqual([['page', 'per_page', 'sort']]);
  });
});

describe('time budget', () => {
  it('reports what it read in the time budget, marked incomplete, and fails saying what to change', async () => {
    const portfolio = generatePortfolio({ domains: 2000, seed: 4, now: Date.parse(NOW) });
    sim = await startSimulator({ portfolio, apiKey: KEY, maxPerPage: 20, latencyMs: 300 });
    // 100 pages, two at a time, 300 ms each: some 15 s of reading for a budget of 3 s, which leaves
    // a loaded machine (CI's two cores running other files) time to start and read some pages.
    const run = await runCli(
      ['scan', '--json', '--dry-run', '--time-budget', '3', '--concurrency', '2', '--mode', 'full'],
      { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^sentinel: the scan could not read the whole account \(the domain list could not be read whole within the scan's time budget \(\d+ of 2000 domains read; .*\); the findings read were reported, marked incomplete; run the scan again, and if it repeats raise the time budget \(scanTimeoutMinutes on AWS, up to Lambda's 15 minutes; --time-budget on the command line\) or --concurrency, or scan when the account changes less\n$/,
    );
    const report = JSON.parse(run.stdout);
    expect(report.source.incomplete).toMatch(
      /^the domain list could not be read whole within the scan's time budget/,
    );
    expect(report.stats.domains_scanned).toBeGreaterThan(0);
    expect(report.stats.domains_scanned).toBeLessThan(2000);
    expect(report.problems).toContainEqual(
      expect.objectContaining({ resource: 'domain', key: null, reason: report.source.incomplete }),
    );
  });
});
