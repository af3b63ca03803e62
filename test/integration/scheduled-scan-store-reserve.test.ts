import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import type { ReportStore } from '../../functions/core/memory/report-store';
import type { Report } from '../../functions/core/scan/scan';
import {
  handleScheduledScan,
  PUBLISH_RESERVE_MS,
  type ScheduledScanDeps,
  storeReserveMs,
} from '../../functions/handlers/scheduled-scan';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';

const KEY = 'sk_store_reserve_5c20';
const DOMAINS = 2_000;
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: DOMAINS, seed: 11, now: Date.now() }),
    apiKey: KEY,
  });
});
afterAll(() => sim.close());
afterEach(() => {
  vi.useRealTimers();
});

/** A report store that notes when the report reached it; `put` returns at once. */
function noting(): ReportStore & { putAt?: number } {
  const store: ReportStore & { putAt?: number } = {
    location: 'memory',
    put: async (_report: Report) => {
      store.putAt = Date.now();
    },
    latest: async () => null,
    view: async () => null,
    whole: async () => null,
  };
  return store;
}

function deps(reports: ReportStore, fetch: typeof globalThis.fetch): ScheduledScanDeps {
  return {
    env: {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY_PARAMETER: '/sentinel/key',
      PER_PAGE: '10',
      SCAN_MODE: 'full',
    },
    secrets: new EnvSecretSource({ RESELLER_API_KEY: KEY }),
    sns: {} as ScheduledScanDeps['sns'],
    logger: { info: () => undefined, error: () => undefined },
    metrics: {
      addMetric: () => undefined,
      publishStoredMetrics: () => undefined,
    } as unknown as ScheduledScanDeps['metrics'],
    reports,
    fetch,
  };
}

describe('the time a scheduled scan keeps for storing its report', () => {
  it('grows with the account: each of the three uploads gets its attempt, and the bytes their pace', () => {
    // docs/performance.md: a stress million stores 2 x 253 MB and a view at 10 MB/s.
    expect(storeReserveMs(1_000_000)).toBe(9_000 + 62_200);
    expect(storeReserveMs(0)).toBe(9_000);
  });

  it('stops reading early enough that the report is stored within the time its uploads may take', async () => {
    // Prepare: only Date is faked; each request to the reseller takes 200 ms of it, so reading
    // the account (200 pages of 10) takes 40 s, more than the invocation has for reading.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const slow: typeof globalThis.fetch = (input, init) => {
      vi.setSystemTime(Date.now() + 200);
      return globalThis.fetch(input, init);
    };
    const reports = noting();
    const remainingMs = 45_000;
    const end = Date.now() + remainingMs;
    // Act: the read is cut by the deadline, so the run fails as incomplete after keeping its report.
    await handleScheduledScan(deps(reports, slow), remainingMs).catch(() => undefined);
    // Assess: the report reached the store with the publish reserve left and the uploads' time
    // (less what requests in flight at the deadline took); the fixed 20 s left too little.
    expect(reports.putAt).toBeDefined();
    const left = end - (reports.putAt as number);
    expect(left).toBeGreaterThanOrEqual(PUBLISH_RESERVE_MS + storeReserveMs(DOMAINS) - 2_000);
  });
});
