import { describe, expect, it } from 'vitest';
import { smsDisposition } from '../../functions/core/alerts/groups';
import { hasUrgentDeadline, parseQuietHours } from '../../functions/core/scan/quiet-hours';
import type { Report } from '../../functions/core/scan/scan';
import { HOUR, T0 } from '../support/account-model';
import { heldInQuarantine, renewedUndocumented, scanUnjudged as run } from '../support/state-scan';
import { EMPTY_STATE } from '../support/whole-state';

/**
 * Found by a review: a quarantine memory keeps for a record read by its dates only that gives no
 * finding is published as a critical problem record (kept-quarantine.ts). Quiet hours let a
 * critical SMS through only when a restore-by or expiry is within 48 hours (docs/policies.md), and
 * took every critical problem record as urgent: a kept quarantine whose remembered restore-by is
 * weeks away sent its SMS in the night, where the quarantine finding it stands for waits.
 */

/** Alerted at `deletedDaysAgo` days into .nl quarantine (40 days to restore), read healthy with an undocumented status an hour on. */
function keptReport(deletedDaysAgo: number, at: number): Report {
  const held = heldInQuarantine(T0, deletedDaysAgo);
  const healthy = renewedUndocumented(held, T0);
  const first = run([held], T0, EMPTY_STATE);
  const second = run([healthy], T0 + HOUR, first.next);
  return run([healthy], at, second.next).report as unknown as Report;
}

// 23:30 in Amsterdam (CET), inside 22:00-07:00.
const night = (report: Report, now: number) =>
  smsDisposition(report, {
    hours: parseQuietHours('22:00-07:00') ?? undefined,
    timeZone: 'Europe/Amsterdam',
    now,
  });

describe('quiet hours and a quarantine kept as a critical problem record', () => {
  const now = Date.parse('2026-11-22T22:30:00Z');

  it('holds the SMS when the remembered restore-by is weeks away', () => {
    const report = keptReport(5, now);
    expect(report.problems).toEqual([
      expect.objectContaining({
        key: 'held.nl',
        severity: 'critical',
        restore_by: '2026-12-27T06:00:00.000Z',
      }),
    ]);
    expect(hasUrgentDeadline(report, now)).toBe(false);
    expect(night(report, now)).toMatchObject({ sms: 'held' });
  });

  it('sends it at once when the remembered restore-by is within 48 hours', () => {
    const report = keptReport(39, now);
    expect(report.problems[0]).toMatchObject({
      severity: 'critical',
      restore_by: '2026-11-23T06:00:00.000Z',
    });
    expect(night(report, now)).toEqual({ sms: 'send' });
  });

  it('sends it at once when the restore-by has passed or is not known', () => {
    expect(night(keptReport(45, now), now)).toEqual({ sms: 'send' });
    const unknown: Report = {
      ...keptReport(5, now),
      problems: keptReport(5, now).problems.map((p) => ({ ...p, restore_by: null })),
    };
    expect(night(unknown, now)).toEqual({ sms: 'send' });
  });

  it('still sends at once a record that says quarantine but could not be read', () => {
    const report = keptReport(5, now);
    const unreadable: Report = {
      ...report,
      problems: [{ resource: 'domain', key: 'x.nl', page: 1, reason: 'quarantine?', severity: 'critical' }],
    };
    expect(night(unreadable, now)).toEqual({ sms: 'send' });
  });
});
