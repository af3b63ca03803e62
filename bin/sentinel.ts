#!/usr/bin/env node
import { createInterface } from 'node:readline/promises';
import { main } from './cli';

// The shell: argv, the real environment and streams, signals. Everything else is in main().
const stopped = new Promise<void>((resolve) => {
  process.once('SIGINT', () => resolve());
  process.once('SIGTERM', () => resolve());
});

const code = await main(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  untilStopped: stopped,
  ...(process.stdin.isTTY
    ? {
        ask: async (question: string) => {
          const rl = createInterface({ input: process.stdin, output: process.stderr });
          try {
            return await rl.question(question);
          } finally {
            rl.close();
          }
        },
      }
    : {}),
});
process.exitCode = code;
// Long-running commands end on a signal; one-shot ones should not wait for idle keep-alive sockets.
setImmediate(() => process.exit(code));
