import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Fault, type Simulator, startSimulator } from '../../functions/simulator/server';
import { ROOT } from '../../scripts/docs';
import { runCli } from '../support/cli';
import { restorablePortfolio } from '../support/fixed-reseller';

const KEY = 'restore-cli-audit-key-01';
let sim: Simulator | undefined;
let dir: string | undefined;
afterEach(async () => {
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  sim = undefined;
  dir = undefined;
});

describe('sentinel restore --state when the audit trail cannot be written', () => {
  it('says the domain was restored, exits 0, and warns that the attempt was not kept', async () => {
    // Prepare: a quarantined domain, and a state file the trail refuses (a hand-edited date).
    sim = await startSimulator({ portfolio: restorablePortfolio(['lost.com']), apiKey: KEY });
    dir = await mkdtemp(join(tmpdir(), 'restore-cli-audit-'));
    const state = join(dir, 'state.json');
    await writeFile(
      state,
      JSON.stringify({
        format: 'domain-sentinel-state',
        version: 1,
        generation: 1,
        lease: null,
        state: {
          version: 1,
          scope: sim.url,
          account: null,
          started_at: null,
          last_scan_at: 'garbage',
          last_published_at: null,
          problem_keys: [],
          domains: {},
          contacts: {},
        },
      }),
    );
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY };

    // Act
    const run = await runCli(['restore', 'lost.com', '--yes', '--state', state], env);

    // Assess: the reseller restored it, and the command says so instead of failing as if it had not.
    expect(sim.restoreCalls).toEqual(['lost.com']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^restored lost\.com$/m);
    expect(run.stderr).toMatch(
      /^warning: this attempt \(restored\) could not be kept in the audit trail of .*state\.json: .*last_scan_at/m,
    );
  });
});

describe('sentinel restore --state naming a directory', () => {
  it('refuses before anything is sent, naming the problem as scan does, and restores nothing', async () => {
    sim = await startSimulator({ portfolio: restorablePortfolio(['lost.com']), apiKey: KEY });
    dir = await mkdtemp(join(tmpdir(), 'restore-cli-dir-'));
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY };

    const run = await runCli(['restore', 'lost.com', '--yes', '--state', dir], env);
    const scan = await runCli(['scan', '--dry-run', '--state', dir], env);

    expect(sim.restoreCalls).toEqual([]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`sentinel: cannot read the state file ${dir}: it is a directory, not a file\n`);
    expect(run.stdout).toBe('');
    expect(scan.code).toBe(1);
    expect(scan.stderr).toContain(`cannot read the state file ${dir}: it is a directory, not a file`);
  });
});

describe('sentinel restore when the reseller restores the domain but does not say so', () => {
  const restoreRequest = (r: { method: string; path: string }) =>
    r.method === 'POST' && r.path === '/v2/domains/lost.com/restore';
  const lookUp = (r: { method: string; path: string }) => r.method === 'GET' && r.path === '/v2/domains';
  const answers: ReadonlyArray<[string, Fault]> = [
    ['answers 500', { kind: 'status', status: 500 }],
    ['answers after RESELLER_TIMEOUT_MS', { kind: 'hang' }],
  ];

  async function restoreAgainst(fault: Fault, lookUpsFail: boolean) {
    sim = await startSimulator({ portfolio: restorablePortfolio(['lost.com']), apiKey: KEY });
    dir = await mkdtemp(join(tmpdir(), 'restore-cli-outcome-'));
    const state = join(dir, 'state.json');
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, RESELLER_TIMEOUT_MS: '300' };
    // The look-up before the restore is answered; the restore is carried out, then answered badly.
    sim.injectFault({ fault, match: restoreRequest, afterActing: true });
    const simulator = sim;
    const afterRestore = (r: { method: string; path: string }) =>
      lookUp(r) && simulator.restoreCalls.length > 0;
    if (lookUpsFail)
      sim.injectFault({ fault: { kind: 'status', status: 503 }, match: afterRestore, times: 50 });
    const run = await runCli(['restore', 'lost.com', '--yes', '--state', state], env);
    const audit = await runCli(['audit', '--json', '--state', state], env);
    return { run, entries: (JSON.parse(audit.stdout) as { entries: Array<{ outcome: string }> }).entries };
  }

  it.each(answers)(
    'keeps "restored" when it %s and a fresh look-up shows it out of quarantine',
    async (_, fault) => {
      const { run, entries } = await restoreAgainst(fault, false);

      expect(sim?.restoreCalls).toEqual(['lost.com']);
      expect(sim?.domain('lost.com')?.status).toEqual(['registered']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^restored lost\.com \(confirmed by a fresh look-up\)$/m);
      expect(entries.map((e) => e.outcome)).toEqual(['restored']);
    },
  );

  it.each(answers)(
    'keeps "outcome_unknown", never "failed", when it %s and the look-up after fails too',
    async (_, fault) => {
      const { run, entries } = await restoreAgainst(fault, true);

      expect(sim?.restoreCalls).toEqual(['lost.com']);
      expect(sim?.domain('lost.com')?.status).toEqual(['registered']);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^sentinel: The reseller answered the restore of lost\.com with .*, and its status could not be checked afterwards, so lost\.com may or may not have been restored\. Check the domain’s status/m,
      );
      expect(entries.map((e) => e.outcome)).toEqual(['outcome_unknown']);
    },
  );
});

/**
 * `sentinel restore lost.com --yes --state FILE` as a process of its own, once the simulator has
 * received its restore: the reseller restores the domain, then does not answer.
 */
async function restoreInFlight(prefix: string) {
  const simulator = await startSimulator({ portfolio: restorablePortfolio(['lost.com']), apiKey: KEY });
  sim = simulator;
  dir = await mkdtemp(join(tmpdir(), prefix));
  const state = join(dir, 'state.json');
  const env = { RESELLER_BASE_URL: simulator.url, RESELLER_API_KEY: KEY, RESELLER_TIMEOUT_MS: '20000' };
  simulator.injectFault({
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
  await vi.waitFor(() => expect(simulator.restoreCalls).toEqual(['lost.com']), {
    timeout: 20_000,
    interval: 20,
  });
  return { state, env, child, closed, stderr: () => stderr };
}

/**
 * Ctrl-C while `sentinel restore --yes --state FILE` waits for the reseller's answer to the restore
 * (a paid action). docs/cli.md: "With a state store, every attempt and its outcome is kept in its
 * audit trail". The request is aborted at once and kept as sent, outcome unknown (the reseller may
 * have carried it out, and billed it), and the terminal says to check the domain's status before
 * it says "interrupted", rather than the shell ending the command after its grace period with
 * nothing kept.
 */
describe('sentinel restore, stopped by Ctrl-C while the restore is in flight', () => {
  it('keeps the attempt the reseller received in the audit trail', async () => {
    const { state, env, child, closed, stderr: output } = await restoreInFlight('restore-cli-interrupt-');
    process.kill(-(child.pid as number), 'SIGINT');
    const code = await closed;
    const stderr = output();
    expect(code, stderr).toBe(130);
    expect(sim?.domain('lost.com')?.status).toEqual(['registered']);

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

/**
 * `sentinel restore --state FILE` killed while the reseller carries the restore out (SIGKILL, the
 * terminal closed, the laptop's power): a restore is paid, and the restore link writes it into the
 * trail before it is sent (c8c502a) so that a process that dies in between leaves "sent, outcome
 * unknown", not nothing. The command line must do the same, or the paid restore is missing from
 * the trail once its claim lapses.
 */
describe('sentinel restore, killed while the restore is in flight', () => {
  it('leaves the restore in the audit trail as sent, outcome unknown', async () => {
    const { state, env, child, closed } = await restoreInFlight('restore-cli-killed-');
    process.kill(-(child.pid as number), 'SIGKILL');
    await closed;

    const audit = await runCli(['audit', '--state', state], env);
    expect(audit.code, audit.stderr).toBe(0);
    expect(audit.stdout).toContain('lost.com: sent, outcome unknown');
    expect(audit.stdout).toContain('sentinel restore');
    const listed = await runCli(['audit', '--json', '--state', state], env);
    const entries = (JSON.parse(listed.stdout) as { entries: Array<Record<string, unknown>> }).entries;
    expect(entries.map(({ outcome, sent, via }) => ({ outcome, sent, via }))).toEqual([
      { outcome: 'restore_sending', sent: true, via: 'cli' },
    ]);
  }, 40_000);
});
