import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePortfolio } from '../functions/simulator/portfolio';
import { startSimulator } from '../functions/simulator/server';
import type { Measure } from './scan.bench';

/** The scan function's budget: its 5-minute timeout less the 20 s kept to publish (scheduled-scan.ts). */
const LAMBDA_BUDGET_S = 280;

/**
 * An account that changes faster than it can be read: for each size, a stateless scan as the Lambda
 * runs it (links, alert, within its time budget) while the account gains and loses a domain every
 * few seconds, each change shifting every later page by one. Before, such a scan failed with no
 * alert at all. Prints how many reads it made, whether it published, whether the report is marked
 * incomplete, and its wall time against the budget (a ratio within the run).
 */
export async function churnSection(input: {
  readonly measure: Measure;
  readonly sizes: readonly number[];
  readonly latency: number;
  readonly perPage: number;
  readonly key: string;
  readonly now: string;
}): Promise<void> {
  console.log(
    '\n== an account that changes while it is read (a registration every few seconds, a deletion every other) ==',
  );
  console.log(
    '| domains | change every | reads | published | incomplete | findings | wall time | × budget |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const size of input.sizes) {
    const portfolio = generatePortfolio({ domains: size, seed: 1, now: Date.parse(input.now) });
    const sim = await startSimulator({
      portfolio,
      apiKey: input.key,
      latencyMs: input.latency,
      maxPerPage: input.perPage,
    });
    // Each change clears the simulator's sorted listing, which the next page sorts again: at a
    // million domains that costs the parent about a second, so changes come less often there.
    const everyMs = size >= 1_000_000 ? 10_000 : 2_000;
    const names = portfolio.domains.map((d) => String(d.domain_name));
    let n = 0;
    const churn = setInterval(() => {
      // A registration, and every other time a deletion, anywhere in the list: the count changes
      // and every later page shifts by one.
      n++;
      const at = (n * 7919) % names.length;
      if (n % 2 === 0) sim.updateDomain(names[at] as string, null);
      sim.updateDomain(`${names[(at + 1) % names.length]}-${n}.nl`, {
        status: ['registered'],
        date_expiry: '2028-01-01T00:00:00Z',
      });
    }, everyMs);
    try {
      const before = sim.requests.length;
      const r = await input.measure(sim, 'lambda', {
        BENCH_TIME_BUDGET_S: String(LAMBDA_BUDGET_S),
        BENCH_REPORT_DIR: mkdtempSync(join(tmpdir(), 'sentinel-churn-')),
      });
      const reads = sim.requests
        .slice(before)
        .filter(
          (q) => q.path === '/v2/domains' && q.query.get('page') === '1' && q.query.get('per_page') !== '1',
        ).length;
      const wall = (r.wallMs / 1000).toFixed(1);
      console.log(
        r.error
          ? `| ${size.toLocaleString('en')} | ${everyMs / 1000} s | ${reads} | NO (failed: ${r.error.slice(0, 120)}) | — | — | ${wall} s | ${(r.wallMs / 1000 / LAMBDA_BUDGET_S).toFixed(2)} |`
          : `| ${size.toLocaleString('en')} | ${everyMs / 1000} s | ${reads} | ${r.published ? 'yes' : 'NO'} | ${r.incomplete ? 'yes' : 'no'} | ${r.findings} | ${wall} s | ${(r.wallMs / 1000 / LAMBDA_BUDGET_S).toFixed(2)} |`,
      );
    } finally {
      clearInterval(churn);
      await sim.close();
    }
  }
}
