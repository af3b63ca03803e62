import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ReportStore } from '../../functions/core/memory/report-store';
import type { Report } from '../../functions/core/scan/scan';
import {
  COUNT_BUDGET_MS,
  handleScheduledScan,
  PUBLISH_RESERVE_MS,
  type ScheduledScanDeps,
  storeReserveMs,
} from '../../functions/handlers/scheduled-scan';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { quietScanDeps } from '../support/scan-deps';

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
    view: async () => null,
    whole: async () => null,
  };
  return store;
}

function deps(reports: ReportStore, fetch: typeof globalThis.fetch): ScheduledScanDeps {
  return quietScanDeps(sim.url, KEY, { PER_PAGE: '10', SCAN_MODE: 'full' }, { reports, fetch });
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

  /** `fetch` with the count's request (per_page=1) answered by `count`, every other one by the simulator. */
  const countAnsweredBy =
    (count: (input: string, init?: RequestInit) => Promise<Response>): typeof globalThis.fetch =>
    (input, init) =>
      new URL(String(input)).searchParams.get('per_page') === '1'
        ? count(String(input), init)
        : globalThis.fetch(input, init);

  it('gives the count a bounded time: a reseller slow to refuse it does not eat the scan with retries', async () => {
    // Prepare: the count is answered 503 after 50 s each time (a reseller under load); every
    // other request is answered at once.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const start = Date.now();
    let firstListAt: number | undefined;
    const fetch = countAnsweredBy(async () => {
      vi.setSystemTime(Date.now() + 50_000);
      return new Response('{"error":"busy"}', { status: 503, headers: { 'Retry-After': '0' } });
    });
    const noted: typeof globalThis.fetch = (input, init) => {
      if (new URL(String(input)).searchParams.get('per_page') !== '1') firstListAt ??= Date.now();
      return fetch(input, init);
    };
    // Act
    const result = await handleScheduledScan(deps(noting(), noted), 900_000);
    // Assess: one attempt (the count's budget ran out during it), not five of 50 s; the scan then
    // read the whole account.
    expect(firstListAt).toBeDefined();
    expect((firstListAt as number) - start).toBeLessThanOrEqual(COUNT_BUDGET_MS + 50_000);
    expect(result.domainsScanned + result.problems).toBe(DOMAINS);
  });

  it('keeps half the time for reading whatever the count says: totals of a trillion do not cut the scan to seconds', async () => {
    // Prepare: the count answers the simulator's page with totals of 10^12; each request takes
    // 200 ms, so the account (200 pages of 10) takes 40 s to read.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const lying = countAnsweredBy(async (input, init) => {
      const body = (await (await globalThis.fetch(input, init)).json()) as { pagination: object };
      body.pagination = { ...body.pagination, total_results: 1e12, total_pages: 1e12 };
      return Response.json(body);
    });
    const slow: typeof globalThis.fetch = (input, init) => {
      vi.setSystemTime(Date.now() + 200);
      return lying(input, init);
    };
    // Act
    const result = await handleScheduledScan(deps(noting(), slow), 900_000);
    // Assess: the whole account was read (the count asked for more than the run has).
    expect(result.domainsScanned + result.problems).toBe(DOMAINS);
  });

  it('reads the count under the deployment response cap: a server ignoring per_page=1 is cut at RESELLER_MAX_RESPONSE_MB', async () => {
    // Prepare: the count is answered with a 2 MB body (a server sending the whole account at
    // once); the deployment caps a response at 1 MB.
    const errors: string[] = [];
    const fetch = countAnsweredBy(async (input, init) => {
      const body = (await (await globalThis.fetch(input, init)).json()) as object;
      return Response.json({ ...body, padding: 'x'.repeat(2 * 1024 * 1024) });
    });
    const capped = deps(noting(), fetch);
    // Act
    await handleScheduledScan(
      {
        ...capped,
        env: { ...capped.env, RESELLER_MAX_RESPONSE_MB: '1' },
        logger: { info: () => undefined, error: (message: string) => void errors.push(message) },
      },
      900_000,
    );
    // Assess: the count was refused as too large (the read's page 1 sizes the reserve), not read whole.
    expect(errors).toContain('the account could not be counted: the report store reserve waits for the read');
  });

  it('never reads past the publish reserve, however long the count took', async () => {
    // Prepare: a run with 30 s left (10 s to read); the count takes 8 s to answer.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const start = Date.now();
    const fetch = countAnsweredBy(async (input, init) => {
      vi.setSystemTime(Date.now() + 8_000);
      return globalThis.fetch(input, init);
    });
    const slow: typeof globalThis.fetch = (input, init) => {
      vi.setSystemTime(Date.now() + 200);
      return fetch(input, init);
    };
    const reports = noting();
    // Act: the read is cut, so the run fails as incomplete after keeping its report.
    await handleScheduledScan(deps(reports, slow), 30_000).catch(() => undefined);
    // Assess: the report reached the store by the time reading had to stop for the publish
    // reserve (and a request in flight then), not 5 s of reading after the count.
    expect(reports.putAt).toBeDefined();
    expect((reports.putAt as number) - start).toBeLessThanOrEqual(30_000 - PUBLISH_RESERVE_MS + 200);
  });

  /** `fetch` refusing the count (per_page=1) with a 400, every request (the count too) taking 200 ms of the faked Date. */
  const countRefusedSlow: typeof globalThis.fetch = (input, init) => {
    vi.setSystemTime(Date.now() + 200);
    return countAnsweredBy(async () => Response.json({ error: 'bad request' }, { status: 400 }))(input, init);
  };

  it('sizes the reserve from the page 1 of the read when the count fails: the report is stored in time all the same', async () => {
    // Prepare: the count is refused; reading the account (200 pages of 10, 200 ms a request)
    // takes 40 s, more than the invocation has for reading.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const reports = noting();
    const remainingMs = 45_000;
    const end = Date.now() + remainingMs;
    const info: Array<Record<string, unknown>> = [];
    const base = deps(reports, countRefusedSlow);
    // Act: the read is cut by the deadline, so the run fails as incomplete after keeping its report.
    await handleScheduledScan(
      {
        ...base,
        logger: {
          info: (message: string, fields?: unknown) => {
            if (message === 'reading stops early to store the report')
              info.push(fields as Record<string, unknown>);
          },
          error: () => undefined,
        } as ScheduledScanDeps['logger'],
      },
      remainingMs,
    ).catch(() => undefined);
    // Assess: the read's own totals sized the reserve, and the report reached the store with the
    // publish reserve and the uploads' time left, not only the 20 s the failed count used to leave.
    expect(reports.putAt).toBeDefined();
    const left = end - (reports.putAt as number);
    expect(left).toBeGreaterThanOrEqual(PUBLISH_RESERVE_MS + storeReserveMs(DOMAINS) - 2_000);
    expect(info).toEqual([expect.objectContaining({ domains: DOMAINS, sizedBy: 'page 1' })]);
  });

  it('keeps half the time for reading when the page 1 of the read sizes the reserve', async () => {
    // Prepare: a run with 30 s left (some 10 s to read and store); the account needs 9.1 s to
    // store, more than half of that.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const start = Date.now();
    const reports = noting();
    // Act: the read is cut, so the run fails as incomplete after keeping its report.
    await handleScheduledScan(deps(reports, countRefusedSlow), 30_000).catch(() => undefined);
    // Assess: reading stopped half way to the publish reserve (after the 200 ms count, and a
    // request in flight then): not at the publish reserve, and not before half the time was read.
    const readFor = (reports.putAt as number) - start;
    const half = (30_000 - PUBLISH_RESERVE_MS - 200) / 2;
    expect(readFor).toBeGreaterThanOrEqual(200 + half);
    expect(readFor).toBeLessThanOrEqual(200 + half + 400);
  });
});
