import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { parseSigningKeys, signLink } from '../functions/core/links/links';
import { FolderReportStore } from '../functions/local/folder-report-store';
import { lambdaNodeFlags } from '../test/support/lambda-bootstrap';
import { reportOf, urgentFindings } from './feed-section';

/**
 * The web function's report page and calendar feed for an account whose every finding is critical
 * or warning (expiring without auto-renew), read from the report and view a scan stores, each answer
 * in a process started as Lambda starts the web function (1 024 MB: lib/web-api.ts). Prints the status,
 * the size as Lambda counts it, the time and the peak RSS, or how the process ended.
 *
 * npx tsx bench/web-urgent.ts [--sizes 100000,1000000] [--memory 1024]
 */
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100000,1000000' },
    memory: { type: 'string', default: '1024' },
  },
});
const NOW = '2026-11-22T06:00:00Z';
const work = mkdtempSync(join(tmpdir(), 'sentinel-web-urgent-'));
const child = join(work, 'web-child.mjs');
await build({
  entryPoints: ['bench/web-child.ts'],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  minify: true,
  outfile: child,
  banner: {
    js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  },
  logLevel: 'error',
});
const keys = parseSigningKeys('b'.repeat(64)); // web-child's key
const base = 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod';
console.log(
  `| urgent findings | answer | status | size as Lambda counts it | time | peak RSS (${values.memory} MB function) |`,
);
console.log('|---|---|---|---|---|---|');
try {
  for (const size of String(values.sizes).split(',').map(Number)) {
    const dir = join(work, `report-${size}`);
    // Each with its finding page link, as a scan with a signing key gives them.
    const findings = urgentFindings(size, NOW).map((f) => ({
      ...f,
      actions: { page: `${base}/finding/${f.domain_name}?exp=1795932000&kid=9c68c1b1&sig=${'x'.repeat(43)}` },
    }));
    const report = reportOf(findings, NOW);
    const critical = findings.filter((f) => f.severity === 'critical').length;
    await new FolderReportStore(dir).put({
      ...report,
      summary: { critical, warning: size - critical, info: 0 },
    });
    writeFileSync(join(dir, 'urgent.json'), '[]');
    findings.length = 0;
    for (const what of ['page', 'calendar'] as const) {
      const url = signLink({
        action: what === 'page' ? 'report' : 'calendar',
        keys,
        now: Date.parse(NOW),
        baseUrl: base,
      });
      const started = performance.now();
      const run = spawnSync(
        process.execPath,
        [...lambdaNodeFlags(Number(values.memory)), child, dir, what, url, NOW],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      );
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const line = run.stdout.trim().split('\n').pop() ?? '';
      if (run.status === 0 && line.startsWith('{')) {
        const r = JSON.parse(line) as { status: number; lambdaBytes: number; ms: number; peakRssMb: number };
        console.log(
          `| ${size} | ${what} | ${r.status} | ${(r.lambdaBytes / 1e6).toFixed(2)} MB | ${(r.ms / 1000).toFixed(1)} s | ${r.peakRssMb.toFixed(0)} MB |`,
        );
      } else {
        const why = /heap out of memory/.test(run.stderr)
          ? 'heap out of memory'
          : `exit ${run.status ?? run.signal}`;
        console.log(`| ${size} | ${what} | none: ${why} after ${seconds} s | — | — | — |`);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
