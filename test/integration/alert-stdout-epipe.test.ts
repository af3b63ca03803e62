import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { ROOT } from '../../scripts/docs';
import { runCli, sentinelPipedInto } from '../support/cli';

/**
 * `scan --state FILE --alert-to stdout|FILE` saves the state only once the alert was written. When
 * the reader of the pipe goes away (`| head`, a mailer that fails) before the alert arrived whole,
 * or the file cannot be written, the publish fails the run and the state is left as it was: the
 * next scan tells the same findings again rather than "nothing new".
 */

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'epipe-review-key-7a1c3e';
let sim: Simulator;
const scratch = mkdtempSync(join(tmpdir(), 'alert-epipe-review-'));

beforeAll(async () => {
  // A digest well past the 64 KiB a pipe buffers, so the writer meets the closed pipe.
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 3_000, seed: 4, now: Date.parse(NOW), profile: 'stress' }),
    apiKey: KEY,
  });
});
afterAll(async () => {
  await sim.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** `sentinel scan --state … --alert-to stdout` piped into `consumer`; the command's own exit status. */
const scanInto = (consumer: string) =>
  sentinelPipedInto('scan --state state.json --alert-to stdout --now "$NOW"', consumer, {
    cwd: scratch,
    env: { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, NOW },
  });

describe('scan --state with --alert-to, when the alert cannot be written', () => {
  it('does not remember as announced an alert that did not arrive whole on stdout: the next scan tells it again', async () => {
    const cut = await scanInto("process.stdin.once('data', () => process.exit(0));");
    expect(cut.stderr).toMatch(/did not arrive whole/);
    expect(cut.code).not.toBe(0);

    const again = await scanInto(
      "let t = ''; process.stdin.on('data', (d) => { t += d; }).on('end', () => process.stdout.write(t));",
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.out).toMatch(/Since the last scan: \d+ new/);
  }, 60_000);

  it('does not count an alert to a closed stdout (>&-) as delivered, and still delivers to /dev/null', async () => {
    const dir = mkdtempSync(join(scratch, 'closed-'));
    const scan = (redirect: string) =>
      new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
        const shell = spawn(
          'sh',
          ['-c', `node "$SENTINEL" scan --state state.json --alert-to stdout --now "$NOW" ${redirect}`],
          {
            cwd: dir,
            env: {
              PATH: process.env.PATH,
              HOME: process.env.HOME,
              SENTINEL: join(ROOT, 'bin', 'sentinel.js'),
              RESELLER_BASE_URL: sim.url,
              RESELLER_API_KEY: KEY,
              NOW,
            },
            stdio: ['ignore', 'ignore', 'pipe'],
          },
        );
        let stderr = '';
        shell.stderr.on('data', (d) => {
          stderr += d;
        });
        shell.on('error', reject);
        shell.on('close', (code) => resolve({ code, stderr }));
      });

    // fd 1 closed: Node opens /dev/null in its place, where a write goes nowhere and succeeds.
    const closed = await scan('>&-');
    expect(closed.stderr).toContain('the alert to stdout did not arrive whole (EBADF)');
    expect(closed.stderr).not.toContain('delivered the alert');
    expect(closed.code).toBe(1);
    // Nothing saved: the state is at the generation before any scan (its lease released, at most).
    const state = join(dir, 'state.json');
    if (existsSync(state))
      expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ generation: 0, lease: null });

    // Thrown away on purpose: the alert went where it was sent.
    const discarded = await scan('>/dev/null');
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(discarded.stderr).toContain('delivered the alert to stdout');
  }, 60_000);

  it('does not remember as announced an alert that could not be appended to its file', async () => {
    const dir = mkdtempSync(join(scratch, 'file-'));
    // A directory where the file should be: the append fails as a full disk or a permission would.
    mkdirSync(join(dir, 'alerts.txt'));
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY };
    const scan = (alertTo: string) =>
      runCli(['scan', '--state', join(dir, 'state.json'), '--alert-to', alertTo, '--now', NOW], env, {
        cwd: dir,
      });

    const failed = await scan(join(dir, 'alerts.txt'));
    expect(failed.stderr).toMatch(/could not write the alert to .*alerts\.txt: EISDIR/);
    expect(failed.code).toBe(1);

    const again = await scan('stdout');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/Since the last scan: \d+ new/);
  }, 60_000);
});
