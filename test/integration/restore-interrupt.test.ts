import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { ROOT } from '../../scripts/docs';
import { runCli } from '../support/cli';
import { restorableRecord } from '../support/fixed-reseller';

/**
 * Ctrl-C while `sentinel restore --yes --state FILE` waits for the reseller's answer to the restore
 * (a paid action). docs/cli.md: "With a state store, every attempt and its outcome is kept in its
 * audit trail". The request is aborted at once and kept as sent, outcome unknown (the reseller may
 * have carried it out, and billed it), and the terminal says to check the domain's status before
 * it says "interrupted", rather than the shell ending the command after its grace period with
 * nothing kept.
 */

const KEY = 'restore-interrupt-key';
let sim: Simulator | undefined;
let dir: string | undefined;
afterEach(async () => {
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  sim = undefined;
  dir = undefined;
});

function quarantinedPortfolio(now = Date.now()): Portfolio {
  return {
    domains: [restorableRecord('lost.com', now)],
    contacts: [],
    truth: { findings: [], problems: [] },
  };
}

describe('sentinel restore, stopped by Ctrl-C while the restore is in flight', () => {
  it('keeps the attempt the reseller received in the audit trail', async () => {
    sim = await startSimulator({ portfolio: quarantinedPortfolio(), apiKey: KEY });
    dir = await mkdtemp(join(tmpdir(), 'restore-interrupt-'));
    const state = join(dir, 'state.json');
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, RESELLER_TIMEOUT_MS: '20000' };
    // The reseller restores the domain, then takes its time answering.
    sim.injectFault({
      fault: { kind: 'hang' },
      match: (r) => r.method === 'POST' && r.path === '/v2/domains/lost.com/restore',
      afterActing: true,
    });

    const child: ChildProcess = spawn(
      process.execPath,
      [join(ROOT, 'bin', 'sentinel.js'), 'restore', 'lost.com', '--yes', '--state', state],
      {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    const closed = new Promise<number>((resolve) =>
      child.on('close', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0))),
    );
    const simulator = sim;
    await vi.waitFor(() => expect(simulator.restoreCalls).toEqual(['lost.com']), {
      timeout: 20_000,
      interval: 20,
    });
    process.kill(-(child.pid as number), 'SIGINT');
    const code = await closed;
    expect(code, stderr).toBe(130);
    expect(sim.domain('lost.com')?.status).toEqual(['registered']);

    const audit = await runCli(['audit', '--json', '--state', state], env);
    const entries = (
      JSON.parse(audit.stdout || '{"entries":[]}') as {
        entries: Array<{ domain: string; outcome: string; sent: boolean; via: string }>;
      }
    ).entries;
    expect(
      entries.map(({ domain, outcome, sent, via }) => ({ domain, outcome, sent, via })),
      `${audit.stderr}\nthe restore's own output: ${stderr}`,
    ).toEqual([{ domain: 'lost.com', outcome: 'outcome_unknown', sent: true, via: 'cli' }]);
    // The operator is told what to do about it, and "interrupted" is still the last line.
    expect(stderr).toMatch(/lost\.com may or may not have been restored\. Check the domain’s status/);
    expect(stderr).toMatch(/sentinel: interrupted by SIGINT\n$/);
  }, 40_000);
});
