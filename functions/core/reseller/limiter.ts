/**
 * Adaptive concurrency for the reseller transport: additive increase while answers come back fast
 * and successful, multiplicative decrease (halve) on 429/503, and one shared pause when the server
 * names a Retry-After. The controller is a pure state machine fed with events (no timers, no clock
 * of its own) so it can be tested by replaying a server's answers.
 */

/** Settings of {@link ConcurrencyController}. */
export interface ConcurrencyControllerOptions {
  /** The ceiling: never more requests in flight than this. */
  readonly ceiling: number;
  /** Where the limit starts. @default min(4, ceiling) */
  readonly initial?: number;
  /** An answer slower than this does not count toward growth. @default 2 000 ms */
  readonly slowMs?: number;
}

/** What happened to one request, as the controller needs to know it. */
export type RequestEvent =
  | {
      readonly kind: 'success';
      /** When the request was sent (the caller's clock). */
      readonly startedAt: number;
      readonly latencyMs: number;
    }
  | {
      /** 429 or 503: the server asks for less. */
      readonly kind: 'throttled';
      readonly startedAt: number;
      /** When the event was seen (the caller's clock). */
      readonly now: number;
      /** The server's Retry-After, when it gave one and it will be honoured. */
      readonly retryAfterMs?: number | undefined;
    }
  | {
      /** Timeouts, resets, other statuses: no signal about the server's capacity. */
      readonly kind: 'other';
    };

/**
 * AIMD: +1 after `limit` fast successes in a row (about one round of requests), four rounds when
 * the next step would reach the limit the server last pushed back at; halved on a throttle. Requests that were already in flight when the limit was cut do not cut it again: one
 * burst of 429s is one signal, as in TCP's one decrease per window.
 */
export class ConcurrencyController {
  readonly ceiling: number;
  private readonly slowMs: number;
  private current: number;
  private fastInARow = 0;
  private lastDecreaseAt = Number.NEGATIVE_INFINITY;
  /** The limit at which the server last pushed back: growth slows near it, to probe rather than storm. */
  private throttledAt = Number.POSITIVE_INFINITY;
  private pause = 0;
  /** Pacing between request starts; 0 until the server first pushes back. */
  private interval = 0;
  /** Start of the current measuring window: the first request, then the last cut. */
  private windowStart = Number.NaN;
  private successesInWindow = 0;

  constructor(options: ConcurrencyControllerOptions) {
    this.ceiling = Math.max(1, Math.floor(options.ceiling));
    this.current = Math.min(this.ceiling, Math.max(1, Math.floor(options.initial ?? 4)));
    this.slowMs = options.slowMs ?? 2_000;
  }

  /** Requests allowed in flight now. */
  get limit(): number {
    return this.current;
  }

  /** Epoch ms (the caller's clock) before which no request should start; 0 when there is no pause. */
  get pausedUntil(): number {
    return this.pause;
  }

  /**
   * Least time between two request starts, in ms; 0 for none. Set at each cut to the rate the
   * server actually delivered since the previous one, because a server that limits requests per
   * second cannot be matched by concurrency alone (one request in flight can still be too fast).
   * It then shrinks by 0.1 % per success, so the client keeps probing upward gently.
   */
  get intervalMs(): number {
    return this.interval;
  }

  /**
   * Feeds one failed try as the retry decision judged it: a 429 or 503 is a throttle, carrying the
   * server's Retry-After only when the decision waits for it; anything else says nothing of the
   * server's capacity. The reseller transport and the RDAP client both judge their tries so.
   */
  recordFailedTry(
    failed: {
      readonly status: number | undefined;
      readonly startedAt: number;
      readonly retryAfterMs?: number | undefined;
    },
    decision: { readonly retry: boolean; readonly delayMs?: number },
    now: number,
  ): void {
    if (failed.status !== 429 && failed.status !== 503) {
      this.record({ kind: 'other' });
      return;
    }
    const honoured = decision.retry && failed.retryAfterMs !== undefined ? decision.delayMs : undefined;
    this.record({ kind: 'throttled', startedAt: failed.startedAt, now, retryAfterMs: honoured });
  }

  /** Feeds one request's outcome. */
  record(event: RequestEvent): void {
    if (event.kind === 'success') {
      if (Number.isNaN(this.windowStart)) this.windowStart = event.startedAt;
      this.successesInWindow++;
      this.interval *= 0.999;
      if (event.latencyMs > this.slowMs) {
        this.fastInARow = 0;
        return;
      }
      this.fastInARow++;
      const rounds = this.current + 1 >= this.throttledAt ? 4 : 1;
      if (this.fastInARow >= this.current * rounds && this.current < this.ceiling) {
        this.current++;
        this.fastInARow = 0;
      }
      return;
    }
    if (event.kind === 'throttled') {
      this.fastInARow = 0;
      if (event.startedAt >= this.lastDecreaseAt) {
        // Too few answers to measure a rate (a single early 429): leave pacing as it is.
        const elapsed = event.now - this.windowStart;
        if (this.successesInWindow >= 5 && elapsed > 0) this.interval = elapsed / this.successesInWindow;
        this.windowStart = event.now;
        this.successesInWindow = 0;
        this.throttledAt = this.current;
        this.current = Math.max(1, Math.floor(this.current / 2));
        this.lastDecreaseAt = event.now;
      }
      if (event.retryAfterMs !== undefined) {
        this.pause = Math.max(this.pause, event.now + event.retryAfterMs);
      }
    }
  }
}

/**
 * The I/O half: a gate in front of every request that obeys the controller's limit and pause.
 * Waiters re-check after every release, because the limit may have moved while they waited.
 */
export class ConcurrencyLimiter {
  readonly controller: ConcurrencyController;
  private inFlight = 0;
  private waiters: Array<() => void> = [];
  private nextStartAt = 0;

  constructor(
    controller: ConcurrencyController,
    private readonly now: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {
    this.controller = controller;
  }

  /** Requests in flight now. */
  get active(): number {
    return this.inFlight;
  }

  /**
   * Waits for a slot. `pauseAlreadyWaited` is the pause end the caller already slept through (the
   * request that got the 429 waits for its own Retry-After), so it is not waited for twice.
   */
  async acquire(pauseAlreadyWaited = 0): Promise<void> {
    let waited = pauseAlreadyWaited;
    for (;;) {
      const until = this.controller.pausedUntil;
      const now = this.now();
      // Sleep once per pause: an injected sleep may not move the clock, and a re-check would spin.
      if (until > now && until > waited) {
        waited = until;
        await this.sleep(until - now);
        continue;
      }
      if (this.inFlight < this.controller.limit) {
        this.inFlight++;
        await this.pace();
        return;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Reserves the next start time the pacing allows, and waits for it (once: no re-check, no spin). */
  private async pace(): Promise<void> {
    const interval = this.controller.intervalMs;
    if (interval <= 0) return;
    const now = this.now();
    const at = Math.max(now, this.nextStartAt);
    this.nextStartAt = at + interval;
    if (at > now) await this.sleep(at - now);
  }

  /** Frees a slot and lets every waiter look again. */
  release(): void {
    this.inFlight--;
    const waiting = this.waiters;
    this.waiters = [];
    for (const wake of waiting) wake();
  }
}
