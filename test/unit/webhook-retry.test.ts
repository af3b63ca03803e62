import { describe, expect, it } from 'vitest';
import { MAX_RETRY_DELAY_MS, retryDelayMs } from '../../functions/core/alerts/webhook-delivery';

const NOW = Date.parse('2026-11-27T12:00:00Z');

/**
 * The wait between two tries of one webhook post: its own backoff (1 s, 2 s, 4 s, …), or the
 * webhook's Retry-After when it asks for longer, and never no wait at all.
 */
describe('retryDelayMs', () => {
  it('backs off 1 s, 2 s, 4 s without a Retry-After, at most the longest wait', () => {
    expect([0, 1, 2, 10].map((attempt) => retryDelayMs(attempt, null, NOW))).toEqual([
      1000,
      2000,
      4000,
      MAX_RETRY_DELAY_MS,
    ]);
  });

  it('waits a longer Retry-After, in seconds or as an HTTP date', () => {
    expect(retryDelayMs(0, '3', NOW)).toBe(3000);
    expect(retryDelayMs(0, 'Fri, 27 Nov 2026 12:00:05 GMT', NOW)).toBe(5000);
  });

  it('still waits the backoff when Retry-After says 0 or names a time already past: no tries back to back', () => {
    expect(retryDelayMs(0, '0', NOW)).toBe(1000);
    expect(retryDelayMs(1, 'Fri, 27 Nov 2026 11:00:00 GMT', NOW)).toBe(2000);
  });

  it('reads a Retry-After that is neither seconds nor an HTTP date as none (Date.parse takes 1.5 for May 2001)', () => {
    expect(retryDelayMs(0, '1.5', NOW)).toBe(1000);
    expect(retryDelayMs(0, 'soon', NOW)).toBe(1000);
  });

  it('leaves a Retry-After longer than the longest wait to the queue', () => {
    expect(retryDelayMs(0, '11', NOW)).toBeNull();
  });
});
