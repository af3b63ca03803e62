import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';

/**
 * dynalite (an in-memory DynamoDB) on a free loopback port in a process of its own, so the
 * benchmark's scans do not share their process, or its peak RSS, with the emulator. Prints the
 * endpoint on one line and serves until killed.
 */
const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
