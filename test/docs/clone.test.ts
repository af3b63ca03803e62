import { execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/docs';

/**
 * A user's clone keeps its own memory in `.sentinel/` (the README's "On a real account" uses
 * `.sentinel/state.json`). This runs the documents' command test (commands.test.ts, which runs
 * `rm -f .sentinel/state.json` among others) inside a clone of this working tree holding such
 * files, and checks they and every tracked file are as they were. The same clone then shows that
 * `sentinel` compiles itself again when a source changed after `npm ci` built it.
 */

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=test@example.invalid', '-c', 'user.name=test', ...args], {
    cwd,
    encoding: 'utf8',
  });

const clone = mkdtempSync(join(tmpdir(), 'sentinel-clone-'));
/** What a user keeps in their clone: memory, and what alerts were delivered to. */
const MARKERS = {
  '.sentinel/state.json': '{"marker":"the user’s own memory: a test must leave it alone"}\n',
  '.sentinel/alerts.txt': 'the user’s own delivered alerts\n',
} as const;

/** The clone's files under `.sentinel/`, with their contents. */
const sentinelFolder = () =>
  Object.fromEntries(
    readdirSync(join(clone, '.sentinel'), { recursive: true, encoding: 'utf8' }).map((name) => [
      `.sentinel/${name}`,
      readFileSync(join(clone, '.sentinel', name), 'utf8'),
    ]),
  );

beforeAll(() => {
  // This working tree as it is (committed or not), as a repository of its own, with the installed packages.
  const files = git(ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard')
    .split('\0')
    .filter((f) => f && existsSync(join(ROOT, f)));
  for (const file of files) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(clone, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  git(clone, 'init', '-q');
  git(clone, 'add', '-A');
  git(clone, 'commit', '-q', '-m', 'the clone');
  for (const [file, text] of Object.entries(MARKERS)) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    writeFileSync(join(clone, file), text);
  }
});
afterAll(() => rmSync(clone, { recursive: true, force: true }));

/** Runs a command in the clone, as a user's shell would (PATH and HOME only). */
function inClone(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: clone,
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
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the docs tests in a clone', () => {
  it('leave the clone’s .sentinel/ and its tracked files as they were', async () => {
    const before = sentinelFolder();
    expect(before).toEqual(MARKERS);
    const run = await inClone('npx', ['vitest', 'run', 'test/docs/commands.test.ts'], { NO_COLOR: '1' });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/Tests +(\d+) passed \(\1\)/);
    expect(sentinelFolder()).toEqual(before);
    // Nothing tracked changed and nothing new appeared outside what .gitignore names.
    expect(git(clone, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  }, 600_000);

  it('sentinel compiles itself again when a source changed since npm ci built it, and says so', async () => {
    const built = await inClone(process.execPath, ['scripts/build-cli.js']);
    expect(built, built.stderr).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^built dist\/sentinel.js/),
    });
    const help = join(clone, 'bin', 'help.ts');
    const text = readFileSync(help, 'utf8');
    const changed = text.replace(
      "'sentinel --version (or -v): the version'",
      "'sentinel --version: changed'",
    );
    expect(changed).not.toBe(text);
    writeFileSync(help, changed);
    const run = await inClone(process.execPath, ['bin/sentinel.js', '--help']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe(
      'sentinel: compiling the command line into dist/ (bin/help.ts changed since it was built)\n',
    );
    expect(run.stdout).toMatch(/^sentinel --version: changed$/m);
    // Built once: the next start runs it as it is.
    const again = await inClone(process.execPath, ['bin/sentinel.js', '--help']);
    expect(again).toEqual({ code: 0, stdout: run.stdout, stderr: '' });
  }, 120_000);
});
