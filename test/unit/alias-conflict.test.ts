import { describe, expect, it } from 'vitest';
import { classify, DEFAULT_POLICY } from '../../functions/core/findings/classify';
import { DomainSchema } from '../../functions/core/reseller/schemas';

const NOW = Date.parse('2026-11-22T06:00:00Z');

/**
 * Found by a review: reseller-api.md documents one field under two names (`auto_renew` in the field table,
 * `auto_renewal` in the example response and the search). A record that carries both with
 * different values contradicts itself; the schema takes `auto_renew` and drops the other, so a
 * domain expiring in 3 days that may well not renew is an `info` item (left out of every alert at
 * the default MIN_SEVERITY) instead of a critical one. DESIGN.md: "a false alarm is cheaper than
 * a lost domain".
 */
describe('a record whose auto-renew aliases disagree', () => {
  const record = {
    domain_name: 'contradicts.nl',
    status: ['registered'],
    date_expiry: '2026-11-25T12:00:00Z',
    auto_renew: true,
    auto_renewal: false,
  };

  it('is not read as renewing: critical when it expires within the critical days, or a problem record', () => {
    const parsed = DomainSchema.safeParse(record);
    expect(parsed.success).toBe(true);
    if (!parsed.success) return;
    const finding = classify(parsed.data, NOW, DEFAULT_POLICY);
    expect(finding?.severity).toBe('critical');
  });
});
