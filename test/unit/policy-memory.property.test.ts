import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classify, type DomainFinding } from '../../functions/core/findings/classify';
import { loadStatePolicy } from '../../functions/core/memory/state-config';
import { markFinding, parsePolicies, resolvePolicies } from '../../functions/core/scan/policies';
import { DAY, domain, scanOf } from '../support/state-scan';
import { compareWithState, EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * The promise of policies with memory, for any sequence of scans (docs/policies.md, deadlines.md):
 * a quarantine nobody silenced is published again at least once per its group's critical cadence
 * while its cap allows, and at least daily (20 hours) in its last 7 days to restore whatever the
 * cadence, the cap, or the group it moved to between scans. The clock is the test's: scans come
 * late, are missed for days, and now and then the clock runs back (a stored time in the future
 * counts as due, docs/memory.md#time).
 */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;

const GROUPS = ['', 'fast', 'slow', 'capped', 'lapse'] as const;

/** A policies file: groups by tag with cadences of their own, the top level's cadence and cap drawn. */
const fileOf = (top: { critical: number; cap?: number }) => ({
  policies: [
    { name: 'fast', match: { tags: ['fast'] }, repeat: { critical: 6 } },
    { name: 'slow', match: { tags: ['slow'] }, repeat: { critical: 200, cap: 0 } },
    { name: 'capped', match: { tags: ['capped'] }, repeat: { cap: 1 }, minSeverity: 'critical' },
    { name: 'lapse', match: { tags: ['lapse'] }, letLapse: true },
  ],
  repeat: top,
  escalation: { afterHours: 24, withinDays: 7 },
});

/** One scan of lost.de (in quarantine since T0 − 20 days: 10 days to restore at T0) at `now`, in `group`. */
function scan(file: unknown, group: (typeof GROUPS)[number], now: number, state: ScanState, summary = '7') {
  const policies = parsePolicies(file, 'policies file p.json');
  const set = resolvePolicies(policies, {
    classify: { expiryDays: 30, criticalDays: 7 },
    minSeverity: 'warning',
  });
  const lost = domain('lost.de', now, {
    status: ['quarantine'],
    date_expiry: T0 - 40 * DAY,
    auto_renew: false,
    date_deleted: T0 - 20 * DAY,
    tags: group ? [group] : [],
  });
  const { report, observed } = scanOf([lost], now);
  const g = set.policyFor(lost);
  const f = classify(lost, now, g?.classify) as DomainFinding;
  const findings = [markFinding(f, g)];
  const policy = loadStatePolicy({ SUMMARY_EVERY_DAYS: summary }, 'warning', policies);
  const result = compareWithState({ report: { ...report, findings }, observed, state, policy });
  return { result, finding: result.report.findings[0] as DomainFinding };
}

const step = fc.record({
  hours: fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 1, max: 30 }) },
    { weight: 1, arbitrary: fc.integer({ min: 31, max: 80 }) },
    { weight: 1, arbitrary: fc.integer({ min: -30, max: -1 }) },
  ),
  group: fc.constantFrom(...GROUPS),
});

const top = fc.record({
  critical: fc.integer({ min: 1, max: 300 }),
  cap: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  // 0: no weekly summary, which would otherwise speak for a clock that ran back.
  summary: fc.constantFrom('0', '7'),
});

describe('a quarantine under policies, for any sequence of scans', () => {
  it('is published at least daily in its last days to restore, and at least once per cadence while uncapped', () => {
    fc.assert(
      fc.property(top, fc.array(step, { minLength: 1, maxLength: 30 }), (repeat, steps) => {
        const file = fileOf(
          repeat.cap === undefined
            ? { critical: repeat.critical }
            : { critical: repeat.critical, cap: repeat.cap },
        );
        let now = T0;
        let { result } = scan(file, '', now, EMPTY_STATE, repeat.summary);
        expect(result.publish).toBe(true);
        let lastAt = now;
        for (const { hours, group } of steps) {
          now += hours * HOUR;
          const before = result.next.domains['lost.de']?.alerted;
          const out = scan(file, group, now, result.next, repeat.summary);
          result = out.result;
          const elapsed = now - lastAt;
          const left = out.finding.kind === 'quarantine' ? out.finding.days_to_restore : undefined;
          const cadence = group === 'fast' ? 6 : group === 'slow' ? 200 : repeat.critical;
          const cap = group === 'slow' ? 0 : group === 'capped' ? 1 : repeat.cap;
          const uncapped = cap === undefined || (before?.repeats ?? 0) < cap;
          const lastDays = typeof left === 'number' && left <= 7;
          // A last alert in the future (the clock ran back) is due; only the cap holds a repeat back.
          const due = (hours: number) => elapsed < 0 || elapsed >= hours * HOUR;
          const owed = (lastDays && due(20)) || (uncapped && due(cadence));
          // Let lapse: nothing is owed, and no message that goes out speaks of it.
          if (owed && group !== 'lapse')
            expect({
              at: new Date(now).toISOString(),
              elapsed: elapsed / HOUR,
              left,
              group,
              publish: result.publish,
            }).toMatchObject({ publish: true });
          if (result.publish && group !== 'lapse') lastAt = now;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('is escalated exactly once: at the first scan afterHours from its first alert with restore-by within withinDays', () => {
    const escalation = fc.record({
      afterHours: fc.integer({ min: 1, max: 100 }),
      withinDays: fc.integer({ min: 1, max: 12 }),
    });
    fc.assert(
      fc.property(escalation, fc.array(step, { minLength: 1, maxLength: 30 }), (esc, steps) => {
        const file = { ...fileOf({ critical: 20 }), escalation: esc };
        const restoreBy = T0 + 10 * DAY;
        let now = T0;
        let { result } = scan(file, '', now, EMPTY_STATE);
        let escalated = false;
        let first = T0;
        for (const { hours, group } of steps) {
          now += hours * HOUR;
          const out = scan(file, group, now, result.next);
          result = out.result;
          // Its first alert stays its first (the same kind, critical): a time in the future is due.
          const waited = now < first || now - first >= esc.afterHours * HOUR;
          const owed = group !== 'lapse' && !escalated && waited && restoreBy - now <= esc.withinDays * DAY;
          const hoursOf = (out.finding as { escalated_after_hours?: number }).escalated_after_hours;
          expect({ at: (now - T0) / HOUR, escalatedAfter: hoursOf, publish: result.publish }).toEqual({
            at: (now - T0) / HOUR,
            escalatedAfter: owed
              ? now < first
                ? esc.afterHours
                : Math.floor((now - first) / HOUR)
              : undefined,
            publish: owed ? true : result.publish,
          });
          if (owed) escalated = true;
          // Published by a scan before it (the clock ran back): the first alert comes back to that scan's time.
          if (result.publish && group !== 'lapse' && now < first) first = now;
        }
      }),
      { numRuns: 300 },
    );
  });
});
