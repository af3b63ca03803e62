import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';

/**
 * Reading a file a person named (the state, an accounts or policies file). Opened without blocking
 * and checked before a byte is read: a named pipe would block the open until someone writes to it
 * (and a blocked open holds one of libuv's threads, so not even Ctrl-C could end the process), a
 * device such as /dev/zero never ends. Only a regular file is read; anything else is refused with
 * what it is.
 */

/** The most an accounts or policies file may be: a few hundred accounts or groups take some kilobytes. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

/** O_NONBLOCK where the platform has it: a FIFO opens at once instead of waiting for a writer. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** Refuses `stats` unless it is a regular file no larger than `maxBytes`, saying what it is. */
function checkRegular(stats: Stats, maxBytes: number): void {
  if (stats.isFile()) {
    if (stats.size > maxBytes)
      throw new NotARegularFileError(`it is ${stats.size} bytes, more than the ${maxBytes} it may be`);
    return;
  }
  if (stats.isDirectory()) throw new NotARegularFileError('it is a directory, not a file');
  if (stats.isFIFO()) throw new NotARegularFileError('it is a named pipe (FIFO), not a file');
  if (stats.isSocket()) throw new NotARegularFileError('it is a socket, not a file');
  throw new NotARegularFileError('it is a device, not a file');
}

/** A file that cannot be read as one: not a regular file, or too large; the message says which. */
export class NotARegularFileError extends Error {
  override readonly name = 'NotARegularFileError';
}

/**
 * The text of the regular file at `path`, without a byte order mark (as {@link readRegularFileSync});
 * ENOENT and the like as Node throws them.
 */
export async function readRegularFile(path: string, maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
  const handle = await open(path, READ_FLAGS);
  try {
    checkRegular(await handle.stat(), maxBytes);
    return (await handle.readFile('utf8')).replace(/^\uFEFF/, '');
  } finally {
    await handle.close();
  }
}

/**
 * Refuses `path` when something other than a regular file is there (a directory, a pipe, a device),
 * without opening it: a file that is not there yet is fine (a state file a first scan creates).
 */
export async function checkRegularOrAbsent(path: string): Promise<void> {
  let stats: Stats;
  try {
    stats = await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  checkRegular(stats, Number.POSITIVE_INFINITY);
}

/** {@link readRegularFile} for the synchronous readers of configuration (the CDK app's). */
export function readRegularFileSync(path: string, maxBytes = Number.POSITIVE_INFINITY): string {
  const fd = openSync(path, READ_FLAGS);
  try {
    checkRegular(fstatSync(fd), maxBytes);
    // A byte order mark (Notepad, PowerShell 5's Set-Content -Encoding UTF8) is no part of the
    // text: JSON.parse refuses it, and a file that looks right was said not to parse.
    return readFileSync(fd, 'utf8').replace(/^\uFEFF/, '');
  } finally {
    closeSync(fd);
  }
}
