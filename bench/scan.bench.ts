/**
 * npm run bench [-- --latency 50 --size 100000 --concurrency 4 --per-page 100 --rate-limit 10 --rate-limited-size 20000
 *   --stateful-sizes 100000,1000000 --alert-sizes 1000,10000,100000 --churn-sizes 100000,1000000
 *   --rdap-latency 150 --sections startup,modes,rate,bundles,stateful,alerts,churn,cut,registry,feed,page]
 *
 * Scans simulated accounts over loopback with per-request latency, each scan in its own process,
 * and prints from one run:
 *  - the command line's start-up: `sentinel --version` and `sentinel scan --help` as multiples of a
 *    bare `node -e 0` (bench/startup.ts);
 *  - for `--size` domains: full, auto and filtered mode's wall time as a ratio to the paging limit,
 *    requests, peak RSS, and whether the findings and problems equal full mode's; on the default
 *    (realistic) portfolio, on the stress portfolio, and on the stress portfolio without its records
 *    whose date no search can select;
 *  - against a simulator limited to `--rate-limit` requests a second: full mode's wall time as a
 *    ratio to pages / rate, and the share of 429 answers;
 *  - each Lambda bundle's size and import time against a bare `node` start;
 *  - for each of `--stateful-sizes` domains (realistic portfolio): scans with their state in
 *    dynalite (the first, every domain new; the same again, nothing changed) against the stateless
 *    full scan of the same run, their peak RSS, and the web function's report page, calendar feed
 *    and filtered page for that report: size as Lambda counts it, time, and whether every critical
 *    and warning domain is in the page and the feed;
 *  - for each of `--alert-sizes` domains (realistic and stress portfolios): the one SNS message as SNS
 *    counts it, the critical and warning findings the e-mail names, and whether the JSON is whole or
 *    linked (bench/alert-section.ts);
 *  - for each of `--churn-sizes` domains: a scan as the Lambda runs it, within its time budget, of an
 *    account that changes every few seconds while it is read (bench/churn-section.ts);
 *  - for `--size` domains: full reads cut by a budget of a third of a whole read, an hour apart,
 *    and the share of pages they read together (bench/cut-section.ts);
 *  - for `--size` domains with the registry check (bench/registry-section.ts): the time it adds to a
 *    full scan and the RDAP lookups it makes, at the default budget and at one covering 30 days;
 *  - the calendar feed of 30 000 and 100 000 urgent events against a feed of only what it keeps
 *    (bench/feed-section.ts);
 *  - the report page of 30 000 and 100 000 urgent findings against a page of only what it keeps
 *    (bench/page-section.ts).
 *
 * `--sections startup,modes,rate,bundles,stateful,alerts,churn,cut,registry,feed,page` picks what runs (all by default).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { build } from 'esbuild';
import { createStateTable } from '../functions/aws/dynamodb-state-store';
import { DEFAULT_POLICY } from '../functions/core/findings/classify';
import { COVERAGE_PARTS, coverageSearches, READ_PARTS } from '../functions/core/scan/coverage';
import { generatePortfolio, type Portfolio } from '../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../functions/simulator/server';
import { lambdaNodeFlags } from '../test/support/lambda-bootstrap';
import { alertSection } from './alert-section';
import { churnSection } from './churn-section';
import { cutSection } from './cut-section';
import { feedSection } from './feed-section';
import { pageSection } from './page-section';
import { registrySection } from './registry-section';
import { startupSection } from './startup';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '50' },
    size: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '4' },
    'per-page': { type: 'string', default: '100' },
    'rate-limit': { type: 'string', default: '10' },
    'rate-limited-size': { type: 'string', default: '20000' },
    'stateful-sizes': { type: 'string', default: '100000,1000000' },
    'alert-sizes': { type: 'string', default: '1000,10000,100000' },
    'churn-sizes': { type: 'string', default: '100000,1000000' },
    sections: {
      type: 'string',
      default: 'startup,modes,rate,bundles,stateful,alerts,churn,cut,registry,feed,page',
    },
    'rdap-latency': { type: 'string', default: '150' },
  },
});
const latency = Number(values.latency);
const size = Number(values.size);
const concurrency = Number(values.concurrency);
const perPage = Number(values['per-page']);
const rateLimit = Number(values['rate-limit']);
const rateLimitedSize = Number(values['rate-limited-size']);
const statefulSizes = String(values['stateful-sizes']).split(',').filter(Boolean).map(Number);
const alertSizes = String(values['alert-sizes']).split(',').filter(Boolean).map(Number);
const churnSizes = String(values['churn-sizes']).split(',').filter(Boolean).map(Number);
const sections = new Set(String(values.sections).split(','));
const NOW = '2026-11-22T06:00:00Z';
const KEY = 'bench-key';
const work = mkdtempSync(join(tmpdir(), 'sentinel-bench-'));

export interface ChildResult {
  /** Stateful scans: each DynamoDB command's first start and last end (ms since the scan began). */
  windows?: Record<string, { from: number; to: number; calls: number }>;
  published?: boolean;
  saved?: boolean;
  /** Scans as the Lambda runs them: the signed links to the page and the feed, and one info domain to filter for. */
  reportUrl?: string;
  calendarUrl?: string;
  filterProbe?: string;
  filterProbeShown?: string;
  /** Stateful scans: why it published, or why not. */
  why?: string[];
  wallMs: number;
  requests: number;
  domainsScanned: number;
  findings: number;
  domainFindings: number;
  problems: number;
  findingsHash: string;
  read: string;
  fallbackReason: string | null;
  /** source.incomplete: what moved, when the read could not be proven whole. */
  incomplete?: string | null;
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
    // The AWS SDK requires Node built-ins at run time: give the ES module a require of its own.
    ...(format === 'esm'
      ? {
          banner: {
            js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
          },
        }
      : {}),
    logLevel: 'error',
  });
  return outfile;
}

/**
 * Every scan runs in a child started as Lambda's Node.js runtime starts the scan function: node
 * with the bootstrap's own flags for the function's memory size (lib/scanner.ts), nothing else, so
 * its peak RSS is the function's.
 */
const SCAN_MEMORY_MB = scanFunctionMemoryMb();
const LAMBDA_NODE_FLAGS = lambdaNodeFlags(SCAN_MEMORY_MB);
/** The share of the function's memory a stateful scan of a million domains may peak at. */
const MEMORY_SHARE_TARGET = 0.6;
/** The time an unchanged stateful scan of 100 000 domains may take, as a ratio to a stateless one. */
const UNCHANGED_RATIO_TARGET = 1.3;

/** The scan function's memorySize, as lib/scanner.ts gives it (the bench measures what is deployed). */
function scanFunctionMemoryMb(): number {
  const source = readFileSync(join(process.cwd(), 'lib', 'scanner.ts'), 'utf8');
  const found = /memorySize: (\d[\d_]*),/.exec(source);
  if (!found?.[1]) throw new Error('bench: no memorySize in lib/scanner.ts');
  return Number(found[1].replaceAll('_', ''));
}

/** The budget the README promises for each Lambda bundle. */
const BUNDLE_BUDGET = { kib: 320, importMs: 250 };

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
  console.log(`latency ${latency} ms per request, concurrency ${concurrency}, per_page ${perPage}`);
  console.log(
    `each scan in a child started as Lambda's runtime starts the scan function of ${SCAN_MEMORY_MB} MB: node ${LAMBDA_NODE_FLAGS.join(' ')}\n`,
  );

  const child = await bundle('bench/scan-child.ts', 'scan-child', 'esm');
  const scanOnce = async (
    url: string,
    mode: string,
    env: Record<string, string> = {},
    flags: readonly string[] = LAMBDA_NODE_FLAGS,
  ): Promise<ChildResult> => {
    const { stdout } = await run(
      process.execPath,
      [...flags, child, url, KEY, mode, String(concurrency), String(perPage), NOW],
      { maxBuffer: 1 << 20, env: { ...process.env, ...env } },
    );
    return JSON.parse(stdout);
  };
  const measure: Measure = async (sim, mode, env = {}, flags = LAMBDA_NODE_FLAGS) => {
    const before = sim.requests.length;
    const limitedBefore = sim.rateLimited;
    const result = await scanOnce(sim.url, mode, env, flags);
    const seen = sim.requests.slice(before);
    return {
      ...result,
      served: seen.length,
      domainRequests: seen.filter((r) => r.path === '/v2/domains').length,
      rateLimited: sim.rateLimited - limitedBefore,
    };
  };

  if (sections.has('startup')) await startupSection();
  if (sections.has('modes')) await modesSection(measure);
  if (sections.has('rate')) await rateSection(measure);
  if (sections.has('bundles')) await bundleSection();
  if (sections.has('stateful')) await statefulSection(measure);
  if (sections.has('alerts')) await alertSection(alertSizes, NOW, KEY);
  if (sections.has('churn'))
    await churnSection({ measure, sizes: churnSizes, latency, perPage, key: KEY, now: NOW });
  if (sections.has('cut')) await cutSection({ measure, size, latency, perPage, key: KEY, now: NOW });
  if (sections.has('feed')) await feedSection([30_000, 100_000], NOW);
  if (sections.has('page')) await pageSection([30_000, 100_000], NOW);
  if (sections.has('registry'))
    await registrySection({
      measure,
      warm,
      size,
      latency,
      rdapLatency: Number(values['rdap-latency']),
      perPage,
      key: KEY,
      now: NOW,
      work,
    });
}

export type Measure = (
  sim: Simulator,
  mode: string,
  env?: Record<string, string>,
  /** The child's node flags. @default the scan function's, as its runtime starts it */
  flags?: readonly string[],
) => Promise<ChildResult & { served: number; domainRequests: number; rateLimited: number }>;

/**
 * 1. Full, auto and filtered on the default portfolio, the stress one, and the stress one without
 *    its unselectable dates.
 */
async function modesSection(measure: Measure) {
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
  // The same full scans as the command line runs them: node's own flags, without the young
  // generation of 10 % of 3 008 MB that the function's runtime gives V8 to fill before it collects.
  const cliPeaks: number[] = [];
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
    cliPeaks.push((await measure(sim, 'full', {}, [])).peakRssMb);
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
      `peak RSS ≤ 200 MB, a full scan as the command line runs it (node's own flags): ${Math.max(...cliPeaks).toFixed(0)} MB at most — ${yes(Math.max(...cliPeaks) <= 200)}`,
      `  as the scan function of ${SCAN_MEMORY_MB} MB runs it (the table): ${peak.toFixed(0)} MB at most, ${pct(peak, SCAN_MEMORY_MB)} of its memory`,
      '',
    ].join('\n'),
  );
}

/** 2. Full mode against a rate limit. */
async function rateSection(measure: Measure) {
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
}

/** 3. Lambda bundles: size, and import time against a bare node start in the same run. */
async function bundleSection() {
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

/** dynalite in a process of its own (bench/dynalite-server.ts); its endpoint and a way to stop it. */
async function startDynaliteProcess(): Promise<{
  endpoint: string;
  client: DynamoDBClient;
  stop: () => void;
}> {
  const server = spawn(process.execPath, ['--import', 'tsx', 'bench/dynalite-server.ts'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const endpoint = await new Promise<string>((resolve, reject) => {
    server.once('error', reject);
    server.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
  });
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  return { endpoint, client, stop: () => server.kill() };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MB`;
/** A synchronous Lambda answer, counted as Lambda counts it (the proxy result as JSON). */
const LAMBDA_RESPONSE_BYTES = 6 * 2 ** 20;

interface WebResult {
  status: number;
  lambdaBytes: number;
  bodyBytes: number;
  ms: number;
  peakRssMb: number;
  urgent: number;
  missing: number | null;
  missingExample: string | null;
  matched: boolean | null;
}

/**
 * 4. Scans with memory, state in dynalite (a process of its own), each doing what the scan function
 *    does with its report (links, the alert, the report stored): on the realistic portfolio of each
 *    size, a stateless full scan, the first scan with state (every domain new: every bucket
 *    written), the same scan again (nothing changed: nothing but the meta item written), and the
 *    stateless scan once more; each stateful time as a ratio to the mean of the two stateless ones,
 *    the peak RSS of each, and when the state was read and written (DynamoDB calls, first start to
 *    last end). Then the web function's answers for that report: the page, the calendar feed and a
 *    filtered page, each in its own process: size as Lambda counts it, time, peak RSS, and whether
 *    every critical and warning domain is in the page and in the feed.
 */
async function statefulSection(measure: Measure) {
  const dynamo = await startDynaliteProcess();
  const webChild = await bundle('bench/web-child.ts', 'web-child', 'esm');
  const rows: Array<{
    size: number;
    ratios: { first: number; unchanged: number };
    peak: number;
    web: Array<{ what: string; r: WebResult }>;
    failed: boolean;
  }> = [];
  try {
    console.log(
      `scans with memory, state in dynalite (own process), realistic portfolio, latency ${latency} ms, concurrency ${concurrency}; every scan signs links, builds the alert and stores the report:\n`,
    );
    console.log(
      '| domains | scan | wall time | × stateless full | peak RSS | state read (from – to) | state written (from – to, batches) | published |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const size of statefulSizes) {
      const portfolio = generatePortfolio({ domains: size, seed: 1, now: Date.parse(NOW) });
      const sim = await startSimulator({ portfolio, apiKey: KEY, latencyMs: latency, maxPerPage: perPage });
      const reportDir = mkdtempSync(join(work, `reports-${size}-`));
      try {
        await warm(sim, true);
        const table = `bench-state-${size}`;
        await createStateTable(dynamo.client, table);
        const env = {
          BENCH_REPORT_DIR: reportDir,
          BENCH_DYNAMODB_ENDPOINT: dynamo.endpoint,
          BENCH_STATE_TABLE: table,
        };
        const before = await measure(sim, 'lambda', env);
        const first = await measure(sim, 'stateful', env);
        const unchanged = await measure(sim, 'stateful', env);
        // The web function's answers for the report the unchanged scan stored (links to snooze and all).
        const web: Array<{ what: string; r: WebResult }> = [];
        for (const what of ['page', 'calendar', 'filter'] as const) {
          const url = what === 'calendar' ? unchanged.calendarUrl : unchanged.reportUrl;
          const { stdout } = await run(
            process.execPath,
            [
              webChild,
              reportDir,
              what,
              url ?? '',
              NOW,
              unchanged.filterProbe ?? '',
              unchanged.filterProbeShown ?? '',
            ],
            { maxBuffer: 1 << 20 },
          );
          web.push({ what, r: JSON.parse(stdout) });
        }
        const after = await measure(sim, 'lambda', env);
        const baseline = (before.wallMs + after.wallMs) / 2;
        const window = (w: { from: number; to: number; calls: number } | undefined, calls = false) =>
          w ? `${seconds(w.from)} – ${seconds(w.to)}${calls ? `, ${w.calls}` : ''}` : '—';
        const line = (label: string, r: ChildResult) => {
          if (r.error)
            return `| ${size.toLocaleString('en')} | ${label} | FAILED: ${r.error} | | ${r.peakRssMb.toFixed(0)} MB | | | |`;
          const w = r.windows;
          return `| ${size.toLocaleString('en')} | ${label} | ${seconds(r.wallMs)} | ${w ? `${(r.wallMs / baseline).toFixed(2)}×` : '—'} | ${r.peakRssMb.toFixed(0)} MB | ${w ? window(w.Query) : '—'} | ${w ? window(w.BatchWriteItem, true) : '—'} | ${r.published === undefined ? '—' : r.published ? `yes${r.why ? ` (${r.why.join(', ')})` : ''}` : 'no'} |`;
        };
        console.log(line('stateless full', before));
        console.log(line('first with state', first));
        console.log(line('unchanged with state', unchanged));
        console.log(line('stateless full again', after));
        const scans = [before, first, unchanged, after];
        const same = [first, unchanged, after].every((r) => r.findingsHash === before.findingsHash);
        if (!same)
          console.log(
            `| ${size.toLocaleString('en')} | NOTE: the scans' findings differ (${scans.map((r) => r.findingsHash).join(', ')}) | | | | | | |`,
          );
        rows.push({
          size,
          ratios: { first: first.wallMs / baseline, unchanged: unchanged.wallMs / baseline },
          peak: Math.max(...scans.map((r) => r.peakRssMb)),
          web,
          failed: scans.some((r) => r.error !== undefined) || !same,
        });
      } finally {
        await sim.close();
        rmSync(reportDir, { recursive: true, force: true });
      }
    }
  } finally {
    dynamo.stop();
  }
  console.log('');
  console.log(
    `the web function's answers for the unchanged stateful scan's report (each in its own process; Lambda's limit ${mb(LAMBDA_RESPONSE_BYTES)}):\n`,
  );
  console.log(
    '| domains | answer | status | size as Lambda counts it | body | time | peak RSS | critical and warning domains in it |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of rows)
    for (const { what, r } of row.web)
      console.log(
        `| ${row.size.toLocaleString('en')} | ${what === 'filter' ? 'page with a filter (one info domain the page does not list)' : what === 'page' ? 'report page' : 'calendar feed'} | ${r.status} | ${mb(r.lambdaBytes)} | ${mb(r.bodyBytes)} | ${r.ms.toFixed(0)} ms | ${r.peakRssMb.toFixed(0)} MB | ${r.missing === null ? (r.matched ? 'found it' : 'NOT FOUND') : `${r.urgent - r.missing} of ${r.urgent}${r.missing ? ` (missing e.g. ${r.missingExample})` : ''}`} |`,
      );
  console.log('');
  const budgetMb = MEMORY_SHARE_TARGET * SCAN_MEMORY_MB;
  for (const r of rows) {
    const peakTarget =
      r.size >= 1_000_000
        ? `peak RSS / the function's ${SCAN_MEMORY_MB} MB = ${(r.peak / SCAN_MEMORY_MB).toFixed(2)} (${r.peak.toFixed(0)} MB at most; target ≤ ${MEMORY_SHARE_TARGET.toFixed(2)}, ${budgetMb.toFixed(0)} MB): ${yes(r.peak <= budgetMb)}`
        : `peak RSS ${r.peak.toFixed(0)} MB at most (${pct(r.peak, SCAN_MEMORY_MB)} of ${SCAN_MEMORY_MB} MB)`;
    const ratios =
      r.size === 100_000
        ? ` — unchanged stateful / stateless time = ${r.ratios.unchanged.toFixed(2)} (target ≤ ${UNCHANGED_RATIO_TARGET.toFixed(2)}): ${yes(r.ratios.unchanged <= UNCHANGED_RATIO_TARGET)}; first ${r.ratios.first.toFixed(2)}×`
        : ` — unchanged ${r.ratios.unchanged.toFixed(2)}×, first ${r.ratios.first.toFixed(2)}×`;
    const fits = r.web.every(({ r: w }) => w.status === 200 && w.lambdaBytes <= LAMBDA_RESPONSE_BYTES);
    const complete = r.web.every(({ r: w }) => (w.missing === null ? w.matched === true : w.missing === 0));
    console.log(
      `${r.size.toLocaleString('en')} domains: every scan completed with the same findings: ${yes(!r.failed)}; ${peakTarget}${ratios}; page, feed and filter answered within ${mb(LAMBDA_RESPONSE_BYTES)}: ${yes(fits)}, every critical and warning domain in page and feed (the filter found its domain): ${yes(complete)}`,
    );
  }
  console.log('');
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
