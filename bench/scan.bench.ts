/**
 * npm run bench [-- --latency 50 --size 100000 --concurrency 4 --per-page 100 --rate-limit 10 --rate-limited-size 20000]
 *
 * Scans simulated accounts over loopback with per-request latency, each scan in its own process,
 * and prints from one run:
 *  - for `--size` domains: full, auto and filtered mode's wall time as a ratio to the paging limit,
 *    requests, peak RSS, and whether the findings and problems equal full mode's; on the default
 *    (realistic) portfolio, on the stress portfolio, and on the stress portfolio without its records
 *    whose date no search can select;
 *  - against a simulator limited to `--rate-limit` requests a second: full mode's wall time as a
 *    ratio to pages / rate, and the share of 429 answers;
 *  - each Lambda bundle's size and import time against a bare `node` start.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { build } from 'esbuild';
import { DEFAULT_POLICY } from '../functions/core/classify';
import { COVERAGE_PARTS, coverageSearches, READ_PARTS } from '../functions/core/coverage';
import { generatePortfolio, type Portfolio } from '../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../functions/simulator/server';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '50' },
    size: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '4' },
    'per-page': { type: 'string', default: '100' },
    'rate-limit': { type: 'string', default: '10' },
    'rate-limited-size': { type: 'string', default: '20000' },
  },
});
const latency = Number(values.latency);
const size = Number(values.size);
const concurrency = Number(values.concurrency);
const perPage = Number(values['per-page']);
const rateLimit = Number(values['rate-limit']);
const rateLimitedSize = Number(values['rate-limited-size']);
const NOW = '2026-11-22T06:00:00Z';
const KEY = 'bench-key';
const work = mkdtempSync(join(tmpdir(), 'sentinel-bench-'));

interface ChildResult {
  wallMs: number;
  requests: number;
  domainsScanned: number;
  findings: number;
  domainFindings: number;
  problems: number;
  findingsHash: string;
  read: string;
  fallbackReason: string | null;
  error?: string;
  peakRssMb: number;
}

/** Bundles like the CDK stack does: minified CJS, AWS SDK external (the Lambda runtime provides it). */
async function bundle(entry: string, name: string, format: 'cjs' | 'esm' = 'cjs') {
  const outfile = join(work, `${name}.${format === 'esm' ? 'mjs' : 'js'}`);
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format,
    minify: true,
    outfile,
    external: format === 'cjs' ? ['@aws-sdk/*'] : [],
    logLevel: 'error',
  });
  return outfile;
}

/** The budget the README promises for each Lambda bundle. */
const BUNDLE_BUDGET = { kib: 300, importMs: 250 };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function timeNode(args: string[], times = 7): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = performance.now();
    await run(process.execPath, args, {
      env: { ...process.env, NODE_PATH: join(process.cwd(), 'node_modules') },
    });
    samples.push(performance.now() - t);
  }
  return median(samples);
}

/**
 * Asks the simulator once for every query the scans will make, so the first scan does not pay for
 * filtering and sorting the whole portfolio in the parent (a real server's indexes make that free).
 */
async function warm(sim: Simulator, fullOnly = false) {
  const searches = coverageSearches(Date.parse(NOW), DEFAULT_POLICY);
  const query = (filter: object) => new URLSearchParams(filter as Record<string, string>).toString();
  const queries = [
    '/v2/domains?sort=domain_name',
    '/v2/contacts?sort=handle',
    ...(fullOnly
      ? []
      : [
          ...COVERAGE_PARTS.map((part) => `/v2/domains?${query(searches[part])}`),
          ...READ_PARTS.map((part) => `/v2/domains?${query({ ...searches[part], sort: 'domain_name' })}`),
        ]),
  ];
  for (const path of queries) {
    const res = await fetch(`${sim.url}${path}&per_page=1`, { headers: { Authorization: `Bearer ${KEY}` } });
    await res.arrayBuffer();
  }
}

const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(0)}%`;
const yes = (ok: boolean) => (ok ? 'yes' : 'NO');

async function main() {
  console.log(`domain-sentinel benchmark — ${new Date().toISOString()}`);
  console.log(
    `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${loadavg()[0]?.toFixed(1)} at the start`,
  );
  console.log(`latency ${latency} ms per request, concurrency ${concurrency}, per_page ${perPage}\n`);

  const child = await bundle('bench/scan-child.ts', 'scan-child', 'esm');
  const scanOnce = async (url: string, mode: string): Promise<ChildResult> => {
    const { stdout } = await run(
      process.execPath,
      [child, url, KEY, mode, String(concurrency), String(perPage), NOW],
      { maxBuffer: 1 << 20 },
    );
    return JSON.parse(stdout);
  };
  const measure = async (sim: Simulator, mode: string) => {
    const before = sim.requests.length;
    const limitedBefore = sim.rateLimited;
    const result = await scanOnce(sim.url, mode);
    const seen = sim.requests.slice(before);
    return {
      ...result,
      served: seen.length,
      domainRequests: seen.filter((r) => r.path === '/v2/domains').length,
      rateLimited: sim.rateLimited - limitedBefore,
    };
  };

  // 1. Full, auto and filtered on the default portfolio, the stress one, and the stress one without
  //    its unselectable dates.
  const portfolio = generatePortfolio({ domains: size, seed: 1, now: Date.parse(NOW) });
  const stress = generatePortfolio({ domains: size, seed: 1, now: Date.parse(NOW), profile: 'stress' });
  const garbled = new Set(stress.truth.problems);
  const selectable: Portfolio = {
    domains: stress.domains.filter((d) => !garbled.has(String(d.domain_name))),
    contacts: stress.contacts,
    truth: { findings: stress.truth.findings, problems: [] },
  };
  // The paging limit, issue 6's formula over every page a full scan reads: domains and contacts.
  // The domain pages alone give a stricter figure, printed beside it.
  const domainPages = Math.ceil(size / perPage);
  const pages = domainPages + Math.ceil(portfolio.contacts.length / perPage);
  const limitOf = (n: number) => (1 + Math.ceil((n - 1) / concurrency)) * latency;
  const pagingLimitMs = limitOf(pages);
  const domainPagesLimitMs = limitOf(domainPages);
  const flaggedShare = (p: Portfolio) => p.truth.findings.filter((f) => !f.key.startsWith('C')).length / size;
  console.log(
    `${size.toLocaleString('en')} domains and ${portfolio.contacts.length.toLocaleString('en')} contacts, seed 1: ${domainPages} domain pages + ${pages - domainPages} contact pages. ` +
      `Default (realistic) portfolio: ${pct(flaggedShare(portfolio), 1)} of the domains flagged. ` +
      `Stress portfolio: ${pct(flaggedShare(stress), 1)} flagged, and ${garbled.size} records with a date_expiry no search can select.`,
  );
  console.log(
    `paging limit (1 + ceil((pages − 1) / concurrency)) × latency = ${(pagingLimitMs / 1000).toFixed(2)} s for ${pages} pages (${(domainPagesLimitMs / 1000).toFixed(2)} s for the ${domainPages} domain pages alone)\n`,
  );
  console.log(
    "| portfolio | mode | read | wall time | × paging limit | requests (domain list) | % of full's requests | same findings and problems as full | peak RSS |",
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  const rows: Array<{ label: string; full: ChildResult; auto: ChildResult; filtered: ChildResult }> = [];
  for (const [label, accounts] of [
    ['default (realistic)', portfolio],
    ['stress', stress],
    [`stress without its ${garbled.size} unselectable dates`, selectable],
  ] as const) {
    const sim = await startSimulator({
      portfolio: accounts,
      apiKey: KEY,
      latencyMs: latency,
      maxPerPage: perPage,
    });
    await warm(sim);
    const full = await measure(sim, 'full');
    const auto = await measure(sim, 'auto');
    const filtered = await measure(sim, 'filtered');
    await sim.close();
    rows.push({ label, full, auto, filtered });
    for (const [mode, r] of [
      ['full', full],
      ['auto', auto],
      ['filtered', filtered],
    ] as const) {
      if (r.error) {
        console.log(
          `| ${label} | ${mode} | refused after ${r.domainRequests} counts | ${(r.wallMs / 1000).toFixed(2)} s | — | ${r.served} (${r.domainRequests}) | — | — | ${r.peakRssMb.toFixed(0)} MB |`,
        );
        continue;
      }
      const read = r.read === 'full' && mode !== 'full' ? 'full (fallback)' : r.read;
      console.log(
        `| ${label} | ${mode} | ${read} | ${(r.wallMs / 1000).toFixed(2)} s | ${(r.wallMs / pagingLimitMs).toFixed(2)}× | ${r.requests} (${r.domainRequests}) | ${pct(r.requests, full.requests)} | ${mode === 'full' ? '—' : yes(r.findingsHash === full.findingsHash)} | ${r.peakRssMb.toFixed(0)} MB |`,
      );
    }
  }
  const [plain, crowded, clean] = rows as [
    (typeof rows)[number],
    (typeof rows)[number],
    (typeof rows)[number],
  ];
  for (const { label, filtered } of rows) {
    if (filtered.error) console.log(`\nfiltered on "${label}" refused: ${filtered.error}`);
  }
  const peak = Math.max(...rows.flatMap((r) => [r.full, r.auto, r.filtered].map((x) => x.peakRssMb)));
  const fullRatio = Math.max(...rows.map((r) => r.full.wallMs / pagingLimitMs));
  console.log(
    [
      '',
      `full ≤ 1.10× the paging limit: ${fullRatio.toFixed(2)}× at most — ${yes(fullRatio <= 1.1)} ` +
        `(against the domain pages alone: ${(Math.max(...rows.map((r) => r.full.wallMs)) / domainPagesLimitMs).toFixed(2)}×)`,
      `auto ≤ 20% of full's requests on the default portfolio: ${pct(plain.auto.requests, plain.full.requests)} — ${yes(plain.auto.requests <= 0.2 * plain.full.requests)}` +
        (plain.auto.fallbackReason ? ` (read in full: ${plain.auto.fallbackReason})` : ''),
      `  on the stress portfolio: ${pct(crowded.auto.requests, crowded.full.requests)}` +
        (crowded.auto.fallbackReason ? ' (its unselectable dates make the proof fail: read in full)' : '') +
        `; without those dates ${pct(clean.auto.requests, clean.full.requests)}, ${pct(clean.full.domainFindings / clean.full.domainsScanned, 1)} of its domains being flagged`,
      `auto and filtered give full mode's findings and problems: ${yes(rows.every((r) => [r.auto, r.filtered].every((x) => x.error !== undefined || x.findingsHash === r.full.findingsHash)))}`,
      `peak RSS ≤ 200 MB: ${peak.toFixed(0)} MB at most — ${yes(peak <= 200)}`,
      '',
    ].join('\n'),
  );

  // 2. Full mode against a rate limit.
  const limited = generatePortfolio({ domains: rateLimitedSize, seed: 1, now: Date.parse(NOW) });
  const sim = await startSimulator({
    portfolio: limited,
    apiKey: KEY,
    latencyMs: latency,
    maxPerPage: perPage,
    rateLimit,
  });
  await warm(sim, true);
  await new Promise((resolve) => setTimeout(resolve, 1000)); // the bucket refills after warming
  const r = await measure(sim, 'full');
  await sim.close();
  const neededPages =
    Math.ceil(limited.domains.length / perPage) + Math.ceil(limited.contacts.length / perPage);
  const idealMs = (neededPages / rateLimit) * 1000;
  const ratio = r.wallMs / idealMs;
  const share = r.rateLimited / r.served;
  console.log(
    `rate limit ${rateLimit} requests/s (token bucket, burst ${rateLimit}), ${rateLimitedSize.toLocaleString('en')} domains, full mode, ${neededPages} pages:`,
  );
  console.log(
    r.error
      ? `  FAILED after ${(r.wallMs / 1000).toFixed(1)} s: ${r.error}\n  ${r.rateLimited} of ${r.served} requests answered 429 (${pct(r.rateLimited, r.served)})`
      : `  ${(r.wallMs / 1000).toFixed(1)} s = ${ratio.toFixed(2)} × pages / ${rateLimit} (${(idealMs / 1000).toFixed(1)} s) — target ≤ 1.15: ${yes(ratio <= 1.15)}\n` +
          `  429 answers: ${r.rateLimited} of ${r.served} requests = ${(100 * share).toFixed(1)}% — target ≤ 5%: ${yes(share <= 0.05)}; peak RSS ${r.peakRssMb.toFixed(0)} MB`,
  );
  console.log('');

  // 3. Lambda bundles: size, and import time against a bare node start in the same run.
  const baseline = await timeNode(['-e', '']);
  console.log(
    `| bundle | size | import time (median of 7, minus bare node start) | within budget (${BUNDLE_BUDGET.kib} KiB, ${BUNDLE_BUDGET.importMs} ms) |`,
  );
  console.log('|---|---|---|---|');
  for (const name of ['scan', 'restore']) {
    const file = await bundle(`functions/${name}.ts`, name);
    const loaded = await timeNode(['-e', `require(${JSON.stringify(file)})`]);
    const kib = statSync(file).size / 1024;
    const importMs = loaded - baseline;
    const ok = kib <= BUNDLE_BUDGET.kib && importMs <= BUNDLE_BUDGET.importMs;
    console.log(
      `| ${name} | ${kib.toFixed(0)} KiB | ${importMs.toFixed(0)} ms (bare node: ${baseline.toFixed(0)} ms; ${(loaded / baseline).toFixed(2)}× of it) | ${ok ? 'yes' : 'NO'} |`,
    );
  }
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
