import { fstatSync, readSync, statSync } from 'node:fs';

/**
 * True when file descriptor `fd` was closed when the process started (`sentinel … >&-`). Node opens
 * /dev/null in the place of a closed 0, 1 or 2 before any code runs, read-write, where every write
 * succeeds and goes nowhere; a shell's `>/dev/null` opens it write-only. So a descriptor that is
 * /dev/null and can be read from (a read there ends at once) is the one Node put in place of a
 * closed one. Anything else (a terminal, a pipe, a file, a `>/dev/null`) is left unread.
 */
export function startedClosed(fd: number): boolean {
  try {
    const stats = fstatSync(fd);
    const devNull = statSync('/dev/null');
    if (!stats.isCharacterDevice() || stats.rdev !== devNull.rdev) return false;
    return readSync(fd, Buffer.alloc(1), 0, 1, null) === 0;
  } catch {
    // Not readable (EBADF: opened for writing only) or no /dev/null (Windows): as it looks.
    return false;
  }
}
