import { generatePortfolio } from '../functions/simulator/portfolio';
import { startSimulator } from '../functions/simulator/server';
import type { Measure } from './scan.bench';

/** Runs an hour apart, each with the same budget too small for the account. */
const RUNS = 8;

/**
 * An account too large for its time budget: full reads of `size` domains, each cut by a budget of
 * about a third of what a whole read takes, at successive hours. Read in the order 1…N they would
 * cut the same tail every time; a read that will not fit goes on from a page chosen by the hour
 * (paging.ts, rotation), so the runs cut different pages. Prints each run's domain pages read and
 * what the runs read together, as a share of the account's pages.
 */
export async function cutSection(input: {
  readonly measure: Measure;
  readonly size: number;
  readonly latency: number;
  readonly perPage: number;
  readonly key: string;
  readonly now: string;
}): Promise<void> {
  const portfolio = generatePortfolio({ domains: input.size, seed: 1, now: Date.parse(input.now) });
  const sim = await startSimulator({
    portfolio,
    apiKey: input.key,
    latencyMs: input.latency,
    maxPerPage: input.perPage,
  });
  try {
    const pages = Math.ceil(input.size / input.perPage);
    // A whole read takes about (pages / 4) × latency (4 in flight): a third of it, at least a second.
    const budgetS = Math.max(1, Math.round(((pages / 4) * (input.latency / 1000)) / 3));
    console.log(
      `\n== an account too large for its time budget: ${input.size.toLocaleString('en')} domains (${pages} pages), ${budgetS} s budget, runs an hour apart ==`,
    );
    console.log('| run | domain pages asked for | of all pages | incomplete | all runs so far together |');
    console.log('|---|---|---|---|---|');
    const union = new Set<number>();
    for (let run = 0; run < RUNS; run++) {
      const before = sim.requests.length;
      const r = await input.measure(sim, 'full', {
        BENCH_TIME_BUDGET_S: String(budgetS),
        BENCH_NOW: new Date(Date.parse(input.now) + run * 3_600_000).toISOString(),
      });
      const read = new Set(
        sim.requests
          .slice(before)
          .filter((q) => q.path === '/v2/domains' && q.query.get('per_page') !== '1')
          .map((q) => Number(q.query.get('page') ?? 1)),
      );
      for (const page of read) union.add(page);
      const share = (n: number) => `${((100 * n) / pages).toFixed(0)} %`;
      console.log(
        `| ${run + 1} | ${read.size} | ${share(read.size)} | ${r.error ? `failed: ${r.error.slice(0, 80)}` : r.incomplete ? 'yes' : 'no'} | ${union.size} (${share(union.size)}) |`,
      );
    }
  } finally {
    await sim.close();
  }
}
