import { execFileSync } from 'node:child_process';
import { closeSync, constants, createReadStream, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readRegularFile, readRegularFileSync } from '../../functions/local/regular-file';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';

/**
 * Found by a hostile run: `scan --state` naming a named pipe (FIFO) hung for good. The open waited
 * for a writer on one of libuv's threads, and the process could not exit even after Ctrl-C printed
 * "interrupted" (exit joins those threads): only SIGKILL ended it. The accounts and policies files
 * were read synchronously, so a FIFO there blocked the event loop itself. /dev/zero never ends.
 * Every file a person names is now opened without blocking and read only when it is a regular file.
 */

const KEY = 'named-files-key-4c2a';
let dir: string;
let sim: Simulator;
let fifo: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sentinel-named-files-'));
  fifo = join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 20, seed: 3, now: Date.now() }),
    apiKey: KEY,
  });
});
afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});
// Were a reader still waiting on the pipe (the defect), a writer that comes and goes lets it go.
afterEach(() => {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // ENXIO: nobody is reading it.
  }
});

describe('a file a person names that is not a regular file', () => {
  it('is refused by name, never read: a pipe, a directory, a device, one over the limit', async () => {
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    const big = join(dir, 'big.json');
    writeFileSync(big, '{}');
    await truncate(big, 2 * 1024 * 1024); // sparse: two MiB on paper, nothing on disk
    for (const read of [readRegularFile, async (p: string, max?: number) => readRegularFileSync(p, max)]) {
      await expect(read(fifo)).rejects.toThrow('it is a named pipe (FIFO), not a file');
      await expect(read(folder)).rejects.toThrow('it is a directory, not a file');
      await expect(read('/dev/null')).rejects.toThrow('it is a device, not a file');
      await expect(read(big, 1024 * 1024)).rejects.toThrow(
        'it is 2097152 bytes, more than the 1048576 it may be',
      );
      await expect(read(join(dir, 'absent'))).rejects.toMatchObject({ code: 'ENOENT' });
      expect((await read(big)).length).toBe(2 * 1024 * 1024);
    }
  });

  it('as --state, --policies or --accounts: the command fails at once, naming the file and what it is', async () => {
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY };
    const state = await runCli(['scan', '--state', fifo, '--alert-to', 'stdout'], env);
    expect([state.code, state.stderr.trim()]).toEqual([
      1,
      `sentinel: cannot read the state file ${fifo}: it is a named pipe (FIFO), not a file`,
    ]);
    const policies = await runCli(['scan', '--policies', fifo, '--dry-run'], env);
    expect(policies.code).toBe(2);
    expect(policies.stderr).toContain(
      `policies file ${fifo} cannot be read (it is a named pipe (FIFO), not a file)`,
    );
    const accounts = await runCli(['scan', '--accounts', fifo, '--dry-run'], env);
    expect(accounts.code).toBe(2);
    expect(accounts.stderr).toContain(
      `accounts file ${fifo} cannot be read (it is a named pipe (FIFO), not a file)`,
    );
  });

  it('as serve --state: refused before it listens, not on the first click', async () => {
    const folder = join(dir, 'state-folder');
    mkdirSync(folder, { recursive: true });
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, LINK_SIGNING_KEY: 'k'.repeat(64) };
    for (const [path, what] of [
      [folder, 'it is a directory, not a file'],
      [fifo, 'it is a named pipe (FIFO), not a file'],
    ] as const) {
      const served = await runCli(['serve', '--port', '0', '--state', path], env);
      expect([served.code, served.stdout, served.stderr]).toEqual([
        1,
        '',
        `sentinel: cannot read the state file ${path}: ${what}\n`,
      ]);
    }
  });
});

describe('--alert-to a named pipe', () => {
  it('fails at once when nobody reads it, and delivers to the reader when someone does', async () => {
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY };
    // Found by the same run: with no reader, the open waited for good, Ctrl-C included.
    const unread = await runCli(['scan', '--alert-to', fifo], env);
    expect(unread.code).toBe(1);
    expect(unread.stderr).toContain(
      `could not write the alert to ${fifo}: nobody is reading this named pipe (FIFO); start its reader before the scan`,
    );
    let received = '';
    const reader = createReadStream(fifo, 'utf8').on('data', (chunk) => {
      received += chunk;
    });
    // Its open waits in the kernel as a reader (the pipe counts it) until the scan opens to write.
    const ended = new Promise<void>((resolve) => reader.on('end', () => resolve()));
    const read = await runCli(['scan', '--alert-to', fifo], env);
    await ended;
    expect([read.code, read.stderr]).toEqual([0, '']);
    expect(received).toContain('--- SMS');
  });
});
