import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildCli } from '../scripts/build-cli.js';

/**
 * The command line's start-up (`npm run bench -- --sections startup`): `sentinel --version` and
 * `sentinel scan --help` through package.json's bin, as ratios to a bare `node -e 0` measured in the
 * same run. The three are run in turn, round after round, so a machine that gets busier during the
 * run slows all three alike; the median of the rounds is compared. `npx sentinel` is shown too:
 * npm's own start comes on top of it.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

/** What the issue asks of the compiled command line, in multiples of a bare node start. */
export const STARTUP_BUDGET = { version: 3, scanHelp: 4 } as const;

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function timed(file: string, args: readonly string[]): Promise<number> {
  const started = performance.now();
  await run(file, args, { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  return performance.now() - started;
}

/** Prints the start-up table: median ms of `rounds` rounds, and each as a multiple of `node -e 0`. */
export async function startupSection(rounds = 15): Promise<void> {
  // Built as `npm ci` builds it: what a user's `sentinel` runs.
  await buildCli();
  const node = process.execPath;
  const cases = [
    { name: 'node -e 0 (the baseline)', file: node, args: ['-e', '0'] },
    {
      name: 'sentinel --version',
      file: node,
      args: ['bin/sentinel.js', '--version'],
      budget: STARTUP_BUDGET.version,
    },
    {
      name: 'sentinel scan --help',
      file: node,
      args: ['bin/sentinel.js', 'scan', '--help'],
      budget: STARTUP_BUDGET.scanHelp,
    },
    { name: 'npx sentinel --version (npm on top)', file: 'npx', args: ['sentinel', '--version'] },
  ];
  const samples = cases.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++)
    for (const [i, c] of cases.entries()) samples[i]?.push(await timed(c.file, c.args));
  const medians = samples.map(median);
  const baseline = medians[0] as number;
  console.log(`| command | median of ${rounds} | × node -e 0 | within budget |`);
  console.log('|---|---|---|---|');
  for (const [i, c] of cases.entries()) {
    const ms = medians[i] as number;
    const ratio = ms / baseline;
    const verdict = c.budget === undefined ? '—' : `${ratio <= c.budget ? 'yes' : 'NO'} (≤ ${c.budget}×)`;
    console.log(`| ${c.name} | ${ms.toFixed(0)} ms | ${ratio.toFixed(2)}× | ${verdict} |`);
  }
  console.log('');
}
