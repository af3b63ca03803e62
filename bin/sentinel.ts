#!/usr/bin/env node
import { asksForVersion, VERSION_LINE } from './version';

// The shell: argv, the real environment and streams, signals. Everything else is in main(), loaded
// only past `--version`, which answers before any other module is read.
const argv = process.argv.slice(2);
if (asksForVersion(argv[0]) && argv.length === 1) process.stdout.write(`${VERSION_LINE}\n`);
else await runCommandLine(argv);

async function runCommandLine(argv: readonly string[]): Promise<never> {
  const { EXIT, main } = await import('./cli');
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });

  // A reader that goes away (`sentinel scan --json | head`) makes writes fail with EPIPE: remember it,
  // write nothing more, and let the exit status say the output did not arrive whole.
  let writeFailure: NodeJS.ErrnoException | undefined;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      writeFailure ??= error;
    });
  }
  const writer = (stream: NodeJS.WriteStream) => (text: string) => {
    if (!writeFailure) stream.write(text);
  };

  /** Resolves once everything written to `stream` so far has been handed to the OS (or failed). */
  const flushed = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => {
      if (stream.destroyed || stream.writableFinished) return resolve();
      stream.write('', () => resolve());
    });

  const code = await main(argv, {
    env: process.env,
    stdout: writer(process.stdout),
    stderr: writer(process.stderr),
    cwd: process.cwd(),
    // A person watching: `demo` keeps its links served until Ctrl-C instead of exiting.
    interactive: process.stdout.isTTY === true,
    untilStopped: stopped,
    ...(process.stdin.isTTY
      ? {
          ask: async (question: string) => {
            const { createInterface } = await import('node:readline/promises');
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
  // Exit only once the output has drained: a report piped into `jq` arrives whole (process.exit()
  // before the drain cut it at the 64 KiB pipe buffer). Exiting explicitly still matters: idle
  // keep-alive sockets must not keep a finished one-shot command alive.
  await flushed(process.stdout);
  await flushed(process.stderr);
  if (writeFailure && code === EXIT.ok) {
    const reason = writeFailure.code ?? writeFailure.message;
    try {
      process.stderr.write(`sentinel: could not write the output (${reason}); it did not arrive whole\n`);
    } catch {
      // stderr is gone too: the exit status is all that is left to say it.
    }
  }
  process.exit(writeFailure && code === EXIT.ok ? EXIT.failed : code);
}
