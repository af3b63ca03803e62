/**
 * The one retry loop, in the shape of p-retry: `fn` is tried, and after a try that throws,
 * `shouldRetry` decides (pure where it can be: it gets the error and the count, nothing else);
 * `retries`, `maxRetryTime` and `signal` bound it. Every loop that tries again (the reseller
 * transport, the RDAP client, a scan reading an account that moved under it, DynamoDB's
 * unprocessed items, a webhook post, a scan or a snooze meeting another scan's lease, the state
 * file's lock) is this one with its own decision.
 */

/** What a failed try tells `shouldRetry` and `onFailedAttempt`. */
export interface RetryContext {
  readonly error: unknown;
  /** 1 for the first try. */
  readonly attemptNumber: number;
  /** Retries left after this one, by `retries`. */
  readonly retriesLeft: number;
  /** Milliseconds since the first try started. */
  readonly elapsedMs: number;
}

/** Retry after the backoff (true), after exactly `delayMs`, or stop with the error (false). */
export type RetryVerdict = boolean | { readonly delayMs: number };

export interface RetryOptions {
  /** Tries after the first. @default 10 */
  readonly retries?: number;
  /** Whether (and when) to try again after a failed try. @default always */
  readonly shouldRetry?: (context: RetryContext) => RetryVerdict | Promise<RetryVerdict>;
  /** No retry starts, nor waits, past this many milliseconds after the first try. @default Infinity */
  readonly maxRetryTime?: number;
  /** Aborting stops the loop before its next try, with the signal's reason. */
  readonly signal?: AbortSignal;
  /** First backoff in ms. @default 1 000 */
  readonly minTimeout?: number;
  /** Longest backoff in ms. @default Infinity */
  readonly maxTimeout?: number;
  /** Each backoff is the last one times this. @default 2 */
  readonly factor?: number;
  /** Full jitter: a random wait up to the backoff (AWS's advice for many clients at once). @default false */
  readonly randomize?: boolean;
  /** Called after each failed try, before the decision. */
  readonly onFailedAttempt?: (context: RetryContext) => void | Promise<void>;
  /** @default Date.now */
  readonly clock?: () => number;
  /** @default setTimeout, ended early by `signal` */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** @default Math.random */
  readonly random?: () => number;
}

/** A timer that ends early (rejecting with the reason) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/** The wait before retry `attempt` (1 for the first retry) by exponential backoff. */
export function backoffMs(
  attempt: number,
  options: RetryOptions,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(
    options.maxTimeout ?? Number.POSITIVE_INFINITY,
    (options.minTimeout ?? 1_000) * (options.factor ?? 2) ** (attempt - 1),
  );
  return options.randomize ? random() * ceiling : ceiling;
}

/**
 * Runs `fn` until it returns, or a failed try is not to be retried: then the error of that try is
 * thrown as it was. `fn` gets the try's number (1 for the first).
 */
export async function retry<T>(
  fn: (attemptNumber: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const retries = options.retries ?? 10;
  const clock = options.clock ?? Date.now;
  const wait = options.sleep ?? sleep;
  const maxRetryTime = options.maxRetryTime ?? Number.POSITIVE_INFINITY;
  const started = clock();
  for (let attemptNumber = 1; ; attemptNumber++) {
    options.signal?.throwIfAborted();
    try {
      return await fn(attemptNumber);
    } catch (error) {
      const context: RetryContext = {
        error,
        attemptNumber,
        retriesLeft: Math.max(0, retries - attemptNumber + 1),
        elapsedMs: clock() - started,
      };
      // Awaited only when they return a promise: a synchronous decision (the transport's) must
      // run before anything waiting on the try's slot does.
      const hook = options.onFailedAttempt?.(context);
      if (hook) await hook;
      if (context.retriesLeft === 0) throw error;
      let verdict = options.shouldRetry ? options.shouldRetry(context) : true;
      if (verdict instanceof Promise) verdict = await verdict;
      if (verdict === false) throw error;
      const delayMs = verdict === true ? backoffMs(attemptNumber, options, options.random) : verdict.delayMs;
      if (clock() + delayMs - started > maxRetryTime) throw error;
      await wait(delayMs, options.signal);
    }
  }
}

/**
 * RFC 9110's HTTP-date: IMF-fixdate and RFC 850 (both end in GMT), or asctime (no zone: UTC).
 * Date.parse alone takes almost anything ("1.5" is 1 May 2001) as a date in the past: a wait of 0.
 */
const GMT_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]{0,6}, [\dA-Za-z -]{1,20} \d\d:\d\d:\d\d GMT$/;
const ASCTIME_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}$/;

/** `Retry-After` as delay-seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = GMT_DATE.test(trimmed) ? trimmed : ASCTIME_DATE.test(trimmed) ? `${trimmed} GMT` : null;
  const at = date === null ? Number.NaN : Date.parse(date);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
