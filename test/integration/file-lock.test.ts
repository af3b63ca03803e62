import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RESTORE_CLAIM_MS } from '../../functions/core/memory/audit';
import { StateConflictError } from '../../functions/core/memory/state';
import { withFileLock } from '../../functions/local/file-lock';
import { FileStateStore } from '../../functions/local/file-state-store';

/**
 * The state file's lock (functions/local/file-lock.ts). It once judged a lock stale by comparing
 * the lock file's time with Date.now(): where the two clocks disagree (a container, a network file
 * system), a live lock was removed and two restores of one link were both paid for.
 */

const HOUR = 3_600_000;
let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sentinel-lock-'));
  path = join(dir, 'state.json');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** Whether `owner` took the claim. */
const claim = async (store: FileStateStore, owner: string) =>
  (await store.claimRestore('lost.com', { owner, until: Date.now() + RESTORE_CLAIM_MS }, Date.now())).taken;

/** A lock file as another holder leaves it, its time `ageMs` in the past. */
async function lockHeldBy(owner: string, ageMs = 0): Promise<void> {
  const lock = `${path}.lock`;
  await writeFile(lock, owner);
  const then = new Date(Date.now() - ageMs);
  await utimes(lock, then, then);
}

describe('the state file lock', () => {
  it('keeps a live process’s lock however old its file time looks', async () => {
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      await lockHeldBy(`${other.pid}@${hostname()}`, HOUR);
      const store = new FileStateStore(path, { lockWaitMs: 300 });
      const error = await claim(store, 'web-a').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StateConflictError);
      expect((error as Error).message).toContain('stayed locked by another process');
      expect(await readdir(dir)).toEqual(['state.json.lock']);
    } finally {
      other.kill();
    }
  });

  it('takes over a lock of its own pid: left by an earlier process (a container restarted), never held by itself', async () => {
    await lockHeldBy(`${process.pid}@${hostname()}`);
    expect(await claim(new FileStateStore(path, { lockWaitMs: 300 }), 'web-a')).toBe(true);
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('holds a lock that names no one while it is new, and takes it over once old by the file system’s clock', async () => {
    const store = new FileStateStore(path, { lockWaitMs: 300 });
    await lockHeldBy('');
    await expect(claim(store, 'web-a')).rejects.toThrow(StateConflictError);
    await lockHeldBy('', HOUR);
    expect(await claim(store, 'web-a')).toBe(true);
  });

  it('takes over at once the lock of a process of this host that is gone', async () => {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    await lockHeldBy(`${gone}@${hostname()}`);
    const store = new FileStateStore(path, { lockWaitMs: 300 });
    expect(await claim(store, 'web-a')).toBe(true);
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('judges a lock from another host by the file system’s clock: old is left behind, new is held', async () => {
    const store = new FileStateStore(path, { lockWaitMs: 300 });
    await lockHeldBy('4242@another-host');
    await expect(claim(store, 'web-a')).rejects.toThrow(StateConflictError);
    await lockHeldBy('4242@another-host', HOUR);
    expect(await claim(store, 'web-a')).toBe(true);
  });

  it('keeps the lock it holds fresh by the file system’s clock while it works: a long save is never taken for left behind', async () => {
    const lock = `${path}.lock`;
    const held = await withFileLock(
      path,
      'the test state',
      async () => {
        // As another host sees a lock its holder never touches once the stale age has passed.
        const old = new Date(Date.now() - HOUR);
        await utimes(lock, old, old);
        await vi.waitFor(
          async () => expect((await stat(lock)).mtimeMs).toBeGreaterThan(Date.now() - HOUR / 2),
          {
            timeout: 5_000,
            interval: 10,
          },
        );
        return readFile(lock, 'utf8');
      },
      10_000,
      20,
    );
    expect(held).toBe(`${process.pid}@${hostname()}`);
    await expect(stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('fails, rather than waits for good, a call queued behind one of this process that does not end', async () => {
    let hung: () => void = () => {};
    const stuck = new FileStateStore(path, {
      beforeRename: () =>
        new Promise<void>((resolve) => {
          hung = resolve;
        }),
    });
    const first = claim(stuck, 'web-a');
    await expect.poll(() => readdir(dir)).toContain('state.json.lock');
    const error = await claim(new FileStateStore(path, { lockWaitMs: 300 }), 'web-b').catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StateConflictError);
    expect((error as Error).message).toBe(
      `${path} stayed in use by another request of this process for 0.3 s`,
    );
    // The queue holds: the call after the one that gave up still waits for the first, then runs.
    const third = claim(new FileStateStore(path), 'web-c');
    hung();
    expect(await first).toBe(true);
    expect(await third).toBe(false);
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('gives one claim of many at once in one process, through stores of the same file', async () => {
    const stores = [new FileStateStore(path), new FileStateStore(path)];
    const taken = await Promise.all(
      Array.from({ length: 20 }, (_, i) => claim(stores[i % 2] as FileStateStore, `web-${i}`)),
    );
    expect(taken.filter(Boolean)).toHaveLength(1);
    expect(await readdir(dir)).toEqual(['state.json']);
  });
});
