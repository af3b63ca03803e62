import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { loadScanSettings, settingsFromEnv } from '../../functions/core/scan/config';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runScanJob } from '../../functions/use-cases/scan-job';

/*
 * A reading deadline that moves once the read's page 1 sizes the account (the scheduled scan's, when
 * the report store needs its reserve): a read it cuts says the time budget then in force, not the
 * one from before page 1.
 */

const NOW = '2026-11-27T12:00:00Z';
const KEY = 'sk_moved_deadline_4b2e';
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 2000, seed: 3, now: Date.parse(NOW) }),
    apiKey: KEY,
    maxPerPage: 10,
  });
});
afterAll(() => sim.close());
afterEach(() => {
  vi.useRealTimers();
});

describe('a scan read cut by a deadline that page 1 moved', () => {
  it('states the time budget in force once the deadline moved', async () => {
    // Only Date is faked: sockets and timers run. 600 s until page 1 tells the size, then 30 s,
    // and page 1 itself takes 60 s: the next page is past the moved deadline.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse(NOW) });
    const start = Date.now();
    let moved = false;
    const settings = loadScanSettings(
      settingsFromEnv({ RESELLER_BASE_URL: sim.url, PER_PAGE: '10', SCAN_MODE: 'auto' }),
    );
    const run = runScanJob({
      settings,
      secrets: new EnvSecretSource({ RESELLER_API_KEY: KEY }),
      now: start,
      deadline: () => start + (moved ? 30_000 : 600_000),
      onAccountSize: () => {
        moved = true;
        vi.setSystemTime(start + 60_000);
      },
    });
    // The default mode on an account of 200 pages reads by search, whose requests the deadline cuts.
    await expect(run).rejects.toThrow(/could not read the whole account within its time budget of 30 s \(/);
  });
});
