import { describe, expect, it } from 'vitest';
import { smsDisposition } from '../../functions/core/alerts/groups';
import { judgeRegistry, withRegistryView } from '../../functions/core/findings/registry-rules';
import { hasUrgentDeadline, parseQuietHours } from '../../functions/core/scan/quiet-hours';
import { reportOf } from '../support/report';

/**
 * Found by a review: quiet hours hold a critical SMS unless "a restore-by or expiry is within 48 hours"
 * (docs/policies.md). A registry_expiry_mismatch finding is critical because the REGISTRY's
 * expiration is close; the reseller's own date_expiry is far away. hasUrgentDeadline reads only
 * date_expiry, so the SMS about a domain that ends at the registry in a few hours waits for the
 * end of the night.
 */

const HOUR = 3_600_000;
// 23:30 in Amsterdam (CET), inside 22:00-07:00.
const NOW = Date.parse('2026-11-22T22:30:00Z');

function mismatchEndingIn(hours: number) {
  const side = {
    domain_name: 'shop.nl',
    date_expiry: NOW + 365 * 24 * HOUR, // the reseller believes it is renewed for a year
    quarantine: false,
    auto_renew: true,
    registrant_handle: 'C1',
  };
  const judged = judgeRegistry(side, { status: ['active'], expiration: NOW + hours * HOUR }, NOW, {
    toleranceDays: 2,
    criticalDays: 7,
  });
  if (judged.kind !== 'disagree') throw new Error(`expected a disagreement, got ${judged.kind}`);
  return withRegistryView(null, side, { ...judged.view, server: 'https://rdap.example.nl' }, NOW);
}

describe('quiet hours and a registry expiry that is close', () => {
  it('sends at once the SMS of a domain that ends at the registry within 48 hours', () => {
    const finding = mismatchEndingIn(6);
    expect(finding.kind).toBe('registry_expiry_mismatch');
    expect(finding.severity).toBe('critical');
    const report = { ...reportOf([finding]), now: new Date(NOW).toISOString() };
    expect(hasUrgentDeadline(report, NOW)).toBe(true);
    const hours = parseQuietHours('22:00-07:00') ?? undefined;
    expect(smsDisposition(report, { hours, timeZone: 'Europe/Amsterdam', now: NOW })).toEqual({
      sms: 'send',
    });
  });

  it('holds it when the registry’s expiry is further than 48 hours, as for the reseller’s own', () => {
    const finding = mismatchEndingIn(100);
    expect(finding.severity).toBe('critical');
    expect(hasUrgentDeadline(reportOf([finding]), NOW)).toBe(false);
  });

  it('sends at once the SMS of a registry redemption or hold, whose deadline nothing shows', () => {
    for (const status of ['redemption period', 'server hold'] as const) {
      const side = {
        domain_name: 'held.nl',
        date_expiry: NOW + 365 * 24 * HOUR,
        quarantine: false,
        auto_renew: true,
        registrant_handle: 'C1',
      };
      const judged = judgeRegistry(side, { status: [status], expiration: NOW + 365 * 24 * HOUR }, NOW, {
        toleranceDays: 2,
        criticalDays: 7,
      });
      if (judged.kind !== 'disagree') throw new Error(`expected a disagreement, got ${judged.kind}`);
      const finding = withRegistryView(
        null,
        side,
        { ...judged.view, server: 'https://rdap.example.nl' },
        NOW,
      );
      expect(finding.kind).toMatch(/^registry_(redemption|hold)$/);
      expect(finding.severity).toBe('critical');
      expect(hasUrgentDeadline(reportOf([finding]), NOW)).toBe(true);
    }
  });
});
