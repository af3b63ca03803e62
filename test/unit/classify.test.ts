import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  classify,
  classifyContact,
  compareFindings,
  DEFAULT_POLICY,
  type Finding,
  sortFindings,
} from '../../functions/core/findings/classify';
import { ContactSchema, type Domain, DomainSchema } from '../../functions/core/reseller/schemas';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;

const domain = (overrides: Partial<Domain> = {}): Domain => ({
  domain_name: 'example.nl',
  status: ['registered'],
  date_expiry: NOW + 200 * DAY,
  auto_renew: true,
  auto_renew_period: 12,
  date_deleted: null,
  registrant_handle: 'C1',
  ...overrides,
});

describe('classify', () => {
  it('flags a quarantined domain as critical, before any date rule', () => {
    const f = classify(
      domain({ status: ['quarantine'], date_expiry: NOW + 100 * DAY, date_deleted: NOW - 3 * DAY }),
      NOW,
    );
    expect(f).toMatchObject({
      kind: 'quarantine',
      severity: 'critical',
      date_deleted: '2026-11-19T06:00:00.000Z',
    });
  });

  it('flags a domain expiring exactly now as expired', () => {
    expect(classify(domain({ date_expiry: NOW }), NOW)).toMatchObject({
      kind: 'expired',
      severity: 'critical',
      days_left: 0,
    });
  });

  it('flags an expired domain as critical even with auto-renew on', () => {
    expect(classify(domain({ date_expiry: NOW - 2 * DAY - 1 }), NOW)).toMatchObject({
      kind: 'expired',
      severity: 'critical',
      days_left: -3,
    });
  });

  it('flags a domain that expires in 3 days without auto-renew as critical', () => {
    expect(classify(domain({ date_expiry: NOW + 3 * DAY, auto_renew: false }), NOW)).toMatchObject({
      kind: 'expiring',
      severity: 'critical',
      days_left: 3,
    });
  });

  it('treats exactly the critical-days boundary (7 days) as critical, and one millisecond later as warning', () => {
    expect(classify(domain({ date_expiry: NOW + 7 * DAY, auto_renew: false }), NOW)?.severity).toBe(
      'critical',
    );
    expect(classify(domain({ date_expiry: NOW + 8 * DAY, auto_renew: false }), NOW)?.severity).toBe(
      'warning',
    );
    // 7 days and 23 hours is still days_left 7 (floor), so still critical.
    expect(classify(domain({ date_expiry: NOW + 8 * DAY - 1, auto_renew: false }), NOW)?.severity).toBe(
      'critical',
    );
  });

  it('treats exactly the expiry window (30 days) as expiring, and beyond it as auto_renew_off', () => {
    expect(classify(domain({ date_expiry: NOW + 30 * DAY, auto_renew: false }), NOW)).toMatchObject({
      kind: 'expiring',
      severity: 'warning',
    });
    expect(classify(domain({ date_expiry: NOW + 30 * DAY + 1, auto_renew: false }), NOW)).toMatchObject({
      kind: 'auto_renew_off',
      severity: 'info',
    });
  });

  it('reports an expiring domain with auto-renew on as info', () => {
    expect(classify(domain({ date_expiry: NOW + 2 * DAY, auto_renew: true }), NOW)).toMatchObject({
      kind: 'expiring',
      severity: 'info',
    });
  });

  it('counts a missing auto-renew field as off and shows it as null', () => {
    expect(classify(domain({ date_expiry: NOW + 5 * DAY, auto_renew: null }), NOW)).toMatchObject({
      kind: 'expiring',
      severity: 'critical',
      auto_renew: null,
    });
    expect(classify(domain({ auto_renew: null }), NOW)).toMatchObject({
      kind: 'auto_renew_off',
      auto_renew: null,
    });
  });

  it('gives no finding for a healthy domain', () => {
    expect(classify(domain(), NOW)).toBeNull();
  });

  it('honours a custom policy', () => {
    const policy = { expiryDays: 60, criticalDays: 14 };
    expect(classify(domain({ date_expiry: NOW + 45 * DAY, auto_renew: false }), NOW, policy)?.severity).toBe(
      'warning',
    );
    expect(classify(domain({ date_expiry: NOW + 14 * DAY, auto_renew: false }), NOW, policy)?.severity).toBe(
      'critical',
    );
  });

  it('carries the registrant handle for the report to fill in', () => {
    expect(classify(domain({ auto_renew: false }), NOW)?.registrant).toEqual({ handle: 'C1' });
    expect(classify(domain({ auto_renew: false, registrant_handle: null }), NOW)?.registrant).toBeNull();
  });

  it('never throws on any record the schema accepts, and always answers a known kind', () => {
    const date = fc
      .integer({ min: Date.parse('1990-01-01T00:00:00Z'), max: Date.parse('2090-01-01T00:00:00Z') })
      .map((ms) => new Date(ms).toISOString());
    const record = fc.record(
      {
        domain_name: fc.domain(),
        status: fc.oneof(
          fc.array(fc.oneof(fc.constantFrom('registered', 'quarantine'), fc.string())),
          fc.string(),
        ),
        date_expiry: date,
        auto_renew: fc.oneof(fc.boolean(), fc.constant(null), fc.constantFrom('true', 'false')),
        auto_renewal: fc.oneof(fc.boolean(), fc.constant(null)),
        date_deleted: fc.oneof(date, fc.constant(null)),
        registrant_handle: fc.oneof(fc.string(), fc.constant(null)),
        registant_handle: fc.string(),
      },
      { requiredKeys: ['domain_name', 'date_expiry'] },
    );
    fc.assert(
      fc.property(
        record,
        fc.integer({ min: Date.parse('2000-01-01T00:00:00Z'), max: Date.parse('2080-01-01T00:00:00Z') }),
        (raw, now) => {
          const parsed = DomainSchema.safeParse(raw);
          expect(parsed.success).toBe(true);
          if (!parsed.success) return;
          const finding = classify(parsed.data, now, DEFAULT_POLICY);
          if (finding)
            expect(['quarantine', 'expired', 'expiring', 'auto_renew_off']).toContain(finding.kind);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('classifyContact', () => {
  it('flags a contact pending validation as a warning', () => {
    const contact = ContactSchema.parse({
      handle: 'C9',
      name: 'Eva',
      email: 'eva@example.nl',
      status: ['ok', 'pending_validation'],
    });
    expect(classifyContact(contact)).toEqual({
      handle: 'C9',
      kind: 'contact_pending_validation',
      severity: 'warning',
      name: 'Eva',
      company_name: '',
      email: 'eva@example.nl',
    });
  });

  it('ignores a contact that is ok or pending an update', () => {
    expect(
      classifyContact(ContactSchema.parse({ handle: 'C1', status: ['ok', 'pending_update'] })),
    ).toBeNull();
  });
});

describe('compareFindings', () => {
  it('orders critical first, then fewer days left, then name, contacts after domains of their severity', () => {
    const f = (name: string, severity: Finding['severity'], days: number): Finding =>
      ({ domain_name: name, kind: 'expiring', severity, days_left: days }) as Finding;
    const contact = { handle: 'A1', kind: 'contact_pending_validation', severity: 'warning' } as Finding;
    const sorted = [
      f('b.nl', 'warning', 10),
      contact,
      f('z.nl', 'critical', 3),
      f('a.nl', 'critical', 3),
      f('c.nl', 'critical', -4),
    ].sort(compareFindings);
    expect(sorted.map((x) => ('domain_name' in x ? x.domain_name : x.handle))).toEqual([
      'c.nl',
      'a.nl',
      'z.nl',
      'b.nl',
      'A1',
    ]);
  });

  it('sortFindings puts any findings in exactly the order compareFindings gives', () => {
    const finding = fc.oneof(
      fc.record({
        domain_name: fc.constantFrom('a.nl', 'b.nl', 'c.nl', 'B.nl'),
        kind: fc.constant('expiring'),
        severity: fc.constantFrom('critical', 'warning', 'info'),
        days_left: fc.integer({ min: -5, max: 5 }),
      }),
      fc.record({
        handle: fc.constantFrom('C1', 'C2'),
        kind: fc.constant('contact_pending_validation'),
        severity: fc.constantFrom('critical', 'warning', 'info'),
      }),
    );
    fc.assert(
      fc.property(fc.array(finding as fc.Arbitrary<Finding>, { maxLength: 60 }), (findings) => {
        const expected = [...findings].sort(compareFindings);
        const copy = [...findings];
        expect(sortFindings(copy)).toBe(copy);
        // The same objects in the same places: equal keys keep their order (both sorts are stable).
        expect(copy.every((f, i) => f === expected[i])).toBe(true);
      }),
    );
  });
});
