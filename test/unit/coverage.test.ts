import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classify, DEFAULT_POLICY } from '../../functions/core/findings/classify';
import { DomainSchema } from '../../functions/core/reseller/schemas';
import {
  COVERAGE_PARTS,
  type CoverageCounts,
  type CoveragePart,
  coverageSearches,
  proveCoverage,
  READ_PARTS,
  readWindowDays,
} from '../../functions/core/scan/coverage';
import type { RawRecord } from '../../functions/simulator/portfolio';
import { buildFilter } from '../../functions/simulator/search';

const NOW = Date.parse('2026-11-22T06:00:00Z');

/** A consistent account: 100 domains, 30 in the window, 2 without a date, 68 beyond it. */
const GOOD: CoverageCounts = {
  all: 100,
  in_window: 30,
  beyond_window: 68,
  no_expiry: 2,
  beyond_renewing: 50,
  beyond_not_renewing: 15,
  beyond_renewal_unknown: 3,
  beyond_renewing_registered: 46,
  beyond_renewing_quarantined: 4,
};

describe('coverageSearches', () => {
  it('sends each parameter once per search, split on the end of the window', () => {
    const end = '2026-12-22T06:00:00Z';
    expect(coverageSearches(NOW, { ...DEFAULT_POLICY, renewalCheck: false })).toEqual({
      all: {},
      in_window: { date_expiry: `<=${end}` },
      beyond_window: { date_expiry: `>${end}` },
      no_expiry: { date_expiry: '' },
      beyond_renewing: { date_expiry: `>${end}`, auto_renewal: 'true' },
      beyond_not_renewing: { date_expiry: `>${end}`, auto_renewal: 'false' },
      beyond_renewal_unknown: { date_expiry: `>${end}`, auto_renewal: '' },
      beyond_renewing_registered: { date_expiry: `>${end}`, auto_renewal: 'true', status: 'registered' },
      beyond_renewing_quarantined: { date_expiry: `>${end}`, auto_renewal: 'true', status: 'quarantine' },
    });
  });

  it('reads 60 days ahead while the renewal rule applies, and the expiry window when that is longer or the rule is off', () => {
    const endOf = (policy: typeof DEFAULT_POLICY) => coverageSearches(NOW, policy).in_window.date_expiry;
    expect(endOf(DEFAULT_POLICY)).toBe('<=2027-01-21T06:00:00Z');
    expect(endOf({ ...DEFAULT_POLICY, expiryDays: 90 })).toBe('<=2027-02-20T06:00:00Z');
    expect(endOf({ ...DEFAULT_POLICY, renewalCheck: false })).toBe('<=2026-12-22T06:00:00Z');
    expect(readWindowDays(DEFAULT_POLICY)).toBe(60);
  });

  it('rounds the window end up to a whole second, so no expiring domain falls beyond it', () => {
    const searches = coverageSearches(NOW + 400, DEFAULT_POLICY);
    expect(searches.in_window).toEqual({ date_expiry: '<=2027-01-21T06:00:01Z' });
  });
});

describe('proveCoverage', () => {
  it('proves an account whose two splits add up exactly', () => {
    expect(proveCoverage(GOOD)).toEqual({ proven: true });
  });

  it('proves an empty account', () => {
    const zero = Object.fromEntries(COVERAGE_PARTS.map((p) => [p, 0])) as CoverageCounts;
    expect(proveCoverage(zero)).toEqual({ proven: true });
  });

  it('fails when records fall in no search on date_expiry (a date the server cannot compare)', () => {
    expect(proveCoverage({ ...GOOD, all: 103 })).toEqual({
      proven: false,
      reason:
        'searches on date_expiry counted 30 within the window + 68 beyond it + 2 without it = 100, but the account holds 103 domains (3 in none of the searches: values the server cannot compare)',
    });
  });

  it('fails when a server that ignores every search parameter answers each with the whole account', () => {
    const ignored = Object.fromEntries(COVERAGE_PARTS.map((p) => [p, 100])) as CoverageCounts;
    const verdict = proveCoverage(ignored);
    expect(verdict).toMatchObject({ proven: false });
    expect(!verdict.proven && verdict.reason).toContain('200 counted twice');
  });

  it('fails when the server ignores auto_renewal (each search answers everything beyond the window)', () => {
    const verdict = proveCoverage({
      ...GOOD,
      beyond_renewing: 68,
      beyond_not_renewing: 68,
      beyond_renewal_unknown: 68,
    });
    expect(!verdict.proven && verdict.reason).toMatch(/^beyond the window, searches on auto_renewal counted/);
  });

  it('fails when an auto-renew value is neither true, false nor absent', () => {
    const verdict = proveCoverage({ ...GOOD, beyond_renewing: 49, beyond_renewing_registered: 45 });
    expect(!verdict.proven && verdict.reason).toContain('1 in none of the searches');
  });

  it('fails when a domain it would leave unread has a status neither registered nor quarantine', () => {
    expect(proveCoverage({ ...GOOD, beyond_renewing_registered: 44 })).toEqual({
      proven: false,
      reason:
        'beyond the window with auto-renew on, searches on status counted 44 registered + 4 quarantined = 48, but 50 domains are there (2 with another status: one the API does not document may be a domain about to be lost, and only a full read reports it)',
    });
  });

  it('fails when the server ignores status (both status searches answer every domain with auto-renew on)', () => {
    const verdict = proveCoverage({
      ...GOOD,
      beyond_renewing_registered: 50,
      beyond_renewing_quarantined: 50,
    });
    expect(!verdict.proven && verdict.reason).toContain(
      '(50 counted twice: the server may ignore a search parameter)',
    );
  });

  it('fails when a part counts more than the search it narrows', () => {
    const verdict = proveCoverage({ ...GOOD, beyond_renewing_quarantined: 70 });
    expect(!verdict.proven && verdict.reason).toBe(
      'the search for "auto-renew on, quarantined" counted 70 domains, more than "auto-renew on" (50)',
    );
  });

  it('fails on a total that is not a count', () => {
    expect(proveCoverage({ ...GOOD, no_expiry: Number.NaN })).toMatchObject({ proven: false });
  });
});

/**
 * Soundness, whatever the server does: a random account, counted by a server that applies or
 * ignores each parameter and cannot compare some values; whenever the proof holds, every domain
 * the read leaves out is healthy (beyond the window, auto-renew on, status registered).
 */
describe('proveCoverage soundness', () => {
  type Expiry = 'in' | 'beyond' | 'none' | 'garbled';
  type Renewal = 'true' | 'false' | 'absent' | 'garbled';
  type Status = 'registered' | 'quarantine' | 'undocumented';
  interface Rec {
    readonly expiry: Expiry;
    readonly renewal: Renewal;
    readonly status: Status;
  }
  const record = fc.record({
    expiry: fc.constantFrom<Expiry>('in', 'beyond', 'none', 'garbled'),
    renewal: fc.constantFrom<Renewal>('true', 'false', 'absent', 'garbled'),
    status: fc.constantFrom<Status>('registered', 'quarantine', 'undocumented'),
  });
  const server = fc.record({
    ignoresDate: fc.boolean(),
    ignoresRenewal: fc.boolean(),
    ignoresStatus: fc.boolean(),
  });

  it('never leaves out a domain that could give a finding or a problem', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 12 }), server, (recs, srv) => {
        const date = (r: Rec, want: Expiry) => srv.ignoresDate || r.expiry === want;
        const renew = (r: Rec, want: Renewal) => srv.ignoresRenewal || r.renewal === want;
        const status = (r: Rec, want: Status) => srv.ignoresStatus || r.status === want;
        const match: Record<CoveragePart, (r: Rec) => boolean> = {
          all: () => true,
          in_window: (r) => date(r, 'in'),
          beyond_window: (r) => date(r, 'beyond'),
          no_expiry: (r) => date(r, 'none'),
          beyond_renewing: (r) => date(r, 'beyond') && renew(r, 'true'),
          beyond_not_renewing: (r) => date(r, 'beyond') && renew(r, 'false'),
          beyond_renewal_unknown: (r) => date(r, 'beyond') && renew(r, 'absent'),
          beyond_renewing_registered: (r) => date(r, 'beyond') && renew(r, 'true') && status(r, 'registered'),
          beyond_renewing_quarantined: (r) =>
            date(r, 'beyond') && renew(r, 'true') && status(r, 'quarantine'),
        };
        const counts = Object.fromEntries(
          COVERAGE_PARTS.map((p) => [p, recs.filter(match[p]).length]),
        ) as CoverageCounts;
        if (!proveCoverage(counts).proven) return;
        const unread = recs.filter((r) => !READ_PARTS.some((p) => match[p](r)));
        for (const r of unread) {
          // Healthy by the rules, and a status the documentation shows: nothing full mode would report.
          expect(r).toEqual({ expiry: 'beyond', renewal: 'true', status: 'registered' });
        }
      }),
      { numRuns: 3000 },
    );
  });
});

/**
 * The same, against the rules themselves: random records, searched as the simulator searches them
 * (the documented conventions), and classified as a scan classifies them. Whatever the expiry
 * window, a record no read part lists gets no finding: not even a renewal that failed and expires
 * beyond the window.
 */
describe('the filtered read against the finding rules', () => {
  const DAY = 86_400_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const raw = fc
    .record({
      expiryDays: fc.integer({ min: -40, max: 400 }),
      expiryMs: fc.integer({ min: 0, max: DAY - 1 }),
      autoRenew: fc.constantFrom(true, false, undefined),
      status: fc.constantFrom('registered', 'quarantine'),
      // The coming renewal some days before expiry (a failed one lies in the past), or none.
      renewalBefore: fc.option(fc.integer({ min: -2, max: 400 }), { nil: undefined }),
      renewalHours: fc.integer({ min: 0, max: 23 }),
    })
    .map((r): RawRecord => {
      const expiry = NOW + r.expiryDays * DAY + r.expiryMs;
      return {
        domain_name: 'searched.nl',
        status: [r.status],
        date_expiry: iso(expiry),
        ...(r.autoRenew === undefined ? {} : { auto_renew: r.autoRenew }),
        ...(r.renewalBefore === undefined
          ? {}
          : { date_renewal: iso(expiry - r.renewalBefore * DAY - r.renewalHours * 3_600_000) }),
        date_deleted: r.status === 'quarantine' ? iso(NOW - 5 * DAY) : null,
      };
    });

  it('leaves unread only domains that are healthy by every rule, renewal_failed included', () => {
    fc.assert(
      fc.property(
        fc.array(raw, { maxLength: 30 }),
        fc.integer({ min: 1, max: 120 }),
        (records, expiryDays) => {
          const policy = { ...DEFAULT_POLICY, expiryDays };
          const searches = coverageSearches(NOW, policy);
          const match = Object.fromEntries(
            COVERAGE_PARTS.map((part) => [
              part,
              buildFilter('domains', new URLSearchParams(searches[part] as Record<string, string>)),
            ]),
          ) as Record<CoveragePart, (r: RawRecord) => boolean>;
          const counts = Object.fromEntries(
            COVERAGE_PARTS.map((part) => [part, records.filter(match[part]).length]),
          ) as CoverageCounts;
          expect(proveCoverage(counts)).toEqual({ proven: true });
          for (const record of records.filter((r) => !READ_PARTS.some((part) => match[part](r)))) {
            const domain = DomainSchema.parse(record);
            expect(classify(domain, NOW, policy), JSON.stringify(record)).toBeNull();
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
