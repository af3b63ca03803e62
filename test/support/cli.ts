import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CliIo, main } from '../../bin/cli';
import { InterruptedError } from '../../bin/interrupt';

/** The repository, where bin/sentinel.js is built. */
const REPO = fileURLToPath(new URL('../..', import.meta.url));

let scratch: string | undefined;
/**
 * The working directory of the in-process runs of this test file (one per file, so a `serve` finds
 * what a `scan` of the same file kept under `.sentinel/`): never the repository, where a user keeps
 * their own `.sentinel/`. Removed when the file's tests are done.
 */
export function testCwd(): string {
  if (scratch === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'sentinel-cli-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    scratch = dir;
  }
  return scratch;
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the CLI in-process with its own environment (nothing from the test's process.env leaks in),
 * in {@link testCwd} unless `extra.cwd` names another directory.
 */
export async function runCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  extra: Partial<CliIo> = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    cwd: testCwd(),
    env: { AWS_REGION: 'us-east-1', ...env },
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    ...extra,
  });
  return { code, stdout, stderr };
}

/** (name, kind, severity) of every finding in a JSON report, sorted, for comparison with ground truth. */
export function findingKeys(report: { findings: Array<Record<string, unknown>> }): string[] {
  return report.findings.map((f) => `${f.domain_name ?? f.handle} ${f.kind} ${f.severity}`).sort();
}

/** Starts a long-running CLI command (simulate, serve) in-process; resolves with its URL and a stop function. */
export async function startCliServer(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  extra: Partial<CliIo> = {},
) {
  // Stopped as Ctrl-C stops the real command line: its signal aborts.
  const controller = new AbortController();
  let listening: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => {
    listening = resolve;
  });
  let stdout = '';
  let stderr = '';
  const done = runCli(argv, env, {
    ...extra,
    signal: controller.signal,
    onListening: listening,
    // Teed, so what a server printed can be read while it runs.
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  }).then((run) => ({ ...run, stdout, stderr }));
  const result = await Promise.race([
    url,
    done.then((r) => Promise.reject(new Error(`exited early: ${r.stderr}`))),
  ]);
  return {
    url: result,
    /** What it has printed so far. */
    output: () => ({ stdout, stderr }),
    /** Stops it as Ctrl-C does (exit status 130), and waits until it has. */
    stop: async () => {
      controller.abort(InterruptedError.of('SIGINT'));
      return done;
    },
  };
}

/**
 * The real command line (bin/sentinel.js, as `npm run sentinel` runs it) run by bash with
 * `args` and its stdout piped into `node -e consumer`, as a user's `| jq` or `| head` would: the
 * command's own exit status (PIPESTATUS), what the consumer wrote, and the command's stderr.
 */
export function sentinelPipedInto(
  args: string,
  consumer: string,
  options: { readonly cwd: string; readonly env: Readonly<Record<string, string>> },
): Promise<{ code: number; out: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const script =
      `node "$SENTINEL" ${args} | node -e "$CONSUMER"; ` +
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's own ${…}, not a template
      'echo "exit=${PIPESTATUS[0]}" >&2';
    const shell = spawn('bash', ['-c', script], {
      cwd: options.cwd,
      env: {
        SENTINEL: join(REPO, 'bin', 'sentinel.js'),
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        CONSUMER: consumer,
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    shell.stdout.on('data', (d) => {
      out += d;
    });
    shell.stderr.on('data', (d) => {
      stderr += d;
    });
    shell.on('error', reject);
    shell.on('close', () => {
      const code = Number(/exit=(\d+)\n$/.exec(stderr)?.[1] ?? Number.NaN);
      resolve({ code, out, stderr: stderr.replace(/exit=\d+\n$/, '') });
    });
  });
}
