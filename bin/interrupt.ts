import { SentinelError } from '../functions/core/base/errors';

/**
 * Stopping a command: the first SIGINT (Ctrl-C) or SIGTERM aborts the one AbortSignal the shell
 * (bin/sentinel.ts) hands every command as `io.signal`, with an {@link InterruptedError} as its
 * reason. Requests in flight end, nothing more is published or saved, servers close, and the
 * command line exits 130 or 143. Light on purpose: the shell imports it before anything else.
 */

/** The signals that stop a command. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** The exit status of a command a signal stopped: 128 plus the signal's number, as shells report it. */
export const STOPPED_STATUS: Readonly<Record<StopSignal, number>> = { SIGINT: 130, SIGTERM: 143 };

/** The command was stopped by a signal: the reason its signal carries. */
export class InterruptedError extends SentinelError {
  override readonly name: string = 'InterruptedError';
  constructor(
    message: string,
    readonly signal: StopSignal,
  ) {
    super(message);
  }

  /** The reason a shell aborts with on `signal`. */
  static of(signal: StopSignal): InterruptedError {
    return new InterruptedError(`interrupted by ${signal}`, signal);
  }
}

/** Resolves when `signal` aborts; never without one (a server then runs until the process ends). */
export function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve();
    signal?.addEventListener('abort', () => resolve(), { once: true });
  });
}

/**
 * `work`, or the signal's reason as soon as `signal` aborts, whichever comes first: for work that
 * does not take a signal itself (an SDK call, a webhook post with its own retries). The listener
 * goes once `work` settles, so many calls on one signal (every account of a file) add none up.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

/** The exit status of a run whose signal aborted: 130 for SIGINT, 143 for SIGTERM. */
export function interruptedStatus(signal: AbortSignal): number {
  const reason: unknown = signal.reason;
  return reason instanceof InterruptedError ? STOPPED_STATUS[reason.signal] : STOPPED_STATUS.SIGINT;
}

/**
 * How long a command has, after the first signal, to stop by itself (requests aborted, a lease
 * released, servers closed) before the shell ends it: within the 2 s a person waits for Ctrl-C.
 */
export const STOP_GRACE_MS = 1_800;

/**
 * Ends the process by `signal` itself, as a shell expects of a command a signal stopped (it reports
 * 128 + the signal's number): the listeners go and the signal is sent again. process.exit() would
 * wait for libuv's threads, and never return while one is blocked (an open of a named pipe nobody
 * writes, a DNS lookup that hangs); a signal waits for nothing. Where a signal cannot end the
 * process so (Windows), it exits with the same status.
 */
export function dieBy(signal: StopSignal): never {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
  return process.exit(STOPPED_STATUS[signal]);
}

/** The exit status of a command a broken pipe ended: 128 plus SIGPIPE's number, as shells report it. */
export const BROKEN_PIPE_STATUS = 141;

/**
 * Ends the process by SIGPIPE, as a command whose reader went away (`| head`) ends: quietly, and
 * `set -o pipefail` still sees the output was cut. Node ignores SIGPIPE; a listener added and
 * removed gives it back its default action (where there is none, Windows, the status says it).
 */
export function dieByBrokenPipe(): never {
  process.on('SIGPIPE', () => {});
  process.removeAllListeners('SIGPIPE');
  try {
    process.kill(process.pid, 'SIGPIPE');
  } catch {
    // No such signal here: the status alone.
  }
  return process.exit(BROKEN_PIPE_STATUS);
}

/** What {@link stopOnSignals} acts on; tests pass their own. */
export interface SignalSink {
  /** True once main() returned: its own "interrupted" line is written then. */
  readonly finished: () => boolean;
  readonly on?: (signal: StopSignal, listener: () => void) => void;
  /** @default dieBy */
  readonly die?: (signal: StopSignal) => void;
  readonly write?: (text: string) => void;
  readonly later?: (run: () => void, ms: number) => void;
}

/**
 * The shell's signal handling: the first SIGINT or SIGTERM aborts `controller` (what the command
 * stops on); a command that has not stopped within {@link STOP_GRACE_MS}, or a second signal, ends
 * the process at once, with the same line and status.
 */
export function stopOnSignals(controller: AbortController, sink: SignalSink): void {
  const {
    finished,
    on = (signal, listener) => process.on(signal, listener),
    die = dieBy,
    write = (text) => process.stderr.write(text),
    later = (run, ms) => setTimeout(run, ms).unref(),
  } = sink;
  const end = (signal: StopSignal) => {
    if (!finished()) write(`sentinel: ${InterruptedError.of(signal).message}\n`);
    die(signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    on(signal, () => {
      if (controller.signal.aborted) return end(signal);
      controller.abort(InterruptedError.of(signal));
      later(() => end(signal), STOP_GRACE_MS);
    });
}
