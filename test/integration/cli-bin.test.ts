import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { ROOT } from '../../scripts/docs';

/**
 * The real `sentinel` binary as a new user runs it after `npm ci` in a clone: `npx sentinel …` from
 * the repository's root, in a shell with nothing but PATH and HOME, through package.json's `bin`.
 */

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'cli-bin-key-8e21';
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
};

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 60, seed: 7, now: Date.parse(NOW) }),
    apiKey: KEY,
  });
});
afterAll(() => sim.close());

/** Runs a shell command line from the repository's root; stderr without npm's own notices about its config. */
function sh(command: string, env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('bash', ['-c', command], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout, stderr: stderr.replace(/^npm warn [^\n]*\n/gm, '') }),
    );
  });
}

describe('npx sentinel, through package.json’s bin', () => {
  it('is declared as `sentinel`, a node script that runs the compiled command line npm ci builds', () => {
    expect(pkg.bin).toEqual({ sentinel: 'bin/sentinel.js' });
    expect(readFileSync(join(ROOT, pkg.bin.sentinel as string), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect(pkg.scripts.prepare).toBe('node scripts/build-cli.js');
  });

  it('npx sentinel --version prints the version', async () => {
    expect(await sh('npx sentinel --version')).toEqual({
      code: 0,
      stdout: `domain-sentinel ${pkg.version}\n`,
      stderr: '',
    });
  }, 60_000);

  it('npx sentinel scan --help prints only scan’s help, exit 0', async () => {
    const run = await sh('npx sentinel scan --help');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^usage: sentinel scan \[options\]\n/);
    expect(run.stdout).toContain('  --dry-run ');
    expect(run.stdout.match(/^usage:/gm)).toHaveLength(1);
    expect(run.stdout).not.toMatch(/^ {2}(simulate|serve|restore)\b/m);
  }, 60_000);

  it('npx sentinel scna exits 2 suggesting scan', async () => {
    expect(await sh('npx sentinel scna')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'sentinel: unknown command "scna"; did you mean scan?\n',
    });
  }, 60_000);

  it('npx sentinel scan --dryrun exits 2 suggesting --dry-run, never Node’s parser text', async () => {
    expect(await sh('npx sentinel scan --dryrun')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'sentinel: unknown flag --dryrun for scan; did you mean --dry-run?\n',
    });
  }, 60_000);

  it('puts nothing but the command’s output on stdout: the JSON report parses as it comes', async () => {
    const run = await sh(`npx sentinel scan --json --dry-run --now ${NOW}`, {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).summary).toEqual({ critical: 7, warning: 4, info: 7 });
  }, 60_000);

  it('npm start and npm run sentinel still work, and exit after printing when not in a terminal', async () => {
    const start = await sh(`npm start -s -- --now ${NOW}`);
    expect(start.code, start.stderr).toBe(0);
    expect(start.stdout).toMatch(/^domain-sentinel \(demo account\): 7 critical/);
    expect(start.stderr).toContain('output is not a terminal, so nothing serves these links now');
    const script = await sh('npm run -s sentinel -- --version');
    expect(script.stdout).toBe(`domain-sentinel ${pkg.version}\n`);
  }, 60_000);

  it('run from a directory that was removed, says so in one line (exit 1), not a stack trace', async () => {
    const run = await sh(
      `d=$(mktemp -d) && cd "$d" && rmdir "$d" && node ${JSON.stringify(join(ROOT, 'bin', 'sentinel.js'))} scan --dry-run`,
    );
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'sentinel: the current directory no longer exists (it was removed or moved); cd to one that does and run it again\n',
    });
  });
});
