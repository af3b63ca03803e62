/**
 * npm run bench [-- --latency 50 --sizes 10000,100000 --concurrency 4 --per-page 100]
 *
 * Scans simulated accounts over loopback with per-request latency and prints, from one run:
 * wall time, requests and peak RSS of full mode, filtered mode and a sequential pager (the
 * baseline); ratios against the paging limit and a one-request-per-domain monitor; and each
 * Lambda bundle's size and import time against a bare `node` start measured in the same run.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { build } from 'esbuild';
import { generatePortfolio } from '../functions/simulator/portfolio';
import { startSimulator } from '../functions/simulator/server';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '50' },
    sizes: { type: 'string', default: '10000,100000' },
    concurrency: { type: 'string', default: '4' },
    'per-page': { type: 'string', default: '100' },
  },
});
const latency = Number(values.latency);
const sizes = String(values.sizes).split(',').map(Number);
const concurrency = Number(values.concurrency);
const perPage = Number(values['per-page']);
const NOW = '2026-11-22T06:00:00Z';
const KEY = 'bench-key';
const work = mkdtempSync(join(tmpdir(), 'sentinel-bench-'));

interface ChildResult {
  wallMs: number;
  requests: number;
  domainsScanned: number;
  findings: number;
  domainFindings: number;
  findingsHash: string;
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
const BUNDLE_BUDGET = { kib: 600, importMs: 250 };

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

async function main() {
  console.log(`domain-sentinel benchmark — ${new Date().toISOString()}`);
  console.log(
    `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
  );
  console.log(`latency ${latency} ms per request, concurrency ${concurrency}, per_page ${perPage}\n`);

  const child = await bundle('bench/scan-child.ts', 'scan-child', 'esm');
  const scanOnce = async (url: string, mode: string, c: number): Promise<ChildResult> => {
    const { stdout } = await run(process.execPath, [child, url, KEY, mode, String(c), String(perPage), NOW], {
      maxBuffer: 1 << 20,
    });
    return JSON.parse(stdout);
  };

  const rows: string[] = [];
  const checks: string[] = [];
  for (const size of sizes) {
    const portfolio = generatePortfolio({ domains: size, seed: 1, now: Date.parse(NOW) });
    const sim = await startSimulator({ portfolio, apiKey: KEY, latencyMs: latency, maxPerPage: perPage });
    const measure = async (mode: string, c: number) => {
      const before = sim.requests.length;
      const result = await scanOnce(sim.url, mode, c);
      const domainRequests = sim.requests.slice(before).filter((r) => r.path === '/v2/domains').length;
      return { ...result, domainRequests };
    };
    const sequential = await measure('full', 1);
    const full = await measure('full', concurrency);
    const filtered = await measure('filtered', concurrency);
    await sim.close();

    const pages = Math.ceil(size / perPage);
    const pagingLimitMs = (1 + Math.ceil((pages - 1) / concurrency)) * latency;
    const flagged = full.domainFindings;
    const filteredBound = 2 * Math.ceil(flagged / perPage) + 3;
    for (const [name, r] of [
      ['sequential pager (baseline)', sequential],
      ['full', full],
      ['filtered', filtered],
    ] as const) {
      rows.push(
        `| ${size.toLocaleString('en')} | ${name} | ${(r.wallMs / 1000).toFixed(2)} s | ${r.requests} (${r.domainRequests} domain) | ${r.peakRssMb.toFixed(0)} MB | ${(sequential.wallMs / r.wallMs).toFixed(1)}× |`,
      );
    }
    checks.push(
      `${size.toLocaleString('en')} domains (${pages} pages, ${flagged} flagged = ${((100 * flagged) / size).toFixed(0)}%):`,
      `  full time / paging limit ${(pagingLimitMs / 1000).toFixed(2)} s = ${(full.wallMs / pagingLimitMs).toFixed(3)}  (target ≤ 1.25)`,
      `  filtered domain requests ${filtered.domainRequests} ≤ 2 × ceil(${flagged}/${perPage}) + 3 = ${filteredBound}: ${filtered.domainRequests <= filteredBound ? 'yes' : 'NO'}; ${((100 * filtered.domainRequests) / full.domainRequests).toFixed(0)}% of full mode's`,
      `  filtered findings identical to full: ${filtered.findingsHash === full.findingsHash && filtered.findings === full.findings ? 'yes' : 'NO'} (${full.findings} findings)`,
      `  requests vs one-request-per-domain monitor (${size} requests): full ${(size / full.requests).toFixed(0)}× fewer, filtered ${(size / filtered.requests).toFixed(0)}× fewer`,
      `  peak RSS of the full scan: ${full.peakRssMb.toFixed(0)} MB (target ≤ 200 MB)`,
    );
  }
  console.log('| domains | mode | wall time | requests | peak RSS | speed-up vs baseline |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`\n${checks.join('\n')}\n`);

  // Lambda bundles: size, and import time against a bare node start in the same run.
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
