import {
  ConfigError,
  ConnectionError,
  DeadlineError,
  type ResellerApiError,
  type ResponseFacts,
  ResponseTooLargeError,
  TimeoutError,
} from '../base/errors';
import { parseRetryAfter, type RetryContext, type RetryVerdict, retry, sleep } from '../base/retry';
import { apiKeyProblem, scrubSecrets, secretTest } from './api-key';
import { abortable, connectionCause, errorCode } from './connection';
import { ConcurrencyController, ConcurrencyLimiter } from './limiter';

/**
 * The reseller transport: sends one request and gives back its answer. It owns everything that is
 * about HTTP rather than about the API's resources: the key, per-request timeout, the scan's
 * deadline, retries (decided by the pure {@link retryDecision}), adaptive concurrency, the response
 * size limit, refusing redirects, and scrubbing the key out of every error it lets through.
 */

/**
 * Epoch ms after which no request starts: a number fixed before the read, or a function asked each
 * time, for a deadline that moves while the read runs (the scheduled scan's, once the account's size
 * is known from the read's own page 1).
 */
export type Deadline = number | (() => number);

/** The epoch ms a {@link Deadline} stands at now; undefined without one. */
export function deadlineAt(deadline: Deadline | undefined): number | undefined {
  return typeof deadline === 'function' ? deadline() : deadline;
}

/** Options of {@link Transport}; {@link ResellerClientOptions} adds the resource-level ones. */
export interface TransportOptions {
  /** Base URL of the live or the test environment, without `/v2`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer …`; never logged or put in an error. */
  readonly apiKey: string;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Per-request timeout. @default 10 000 ms */
  readonly timeoutMs?: number;
  /** Attempts for a request that may be repeated (429, 5xx, timeouts, resets). @default 5 */
  readonly maxAttempts?: number;
  /** Backoff base and cap (full jitter). @default 250 ms, 8 000 ms */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  /** Longest `Retry-After` waited for; a longer one that still fits the deadline is cut to this. @default 60 000 ms */
  readonly maxRetryAfterMs?: number;
  /** Ceiling of requests in flight at once, across every listing of this client. @default 8 */
  readonly concurrency?: number;
  /** Requests in flight at the start; grows toward `concurrency` while answers are fast. @default 4 */
  readonly initialConcurrency?: number;
  /** Epoch ms (of `now`) after which no request starts and no retry waits; a function is asked each time (a deadline that moves). */
  readonly deadline?: Deadline;
  /** Largest response body read, in bytes; a larger one is aborted while it streams. @default 32 MiB */
  readonly maxResponseBytes?: number;
  /** @default setTimeout-based sleep */
  readonly sleep?: (ms: number) => Promise<void>;
  /** @default Math.random */
  readonly random?: () => number;
  /** The clock the deadline, Retry-After and latencies are measured with. @default Date.now */
  readonly now?: () => number;
  /**
   * Stops everything at once when aborted (Ctrl-C): requests in flight, bodies being read, waits
   * between retries; the send throws the signal's reason, never retried.
   */
  readonly signal?: AbortSignal;
}

/** One request to send. */
export interface TransportRequest {
  readonly method: 'GET' | 'POST';
  /** Path below the base URL, starting with `/v2/`. */
  readonly path: string;
  readonly query?: URLSearchParams;
  /** What is being read, for error messages: `domain list page 3`. */
  readonly what: string;
  /** @default the transport's `maxAttempts`; 1 for calls that must never repeat. */
  readonly maxAttempts?: number;
  /** Called just before each attempt goes out (after every wait), so a caller knows it was sent. */
  readonly onSend?: () => void;
}

/** An answer, whatever its status; its body was read whole (and within the size limit). */
export interface RawResponse {
  readonly status: number;
  readonly text: string;
  readonly url: string;
  readonly requestId: string | undefined;
  readonly retryAfter: string | null;
  readonly location: string | undefined;
}

/** Why a request failed without an answer, as {@link retryDecision} needs to know it. */
export type FailureKind = 'timeout' | 'reset' | 'fatal';

/** The facts of one attempt that decide whether to repeat it. */
export interface RetryInput {
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** The HTTP status, when an answer came. */
  readonly status?: number | undefined;
  /** Why no answer came. */
  readonly failure?: FailureKind | undefined;
  /** The server's Retry-After in ms, when it sent a readable one. */
  readonly retryAfterMs?: number | undefined;
  /** Time left before the deadline; Infinity without one. */
  readonly remainingMs: number;
  /** @default 60 000 */
  readonly maxRetryAfterMs?: number;
  /** @default 250 */
  readonly retryBaseMs?: number;
  /** @default 8 000 */
  readonly retryMaxMs?: number;
  /** A number in [0, 1) for full jitter. @default 0.5 */
  readonly jitter?: number;
}

/** Retry after `delayMs`, or stop for `reason`. */
export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number }
  | {
      readonly retry: false;
      readonly reason:
        | 'done'
        | 'attempts-exhausted'
        | 'retry-after-beyond-deadline'
        | 'backoff-beyond-deadline';
    };

/**
 * Whether to repeat a request, and after how long: pure, in the way of stripe-node's
 * `RequestSender._shouldRetry`. 429 and 5xx answers, timeouts and resets are retried after
 * full-jitter exponential backoff, or after a longer Retry-After (cut to `maxRetryAfterMs`). A wait
 * that cannot end before the deadline stops at once instead of sleeping into it.
 */
export function retryDecision(input: RetryInput): RetryDecision {
  const retryable =
    input.status !== undefined
      ? input.status === 429 || input.status >= 500
      : input.failure === 'timeout' || input.failure === 'reset';
  if (!retryable) return { retry: false, reason: 'done' };
  if (input.attempt >= input.maxAttempts) return { retry: false, reason: 'attempts-exhausted' };
  const ceiling = Math.min(input.retryMaxMs ?? 8_000, (input.retryBaseMs ?? 250) * 2 ** (input.attempt - 1));
  const backoff = Math.floor((input.jitter ?? 0.5) * ceiling);
  if (input.retryAfterMs !== undefined && input.retryAfterMs >= input.remainingMs)
    return { retry: false, reason: 'retry-after-beyond-deadline' };
  // A Retry-After of 0 (or a date already past) means "now", but every attempt back to back into a
  // server that is shedding load only spends them: the client's own backoff is the floor.
  const asked =
    input.retryAfterMs === undefined ? 0 : Math.min(input.retryAfterMs, input.maxRetryAfterMs ?? 60_000);
  const delayMs = Math.max(asked, backoff);
  if (delayMs >= input.remainingMs) return { retry: false, reason: 'backoff-beyond-deadline' };
  return { retry: true, delayMs };
}

// A DNS answer that did not come (EAI_AGAIN: "try again") and a connection that did not open in
// time reached no server: sent again, as a reset is, instead of failing a read of hundreds of pages.
const RETRYABLE_CODES = new Set([
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNABORTED',
]);

const MIB = 1024 * 1024;

/** Bytes as a person reads them: `32 MiB`, `1500 bytes`. */
function bytes(n: number): string {
  return n >= MIB && n % MIB === 0 ? `${n / MIB} MiB` : `${n} bytes`;
}

/** Sends requests to the reseller API; shared by every listing and call of one client. */
export class Transport {
  /** @see retryDecision */
  static readonly retryDecision = retryDecision;

  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly ceiling: number;
  readonly maxResponseBytes: number;
  /** Bytes of response bodies being read right now, across every request in flight. */
  private bodyBytesInFlight = 0;
  readonly limiter: ConcurrencyLimiter;
  /** Requests sent, retries included. */
  requests = 0;
  private readonly apiKey: string;
  private readonly holdsKey: (text: string) => boolean;
  private readonly fetchImpl: typeof fetch;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly deadline: Deadline | undefined;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly signal: AbortSignal | undefined;

  /** @throws ConfigError when the key cannot travel in a header (the message never holds the key). */
  constructor(options: TransportOptions) {
    const problem = apiKeyProblem(options.apiKey);
    if (problem) {
      const fix = problem.startsWith('holds') ? '; set it again without that character' : '';
      throw new ConfigError(`the reseller API key ${problem}${fix}`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.holdsKey = secretTest(options.apiKey);
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.retryBaseMs = options.retryBaseMs ?? 250;
    this.retryMaxMs = options.retryMaxMs ?? 8_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 32 * MIB;
    this.deadline = options.deadline;
    this.signal = options.signal;
    // Every wait (backoff, Retry-After, the limiter's pause) ends when the signal aborts.
    this.sleep = abortable(options.sleep ?? sleep, options.signal);
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.ceiling = Math.max(1, options.concurrency ?? 8);
    const controller = new ConcurrencyController({
      ceiling: this.ceiling,
      initial: options.initialConcurrency ?? 4,
    });
    // The gate's waits (a pause another request's Retry-After set, the pacing) end at the deadline
    // too: the attempt then stops with it, not after sleeping into the time kept back to publish.
    this.limiter = new ConcurrencyLimiter(controller, this.now, (ms) =>
      this.sleep(Math.max(0, Math.min(ms, this.remainingMs()))),
    );
  }

  /**
   * Sends one request, retrying what {@link retryDecision} allows, and returns the final answer
   * whatever its status. Throws for no answer (timeout, connection), the deadline, and a body over
   * the size limit; every error leaves here scrubbed of the key.
   */
  async send(request: TransportRequest): Promise<RawResponse> {
    try {
      return await this.sendWithRetries(request);
    } catch (error) {
      throw this.scrubError(error);
    }
  }

  /** The facts of an answer for an error, scrubbed and cut short. */
  facts(res: RawResponse): ResponseFacts {
    const flat = this.scrub(res.text).replace(/\s+/g, ' ').trim();
    return {
      status: res.status,
      url: this.scrub(res.url),
      requestId: res.requestId === undefined ? undefined : this.scrub(res.requestId).slice(0, 100),
      bodyExcerpt: flat ? (flat.length > 200 ? `${flat.slice(0, 200)}…` : flat) : undefined,
      location: res.location === undefined ? undefined : this.scrub(res.location),
    };
  }

  /** `text` without the key or any Authorization value. */
  scrub(text: string): string {
    return scrubSecrets(text, this.apiKey);
  }

  /**
   * An answer's body parsed as JSON, with the key, in any form, taken out of every string and name
   * in it where a server put it in its data (a record named after it, a log of the request), so no
   * report or alert can quote it. The strings are scrubbed once parsed, never the text: a scrub of
   * the text missed the key JSON spells escaped (`\"`, `\\`, `\/`, `\u0041`) and broke the JSON
   * where it replaced what is no string (`"authorization": null`, an escaped quote after `Bearer`).
   * Only a body whose text holds the key or an escape is walked. Throws what JSON.parse throws.
   */
  parseJson(text: string): unknown {
    const value: unknown = JSON.parse(text);
    return this.holdsKey(text) || text.includes('\\') ? this.withoutKey(value) : value;
  }

  /** `root` with the key scrubbed from every string and name; a loop, as JSON.parse nests deeper than a stack. */
  private withoutKey(root: unknown): unknown {
    const clean = (value: unknown): unknown => {
      if (typeof value === 'string') return this.holdsKey(value) ? this.scrub(value) : value;
      if (value !== null && typeof value === 'object') nodes.push(value);
      return value;
    };
    const nodes: object[] = [];
    const top = clean(root);
    for (let node = nodes.pop(); node; node = nodes.pop()) {
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) node[i] = clean(node[i]);
        continue;
      }
      const record = node as Record<string, unknown>;
      for (const name of Object.keys(record)) {
        const value = clean(record[name]);
        if (this.holdsKey(name)) {
          delete record[name];
          record[this.scrub(name)] = value;
        } else record[name] = value;
      }
    }
    return top;
  }

  /**
   * The request, tried again as {@link retryDecision} decides: every attempt that is not a success
   * is put to it as the retry loop's `shouldRetry`, which also tells the concurrency controller
   * what the server said. What it stops at is returned (an answer) or thrown (no answer, the
   * deadline).
   */
  private async sendWithRetries(request: TransportRequest): Promise<RawResponse> {
    const url = `${this.baseUrl}${request.path}${request.query ? `?${request.query}` : ''}`;
    const maxAttempts = Math.max(1, request.maxAttempts ?? this.maxAttempts);
    const controller = this.limiter.controller;
    let pauseWaited = 0;
    let stopped: RetryDecision = { retry: false, reason: 'done' };
    const shouldRetry = ({ error, attemptNumber }: RetryContext): RetryVerdict => {
      if (!(error instanceof Attempt)) return false;
      const decision = retryDecision({
        attempt: attemptNumber,
        maxAttempts,
        status: error.res?.status,
        failure: error.failureKind,
        retryAfterMs: error.retryAfterMs,
        remainingMs: this.remainingMs(),
        maxRetryAfterMs: this.maxRetryAfterMs,
        retryBaseMs: this.retryBaseMs,
        retryMaxMs: this.retryMaxMs,
        jitter: this.random(),
      });
      controller.recordFailedTry(
        { status: error.res?.status, startedAt: error.startedAt, retryAfterMs: error.retryAfterMs },
        decision,
        this.now(),
      );
      if (!decision.retry) {
        stopped = decision;
        return false;
      }
      if (error.retryAfterMs !== undefined) pauseWaited = controller.pausedUntil;
      return { delayMs: decision.delayMs };
    };
    try {
      return await retry(() => this.attempt(request, url, pauseWaited), {
        retries: Number.POSITIVE_INFINITY,
        shouldRetry,
        sleep: this.sleep,
        clock: this.now,
        ...(this.signal ? { signal: this.signal } : {}),
      });
    } catch (error) {
      if (!(error instanceof Attempt)) throw error;
      if (stopped.retry === false && stopped.reason === 'retry-after-beyond-deadline')
        throw new DeadlineError(
          `the reseller asked to wait ${Math.ceil((error.retryAfterMs ?? 0) / 1000)} s (Retry-After) before ${request.what} but the scan's time budget has ${Math.floor(this.remainingMs() / 1000)} s left`,
        );
      if (stopped.retry === false && stopped.reason === 'backoff-beyond-deadline')
        throw new DeadlineError(`the time budget ran out while retrying ${request.what}`);
      if (error.failure) throw error.failure;
      return error.res as RawResponse;
    }
  }

  /** One attempt: a success (below 400) is returned, anything else thrown as an {@link Attempt}. */
  private async attempt(request: TransportRequest, url: string, pauseWaited: number): Promise<RawResponse> {
    const { what } = request;
    this.remainingOrThrow(`before ${what}`);
    await this.limiter.acquire(pauseWaited);
    const startedAt = this.now();
    try {
      this.signal?.throwIfAborted();
      const budget = this.remainingOrThrow(`before ${what}`);
      this.requests++;
      request.onSend?.();
      let res: RawResponse;
      try {
        res = await this.fetchOnce(request.method, url, Math.min(this.timeoutMs, budget), what);
      } catch (error) {
        if (error instanceof ResponseTooLargeError) throw error;
        // Stopped (Ctrl-C): the signal's reason, never retried (shouldRetry takes only an Attempt).
        this.signal?.throwIfAborted();
        if (isAbort(error) && budget < this.timeoutMs)
          throw new DeadlineError(`the time budget ran out while waiting for ${what}`);
        const [failure, failureKind] = this.describeFailure(error, url, what);
        throw new Attempt(startedAt, undefined, failure, failureKind);
      }
      if (res.status < 400) {
        this.limiter.controller.record({ kind: 'success', startedAt, latencyMs: this.now() - startedAt });
        return res;
      }
      throw new Attempt(startedAt, res, undefined, undefined, parseRetryAfter(res.retryAfter, this.now()));
    } finally {
      this.limiter.release();
    }
  }

  private async fetchOnce(
    method: string,
    url: string,
    timeoutMs: number,
    what: string,
  ): Promise<RawResponse> {
    const res = await this.fetchImpl(url, {
      method,
      headers: {
        Authorization: `Bearer ${this.apiKey}`,
        Accept: 'application/json',
        ...(method === 'POST' ? { 'Content-Type': 'application/json' } : {}),
      },
      // A redirect is an answer to report, never to follow: it could lead the key to another origin.
      redirect: 'manual',
      signal: this.signal
        ? AbortSignal.any([AbortSignal.timeout(timeoutMs), this.signal])
        : AbortSignal.timeout(timeoutMs),
    });
    const text = await this.readBody(res, url, what);
    return {
      status: res.status,
      text,
      url,
      requestId: res.headers.get('x-request-id') ?? undefined,
      retryAfter: res.headers.get('retry-after'),
      location: res.headers.get('location') ?? undefined,
    };
  }

  /**
   * The body as text, read chunk by chunk so a body over the limit is cancelled while it streams
   * (the scan's memory stays bounded whatever the server sends).
   */
  private async readBody(res: Response, url: string, what: string): Promise<string> {
    const limit = this.maxResponseBytes;
    const tooLarge = (detail: string) =>
      new ResponseTooLargeError(
        `the reseller API's answer to ${what} ${detail}, more than the limit of ${bytes(limit)} (maxResponseBytes); reading stopped. Lower per_page, or raise the limit if the account really needs it`,
        { status: res.status, url },
      );
    const declared = res.headers.get('content-length');
    if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > limit) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge(`declares ${bytes(Number(declared))} (Content-Length)`);
    }
    if (!res.body) return '';
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const parts: string[] = [];
    let received = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received += value.byteLength;
        this.bodyBytesInFlight += value.byteLength;
        if (received > limit) {
          await reader.cancel().catch(() => undefined);
          throw tooLarge(`ran past ${bytes(limit)}`);
        }
        // One limit for every body being read at once: with 8 requests in flight, 8 bodies just
        // under the limit would otherwise hold 8 times the memory the limit promises.
        if (this.bodyBytesInFlight > limit) {
          await reader.cancel().catch(() => undefined);
          throw tooLarge(`ran past ${bytes(limit)} together with the other answers being read at once`);
        }
        parts.push(decoder.decode(value, { stream: true }));
      }
    } finally {
      this.bodyBytesInFlight -= received;
    }
    parts.push(decoder.decode());
    return parts.join('');
  }

  /** Time left before the deadline; Infinity without one. */
  remainingMs(): number {
    const at = deadlineAt(this.deadline);
    return at === undefined ? Number.POSITIVE_INFINITY : at - this.now();
  }

  private remainingOrThrow(when: string): number {
    const left = this.remainingMs();
    if (left <= 0) throw new DeadlineError(`the time budget ran out ${when}`);
    return left;
  }

  private describeFailure(error: unknown, url: string, what: string): [ResellerApiError, FailureKind] {
    const facts = { status: 0, url };
    if (isAbort(error)) {
      return [
        new TimeoutError(`no answer within ${this.timeoutMs} ms for ${what} (${url})`, facts, {
          cause: error,
        }),
        'timeout',
      ];
    }
    const code = errorCode(error);
    const failure = new ConnectionError(
      `could not reach the reseller API at ${this.baseUrl} (${connectionCause(error, url)}) for ${what}`,
      { ...facts, code },
      { cause: error },
    );
    return [failure, RETRYABLE_CODES.has(code ?? '') ? 'reset' : 'fatal'];
  }

  /**
   * The last line of defence: whatever is thrown (fetch's own TypeErrors quote header values), its
   * message, stack, facts and causes leave without the key or an Authorization value.
   */
  scrubError(error: unknown): unknown {
    if (!(error instanceof Error)) return new Error(this.scrub(String(error)));
    const writable = error as unknown as Record<string, unknown>;
    for (const field of ['message', 'stack', 'url', 'requestId', 'bodyExcerpt', 'location']) {
      const value = writable[field];
      if (typeof value === 'string') {
        Object.defineProperty(error, field, { value: this.scrub(value), writable: true, configurable: true });
      }
    }
    if (error.cause !== undefined) {
      Object.defineProperty(error, 'cause', {
        value: this.scrubCause(error.cause, 0),
        writable: true,
        configurable: true,
      });
    }
    return error;
  }

  private scrubCause(cause: unknown, depth: number): unknown {
    if (depth > 4) return undefined;
    if (typeof cause === 'string') return this.scrub(cause);
    if (!cause || typeof cause !== 'object') return cause;
    const source = cause as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown };
    const copy = new Error(this.scrub(String(source.message ?? '')));
    copy.name = typeof source.name === 'string' ? source.name : 'Error';
    copy.stack = `${copy.name}: ${copy.message}`;
    if (typeof source.code === 'string') Object.assign(copy, { code: source.code });
    if (source.cause !== undefined) copy.cause = this.scrubCause(source.cause, depth + 1);
    return copy;
  }
}

function isAbort(error: unknown): boolean {
  const name = (error as { name?: string } | undefined)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/** One attempt that was not a success: what {@link retryDecision} decides on. */
class Attempt extends Error {
  override readonly name: string = 'Attempt';
  constructor(
    readonly startedAt: number,
    readonly res: RawResponse | undefined,
    readonly failure: ResellerApiError | undefined,
    readonly failureKind: FailureKind | undefined,
    readonly retryAfterMs?: number,
  ) {
    super('an attempt that is not a success');
  }
}
