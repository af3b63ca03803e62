import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStateTable } from '../../functions/aws/dynamodb-state-store';
import { generatePortfolio, type Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { findingKeys } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { startSnsEmulator } from '../support/sns-emulator';

const KEY = 'sk_live_heap_0123456789abcdef';
const MB = 1024 * 1024;
/**
 * The heap a stateful scan may use, whatever the size of the account: V8's old space, as
 * `--max-old-space-size` sets it. A scan whose live objects outgrow it dies instead of finishing.
 * Measured: the scans below need about 32 (the program itself most of it); the engine before
 * issue 24, which held the whole state and every domain read as objects, ran out of it from 20 000
 * domains on.
 */
const HEAP_LIMIT_MB = 64;
const NOW = Date.now();

let db: Awaited<ReturnType<typeof startDynalite>>;
let sns: Awaited<ReturnType<typeof startSnsEmulator>>;
let topicArn: string;
beforeAll(async () => {
  [db, sns] = await Promise.all([startDynalite(), startSnsEmulator()]);
  topicArn = await sns.topic('heap-alerts');
});
afterAll(() => Promise.all([db.close(), sns.close()]));

/**
 * An account of `quiet` domains that need no alert beside a fixed set with findings (from a small
 * realistic portfolio, contacts and all): doubling `quiet` doubles the account, not the findings.
 */
function account(quiet: number): Portfolio {
  const base = generatePortfolio({ domains: 400, seed: 7, now: NOW });
  const flagged = new Set([...base.truth.findings.map((f) => f.key), ...base.truth.problems]);
  const healthy = base.domains.find((d) => !flagged.has(String(d.domain_name)));
  if (!healthy) throw new Error('the portfolio has no healthy domain to copy');
  return {
    ...base,
    domains: [
      ...base.domains,
      ...Array.from({ length: quiet }, (_, i) => ({ ...healthy, domain_name: `quiet-${i}.nl` })),
    ],
  };
}

interface Probe {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly peakHeapBytes: number;
  readonly heapLimitBytes: number;
}

/** One `sentinel scan --state dynamodb:TABLE --json` in a child process whose heap is capped. */
async function scanInChild(sim: Simulator, table: string): Promise<Probe> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      `--max-old-space-size=${HEAP_LIMIT_MB}`,
      '--import',
      'tsx',
      'test/support/heap-probe.ts',
      'scan',
      '--state',
      `dynamodb:${table}`,
      '--json',
    ],
    {
      env: {
        PATH: process.env.PATH,
        ...db.sdkEnv,
        ...sns.sdkEnv,
        RESELLER_BASE_URL: sim.url,
        RESELLER_API_KEY: KEY,
        ALERT_TOPIC_ARN: topicArn,
      },
      maxBuffer: 4 * MB,
      timeout: 240_000,
    },
  ).catch((error: { stdout?: string; stderr?: string; code?: unknown; signal?: unknown }) => {
    // A scan that outgrew the heap is killed by V8: say so, with V8's own line when it printed one.
    const stderr = String(error.stderr ?? '');
    const fatal = /^.*(FATAL ERROR|heap out of memory).*$/m.exec(stderr)?.[0];
    throw new Error(`the scan died (${String(error.signal ?? error.code)}): ${fatal ?? stderr.slice(-600)}`);
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Probe;
}

describe('a stateful scan in bounded memory (issue 24)', () => {
  it(`scans an account of 20 000 and of 40 000 domains, first and unchanged, each within a ${HEAP_LIMIT_MB} MB heap`, async () => {
    const findings: string[][] = [];
    for (const quiet of [20_000, 40_000]) {
      const portfolio = account(quiet);
      const sim = await startSimulator({ portfolio, apiKey: KEY, latencyMs: 0 });
      try {
        const table = `heap-bound-${quiet}`;
        await createStateTable(db.client(), table);
        for (const pass of ['first', 'unchanged'] as const) {
          const probe = await scanInChild(sim, table);
          const where = `${quiet} quiet domains, ${pass} scan (sampled peak heap ${(probe.peakHeapBytes / MB).toFixed(0)} MB): ${probe.stderr}`;
          expect(probe.code, where).toBe(0);
          expect(probe.heapLimitBytes).toBeLessThan((HEAP_LIMIT_MB + 64) * MB);
          const report = JSON.parse(probe.stdout);
          // The whole account read (each record scanned or named unreadable), its findings the same at either size.
          const unreadable = report.problems.filter((p: { resource: string }) => p.resource === 'domain');
          expect(report.stats.domains_scanned + unreadable.length, where).toBe(portfolio.domains.length);
          expect(report.summary.critical, where).toBeGreaterThan(0);
          findings.push(findingKeys(report));
          expect(findings.at(-1), where).toEqual(findings[0]);
          expect(probe.stderr, where).toMatch(
            pass === 'first'
              ? new RegExp(`published alert .*\\nstate saved to dynamodb:${table}\\n$`)
              : new RegExp(`no alert published: .*\\nstate saved to dynamodb:${table}\\n$`),
          );
        }
      } finally {
        await sim.close();
      }
    }
  }, 600_000);
});
