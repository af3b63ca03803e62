import { describe, expect, it } from 'vitest';
import { dateFormat, describeDomainFinding } from '../../functions/core/alerts/alert';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { dayFormatIn, deadlineText, nextStep } from '../../functions/core/findings/next-step';

/**
 * A restore-by date is an instant (date_deleted + the TLD's period). Named by its day alone in the
 * alert's zone, it read a day late wherever that zone's clock is ahead of the instant's day: a
 * deadline at 01:00 on 24 Nov in Auckland read "restore by 24 Nov", and acting on the 24th was too
 * late (found by the alerts review).
 */
const NOW = '2026-11-22T06:00:00.000Z';
const quarantined = (restoreBy: string): DomainFinding =>
  ({
    domain_name: 'lost.com',
    kind: 'quarantine',
    severity: 'critical',
    auto_renew: false,
    status: ['quarantine'],
    date_expiry: '2026-10-01T06:00:00.000Z',
    days_left: -52,
    date_deleted: '2026-10-24T12:00:00.000Z',
    restore_by: restoreBy,
    days_to_restore: 1,
  }) as unknown as DomainFinding;

describe('the restore-by deadline in the alert’s zone', () => {
  it.each([
    ['Pacific/Auckland', '2026-11-23T12:00:00.000Z', '24 Nov 2026 01:00 Pacific/Auckland'],
    ['America/Los_Angeles', '2026-11-23T09:00:00.000Z', '23 Nov 2026 01:00 America/Los_Angeles'],
    ['UTC', '2026-11-23T12:00:00.000Z', '23 Nov 2026 12:00 UTC'],
  ])('names the instant with its time in %s, in the finding and its next step', (zone, restoreBy, shown) => {
    const { day } = dateFormat(zone);
    const f = quarantined(restoreBy);
    expect(describeDomainFinding(f, NOW, day)).toContain(`LAST DAYS: restore by ${shown}, 1 day left`);
    expect(nextStep(f, day)).toContain(`Restore it by ${shown} (1 day left)`);
  });

  it('says UTC in the JSON’s next step, which carries no zone', () => {
    expect(nextStep(quarantined('2026-11-23T12:00:00.000Z'))).toContain(
      'Restore it by 23 Nov 2026 12:00 UTC',
    );
  });
});

describe('a restore-by deadline that has passed, or falls in an hour a zone repeats', () => {
  const passed = (restoreBy: string): DomainFinding => ({ ...quarantined(restoreBy), days_to_restore: -1 });

  it('names a passed deadline with its time and zone, in the finding and its next step', () => {
    // 01:00 on 22 Nov in Auckland: by its day alone, a reader there on the 22nd read it as not yet passed.
    const { day } = dateFormat('Pacific/Auckland');
    const f = passed('2026-11-21T12:00:00.000Z');
    expect(describeDomainFinding(f, NOW, day)).toContain(
      'its restore-by date 22 Nov 2026 01:00 Pacific/Auckland has PASSED (1 day ago)',
    );
    expect(nextStep(f, day)).toContain('its restore-by date 22 Nov 2026 01:00 Pacific/Auckland has passed');
  });

  it('tells apart the two instants of the hour a change back from summer time repeats', () => {
    const london = dayFormatIn('Europe/London');
    const first = deadlineText(london, '2026-10-25T00:30:00.000Z');
    const second = deadlineText(london, '2026-10-25T01:30:00.000Z');
    expect(first).toBe('25 Oct 2026 01:30 Europe/London (UTC+01:00)');
    expect(second).toBe('25 Oct 2026 01:30 Europe/London (UTC+00:00)');
  });

  it.each([
    ['Asia/Kathmandu', '2026-11-23T18:20:00.000Z', '24 Nov 2026 00:05 Asia/Kathmandu'],
    ['Europe/London', '2026-10-25T02:30:00.000Z', '25 Oct 2026 02:30 Europe/London'],
    ['America/New_York', '2026-03-08T07:00:00.000Z', '8 Mar 2026 03:00 America/New_York'],
    ['Australia/Lord_Howe', '2026-04-04T14:45:00.000Z', '5 Apr 2026 01:45 Australia/Lord_Howe (UTC+11:00)'],
  ])('names an hour only once in %s without an offset, and a repeated one with it', (zone, iso, shown) => {
    expect(deadlineText(dayFormatIn(zone), iso)).toBe(shown);
  });
});
