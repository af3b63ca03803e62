import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/deploy-docs';
import { lambdaNodeFlags } from '../support/lambda-bootstrap';

const WRAPPER = join(ROOT, 'functions', 'exec-wrapper.sh');
/** What Lambda's Node.js runtime passes its exec wrapper for a function of 1 024 MB, after node itself. */
const RUNTIME_FLAGS = lambdaNodeFlags(1024);

/**
 * The entry script, in a file as /var/runtime/index.mjs is: it allocates ALLOCATE short-lived
 * objects (V8 grows its young generation as far as it may under them), then prints its flags,
 * arguments, whether gc() is exposed, the malloc arena cap and the young generation's size.
 */
const PROBE = `
const v8 = require('node:v8');
let keep = [], young = 0;
for (let i = 0; i < Number(process.env.ALLOCATE ?? 0); i++) {
  keep.push({ i, s: 'x' + i });
  if (keep.length > 2e5) keep = [];
  if (i % 5000 === 0) young = Math.max(young, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
}
console.log(JSON.stringify({ execArgv: process.execArgv, argv: process.argv.slice(2), gc: typeof gc, arenas: process.env.MALLOC_ARENA_MAX, youngMb: young / 2 ** 20 }));
`;
const dir = mkdtempSync(join(tmpdir(), 'exec-wrapper-'));
const ENTRY = join(dir, 'index.cjs');
writeFileSync(ENTRY, PROBE);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Started {
  execArgv: string[];
  argv: string[];
  gc: string;
  arenas?: string;
  youngMb: number;
  stderr: string;
}

async function start(
  env: Record<string, string>,
  flags = RUNTIME_FLAGS,
  args: string[] = [],
): Promise<Started> {
  const { stdout, stderr } = await promisify(execFile)(
    WRAPPER,
    [process.execPath, ...flags, ENTRY, ...args],
    {
      env: { PATH: process.env.PATH, ...env },
    },
  );
  return { ...JSON.parse(stdout), stderr };
}

describe('the scan function’s exec wrapper (functions/exec-wrapper.sh)', () => {
  it('replaces the runtime’s 51 MB semi-space with 8 MB and keeps every other argument, in order', async () => {
    const wrapped = await start({ ALLOCATE: '2000000' });
    expect(wrapped.execArgv).toEqual([
      '--expose-gc',
      '--max-http-header-size',
      '81920',
      '--max-old-space-size=922',
      '--max-semi-space-size=8',
    ]);
    expect(wrapped.gc).toBe('function');
    expect(wrapped.stderr).toBe('');
    // The flag takes effect: V8's young generation (two semi-spaces) stays within 16 MB, where the
    // runtime's own flags let it grow past 64 MB under the same allocations.
    expect(wrapped.youngMb).toBeLessThanOrEqual(16);
    const unwrapped = await start({ ALLOCATE: '2000000', SENTINEL_SEMI_SPACE_MB: 'none' });
    expect(unwrapped.youngMb).toBeGreaterThan(64);
    // glibc's malloc arenas capped, unless the function sets its own cap.
    expect(wrapped.arenas).toBe('2');
    expect((await start({ MALLOC_ARENA_MAX: '4' })).arenas).toBe('4');
  });

  it('takes every spelling of the flag before the entry, and nothing from the entry’s own arguments', async () => {
    const started = await start(
      {},
      ['--max_semi_space_size=51', '--expose-gc'],
      ['a b', '--max-semi-space-size=3', ''],
    );
    expect(started.execArgv).toEqual(['--expose-gc', '--max-semi-space-size=8']);
    expect(started.argv).toEqual(['a b', '--max-semi-space-size=3', '']);
  });

  it('takes SENTINEL_SEMI_SPACE_MB from 1 to 64, and for anything else leaves the runtime’s flags alone and says so', async () => {
    expect((await start({ SENTINEL_SEMI_SPACE_MB: '16' })).execArgv).toContain('--max-semi-space-size=16');
    // Set but empty, as a console leaves a cleared value: the default.
    expect((await start({ SENTINEL_SEMI_SPACE_MB: '' })).execArgv).toContain('--max-semi-space-size=8');
    for (const odd of ['0', '08', '65', '-1', '8 --inspect', 'eight', '1'.repeat(25)]) {
      const started = await start({ SENTINEL_SEMI_SPACE_MB: odd });
      expect(started.execArgv, `SENTINEL_SEMI_SPACE_MB=${JSON.stringify(odd)}`).toEqual(RUNTIME_FLAGS);
      expect(started.stderr).toContain("is not a whole number from 1 to 64; the runtime's flags stand");
    }
  });

  it('is kept with Unix line ends: a carriage return after #!/bin/sh would stop the function from starting', () => {
    expect(readFileSync(WRAPPER, 'utf8')).not.toContain('\r');
  });
});
