#!/usr/bin/env node
import { askAtTerminal } from './ask';
import { startedClosed } from './closed-stdout';
import { dieBy, dieByBrokenPipe, InterruptedError, stopOnSignals } from './interrupt';
import { asksForVersion, VERSION_LINE } from './version';

// The shell: argv, the real environment and streams, signals. Everything else is in main(), loaded
// only past `--version`, which answers before any other module is read.
const argv = process.argv.slice(2);
if (asksForVersion(argv[0]) && argv.length === 1) {
  // Into a reader gone already (`| true`): ended quietly, as the other commands are.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') dieByBrokenPipe();
    throw error;
  });
  process.stdout.write(`${VERSION_LINE}\n`);
} else await runCommandLine(argv);

async function runCommandLine(argv: readonly string[]): Promise<never> {
  // Before anything is loaded: a Ctrl-C at any moment stops the command the same way.
  const controller = new AbortController();
  let finished = false;
  stopOnSignals(controller, { finished: () => finished });
  const { EXIT, main } = await import('./cli');
  const cwd = currentDirectory();
  if (cwd === undefined) {
    process.stderr.write(
      'sentinel: the current directory no longer exists (it was removed or moved); cd to one that does and run it again\n',
    );
    process.exit(EXIT.failed);
  }

  // A reader that goes away (`scan --json | head`) makes writes fail with EPIPE: remember it, write
  // no more to that stream. A command that did its work then ends by SIGPIPE, quietly, as `yes | head`
  // does; one that failed says why on stderr. Another write failure (ENOSPC) is said, and exits 1.
  const writeFailures = new Map<NodeJS.WriteStream, NodeJS.ErrnoException>();
  // A stdout closed at the start (`>&-`) is /dev/null by now, where a write succeeds: an alert
  // "delivered" there reached nobody, so delivering to it fails as a write to a closed fd does.
  const stdoutClosed = startedClosed(1)
    ? Object.assign(new Error('stdout was closed when sentinel started'), { code: 'EBADF' })
    : undefined;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (!writeFailures.has(stream)) writeFailures.set(stream, error);
    });
  }
  const writer = (stream: NodeJS.WriteStream) => (text: string) => {
    if (!writeFailures.has(stream)) stream.write(text);
  };
  /** Writes `text` and resolves once it was handed to the OS; rejects with the write's failure (EPIPE). */
  const deliveredTo = (stream: NodeJS.WriteStream) => (text: string) =>
    new Promise<void>((resolve, reject) => {
      const failed = writeFailures.get(stream) ?? (stream === process.stdout ? stdoutClosed : undefined);
      if (failed) return reject(failed);
      stream.write(text, (error) => (error ? reject(error) : resolve()));
    });

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
    stdoutDelivered: deliveredTo(process.stdout),
    cwd,
    // A person watching: `demo` keeps its links served until Ctrl-C instead of exiting.
    interactive: process.stdout.isTTY === true,
    signal: controller.signal,
    ...(process.stdin.isTTY ? { ask: (question: string) => askAtTerminal(question, controller.signal) } : {}),
  });
  finished = true;
  // Exit only once the output has drained: a report piped into `jq` arrives whole (process.exit()
  // before the drain cut it at the 64 KiB pipe buffer). Exiting explicitly still matters: idle
  // keep-alive sockets must not keep a finished one-shot command alive.
  await flushed(process.stdout);
  await flushed(process.stderr);
  const writeFailure = writeFailures.get(process.stdout) ?? writeFailures.get(process.stderr);
  const brokenPipe = code === EXIT.ok && writeFailures.get(process.stdout)?.code === 'EPIPE';
  if (writeFailure && code === EXIT.ok && !brokenPipe) {
    const reason = writeFailure.code ?? writeFailure.message;
    try {
      process.stderr.write(`sentinel: could not write the output (${reason}); it did not arrive whole\n`);
    } catch {
      // stderr is gone too: the exit status is all that is left to say it.
    }
  }
  // Stopped by a signal: ended by it, so nothing a blocked thread holds can keep the process.
  const reason: unknown = controller.signal.reason;
  if (reason instanceof InterruptedError) dieBy(reason.signal);
  if (brokenPipe) dieByBrokenPipe();
  process.exit(writeFailure && code === EXIT.ok ? EXIT.failed : code);
}

/** The working directory; undefined when it was removed under the shell (process.cwd() throws ENOENT). */
function currentDirectory(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}
