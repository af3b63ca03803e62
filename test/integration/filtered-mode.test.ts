import { afterEach, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { findingKeys, runCli } from '../support/cli';

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'filtered-mode-key-0d9e';
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function scan(mode: 'full' | 'filtered', seed: number, domains: number, extra: string[] = []) {
  const portfolio = generatePortfolio({ domains, seed, now: Date.parse(NOW) });
  sim = await startSimulator({ portfolio, apiKey: KEY, maxPerPage: 50 });
  const run = await runCli(
    ['scan', '--json', '--dry-run', '--now', NOW, '--mode', mode, '--per-page', '50', ...extra],
    {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
    },
  );
  expect(run.stderr).toBe('');
  const domainRequests = sim.requests.filter((r) => r.path === '/v2/domains').length;
  await sim.close();
  sim = undefined;
  return { report: JSON.parse(run.stdout), domainRequests, portfolio };
}

describe('--mode filtered', () => {
  it.each([
    [1, 600],
    [2, 1500],
    [3, 250],
  ])(
    'gives exactly the findings of full mode (seed %i, %i domains) in fewer requests',
    async (seed, domains) => {
      const full = await scan('full', seed, domains);
      const filtered = await scan('filtered', seed, domains);
      expect(findingKeys(filtered.report)).toEqual(findingKeys(full.report));
      // Ordered the same way too, and with the same registrant details.
      expect(filtered.report.findings).toEqual(full.report.findings);
      const flagged = full.report.findings.filter((f: { domain_name?: string }) => f.domain_name).length;
      expect(filtered.domainRequests).toBeLessThanOrEqual(2 * Math.ceil(flagged / 50) + 3);
      expect(filtered.domainRequests).toBeLessThan(full.domainRequests);
    },
  );

  it('stays within three requests for an account where nothing can be flagged', async () => {
    const portfolio = generatePortfolio({ domains: 300, seed: 8, now: Date.parse(NOW) });
    const healthy = portfolio.domains.filter(
      (d) =>
        !portfolio.truth.findings.some((f) => f.key === d.domain_name) &&
        !portfolio.truth.problems.includes(String(d.domain_name)),
    );
    sim = await startSimulator({ portfolio: { ...portfolio, domains: healthy }, apiKey: KEY });
    const run = await runCli(['scan', '--json', '--dry-run', '--now', NOW, '--mode', 'filtered'], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
    });
    expect(JSON.parse(run.stdout).findings.filter((f: { domain_name?: string }) => f.domain_name)).toEqual(
      [],
    );
    expect(sim.requests.filter((r) => r.path === '/v2/domains')).toHaveLength(3);
  });
});

describe('time budget', () => {
  it('fails with a message that says what to change, instead of being cut off mid-way', async () => {
    const portfolio = generatePortfolio({ domains: 2000, seed: 4, now: Date.parse(NOW) });
    sim = await startSimulator({ portfolio, apiKey: KEY, maxPerPage: 20, latencyMs: 100 });
    const run = await runCli(['scan', '--json', '--dry-run', '--time-budget', '1', '--concurrency', '2'], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^sentinel: the scan could not read the whole account within its time budget of 1 s \(.*\); raise the time budget \(Lambda timeout or --time-budget\), raise --concurrency, or use --mode filtered\n$/,
    );
  });
});
