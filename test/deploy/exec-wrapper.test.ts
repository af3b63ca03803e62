import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/deploy-docs';

const WRAPPER = join(ROOT, 'functions', 'exec-wrapper.sh');
/** What Lambda's Node.js runtime passes its exec wrapper for a function of 1 024 MB (its bootstrap). */
const RUNTIME_FLAGS = ['--expose-gc', '--max-semi-space-size=51', '--max-old-space-size=922'];

/**
 * A script that allocates ALLOCATE short-lived objects (V8 grows its young generation as far as it
 * may under them), then prints its flags, arguments, whether gc() is exposed, and the young generation's size.
 */
const PROBE = `
const v8 = require('node:v8');
let keep = [], young = 0;
for (let i = 0; i < Number(process.env.ALLOCATE ?? 0); i++) {
  keep.push({ i, s: 'x' + i });
  if (keep.length > 2e5) keep = [];
  if (i % 5000 === 0) young = Math.max(young, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
}
console.log(JSON.stringify({ execArgv: process.execArgv, argv: process.argv.slice(1), gc: typeof gc, arenas: process.env.MALLOC_ARENA_MAX, youngMb: young / 2 ** 20 }));
`;

async function start(env: Record<string, string>, args: string[] = []) {
  const { stdout } = await promisify(execFile)(
    WRAPPER,
    [process.execPath, ...RUNTIME_FLAGS, '-e', PROBE, ...args],
    { env: { PATH: process.env.PATH, ...env } },
  );
  return JSON.parse(stdout) as {
    execArgv: string[];
    argv: string[];
    gc: string;
    arenas?: string;
    youngMb: number;
  };
}

describe('the scan function’s exec wrapper (functions/exec-wrapper.sh)', () => {
  it('replaces the runtime’s 51 MB semi-space with 8 MB and keeps every other flag, in order', async () => {
    const wrapped = await start({ ALLOCATE: '2000000' }, ['a b', '--max-semi-space-size=3']);
    expect(wrapped.execArgv).toEqual([
      '--max-semi-space-size=8',
      '--expose-gc',
      '--max-old-space-size=922',
      '-e',
      PROBE,
    ]);
    // The script's own arguments pass untouched, even one that looks like the flag.
    expect(wrapped.argv).toEqual(['a b', '--max-semi-space-size=3']);
    expect(wrapped.gc).toBe('function');
    // glibc's malloc arenas capped, unless the function sets its own cap.
    expect(wrapped.arenas).toBe('2');
    expect((await start({ MALLOC_ARENA_MAX: '4' })).arenas).toBe('4');
    // The flag takes effect: V8's young generation (two semi-spaces) stays within 16 MB, where the
    // runtime's own flags let it grow past 64 MB under the same allocations.
    expect(wrapped.youngMb).toBeLessThanOrEqual(16);
    const unwrapped = await start({ ALLOCATE: '2000000', SENTINEL_SEMI_SPACE_MB: 'none' });
    expect(unwrapped.youngMb).toBeGreaterThan(64);
  });

  it('takes SENTINEL_SEMI_SPACE_MB from 1 to 64, and leaves the runtime’s flags alone for anything else', async () => {
    expect((await start({ SENTINEL_SEMI_SPACE_MB: '16' })).execArgv.slice(0, 2)).toEqual([
      '--max-semi-space-size=16',
      '--expose-gc',
    ]);
    // Set but empty, as a console leaves a cleared value: the default.
    expect((await start({ SENTINEL_SEMI_SPACE_MB: '' })).execArgv[0]).toBe('--max-semi-space-size=8');
    for (const odd of ['0', '08', '65', '-1', '8 --inspect', 'eight']) {
      const started = await start({ SENTINEL_SEMI_SPACE_MB: odd });
      expect(started.execArgv.slice(0, 3), `SENTINEL_SEMI_SPACE_MB=${JSON.stringify(odd)}`).toEqual(
        RUNTIME_FLAGS,
      );
    }
  });
});
