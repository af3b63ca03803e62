import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type HostileServer, startHostileServer } from '../support/hostile-server';

const KEY = 'sk_live_memory_0123456789abcdef';
const MB = 1024 * 1024;

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Probe {
  readonly code: number;
  readonly stderr: string;
  readonly rssBytes: number;
  readonly maxRssBytes: number;
}

/** Runs a real CLI scan in a child process against `url` and reads its exit status and peak RSS. */
async function probe(url: string): Promise<Probe> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'test/support/rss-probe.ts', url],
    { env: { PATH: process.env.PATH, RESELLER_API_KEY: KEY }, timeout: 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Probe;
}

describe('scan memory against a hostile reseller (issue 15, point 6)', () => {
  it('aborts a 64 MiB body while it streams, and the scan peaks under 300 MB', async () => {
    server = await startHostileServer({ mode: 'huge-body', apiKey: KEY });
    const result = await probe(server.url);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /ran past 32 MiB( together with the other answers being read at once)?, more than the limit of 32 MiB \(maxResponseBytes\)/,
    );
    expect(result.maxRssBytes).toBeGreaterThan(0);
    expect(result.maxRssBytes).toBeLessThan(300 * MB);
  }, 90_000);
});
