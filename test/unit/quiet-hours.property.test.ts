import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { instantOfLocal, parseQuietHours, quietUntil } from '../../functions/core/scan/quiet-hours';

/**
 * Quiet hours at the edges of the clock (docs/policies.md#quiet-hours-for-sms): for any window and
 * any instant around the clock changes of Europe/Amsterdam (25 October 2026 back, 28 March 2027
 * forward) and New York, an SMS held is released after the instant it was held at, within a day:
 * never at a time already past (a schedule Scheduler would refuse or never run) nor a day late.
 */

const HOUR = 3_600_000;
const pad = (n: number) => String(n).padStart(2, '0');
const clock = fc.record({ h: fc.integer({ min: 0, max: 23 }), m: fc.constantFrom(0, 10, 30, 45, 59) });

const nights = [
  ['Europe/Amsterdam', '2026-10-24T20:00:00Z'],
  ['Europe/Amsterdam', '2027-03-27T20:00:00Z'],
  ['America/New_York', '2026-11-01T00:00:00Z'],
  ['America/New_York', '2027-03-14T00:00:00Z'],
] as const;

describe('quiet hours across a clock change', () => {
  it('holds an SMS until an instant after it was held, at most a day and an hour on', () => {
    fc.assert(
      fc.property(
        clock,
        clock,
        fc.constantFrom(...nights),
        fc.integer({ min: 0, max: 12 * 60 }),
        (start, end, [zone, from], minutes) => {
          const window = parseQuietHours(`${pad(start.h)}:${pad(start.m)}-${pad(end.h)}:${pad(end.m)}`);
          if (!window) return;
          const now = Date.parse(from) + minutes * 60_000;
          const until = quietUntil(now, window, zone);
          if (until === null) return;
          const release = instantOfLocal(until, zone);
          expect({
            now: new Date(now).toISOString(),
            window: window.text,
            until,
            after: release > now,
          }).toEqual({
            now: new Date(now).toISOString(),
            window: window.text,
            until,
            after: true,
          });
          expect(release - now).toBeLessThanOrEqual(25 * HOUR);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
