import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  handleScheduledScan,
  PUBLISH_RESERVE_MS,
  type ScheduledScanDeps,
} from '../../functions/handlers/scheduled-scan';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { quietScanDeps } from '../support/scan-deps';

const KEY = 'sk_deadline_7d41';
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 20, seed: 8, now: Date.now() }),
    apiKey: KEY,
  });
});
afterAll(() => sim.close());
afterEach(() => {
  vi.useRealTimers();
});

function deps(heartbeatUrl: () => Promise<string | undefined>): ScheduledScanDeps {
  return quietScanDeps(sim.url, KEY, {}, { heartbeatUrl });
}

describe('the scheduled scan’s deadline', () => {
  it('counts from the invocation: a slow read before the scan comes out of the scan’s time, not the publish reserve', async () => {
    // Prepare: only Date is faked, so sockets and timers run; the heartbeat URL's read from SSM
    // takes 100 s (SDK retries), past all the time the invocation had for the scan.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const remainingMs = 60_000;
    const slowRead = async () => {
      vi.setSystemTime(Date.now() + 100_000);
      return undefined;
    };
    // Act / Assess: Lambda stops the invocation 60 s after it began; a deadline counted from the
    // end of the read (160 s on) would let the scan run into the timeout with nothing published.
    await expect(handleScheduledScan(deps(slowRead), remainingMs)).rejects.toThrow(
      /could not read the whole account within its time budget/,
    );
  });

  it('scans as usual when the reads before it are quick (the negative control)', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const quickRead = async () => {
      vi.setSystemTime(Date.now() + 1_000);
      return undefined;
    };
    const result = await handleScheduledScan(deps(quickRead), PUBLISH_RESERVE_MS + 60_000);
    expect(result.domainsScanned).toBeGreaterThan(0);
  });
});
