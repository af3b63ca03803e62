import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextRepeats, type RepeatedFinding, repeatDecision } from '../../functions/core/memory/repeat';
import type { AlertMemory } from '../../functions/core/memory/state';
import type { Repeat } from '../../functions/core/scan/policies';
import { MAX_REPEAT_CAP } from '../../functions/core/scan/policies';

/**
 * The repeat cadence as a sequence of scans of one domain: its finding ongoing, sometimes changed
 * (another rung or severity: announced as such, never a repeat), sometimes carried in a message
 * sent for other news. Whatever the sequence, a finding is repeated no more often than its
 * severity's hours, never more than `cap` times, and always once those hours passed and the cap
 * allows.
 */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;

const repeat: fc.Arbitrary<Repeat> = fc
  .record({
    critical: fc.integer({ min: 1, max: 200 }),
    warning: fc.integer({ min: 1, max: 400 }),
    cap: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  })
  .map(({ cap, ...r }) => (cap === undefined ? r : { ...r, cap }));

/** One scan: hours after the last, and what else happened. */
const step = fc.record({
  hours: fc.integer({ min: 1, max: 300 }),
  event: fc.constantFrom('none', 'none', 'none', 'other_news', 'changed'),
});

const findings: readonly RepeatedFinding[] = [
  { kind: 'expiring', severity: 'warning', stage: 30 },
  { kind: 'expiring', severity: 'warning', stage: 14 },
  { kind: 'expiring', severity: 'critical', stage: 7 },
  { kind: 'expired', severity: 'critical', stage: 0 },
  { kind: 'quarantine', severity: 'critical', stage: -1 },
];

const alertOf = (f: RepeatedFinding, at: number, repeats: number): AlertMemory => ({
  ...f,
  at: new Date(at).toISOString(),
  first_at: new Date(at).toISOString(),
  ...(repeats > 0 ? { repeats } : {}),
});

describe('repeat cadence', () => {
  it('repeats a finding at most every its severity’s hours and at most cap times, and always when both allow; a changed finding starts over', () => {
    fc.assert(
      fc.property(repeat, fc.array(step, { minLength: 1, maxLength: 40 }), (cadence, steps) => {
        let index = 0;
        let finding = findings[index] as RepeatedFinding;
        let now = T0;
        let alerted = alertOf(finding, now, 0);
        let repeatsOfThis = 0;
        for (const { hours, event } of steps) {
          now += hours * HOUR;
          if (event === 'changed' && index < findings.length - 1) {
            // Another rung or severity: announced as new or escalated, its count from 0.
            finding = findings[++index] as RepeatedFinding;
            alerted = alertOf(finding, now, nextRepeats(alerted, finding, false));
            expect(alerted.repeats).toBeUndefined();
            repeatsOfThis = 0;
            continue;
          }
          const every = finding.severity === 'critical' ? cadence.critical : cadence.warning;
          const elapsed = now - Date.parse(alerted.at);
          const decision = repeatDecision(finding, alerted, cadence, now);
          if (elapsed < every * HOUR) expect(decision).toBe('not_due');
          else if (cadence.cap !== undefined && repeatsOfThis >= cadence.cap) expect(decision).toBe('capped');
          else expect(decision).toBe('due');
          if (decision === 'due') {
            repeatsOfThis++;
            alerted = alertOf(finding, now, nextRepeats(alerted, finding, true));
          } else if (event === 'other_news') {
            // Carried in a message sent for something else: its last alert moves, its count does not.
            alerted = alertOf(finding, now, nextRepeats(alerted, finding, false));
          }
          expect(alerted.repeats ?? 0).toBe(repeatsOfThis);
          if (cadence.cap !== undefined) expect(repeatsOfThis).toBeLessThanOrEqual(cadence.cap);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never lets a stored time in the future hold a repeat back, nor a count of another finding use up its cap', () => {
    fc.assert(
      fc.property(
        repeat,
        fc.constantFrom(...findings),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 0, max: 10 }),
        (cadence, f, aheadHours, count) => {
          const now = T0;
          const future = alertOf(f, now + aheadHours * HOUR, 0);
          expect(repeatDecision(f, future, cadence, now)).toBe(cadence.cap === 0 ? 'capped' : 'due');
          // The last alert was of another finding: its repeats are not this one's.
          const other = findings.find((o) => o.stage !== f.stage) as RepeatedFinding;
          const long = alertOf(other, now - 10_000 * HOUR, count);
          expect(repeatDecision(f, long, cadence, now)).toBe('due');
          expect(nextRepeats(long, f, true)).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('has no cadence for info, and repeats a finding never alerted', () => {
    const cadence = { critical: 20, warning: 164, cap: 0 };
    const info: RepeatedFinding = { kind: 'auto_renew_off', severity: 'info', stage: null };
    expect(repeatDecision(info, alertOf(info, T0 - 10_000 * HOUR, 0), cadence, T0)).toBe('not_due');
    expect(repeatDecision(findings[0] as RepeatedFinding, null, cadence, T0)).toBe('due');
  });

  it('counts repeats up to the largest cap, so what it writes always reads back', () => {
    const f = findings[0] as RepeatedFinding;
    const counted = alertOf(f, T0, MAX_REPEAT_CAP);
    expect(nextRepeats(counted, f, true)).toBe(MAX_REPEAT_CAP);
    expect(nextRepeats(alertOf(f, T0, Number.MAX_SAFE_INTEGER), f, true)).toBe(MAX_REPEAT_CAP);
  });
});
