import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  constants as fsConstants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InterruptedError } from '../../bin/interrupt';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { ROOT } from '../../scripts/docs';
import { runCli } from '../support/cli';
import { startSnsEmulator } from '../support/sns-emulator';

/**
 * Ctrl-C and SIGTERM through the real `sentinel` (package.json's bin, as `npx sentinel` runs it)
 * during a scan with memory that would publish: against a simulator that answers each request 3 s
 * after it came, so the scan is mid-read when the signal arrives. The process must be gone within
 * 2 s of the signal, exit 130 or 143, say "interrupted", publish nothing and leave the state file
 * as it was (and no lease: the next scan completes at once).
 */

const KEY = 'cli-signals-key-7d2e';
const LATENCY_MS = 3_000;
const STOP_WITHIN_MS = 2_000;

let sim: Simulator;
let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let topicArn: string;
let queue: string;
const scratch = mkdtempSync(join(tmpdir(), 'cli-signals-'));
const state = join(scratch, 'state.json');
const env = (): NodeJS.ProcessEnv => ({
  ...emulator.sdkEnv,
  RESELLER_BASE_URL: sim.url,
  RESELLER_API_KEY: KEY,
  ALERT_TOPIC_ARN: topicArn,
});

beforeAll(async () => {
  const portfolio = generatePortfolio({ domains: 60, seed: 3, now: Date.now() });
  sim = await startSimulator({ portfolio, apiKey: KEY, latencyMs: LATENCY_MS });
  emulator = await startSnsEmulator();
  topicArn = await emulator.topic('cli-signals');
  queue = await emulator.queueSubscribedTo(topicArn, 'cli-signals-all');
  // The memory as a first scan leaves it, its alert delivered.
  const first = await runCli(['scan', '--state', state], env(), { sns: emulator.snsClient, cwd: scratch });
  expect(first.code, first.stderr).toBe(0);
  expect(await emulator.drain(queue)).toHaveLength(1);
  // News since: the next scan has something to publish (the last test shows it does).
  const critical = portfolio.truth.findings.find((f) => f.kind === 'expiring' && f.severity === 'critical');
  const record = sim.domain(critical?.key as string);
  sim.updateDomain('signal-news.nl', {
    ...record,
    domain_name: 'signal-news.nl',
    sld: 'signal-news',
    tld: 'nl',
  });
  // npx finds the package's bin here as it does in a clone, without running where a user keeps files.
  mkdirSync(join(scratch, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(join(ROOT, 'bin', 'sentinel.js'), join(scratch, 'node_modules', '.bin', 'sentinel'));
}, 60_000);

afterAll(async () => {
  await sim?.close();
  await emulator?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A command started in its own process group, as a terminal starts a foreground job; its output and end. */
function started(file: string, args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const child: ChildProcess = spawn(file, args, {
    cwd: scratch,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env(), ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
  });
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  // 'close': the process ended and every process holding its output (npm's node child too) let go.
  // Its status as a shell reports it: the exit code, or 128 + the signal that ended it (npm ends
  // itself with the signal it was sent once its child is gone).
  const closed = new Promise<number>((resolve) =>
    child.on('close', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0))),
  );
  return { child, closed, output: () => ({ stdout, stderr }) };
}

/** Waits until the scan's first request reached the simulator: the scan is reading, its answer 3 s away. */
async function scanIsReading(before: number) {
  await vi.waitFor(() => expect(sim.requests.length).toBeGreaterThan(before), {
    timeout: 30_000,
    interval: 20,
  });
}

/** Signals the run (its whole process group, as Ctrl-C in a terminal does) and measures until it is gone. */
async function interrupt(run: ReturnType<typeof started>, signal: NodeJS.Signals) {
  const sentAt = performance.now();
  process.kill(-(run.child.pid as number), signal);
  const code = await run.closed;
  return { code, goneAfterMs: performance.now() - sentAt, ...run.output() };
}

describe('sentinel scan, stopped by a signal', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s: gone within 2 s with exit %i, "interrupted", nothing published, the state file as it was',
    async (signal, status) => {
      const before = readFileSync(state);
      const requests = sim.requests.length;
      const run = started(process.execPath, [join(ROOT, 'bin', 'sentinel.js'), 'scan', '--state', state]);
      await scanIsReading(requests);
      const stopped = await interrupt(run, signal);
      expect(stopped.stderr).toMatch(new RegExp(`sentinel: interrupted by ${signal}\\n$`));
      expect(stopped.stdout).toBe('');
      expect(stopped.code).toBe(status);
      expect(stopped.goneAfterMs).toBeLessThan(STOP_WITHIN_MS);
      expect(readFileSync(state).equals(before)).toBe(true);
      expect(await emulator.drain(queue)).toEqual([]);
    },
    60_000,
  );

  // Found by a hostile run: with one of libuv's threads blocked (here reading a named pipe that a
  // writer holds open and never writes to; a DNS lookup that hangs does the same), the command
  // said "interrupted" and never ended: process.exit() waits for those threads. It now ends by
  // the signal itself, which waits for nothing.
  it('SIGINT while a thread is blocked reading a pipe: gone within 2 s, exit 130', async () => {
    const pipe = join(scratch, 'bootstrap-pipe');
    execFileSync('mkfifo', [pipe]);
    const run = started(
      process.execPath,
      [join(ROOT, 'bin', 'sentinel.js'), 'scan', '--registry-check', '--dry-run'],
      {
        RDAP_BOOTSTRAP_URL: pipe,
      },
    );
    // Once the scan opens the pipe to read, a writer that never writes leaves its read blocked.
    let writer: number | undefined;
    try {
      await vi.waitFor(
        () => {
          writer = openSync(pipe, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
        },
        { timeout: 30_000, interval: 20 },
      );
      const stopped = await interrupt(run, 'SIGINT');
      expect(stopped.stderr).toMatch(/sentinel: interrupted by SIGINT\n$/);
      expect(stopped.code).toBe(130);
      expect(stopped.goneAfterMs).toBeLessThan(STOP_WITHIN_MS);
    } finally {
      if (writer !== undefined) closeSync(writer);
    }
  }, 60_000);

  it('through npx: a Ctrl-C stops npm and sentinel within 2 s, exit 130', async () => {
    const before = readFileSync(state);
    const requests = sim.requests.length;
    const run = started('npx', ['sentinel', 'scan', '--state', state]);
    await scanIsReading(requests);
    const stopped = await interrupt(run, 'SIGINT');
    expect(stopped.stderr).toContain('sentinel: interrupted by SIGINT\n');
    expect(stopped.stdout).toBe('');
    expect(stopped.code).toBe(130);
    // Gone means the node process too: it held the output pipes until it ended.
    expect(stopped.goneAfterMs).toBeLessThan(STOP_WITHIN_MS);
    expect(readFileSync(state).equals(before)).toBe(true);
    expect(await emulator.drain(queue)).toEqual([]);
  }, 90_000);

  it('stops by itself, aborting what is in flight: against a reseller that never answers, main() returns 130 at once', async () => {
    // In-process there is no shell to end it: only the scan's own stop can make main() return.
    const hanging = await startSimulator({
      portfolio: generatePortfolio({ domains: 60, seed: 3, now: Date.now() }),
      apiKey: KEY,
    });
    hanging.injectFault({ fault: { kind: 'hang' }, times: 1_000 });
    try {
      const controller = new AbortController();
      const done = runCli(
        ['scan', '--dry-run'],
        { ...env(), RESELLER_BASE_URL: hanging.url },
        {
          signal: controller.signal,
        },
      );
      await vi.waitFor(() => expect(hanging.requests.length).toBeGreaterThan(0), { interval: 20 });
      controller.abort(InterruptedError.of('SIGINT'));
      expect(await done).toEqual({ code: 130, stdout: '', stderr: 'sentinel: interrupted by SIGINT\n' });
    } finally {
      await hanging.close();
    }
  });

  // Found by a hostile run: the signal was checked only before the alert left, so a webhook (or SNS)
  // that never answered kept the scan waiting out its retries; the shell then ended it after its
  // grace, with the lease still in the state file, and the next scan waited 30 s and failed.
  it('stopped while the alert is being posted: main() returns 130 at once and releases the lease', async () => {
    const { createServer } = await import('node:http');
    let posted = 0;
    const webhook = createServer((request) => {
      posted += 1;
      request.resume();
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    const { port } = webhook.address() as { port: number };
    const fresh = join(scratch, 'posting.json');
    try {
      const controller = new AbortController();
      const done = runCli(
        ['scan', '--state', fresh, '--webhook', `http://127.0.0.1:${port}/hook`, '--webhook-format', 'json'],
        env(),
        { signal: controller.signal, cwd: scratch },
      );
      await vi.waitFor(() => expect(posted).toBe(1), { timeout: 30_000, interval: 20 });
      const abortedAt = performance.now();
      controller.abort(InterruptedError.of('SIGINT'));
      const run = await done;
      expect(performance.now() - abortedAt).toBeLessThan(STOP_WITHIN_MS);
      expect(run.code).toBe(130);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe('sentinel: interrupted by SIGINT\n');
      expect(JSON.parse(readFileSync(fresh, 'utf8')).lease ?? null).toBeNull();
    } finally {
      webhook.closeAllConnections();
      webhook.close();
    }
  }, 60_000);

  // Found by a hostile run: a Ctrl-C during `scan --accounts` listed every account as COULD NOT BE
  // READ, and said so again on stderr per account, when nothing had failed: the person stopped it.
  it('scan --accounts stopped by a signal says each unfinished account was stopped, not unreadable', async () => {
    const hanging = await startSimulator({
      portfolio: generatePortfolio({ domains: 60, seed: 3, now: Date.now() }),
      apiKey: KEY,
    });
    hanging.injectFault({ fault: { kind: 'hang' }, times: 1_000 });
    const accounts = join(scratch, 'accounts.json');
    writeFileSync(accounts, JSON.stringify({ accounts: [{ name: 'solo', apiKeyEnv: 'SOLO_KEY' }] }));
    try {
      const controller = new AbortController();
      const done = runCli(
        ['scan', '--accounts', accounts, '--dry-run'],
        { ...env(), RESELLER_BASE_URL: hanging.url, SOLO_KEY: KEY },
        { signal: controller.signal },
      );
      await vi.waitFor(() => expect(hanging.requests.length).toBeGreaterThan(0), { interval: 20 });
      controller.abort(InterruptedError.of('SIGINT'));
      const run = await done;
      expect(run.code).toBe(130);
      expect(run.stdout).toContain('  solo: STOPPED by SIGINT before it finished\n');
      expect(run.stdout).not.toContain('COULD NOT BE READ');
      expect(run.stderr).toBe('sentinel: interrupted by SIGINT\n');
    } finally {
      await hanging.close();
    }
  });

  it('left no lease behind: the same scan, not stopped, publishes the news and saves at once', async () => {
    const run = await runCli(['scan', '--state', state], env(), { sns: emulator.snsClient, cwd: scratch });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^published alert \S+ to /);
    expect(run.stdout).toContain('state saved to');
    const [published] = await emulator.drain(queue);
    expect(published?.Message).toContain('signal-news.nl');
  }, 60_000);
});
