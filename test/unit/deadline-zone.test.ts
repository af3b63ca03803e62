import { describe, expect, it } from 'vitest';
import { dateFormat, describeDomainFinding } from '../../functions/core/alerts/alert';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { nextStep } from '../../functions/core/findings/next-step';

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
