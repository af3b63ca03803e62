import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * `server` listening on a free port of 127.0.0.1: its URL, and a close that ends every
 * connection first (a keep-alive or a body that never ends would hold close() for good).
 */
export async function listenOnLoopback(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
