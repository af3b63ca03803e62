import { randomBytes } from 'node:crypto';
import { type FileHandle, link, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { retry } from '../core/base/retry';
import { StateConflictError, StateError } from '../core/memory/state';

/** How long to wait for another process's lock before giving up. */
const LOCK_WAIT_MS = 10_000;
/**
 * A lock written on another host (a shared drive), whose process cannot be asked whether it
 * lives, is taken as left behind once it is this old by the file system's own clock.
 */
const STALE_LOCK_MS = 30_000;
/** How often a holder writes its lock again, so its file time says it lives however long it holds it. */
const REFRESH_LOCK_MS = STALE_LOCK_MS / 3;
/** What a lock file holds: the process that took it, and where. */
const OWNER = `${process.pid}@${hostname()}`;

/** The lock-holding calls of this process, per file: they take turns before they reach the file. */
const turns = new Map<string, Promise<void>>();

/**
 * Runs `fn` holding `<path>.lock`: one caller at a time, in this process and between processes.
 *
 * In this process callers queue on a promise, so two requests of one server (`sentinel serve`)
 * never rely on the file system to keep them apart. Between processes the lock file is created
 * with O_EXCL and names its owner (`pid@host`); a lock whose process on this host is gone is
 * removed at once. Staleness is never judged by comparing the file's time with this process's
 * clock: the two need not agree (a container, a network file system), and a live lock judged
 * stale is two writers at once.
 */
export async function withFileLock<T>(
  path: string,
  location: string,
  fn: () => Promise<T>,
  waitMs = LOCK_WAIT_MS,
  refreshMs = REFRESH_LOCK_MS,
): Promise<T> {
  const before = turns.get(path) ?? Promise.resolve();
  let done = () => {};
  const mine = new Promise<void>((resolve) => {
    done = resolve;
  });
  const queue = before.then(() => mine);
  turns.set(path, queue);
  try {
    await inTurn(before, location, waitMs);
    return await holdingFile(path, location, fn, waitMs, refreshMs);
  } finally {
    done();
    if (turns.get(path) === queue) turns.delete(path);
  }
}

/**
 * Waits for the callers before this one, at most `waitMs`: a call that never ends (a file system
 * that hangs) fails those after it, as another process's lock would, and never holds them for good.
 */
async function inTurn(before: Promise<void>, location: string, waitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new StateConflictError(
            `${location} stayed in use by another request of this process for ${waitMs / 1000} s`,
          ),
        ),
      waitMs,
    );
  });
  try {
    await Promise.race([before, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function holdingFile<T>(
  path: string,
  location: string,
  fn: () => Promise<T>,
  waitMs: number,
  refreshMs: number,
): Promise<T> {
  const lock = `${path}.lock`;
  await mkdir(dirname(path), { recursive: true });
  const handle = await retry(() => takeLock(lock, location, waitMs), {
    retries: Number.POSITIVE_INFINITY,
    minTimeout: 5,
    maxTimeout: 200,
    maxRetryTime: waitMs,
    shouldRetry: ({ error }) => error instanceof StateConflictError,
  });
  // Written again through the handle it was created with: the file system's clock moves its time
  // on, so another host never takes a long save's lock for left behind, and a lock broken
  // meanwhile (an unlinked file) is never written over the new holder's.
  const refresh = setInterval(() => void handle.write(OWNER, 0, 'utf8').catch(() => undefined), refreshMs);
  try {
    return await fn();
  } finally {
    clearInterval(refresh);
    await handle.close().catch(() => undefined);
    await rm(lock, { force: true });
  }
}

/**
 * Creates the lock file with its owner in it (returned open, for the holder to refresh), or fails with StateConflictError while another
 * holds it (tried again for `waitMs`; the last try's error is what the caller sees). A lock
 * left by a process that is gone is removed, so the next try takes it.
 */
async function takeLock(lock: string, location: string, waitMs: number): Promise<FileHandle> {
  try {
    const handle = await open(lock, 'wx', 0o600);
    try {
      await handle.writeFile(OWNER, 'utf8');
    } catch (error) {
      // A lock that names no one would hold until it is 30 s old: give it up at once.
      await handle.close();
      await rm(lock, { force: true });
      throw error;
    }
    return handle;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new StateError(`cannot lock the state file ${location}: ${(error as Error).message}`, {
        cause: error,
      });
  }
  const owner = await leftBehindBy(lock);
  if (owner !== null) await breakLock(lock, owner);
  throw new StateConflictError(
    `${location} stayed locked by another process for ${waitMs / 1000} s (${lock}); remove the lock file if no scan is running`,
  );
}

/**
 * The owner written in a lock that is certainly left behind, or null while it may be held: a
 * process of this host that no longer runs (or this process itself, which the queue above lets
 * hold a file once: a lock of its pid was left by an earlier process, as after a container
 * restart); one of another host, or one that names no one (a crash between creating and writing
 * it), once it is STALE_LOCK_MS old by the file system's clock.
 */
async function leftBehindBy(lock: string): Promise<string | null> {
  const owner = await readFile(lock, 'utf8').catch(() => null);
  if (owner === null) return null; // gone already: the next try takes it
  const at = owner.indexOf('@');
  const pid = owner.slice(0, at);
  if (at > 0 && owner.slice(at + 1) === hostname() && /^\d+$/.test(pid))
    return Number(pid) === process.pid || !alive(Number(pid)) ? owner : null;
  return (await fileSystemAge(lock)) > STALE_LOCK_MS ? owner : null;
}

/**
 * Removes a lock judged left behind by `owner`, and only that one: two processes may judge the
 * same lock, and the slower must not remove the lock the faster took meanwhile. The lock is moved
 * aside under a name of this process's own, read again there, and put back when it is another's.
 */
async function breakLock(lock: string, owner: string): Promise<void> {
  const aside = `${lock}.${process.pid}.${randomBytes(4).toString('hex')}.broken`;
  try {
    await rename(lock, aside);
  } catch {
    return; // gone already
  }
  try {
    if ((await readFile(aside, 'utf8').catch(() => owner)) !== owner)
      await link(aside, lock).catch(() => undefined); // a live lock: back in place, unless a new one is there
  } finally {
    await rm(aside, { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How old `file` is by the file system's clock: against a file written there now, not against Date.now(). */
async function fileSystemAge(file: string): Promise<number> {
  const probe = `${file}.${process.pid}.age`;
  try {
    await (await open(probe, 'w', 0o600)).close();
    const [lockTime, now] = await Promise.all([stat(file), stat(probe)]);
    return now.mtimeMs - lockTime.mtimeMs;
  } catch {
    return 0;
  } finally {
    await rm(probe, { force: true });
  }
}
