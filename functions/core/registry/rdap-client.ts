import { parseRetryAfter, type RetryContext, type RetryVerdict, retry, sleep } from '../base/retry';
import { ConcurrencyController, ConcurrencyLimiter } from '../reseller/limiter';
import { type Deadline, deadlineAt, type RetryDecision, retryDecision } from '../reseller/transport';
import { parseRdapDomain, RdapDomainShapeError, type RegistryRecord } from './rdap-domain';
import {
  RdapConnectionError,
  RdapError,
  RdapRateLimitError,
  RdapResponseError,
  RdapTimeoutError,
} from './rdap-errors';
import {
  originOf,
  rdapRedirectProblem,
  rdapUrlProblem,
  readBodyLimited,
  shownOrigin,
  shownUrl,
} from './rdap-http';

/**
 * The RDAP client (RFC 7480, 7482): `GET <base>domain/<name>` with `Accept: application/rdap+json`.
 * Each RDAP server (an origin) keeps its own pace: at most `concurrencyPerServer` requests in
 * flight, halved on 429/503, and one shared pause when a server names a `Retry-After` (the reseller
 * transport's limiter and retry decision, reused). Redirects are followed as RFC 7480 §5.2 asks,
 * only to https (loopback http only from loopback http; nothing local from a server elsewhere) and
 * at most three deep. No key travels: RDAP is anonymous.
 */

/** Options of {@link RdapClient}. */
export interface RdapClientOptions {
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Per-request timeout. @default 10 000 ms */
  readonly timeoutMs?: number;
  /** Requests in flight at once per RDAP server. @default 2 */
  readonly concurrencyPerServer?: number;
  /** Attempts for one lookup (429, 5xx, timeouts, resets are repeated). @default 3 */
  readonly maxAttempts?: number;
  /** Longest Retry-After waited for; a longer one gives up on that lookup. @default 30 000 ms */
  readonly maxRetryAfterMs?: number;
  /** Largest answer read. @default 1 MiB */
  readonly maxResponseBytes?: number;
  /** Epoch ms after which no request starts and no retry waits (a function: one that moves). */
  readonly deadline?: Deadline;
  /**
   * Stops every lookup at once (the command line's Ctrl-C): a request in flight and a wait between
   * tries end, and the lookup throws the signal's reason, never retried or taken for a timeout.
   */
  readonly signal?: AbortSignal;
  /** @default setTimeout-based sleep, ended early by `signal` */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** @default Math.random */
  readonly random?: () => number;
  /** @default Date.now */
  readonly now?: () => number;
}

/** A lookup's outcome: the record, or the registry does not know the name (404, or 410 Gone). */
export type RdapLookup =
  | { readonly kind: 'found'; readonly record: RegistryRecord; readonly server: string }
  | { readonly kind: 'not_found'; readonly server: string };

/** No lookup starts after the deadline: the caller counts the domain as not checked in time. */
export class RdapDeadlineError extends RdapError {
  override readonly name: string = 'RdapDeadlineError';
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 3;
const RETRYABLE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** One answer of an RDAP server, as far as the lookup reads it. */
interface Answer {
  readonly status: number;
  readonly text: string | null;
  readonly retryAfter: string | null;
  readonly location: string | null;
}

/** Asks RDAP servers for domains; one client per scan, shared by every lookup. */
export class RdapClient {
  /** Requests sent, retries and redirects included. */
  requests = 0;
  /** Requests in flight at once per RDAP server. */
  readonly concurrencyPerServer: number;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  /** The signal that stops every lookup (Ctrl-C), when there is one. */
  readonly signal: AbortSignal | undefined;
  private readonly perServer: number;
  private readonly maxAttempts: number;
  private readonly maxRetryAfterMs: number;
  private readonly maxBytes: number;
  private readonly deadline: Deadline | undefined;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly limiters = new Map<string, ConcurrencyLimiter>();

  constructor(options: RdapClientOptions = {}) {
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.signal = options.signal;
    this.perServer = Math.max(1, options.concurrencyPerServer ?? 2);
    this.concurrencyPerServer = this.perServer;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
    this.maxBytes = options.maxResponseBytes ?? 1024 * 1024;
    this.deadline = options.deadline;
    this.sleep = options.sleep ?? sleep;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
  }

  /**
   * Looks `name` (a normalised, punycode name) up at the server whose base URL is `baseUrl`.
   * @throws RdapError subclasses: rate limited, server failure, timeout, connection, an answer that
   *   is not the domain asked for; RdapDeadlineError when the deadline came first
   */
  async lookupDomain(baseUrl: string, name: string): Promise<RdapLookup> {
    let url = `${baseUrl}domain/${encodeURIComponent(name)}`;
    const what = `the RDAP lookup of ${name}`;
    for (let hop = 0; ; hop++) {
      const problem = rdapUrlProblem(url);
      if (problem)
        throw new RdapResponseError(`${what} was sent to ${shownOrigin(url)}, which ${problem}`, {
          status: 0,
          url,
        });
      const answer = await this.sendWithRetries(url, what);
      // As reports show it: a token in a host label stays out (the pace is kept by originOf).
      const server = shownOrigin(url);
      if (REDIRECTS.has(answer.status)) {
        if (hop >= MAX_REDIRECTS || !answer.location)
          throw new RdapResponseError(`${what} was redirected more than ${MAX_REDIRECTS} times, or nowhere`, {
            status: answer.status,
            url,
          });
        const next = resolvedLocation(answer.location, url);
        const refused = rdapRedirectProblem(url, next);
        if (refused)
          throw new RdapResponseError(
            `${what} was redirected from ${server} to ${shownOrigin(next)}, which ${refused}`,
            { status: answer.status, url },
          );
        url = next;
        continue;
      }
      // 410 (Gone) is no RDAP answer for a lookup (RFC 7480 §5.3 says 404), yet it says at least what
      // a 404 does: taken as one, it is asked again and judged as one (docs/registry.md).
      if (answer.status === 404 || answer.status === 410) return { kind: 'not_found', server };
      // A 403 naming a wait is rate limiting (rateStatus): one still there after the retries is a 429's kept.
      if (answer.status === 403 && parseRetryAfter(answer.retryAfter, this.now()) !== undefined)
        throw new RdapRateLimitError(
          `the RDAP server kept answering 403 with a Retry-After (rate limited) to ${what}`,
          { status: 403, url },
        );
      if (answer.status !== 200) throw RdapError.fromResponse({ status: answer.status, url }, what);
      return { kind: 'found', record: this.parse(answer, name, url, what), server };
    }
  }

  private parse(answer: Answer, name: string, url: string, what: string): RegistryRecord {
    const facts = { status: answer.status, url };
    if (answer.text === null)
      throw new RdapResponseError(`${what} answered more than ${this.maxBytes} bytes`, facts);
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      throw new RdapResponseError(`${what} answered something that is not JSON`, facts);
    }
    try {
      return parseRdapDomain(body, name);
    } catch (error) {
      if (!(error instanceof RdapDomainShapeError)) throw error;
      throw new RdapResponseError(`${what}: ${error.message}`, facts, { cause: error });
    }
  }

  /** The server's limiter: its own concurrency ceiling and pause. */
  private limiterOf(url: string): ConcurrencyLimiter {
    const origin = originOf(url);
    let limiter = this.limiters.get(origin);
    if (!limiter) {
      const controller = new ConcurrencyController({ ceiling: this.perServer, initial: this.perServer });
      limiter = new ConcurrencyLimiter(controller, this.now, (ms) => this.waitAtGate(ms));
      this.limiters.set(origin, limiter);
    }
    return limiter;
  }

  /**
   * A wait at a server's gate (its Retry-After pause, its pacing): cut at the deadline and ended by
   * the signal, never thrown out of (the limiter holds a slot while it paces): the attempt then sees
   * the deadline or the stop itself. Uncut, a pacing of one start per 20 s held the scan past its time.
   */
  private waitAtGate(ms: number): Promise<void> {
    return this.sleep(Math.max(0, Math.min(ms, this.remaining())), this.signal).catch(() => undefined);
  }

  private remaining(): number {
    const at = deadlineAt(this.deadline);
    return at === undefined ? Number.POSITIVE_INFINITY : at - this.now();
  }

  /**
   * The request, tried again as {@link retryDecision} decides: every answer of 400 or more, and every
   * failure to get one, is put to it as the retry loop's `shouldRetry`, which also tells the server's
   * concurrency controller what the server said. What it stops at is returned (an answer) or
   * thrown (no answer, the deadline).
   */
  private async sendWithRetries(url: string, what: string): Promise<Answer> {
    const limiter = this.limiterOf(url);
    const controller = limiter.controller;
    let pauseWaited = 0;
    let stopped: RetryDecision = { retry: false, reason: 'done' };
    const shouldRetry = ({ error, attemptNumber }: RetryContext): RetryVerdict => {
      if (!(error instanceof RdapAttempt)) return false;
      const { startedAt, retryAfterMs } = error;
      const status = error.answer && rateStatus(error.answer, retryAfterMs);
      const decision = retryDecision({
        attempt: attemptNumber,
        maxAttempts: this.maxAttempts,
        status,
        failure: error.failure ? (error.failure.retryable ? 'timeout' : 'fatal') : undefined,
        retryAfterMs,
        remainingMs: this.remaining(),
        maxRetryAfterMs: this.maxRetryAfterMs,
        jitter: this.random(),
      });
      controller.recordFailedTry({ status, startedAt, retryAfterMs }, decision, this.now());
      if (!decision.retry) {
        stopped = decision;
        return false;
      }
      if (retryAfterMs !== undefined) pauseWaited = controller.pausedUntil;
      return { delayMs: decision.delayMs };
    };
    try {
      return await retry(() => this.attempt(url, what, limiter, pauseWaited), {
        retries: Number.POSITIVE_INFINITY,
        shouldRetry,
        sleep: this.sleep,
        clock: this.now,
        ...(this.signal ? { signal: this.signal } : {}),
      });
    } catch (error) {
      if (!(error instanceof RdapAttempt)) throw error;
      if (error.failure) throw error.failure.error;
      // The server's own wait past the scan's time: that server is done for this scan, not the others.
      if (stopped.retry === false && stopped.reason === 'retry-after-beyond-deadline')
        throw new RdapRateLimitError(
          `the RDAP server asked to wait ${Math.ceil((error.retryAfterMs ?? 0) / 1000)} s (Retry-After) before ${what}, longer than the scan has left; it is not asked again in this scan`,
          { status: error.answer?.status ?? 429, url },
          { retryAfterMs: error.retryAfterMs ?? 0 },
        );
      if (stopped.retry === false && stopped.reason === 'backoff-beyond-deadline')
        throw new RdapDeadlineError(`the scan's time ran out while retrying ${what}`, { status: 0, url });
      return error.answer as Answer;
    }
  }

  /**
   * One attempt: an answer below 400 is returned, anything else thrown as an {@link RdapAttempt};
   * a Retry-After longer than the check waits is a rate limit, not asked again.
   */
  private async attempt(
    url: string,
    what: string,
    limiter: ConcurrencyLimiter,
    pauseWaited: number,
  ): Promise<Answer> {
    if (this.remaining() <= 0)
      throw new RdapDeadlineError(`the scan's time ran out before ${what}`, { status: 0, url });
    await limiter.acquire(pauseWaited);
    const startedAt = this.now();
    let answer: Answer;
    let cutByDeadline = false;
    try {
      this.signal?.throwIfAborted();
      const budget = this.remaining();
      if (budget <= 0)
        throw new RdapDeadlineError(`the scan's time ran out before ${what}`, { status: 0, url });
      this.requests++;
      cutByDeadline = budget < this.timeoutMs;
      answer = await this.fetchOnce(url, Math.min(this.timeoutMs, budget));
    } catch (error) {
      if (error instanceof RdapDeadlineError) throw error;
      // Stopped, not timed out: the signal's reason, which shouldRetry never retries.
      this.signal?.throwIfAborted();
      // The scan's time ended the request, not the server's pace: no failure of that server.
      if (cutByDeadline && (error as { name?: string } | undefined)?.name === 'TimeoutError')
        throw new RdapDeadlineError(
          `the scan's time ran out during ${what}`,
          { status: 0, url },
          { cause: error },
        );
      throw new RdapAttempt(startedAt, undefined, this.describeFailure(error, url, what));
    } finally {
      limiter.release();
    }
    if (answer.status < 400) {
      limiter.controller.record({ kind: 'success', startedAt, latencyMs: this.now() - startedAt });
      return answer;
    }
    const retryAfterMs = parseRetryAfter(answer.retryAfter, this.now());
    const waitAsked = answer.status === 503 || rateStatus(answer, retryAfterMs) === 429;
    if (waitAsked && retryAfterMs !== undefined && retryAfterMs > this.maxRetryAfterMs) {
      // Honoured, not cut short (a 503 "down for maintenance" too): not asked again in this scan.
      limiter.controller.record({ kind: 'throttled', startedAt, now: this.now() });
      throw new RdapRateLimitError(
        `the RDAP server asked to wait ${Math.ceil(retryAfterMs / 1000)} s (Retry-After) before ${what}; it is not asked again in this scan`,
        { status: answer.status, url },
        { retryAfterMs },
      );
    }
    throw new RdapAttempt(startedAt, answer, undefined, retryAfterMs);
  }

  private async fetchOnce(url: string, timeoutMs: number): Promise<Answer> {
    const res = await this.fetchImpl(url, {
      headers: { Accept: 'application/rdap+json' },
      // Followed by hand, so every hop is checked against https-only.
      redirect: 'manual',
      signal: this.signal
        ? AbortSignal.any([AbortSignal.timeout(timeoutMs), this.signal])
        : AbortSignal.timeout(timeoutMs),
    });
    const wanted = res.status === 200;
    const text = wanted ? await readBodyLimited(res, this.maxBytes) : '';
    if (!wanted) await res.body?.cancel().catch(() => undefined);
    return {
      status: res.status,
      text,
      retryAfter: res.headers.get('retry-after'),
      location: res.headers.get('location'),
    };
  }

  private describeFailure(
    error: unknown,
    url: string,
    what: string,
  ): { error: RdapError; retryable: boolean } {
    const facts = { status: 0, url };
    const name = (error as { name?: string } | undefined)?.name;
    if (name === 'TimeoutError' || name === 'AbortError')
      return {
        error: new RdapTimeoutError(`no answer within ${this.timeoutMs} ms to ${what}`, facts, {
          cause: error,
        }),
        retryable: true,
      };
    const code = errorCode(error);
    return {
      error: new RdapConnectionError(
        `could not reach the RDAP server ${shownOrigin(url)} (${
          code ??
          String((error as Error).message)
            .split(url)
            .join(shownUrl(url))
        }) for ${what}`,
        facts,
        { cause: error },
      ),
      retryable: RETRYABLE_CODES.has(code ?? ''),
    };
  }
}

/**
 * The status the retry decision and the server's pace read: a 403 that names a Retry-After is rate
 * limiting (some registries' gateways refuse over their quota that way, and say when to come back),
 * honoured as a 429 is; a 403 without one is a refusal, not retried (docs/registry.md).
 */
function rateStatus(answer: Answer, retryAfterMs: number | undefined): number {
  return answer.status === 403 && retryAfterMs !== undefined ? 429 : answer.status;
}

/** A Location header made absolute against the URL it answered; as sent when it is no URL (refused then). */
function resolvedLocation(location: string, base: string): string {
  try {
    return new URL(location, base).toString();
  } catch {
    return location;
  }
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** One attempt that was not a success: what {@link retryDecision} decides on. */
class RdapAttempt extends Error {
  override readonly name: string = 'RdapAttempt';
  constructor(
    readonly startedAt: number,
    readonly answer: Answer | undefined,
    readonly failure: { readonly error: RdapError; readonly retryable: boolean } | undefined,
    readonly retryAfterMs?: number,
  ) {
    super('an RDAP attempt that is not a success');
  }
}
