import { describe, expect, it } from 'vitest';
import { renderDigest } from '../../functions/core/alerts/digest';
import { classify, type DomainFinding } from '../../functions/core/findings/classify';
import { parseSigningKeys } from '../../functions/core/links/links';
import { findingWithMemory } from '../../functions/core/memory/renewal-memory';
import type { StatePolicy } from '../../functions/core/memory/state';
import type { Domain } from '../../functions/core/reseller/schemas';
import { attachLinks } from '../../functions/core/scan/report-links';
import { reportOf } from '../support/report';
import { DAY, domain, scanOf, scanWithState } from '../support/state-scan';
import {
  compareWithState,
  DEFAULT_STATE_POLICY,
  EMPTY_STATE,
  parseState,
  type ScanState,
} from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;

const run = (
  domains: Parameters<typeof scanOf>[0],
  now: number,
  state: ScanState,
  policy: StatePolicy = DEFAULT_STATE_POLICY,
) => scanWithState(domains, now, state, { policy });
const findingOf = (r: ReturnType<typeof run>, name: string) =>
  r.report.findings.find((f) => 'domain_name' in f && f.domain_name === name);

describe('renewals with memory', () => {
  const expiry = T0 + 20 * DAY;
  const scheduled = (renewal: number, overrides: Partial<Domain> = {}) =>
    domain('shop.nl', T0, { date_expiry: expiry, date_renewal: renewal, ...overrides });

  it('flags a renewal that passed between two scans while the expiry did not move, even after the reseller moved date_renewal on', () => {
    const first = run([scheduled(T0 + DAY)], T0, EMPTY_STATE);
    expect(findingOf(first, 'shop.nl')).toMatchObject({ kind: 'expiring', severity: 'info' });
    // Three days later the due date has passed; the reseller now shows a retry in the future, so the
    // record alone looks fine. The expiry is where it was: the renewal did not happen.
    const later = run([scheduled(T0 + 5 * DAY)], T0 + 3 * DAY, first.next);
    expect(findingOf(later, 'shop.nl')).toMatchObject({
      kind: 'renewal_failed',
      severity: 'critical',
      date_renewal: new Date(T0 + DAY).toISOString(),
      change: 'escalated',
    });
    expect(later.report.summary).toMatchObject({ critical: 1, info: 0 });
    expect(later.publish).toBe(true);
    expect(renderDigest(later.report)).toContain(
      'ESCALATED shop.nl: auto-renew is on but the renewal due on 23 Nov 2026 did not happen',
    );
  });

  it('keeps no links signed for the finding that memory replaced with renewal_failed', () => {
    const keys = parseSigningKeys('k'.repeat(40));
    const linked = (renewal: number, now: number, state: ScanState) => {
      const scanned = scanOf([scheduled(renewal)], now);
      const report = attachLinks(scanned.report, {
        baseUrl: 'https://links.example/',
        keys,
        now,
        ttlDays: 7,
      });
      return compareWithState({
        ...scanned,
        report,
        state,
        policy: DEFAULT_STATE_POLICY,
        scope: 'http://r.test',
      });
    };
    const first = linked(T0 + DAY, T0, EMPTY_STATE);
    expect((findingOf(first, 'shop.nl') as DomainFinding).actions?.acknowledge).toContain(
      'kind=expiring&sev=info',
    );
    const later = findingOf(linked(T0 + 5 * DAY, T0 + 3 * DAY, first.next), 'shop.nl') as DomainFinding;
    expect(later.kind).toBe('renewal_failed');
    // Signed for expiring/info, they would act on that; the scan signs its own once memory is done.
    expect(later.actions).toBeUndefined();
    expect(
      attachLinks(reportOf([later]), { baseUrl: 'https://l.example/', keys, now: T0, ttlDays: 7 })
        .findings[0],
    ).toMatchObject({
      actions: { acknowledge: expect.stringContaining('kind=renewal_failed&sev=critical') },
    });
  });

  it('judges one domain for a link as the scan with memory does', () => {
    const first = run([scheduled(T0 + DAY)], T0, EMPTY_STATE);
    const now = T0 + 3 * DAY;
    const record = scheduled(T0 + 5 * DAY);
    const judged = findingWithMemory(classify(record, now), record, first.next.domains['shop.nl'], now);
    const { change: _, ...scanned } = findingOf(
      run([record], now, first.next),
      'shop.nl',
    ) as DomainFinding & {
      change: string;
    };
    expect(scanned).toMatchObject({ kind: 'renewal_failed', date_renewal: new Date(T0 + DAY).toISOString() });
    expect(judged).toEqual(scanned);
    // Without memory, or once renewed, the record alone decides.
    expect(findingWithMemory(classify(record, now), record, undefined, now)).toMatchObject({
      kind: 'expiring',
    });
    const renewed = scheduled(T0 + 370 * DAY, { date_expiry: T0 + 385 * DAY });
    expect(findingWithMemory(classify(renewed, now), renewed, first.next.domains['shop.nl'], now)).toBeNull();
  });

  it('waits the same day the rule without memory waits before calling it failed', () => {
    const first = run([scheduled(T0 + DAY)], T0, EMPTY_STATE);
    const soon = run([scheduled(T0 + 5 * DAY)], T0 + DAY + 23 * HOUR, first.next);
    expect(findingOf(soon, 'shop.nl')).toMatchObject({ kind: 'expiring' });
    // The renewal it watches is kept while the expiry has not moved, so the next scan still sees it.
    const next = run([scheduled(T0 + 5 * DAY)], T0 + 2 * DAY + HOUR, soon.next);
    expect(findingOf(next, 'shop.nl')).toMatchObject({ kind: 'renewal_failed' });
  });

  it('lets the renewal go once the expiry moved: renewed', () => {
    const first = run([scheduled(T0 + DAY)], T0, EMPTY_STATE);
    const renewed = run(
      [scheduled(expiry + 364 * DAY, { date_expiry: expiry + 365 * DAY })],
      T0 + 3 * DAY,
      first.next,
    );
    expect(findingOf(renewed, 'shop.nl')).toBeUndefined();
    expect(renewed.next.domains['shop.nl']?.watched.renewal).toEqual({
      due: new Date(expiry + 364 * DAY).toISOString(),
      expiry: new Date(expiry + 365 * DAY).toISOString(),
    });
  });

  it('gives one finding, not two, when the record shows the failure too', () => {
    const first = run([scheduled(T0 + DAY)], T0, EMPTY_STATE);
    const later = run([scheduled(T0 + DAY)], T0 + 3 * DAY, first.next);
    expect(
      later.report.findings.filter((f) => 'domain_name' in f && f.domain_name === 'shop.nl'),
    ).toHaveLength(1);
    expect(findingOf(later, 'shop.nl')).toMatchObject({ kind: 'renewal_failed' });
  });

  it('never calls a renewal failed that no scan saw ahead of it (a date_renewal that means last year)', () => {
    const lastYear = domain('old.nl', T0, { date_expiry: T0 + 200 * DAY, date_renewal: T0 - 165 * DAY });
    const first = run([lastYear], T0, EMPTY_STATE);
    const later = run([lastYear], T0 + 3 * DAY, first.next);
    expect(findingOf(later, 'old.nl')).toBeUndefined();
    expect(later.next.domains['old.nl']?.watched.renewal).toBeUndefined();
  });

  it('stays off for an account whose date_renewal means something else', () => {
    const first = run([scheduled(T0 + DAY)], T0, EMPTY_STATE);
    const { report, observed } = scanOf([scheduled(T0 + 5 * DAY)], T0 + 3 * DAY);
    const later = compareWithState({
      report: { ...report, renewal_rule_off: 'reads as the last renewal' },
      observed,
      state: first.next,
      policy: DEFAULT_STATE_POLICY,
    });
    expect(findingOf(later, 'shop.nl')).toMatchObject({ kind: 'expiring' });
  });

  it('refuses a stored renewal that is not a date-time', () => {
    const first = run([scheduled(T0 + DAY)], T0, EMPTY_STATE);
    const tampered = JSON.parse(JSON.stringify(first.next));
    tampered.domains['shop.nl'].watched.renewal.due = 'yesterday';
    expect(() => parseState(tampered, 'test')).toThrow(/renewal\.due/);
  });
});

describe('premium prices with memory', () => {
  const premium = (amount: number, currency = 'EUR') =>
    domain('gold.com', T0, { price: { kind: 'premium', currency, amount } });

  it('reports a premium price that changed between scans as a change', () => {
    const first = run([premium(400)], T0, EMPTY_STATE);
    const same = run([premium(400)], T0 + DAY, first.next);
    expect(same.report.changes).toEqual([]);
    const changed = run([premium(520)], T0 + 2 * DAY, same.next);
    expect(changed.report.changes).toEqual([
      {
        domain_name: 'gold.com',
        kind: 'premium_price_changed',
        severity: 'warning',
        before: { currency: 'EUR', amount: 400 },
        after: { currency: 'EUR', amount: 520 },
      },
    ]);
    expect(changed.publish).toBe(true);
    expect(renderDigest(changed.report)).toContain(
      '- gold.com: premium renewal price changed (EUR 400 → EUR 520) [warning]',
    );
    const currency = run([premium(520, 'USD')], T0 + 3 * DAY, changed.next);
    expect(currency.report.changes.map((c) => c.kind)).toEqual(['premium_price_changed']);
  });
});

describe('the last days to restore, with memory', () => {
  const quarantined = (deletedAgo: number) =>
    domain('lost.de', T0, {
      status: ['quarantine'],
      date_expiry: T0 - 40 * DAY,
      auto_renew: false,
      date_deleted: T0 - deletedAgo * DAY,
    });
  const weekly: StatePolicy = { ...DEFAULT_STATE_POLICY, repeat: { critical: 168, warning: 168 } };

  it('repeats a quarantine daily in its last 7 days, even when criticals otherwise repeat weekly', () => {
    const first = run([quarantined(20)], T0, EMPTY_STATE, weekly); // 10 days left
    expect(first.publish).toBe(true);
    const dayLater = run([quarantined(21)], T0 + DAY, first.next, weekly); // 9 days left
    expect(dayLater.publish).toBe(false);
    const lastDays = run([quarantined(24)], T0 + 4 * DAY, dayLater.next, weekly); // 6 days left
    expect(lastDays.publish).toBe(true);
    expect(lastDays.why).toContain('1 in the last days to restore, repeated daily');
    const sameDay = run([quarantined(24)], T0 + 4 * DAY + 6 * HOUR, lastDays.next, weekly);
    expect(sameDay.publish).toBe(false);
    const nextDay = run([quarantined(25)], T0 + 5 * DAY, lastDays.next, weekly);
    expect(nextDay.publish).toBe(true);
  });
});
