import { createServer, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ResponseTooLargeError, TimeoutError } from '../../functions/core/base/errors';
import { parseRetryAfter } from '../../functions/core/base/retry';
import { checkApiKey } from '../../functions/core/links/secrets';
import { apiKeyProblem, scrubSecrets } from '../../functions/core/reseller/api-key';
import { ConcurrencyController } from '../../functions/core/reseller/limiter';
import { retryDecision, Transport } from '../../functions/core/reseller/transport';
import { listenOnLoopback } from '../support/loopback';

const base = { attempt: 1, maxAttempts: 5, remainingMs: Number.POSITIVE_INFINITY, jitter: 0.5 };

describe('retryDecision', () => {
  it('is the static of the transport, in the way of stripe-node', () => {
    expect(Transport.retryDecision).toBe(retryDecision);
  });

  it('retries 429, 5xx, timeouts and resets; not 2xx, 3xx, 4xx or a refused connection', () => {
    for (const status of [429, 500, 502, 503]) expect(retryDecision({ ...base, status }).retry).toBe(true);
    for (const failure of ['timeout', 'reset'] as const) {
      expect(retryDecision({ ...base, failure }).retry).toBe(true);
    }
    for (const status of [200, 204, 302, 400, 401, 403, 404]) {
      expect(retryDecision({ ...base, status })).toEqual({ retry: false, reason: 'done' });
    }
    expect(retryDecision({ ...base, failure: 'fatal' })).toEqual({ retry: false, reason: 'done' });
  });

  it('backs off exponentially with full jitter, up to the cap', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((attempt) =>
      retryDecision({ ...base, attempt, maxAttempts: 10, status: 503, retryBaseMs: 100, retryMaxMs: 1_000 }),
    );
    expect(delays).toEqual([50, 100, 200, 400, 500, 500, 500].map((delayMs) => ({ retry: true, delayMs })));
  });

  it('stops after the last attempt', () => {
    expect(retryDecision({ ...base, attempt: 5, status: 500 })).toEqual({
      retry: false,
      reason: 'attempts-exhausted',
    });
  });

  it('honours a Retry-After, cut to the longest wait allowed', () => {
    expect(retryDecision({ ...base, status: 429, retryAfterMs: 2_000 })).toEqual({
      retry: true,
      delayMs: 2_000,
    });
    expect(retryDecision({ ...base, status: 429, retryAfterMs: 3_600_000, maxRetryAfterMs: 5_000 })).toEqual({
      retry: true,
      delayMs: 5_000,
    });
  });

  it('stops at once when the Retry-After does not fit in the time left, instead of sleeping into the deadline', () => {
    expect(retryDecision({ ...base, status: 429, retryAfterMs: 86_400_000, remainingMs: 840_000 })).toEqual({
      retry: false,
      reason: 'retry-after-beyond-deadline',
    });
    expect(retryDecision({ ...base, status: 503, retryBaseMs: 1_000, remainingMs: 400 })).toEqual({
      retry: false,
      reason: 'backoff-beyond-deadline',
    });
  });

  it('waits at least its own backoff when a Retry-After says 0 or a time already past', () => {
    // Attempt 3: the backoff is half (jitter 0.5) of 250 ms * 2^2.
    const third = { ...base, attempt: 3, status: 429, retryBaseMs: 250, retryMaxMs: 8_000 };
    expect(retryDecision({ ...third, retryAfterMs: 0 })).toEqual({ retry: true, delayMs: 500 });
    expect(retryDecision({ ...third, retryAfterMs: 100 })).toEqual({ retry: true, delayMs: 500 });
    expect(retryDecision({ ...third, retryAfterMs: 2_000 })).toEqual({ retry: true, delayMs: 2_000 });
    // The floor is a wait too: one that does not fit in the time left stops at once.
    expect(retryDecision({ ...third, retryAfterMs: 0, remainingMs: 400 })).toEqual({
      retry: false,
      reason: 'backoff-beyond-deadline',
    });
  });
});

describe('Transport in a storm of 429 with Retry-After: 0', () => {
  it('waits at least its own backoff between attempts, not back to back', async () => {
    let clock = Date.parse('2026-11-22T06:00:00Z');
    const waits: number[] = [];
    let sent = 0;
    const fetch = (async () => {
      sent++;
      return new Response('{}', { status: 429, headers: { 'retry-after': '0' } });
    }) as typeof globalThis.fetch;
    const transport = new Transport({
      baseUrl: 'https://api.test',
      apiKey: 'sk_test_0123456789',
      fetch,
      maxAttempts: 4,
      retryBaseMs: 250,
      retryMaxMs: 8_000,
      random: () => 0.5,
      now: () => clock,
      sleep: async (ms) => {
        waits.push(ms);
        clock += ms;
      },
    });
    const res = await transport.send({ method: 'GET', path: '/v2/domains', what: 'page 1' });
    expect(res.status).toBe(429);
    expect(sent).toBe(4);
    // Half of 250, 500 and 1 000 ms (jitter 0.5): the waits the client takes without a Retry-After.
    const floors = [125, 250, 500];
    expect(waits.filter((ms) => ms > 0)).toHaveLength(3);
    expect(waits.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(875);
    let i = 0;
    for (const ms of waits.filter((w) => w > 0)) expect(ms).toBeGreaterThanOrEqual(floors[i++] ?? 0);
  });
});

describe('Transport waiting at its gate', () => {
  it('waits at a shared pause no further than the deadline, then stops with the deadline', async () => {
    // Another request's 429 asked for 60 s; the scan has 5 s left: sleeping the whole pause would
    // eat the reserve the scan keeps to publish its alert.
    const start = Date.parse('2026-11-22T06:00:00Z');
    let clock = start;
    let sent = 0;
    const transport = new Transport({
      baseUrl: 'https://api.test',
      apiKey: 'sk_test_0123456789',
      fetch: (async () => {
        sent++;
        return new Response('{}');
      }) as typeof globalThis.fetch,
      deadline: start + 5_000,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
    });
    transport.limiter.controller.record({
      kind: 'throttled',
      startedAt: start,
      now: start,
      retryAfterMs: 60_000,
    });
    await expect(transport.send({ method: 'GET', path: '/v2/domains', what: 'page 2' })).rejects.toThrow(
      /time budget|deadline|time ran out/i,
    );
    expect(clock).toBe(start + 5_000);
    expect(sent).toBe(0);
  });
});

describe('ConcurrencyController', () => {
  const fast = (startedAt = 0) => ({ kind: 'success' as const, startedAt, latencyMs: 30 });

  it('starts at 4 and grows by one per round of fast successes, up to the ceiling', () => {
    const c = new ConcurrencyController({ ceiling: 8 });
    expect(c.limit).toBe(4);
    const seen: number[] = [];
    for (let i = 0; i < 40; i++) {
      c.record(fast());
      seen.push(c.limit);
    }
    expect(seen.slice(0, 4)).toEqual([4, 4, 4, 5]);
    expect(c.limit).toBe(8);
  });

  it('does not grow on slow answers', () => {
    const c = new ConcurrencyController({ ceiling: 8, slowMs: 1_000 });
    for (let i = 0; i < 40; i++) c.record({ kind: 'success', startedAt: 0, latencyMs: 1_500 });
    expect(c.limit).toBe(4);
  });

  it('halves once per burst of 429s and sets one shared pause from Retry-After', () => {
    const c = new ConcurrencyController({ ceiling: 8, initial: 8 });
    // eight requests sent at t=0 all come back 429 at t=100
    for (let i = 0; i < 8; i++) c.record({ kind: 'throttled', startedAt: 0, now: 100, retryAfterMs: 2_000 });
    expect(c.limit).toBe(4);
    expect(c.pausedUntil).toBe(2_100);
    // a request sent after the cut that is throttled again cuts again
    c.record({ kind: 'throttled', startedAt: 2_200, now: 2_300 });
    expect(c.limit).toBe(2);
    c.record({ kind: 'throttled', startedAt: 2_400, now: 2_500 });
    c.record({ kind: 'throttled', startedAt: 2_600, now: 2_700 });
    expect(c.limit).toBe(1);
  });

  it('paces requests at the rate the server delivered between two cuts, then probes upward slowly', () => {
    const c = new ConcurrencyController({ ceiling: 8 });
    expect(c.intervalMs).toBe(0);
    // one early 429 with too few answers to measure: no pacing
    c.record(fast(0));
    c.record({ kind: 'throttled', startedAt: 0, now: 100 });
    expect(c.intervalMs).toBe(0);
    // 20 answers in the 2 s after that cut, then a 429: 10 per second, one start per 100 ms
    for (let i = 0; i < 20; i++) c.record(fast(200 + i * 100));
    c.record({ kind: 'throttled', startedAt: 2_000, now: 2_100 });
    expect(c.intervalMs).toBe(100);
    for (let i = 0; i < 100; i++) c.record(fast(3_000));
    expect(c.intervalMs).toBeCloseTo(100 * 0.999 ** 100, 6);
  });

  it('settles near what a server that allows 5 in flight can take, with few 429s', () => {
    // Replays rounds: each round sends `limit` requests; those beyond 5 get a 429.
    const c = new ConcurrencyController({ ceiling: 16 });
    let sent = 0;
    let throttled = 0;
    const limits: number[] = [];
    for (let round = 0, t = 0; round < 200; round++, t += 100) {
      const n = c.limit;
      for (let i = 0; i < n; i++) {
        sent++;
        if (i >= 5) {
          throttled++;
          c.record({ kind: 'throttled', startedAt: t, now: t + 50 });
        } else c.record(fast(t));
      }
      limits.push(c.limit);
    }
    expect(Math.max(...limits.slice(50))).toBeLessThanOrEqual(6);
    expect(Math.min(...limits.slice(50))).toBeGreaterThanOrEqual(3);
    expect(throttled / sent).toBeLessThan(0.05);
  });
});

describe('apiKeyProblem', () => {
  it('accepts a normal key', () => {
    expect(apiKeyProblem('sk_live_9f8e7d6c5b4a3928')).toBeNull();
  });

  it('names the character and its place, never the key', () => {
    const key = 'sk_live_abc\rdef';
    const problem = apiKeyProblem(key);
    expect(problem).toBe('holds a carriage return (CR) at position 12; an HTTP header cannot carry it');
    expect(apiKeyProblem('sk_live\n')).toContain('line feed (LF) at position 8');
    expect(apiKeyProblem('a\u0000b')).toContain('NUL');
    expect(apiKeyProblem('a\u001bb')).toContain('control character (U+001B)');
    expect(apiKeyProblem('clé-€')).toContain('non-Latin-1 character at position 5');
    expect(apiKeyProblem(' key')).toContain('whitespace');
    expect(apiKeyProblem('')).toBe('is empty');
  });

  it('refuses a key shorter than 8 characters, which scrubbing could not tell from ordinary text', () => {
    expect(apiKeyProblem('abc1234')).toBe(
      'is shorter than 8 characters; a real reseller key is longer, check that the whole key was copied',
    );
    expect(apiKeyProblem('abc12345')).toBeNull();
    expect(() => checkApiKey('abc\n', 'RESELLER_API_KEY')).toThrow(
      'RESELLER_API_KEY is shorter than 8 characters; a real reseller key is longer, check that the whole key was copied; the value is not shown',
    );
    expect(() => new Transport({ baseUrl: 'https://api.test', apiKey: 'e' })).toThrow(
      /^the reseller API key is shorter than 8 characters; a real reseller key is longer/,
    );
  });

  it('refuses such a key when the transport is built, with a ConfigError that does not hold it', () => {
    const key = 'sk_live_SECRETVALUE\r\nX-Injected: 1';
    let caught: unknown;
    try {
      new Transport({ baseUrl: 'https://api.test', apiKey: key });
    } catch (error) {
      caught = error;
    }
    expect((caught as Error).name).toBe('ConfigError');
    expect((caught as Error).message).toContain('carriage return (CR) at position 20');
    expect((caught as Error).message).not.toContain('SECRETVALUE');
  });
});

describe('scrubSecrets', () => {
  const key = 'sk_live_0123456789abcdef';

  it("removes the key, and any Bearer or Authorization value, from fetch's own messages", () => {
    expect(scrubSecrets(`Headers.append: "Bearer ${key}" is an invalid header value.`, key)).toBe(
      'Headers.append: "Bearer [redacted]" is an invalid header value.',
    );
    expect(scrubSecrets('authorization: Bearer other-token-value', key)).toBe(
      'authorization: Bearer [redacted]',
    );
    expect(scrubSecrets('{"Authorization":"abcdef123"}', key)).toBe('{"Authorization":"[redacted]"}');
    expect(scrubSecrets(`echo ${key} echo`, key)).toBe('echo [redacted] echo');
  });

  it('removes the key echoed URL-encoded, base64 or base64url encoded, or in another letter case', () => {
    const odd = 'sk/live+key=é?&01~';
    const forms = [
      encodeURIComponent(odd),
      encodeURIComponent(odd).toLowerCase(),
      new URLSearchParams({ q: `${odd} x` }).toString().slice(2, -2),
      Buffer.from(odd).toString('base64'),
      Buffer.from(odd).toString('base64').replace(/=+$/, ''),
      Buffer.from(odd).toString('base64url'),
      Buffer.from(odd, 'latin1').toString('base64'),
      odd.toUpperCase(),
    ];
    for (const form of forms) {
      expect(scrubSecrets(`path /v2/x?k=${form}&page=2 said`, odd)).toBe(
        'path /v2/x?k=[redacted]&page=2 said',
      );
    }
    expect(scrubSecrets(`{"echo":"${key.toUpperCase()}"}`, key)).toBe('{"echo":"[redacted]"}');
    expect(scrubSecrets(`token ${Buffer.from(key).toString('base64url')}.`, key)).toBe('token [redacted].');
  });

  it('removes the pieces of a key split by a CR or LF', () => {
    const split = 'sk_live_first\r\nsecondhalf';
    const out = scrubSecrets('value "sk_live_first" then "secondhalf" seen', split);
    expect(out).not.toContain('sk_live_first');
    expect(out).not.toContain('secondhalf');
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-22T06:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 06:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 05:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('reads a value that is neither delay-seconds nor an HTTP date as unreadable, not as "retry at once"', () => {
    // Date.parse takes "1.5" as 1 May 2001 and "-1" as the year -1: in the past, so a wait of 0,
    // and five attempts in a row without backoff against a server asking to slow down.
    const now = Date.parse('2026-11-22T06:00:00Z');
    for (const value of ['1.5', '-1', 'tomorrow 3', '1 hour'])
      expect([value, parseRetryAfter(value, now)]).toEqual([value, undefined]);
    expect(parseRetryAfter('Sunday, 22-Nov-26 06:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Sun Nov 22 06:00:10 2026', now)).toBe(10_000);
  });
});

describe('Transport response size', () => {
  /** A body of `total` bytes in 64 KiB chunks, each after a turn of the event loop (so reads interleave). */
  const streamed = (total: number) =>
    new ReadableStream<Uint8Array>({
      start() {},
      async pull(controller) {
        await new Promise((resolve) => setImmediate(resolve));
        const sent = (this as unknown as { sent?: number }).sent ?? 0;
        if (sent >= total) return controller.close();
        const size = Math.min(65_536, total - sent);
        (this as unknown as { sent: number }).sent = sent + size;
        controller.enqueue(new Uint8Array(size).fill(0x20));
      },
    });

  it('holds every body being read at once to the one limit, not the limit per request', async () => {
    const MIB = 1024 * 1024;
    const fetch = (async () => new Response(streamed(3 * MIB), { status: 200 })) as typeof globalThis.fetch;
    const transport = new Transport({
      baseUrl: 'https://api.test',
      apiKey: 'sk_test_0123456789',
      fetch,
      maxResponseBytes: 4 * MIB,
      maxAttempts: 1,
    });
    const read = (n: number) => transport.send({ method: 'GET', path: '/v2/domains', what: `page ${n}` });
    // Alone, a 3 MiB body is within 4 MiB.
    expect((await read(1)).text).toHaveLength(3 * MIB);
    // Three at once would hold 9 MiB: at least one is stopped, naming why.
    const results = await Promise.allSettled([read(2), read(3), read(4)]);
    const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(refused.length).toBeGreaterThan(0);
    expect(String(refused[0]?.reason)).toMatch(/together with the other answers being read at once/);
    // And the budget is given back: a read alone afterwards succeeds again.
    expect((await read(5)).text).toHaveLength(3 * MIB);
  });
});

describe('Transport against a real server that lies about its body (127.0.0.1)', () => {
  /** A server on a free loopback port answering every request with `answer`. */
  const serve = (answer: (res: ServerResponse) => void) =>
    listenOnLoopback(createServer((_req, res) => answer(res)));

  it('gives up on a body that trickles in and never ends, after the per-request timeout, and retries it', async () => {
    const timers: NodeJS.Timeout[] = [];
    let answered = 0;
    const server = await serve((res) => {
      answered++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":[');
      // A byte every 20 ms: never silent long enough for an idle timeout, never done.
      timers.push(setInterval(() => res.write(' '), 20));
    });
    try {
      const transport = new Transport({
        baseUrl: server.url,
        apiKey: 'sk_test_0123456789',
        timeoutMs: 300,
        maxAttempts: 2,
        sleep: async () => {},
      });
      const error = await transport
        .send({ method: 'GET', path: '/v2/domains', what: 'page 1' })
        .catch((e) => e);
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error.message).toMatch(/^no answer within 300 ms for page 1 /);
      expect(answered).toBe(2);
    } finally {
      for (const timer of timers) clearInterval(timer);
      await server.close();
    }
  });

  it('stops a gzip bomb at the limit, counting the bytes it unpacks to, not the bytes sent', async () => {
    const MIB = 1024 * 1024;
    const bomb = gzipSync(Buffer.alloc(64 * MIB, 0x20));
    expect(bomb.length).toBeLessThan(MIB);
    const server = await serve((res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': String(bomb.length),
      });
      res.end(bomb);
    });
    try {
      const transport = new Transport({
        baseUrl: server.url,
        apiKey: 'sk_test_0123456789',
        maxResponseBytes: 4 * MIB,
        maxAttempts: 1,
      });
      const error = await transport
        .send({ method: 'GET', path: '/v2/domains', what: 'page 1' })
        .catch((e) => e);
      expect(error).toBeInstanceOf(ResponseTooLargeError);
      expect(error.message).toMatch(/^the reseller API's answer to page 1 ran past 4 MiB/);
    } finally {
      await server.close();
    }
  });
});
