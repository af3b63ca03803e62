import type { Server } from 'node:http';

/**
 * Starts `server` on `host`:`port`. A port that is taken or not ours to open fails with an error
 * that says so and what to do (Node's own says `listen EADDRINUSE: address already in use`), its
 * `code` kept for a caller that falls back to another port.
 */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'EADDRINUSE'
          ? 'is in use (another sentinel serve, simulate or demo?)'
          : error.code === 'EACCES'
            ? 'may not be opened by this user'
            : null;
      if (why === null) return reject(error);
      const explained = new Error(
        `port ${port} on ${host} ${why}: stop what holds it, or pass --port with another port (--port 0 takes any free one)`,
      ) as NodeJS.ErrnoException;
      explained.code = error.code;
      reject(explained);
    });
    server.listen(port, host, () => resolve());
  });
}
