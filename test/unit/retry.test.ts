import { describe, expect, it } from 'vitest';
import { backoffMs, retry } from '../../functions/core/base/retry';

/** A clock that moves only when the loop sleeps, and the waits it slept. */
function fakeTime() {
  let now = 0;
  const waits: number[] = [];
  return {
    waits,
    clock: () => now,
    sleep: async (ms: number) => {
      waits.push(ms);
      now += ms;
    },
  };
}

describe('retry', () => {
  it('tries again after each failure until a try succeeds, backing off exponentially', async () => {
    const time = fakeTime();
    const seen: number[] = [];
    const result = await retry(
      async (attempt) => {
        seen.push(attempt);
        if (attempt < 4) throw new Error(`try ${attempt}`);
        return 'done';
      },
      { retries: 5, minTimeout: 100, factor: 2, ...time },
    );
    expect(result).toBe('done');
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(time.waits).toEqual([100, 200, 400]);
  });

  it('stops with the last error once the retries are spent', async () => {
    const time = fakeTime();
    let tries = 0;
    await expect(
      retry(
        async () => {
          tries++;
          throw new Error(`try ${tries}`);
        },
        { retries: 2, minTimeout: 10, ...time },
      ),
    ).rejects.toThrow('try 3');
    expect(tries).toBe(3);
  });

  it('stops at once, with that error, when shouldRetry says no, and waits exactly what it asks for', async () => {
    const time = fakeTime();
    const decisions: Array<[string, number]> = [];
    const run = retry(
      async (attempt) => {
        throw new Error(attempt === 3 ? 'fatal' : 'busy');
      },
      {
        retries: 10,
        shouldRetry: ({ error, attemptNumber }) => {
          decisions.push([(error as Error).message, attemptNumber]);
          return (error as Error).message === 'busy' ? { delayMs: 7 * attemptNumber } : false;
        },
        ...time,
      },
    );
    await expect(run).rejects.toThrow('fatal');
    expect(decisions).toEqual([
      ['busy', 1],
      ['busy', 2],
      ['fatal', 3],
    ]);
    expect(time.waits).toEqual([7, 14]);
  });

  it('starts no wait that would end past maxRetryTime', async () => {
    const time = fakeTime();
    let tries = 0;
    await expect(
      retry(
        async () => {
          tries++;
          throw new Error('locked');
        },
        { retries: Number.POSITIVE_INFINITY, minTimeout: 100, maxTimeout: 100, maxRetryTime: 350, ...time },
      ),
    ).rejects.toThrow('locked');
    expect(time.waits).toEqual([100, 100, 100]);
    expect(tries).toBe(4);
  });

  it('stops before the next try once the signal aborts, with its reason', async () => {
    const stop = new AbortController();
    let tries = 0;
    await expect(
      retry(
        async () => {
          tries++;
          stop.abort(new Error('scan failed'));
          throw new Error('busy');
        },
        { retries: 5, minTimeout: 1, signal: stop.signal },
      ),
    ).rejects.toThrow('scan failed');
    expect(tries).toBe(1);
  });

  it('jitters a backoff below its ceiling when randomize is on', () => {
    expect(backoffMs(3, { minTimeout: 100, factor: 2 })).toBe(400);
    expect(backoffMs(3, { minTimeout: 100, factor: 2, maxTimeout: 250 })).toBe(250);
    expect(backoffMs(3, { minTimeout: 100, randomize: true }, () => 0.5)).toBe(200);
  });
});
