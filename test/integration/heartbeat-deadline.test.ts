import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { handleScheduledScan, type ScheduledScanDeps } from '../../functions/handlers/scheduled-scan';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';

/**
 * A heartbeat that does not answer, pinged when the invocation has little time left (a first save
 * of a large account writes until 10 s before the timeout): the ping is given up before Lambda
 * stops the invocation, so the scan that completed is not turned into a timed-out one (no
 * ScanCompleted, an error, a retry that scans and alerts again).
 */

const KEY = 'sk_heartbeat_deadline_41c2';
let sim: Simulator;
let silent: Server;
let pingUrl: string;
const held: IncomingMessage[] = [];

beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 10, seed: 4, now: Date.now() }),
    apiKey: KEY,
  });
  // Takes the ping and never answers it.
  silent = createServer((req) => {
    held.push(req);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  pingUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/ping-secret`;
});
afterAll(async () => {
  await sim.close();
  silent.closeAllConnections();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the heartbeat near the end of the invocation', () => {
  it('gives a ping that gets no answer up before the invocation ends, and the metrics are still published', async () => {
    // Prepare: only Date is faked, so sockets and timers run. When the scan is logged as
    // completed, the invocation has 3 s left.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const remainingMs = 900_000;
    const started = Date.now();
    const errors: string[] = [];
    let published = false;
    const deps: ScheduledScanDeps = {
      env: { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY_PARAMETER: '/sentinel/key' },
      secrets: new EnvSecretSource({ RESELLER_API_KEY: KEY }),
      sns: {} as ScheduledScanDeps['sns'],
      dynamodb: {} as ScheduledScanDeps['dynamodb'],
      logger: {
        info: (message: string) => {
          if (message === 'scan completed') vi.setSystemTime(started + remainingMs - 3_000);
        },
        error: (_message: string, fields?: unknown) => {
          errors.push(JSON.stringify(fields));
        },
      } as ScheduledScanDeps['logger'],
      metrics: {
        addMetric: () => undefined,
        publishStoredMetrics: () => {
          published = true;
        },
      } as unknown as ScheduledScanDeps['metrics'],
      heartbeatUrl: async () => pingUrl,
    };
    const t0 = performance.now();

    // Act
    await handleScheduledScan(deps, remainingMs);

    // Assess: the ping was sent, given up within the 3 s left, and said so without the URL.
    const took = performance.now() - t0;
    expect(held.length).toBe(1);
    expect(took).toBeLessThan(3_000);
    expect(published).toBe(true);
    expect(errors.join('\n')).toMatch(/heartbeat ping to 127\.0\.0\.1:\d+ failed: no answer within/);
    expect(errors.join('\n')).not.toContain('ping-secret');
  });
});
