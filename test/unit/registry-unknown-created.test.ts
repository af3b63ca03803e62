import { describe, expect, it } from 'vitest';
import { judgeNotFound, type ResellerSide } from '../../functions/core/findings/registry-rules';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const POLICY = { toleranceDays: 2, criticalDays: 7 };

const reseller = (date_created: number): ResellerSide => ({
  domain_name: 'shop.com',
  date_expiry: Date.parse('2027-06-01T00:00:00Z'),
  quarantine: false,
  auto_renew: true,
  registrant_handle: 'C1',
  date_created,
});

describe('judgeNotFound and a date_created that cannot be true', () => {
  it('does not spare a domain whose date_created lies days or years ahead: that date is wrong, not a registration minutes old', () => {
    // A record that says it was added next year would otherwise keep a deleted gTLD domain silent for a year.
    for (const added of [NOW + 2 * DAY, NOW + 365 * DAY, Date.parse('9999-12-31T23:59:59Z')])
      expect(judgeNotFound(reseller(added), NOW, POLICY)?.kind).toBe('registry_unknown');
  });

  it('still spares one a clock a few hours ahead calls added in the future', () => {
    for (const added of [NOW + 60_000, NOW + 12 * 3_600_000])
      expect(judgeNotFound(reseller(added), NOW, POLICY)).toBeNull();
  });
});
