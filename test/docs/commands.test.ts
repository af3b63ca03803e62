import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { docFiles, mask, ROOT } from '../../scripts/docs';
import { jsonSubsetMismatch, type ReadmeBlock, readmeBlocks } from '../support/readme-blocks';

/**
 * Runs the marked command blocks of README.md and docs/*.md the way a new user would: in bash,
 * through `npx sentinel` (the package's own bin), with nothing in the environment but PATH and HOME.
 * Not in the repository: a block such as `rm -f .sentinel/state.json` would remove the user's own
 * memory there. They run in a directory of their own where `npx sentinel` finds the package's bin
 * as an installed package's (node_modules/.bin/sentinel); test/docs/clone.test.ts proves that a run
 * of this file in a clone leaves the clone's files as they were. Blocks of a terminal share what they export; a `background` block
 * (simulate, serve) keeps running while the next ones run. Ports are the only thing changed: a
 * documented `--port 8080` becomes `--port 0`, and `127.0.0.1:8080` in later blocks the port it got,
 * so the test never collides with anything else on the machine.
 */

const files = docFiles().map((file) => ({
  file,
  blocks: readmeBlocks(readFileSync(join(ROOT, file), 'utf8'), file),
}));
const scratch = mkdtempSync(join(tmpdir(), 'readme-test-'));
/** Where the blocks run, as a user's shell in a clone would: `npx sentinel` is the package's bin. */
const workDir = join(scratch, 'work');
mkdirSync(join(workDir, 'node_modules', '.bin'), { recursive: true });
symlinkSync(join(ROOT, 'bin', 'sentinel.js'), join(workDir, 'node_modules', '.bin', 'sentinel'));
const baseEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
const ports = new Map<string, string>();
const terminals = new Map<string, NodeJS.ProcessEnv>();
const running: ChildProcess[] = [];

afterAll(() => {
  for (const child of running) if (child.pid && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
  rmSync(scratch, { recursive: true, force: true });
});

const withPorts = (script: string) =>
  [...ports].reduce(
    (s, [documented, actual]) =>
      s.replace(new RegExp(`127\\.0\\.0\\.1:${documented}(?!\\d)`, 'g'), `127.0.0.1:${actual}`),
    script,
  );

/** What the terminal showed, without the runtime's notices that are not the command's output. */
const shown = (output: string) =>
  output
    // Node 20: the AWS SDK's notice that its 2027 releases need Node 22, and npm's about local config.
    .replace(/^\(node:\d+\) [\s\S]*?^\(Use `node --trace-warnings[^\n]*\n/gm, '')
    .replace(/^npm warn [^\n]*\n/gm, '');

const lines = (text: string) =>
  mask(text)
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l, i, all) => l !== '' || all.slice(i).some((rest) => rest !== ''));

type FileBlock = ReadmeBlock & { readonly file: string };

function start(block: FileBlock, script: string, env: NodeJS.ProcessEnv) {
  const child = spawn('bash', ['-c', `exec 2>&1\nset -euo pipefail\n${script}`], {
    cwd: workDir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d) => {
    output += d;
  });
  return { child, output: () => output, block };
}

function expectShown(block: FileBlock, output: string) {
  const { expected } = block;
  if (!expected) return;
  if (expected.kind === 'json-subset') {
    const problem = jsonSubsetMismatch(JSON.parse(mask(expected.text)), JSON.parse(mask(shown(output))));
    expect(problem, `${block.file}:${block.line}: the output no longer matches the file`).toBeUndefined();
  } else {
    // A `<name>` left in the file after masking (a page number, say) stands for any text.
    const patterns = lines(expected.text).map(
      (line) => new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/<[\w-]+>/g, '.+?')}$`),
    );
    const actual = lines(shown(output));
    const matches =
      actual.length === patterns.length && patterns.every((p, i) => p.test(actual[i] as string));
    // On a mismatch, show the difference line by line.
    if (!matches)
      expect(actual, `${block.file}:${block.line}: the output no longer matches the file`).toEqual(
        lines(expected.text),
      );
  }
}

async function runInBackground(block: FileBlock) {
  const documented = [...block.script.matchAll(/--port (\d+)/g)].map((m) => m[1] as string);
  const script = withPorts(block.script).replace(/--port \d+/g, '--port 0');
  const proc = start(block, script, { ...baseEnv });
  running.push(proc.child);
  const want = block.expected ? lines(block.expected.text).length : 1;
  // Ready once it says where it listens and has printed as much as the file shows.
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const found = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(proc.output());
      if (found && lines(shown(proc.output())).length >= want) resolve(found[1] as string);
    };
    proc.child.stdout?.on('data', check);
    proc.child.on('exit', (code) =>
      reject(new Error(`${block.file}:${block.line} exited ${code}:\n${proc.output()}`)),
    );
  });
  for (const port of documented) ports.set(port, url);
  expectShown(block, lines(shown(proc.output())).slice(0, want).join('\n'));
}

async function runInForeground(block: FileBlock) {
  const envFile = join(scratch, `env-${block.file.replace(/\W/g, '-')}-${block.line}`);
  const env = terminals.get(`${block.file} / ${block.terminal}`) ?? { ...baseEnv };
  const proc = start(block, `${withPorts(block.script)}\nenv -0 > "$README_TEST_ENV_FILE"`, {
    ...env,
    README_TEST_ENV_FILE: envFile,
  });
  const code = await new Promise<number | null>((resolve) => proc.child.on('close', resolve));
  expect(code, `${block.file}:${block.line} failed:\n${proc.output()}`).toBe(0);
  // What the block exported stays for the next block in the same terminal.
  const after: NodeJS.ProcessEnv = {};
  for (const entry of readFileSync(envFile, 'utf8').split('\0')) {
    const at = entry.indexOf('=');
    if (at > 0) after[entry.slice(0, at)] = entry.slice(at + 1);
  }
  for (const name of ['README_TEST_ENV_FILE', 'PWD', 'OLDPWD', 'SHLVL', '_']) delete after[name];
  terminals.set(`${block.file} / ${block.terminal}`, after);
  expectShown(block, proc.output());
}

describe('the command blocks of README.md and docs/, run as written', () => {
  it('finds the marked blocks', () => {
    const all = files.flatMap((f) => f.blocks);
    expect(all.filter((b) => b.background).length).toBeGreaterThanOrEqual(4);
    expect(all.filter((b) => b.expected).length).toBeGreaterThanOrEqual(10);
    expect(files.find((f) => f.file === 'README.md')?.blocks.length).toBeGreaterThanOrEqual(1);
  });

  for (const { file, blocks } of files) {
    for (const readmeBlock of blocks) {
      const block = { ...readmeBlock, file };
      const title = `${file}:${block.line} (${block.terminal}${block.background ? ', background' : ''}): ${block.script.split('\n').at(-1)}`;
      it(title, () => (block.background ? runInBackground(block) : runInForeground(block)), 60_000);
    }
  }
});
