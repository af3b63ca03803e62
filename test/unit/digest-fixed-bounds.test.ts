import { describe, expect, it } from 'vitest';
import { SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import { composeDigest } from '../../functions/core/alerts/digest';
import { buildAlertMessage, snsPublishBytes } from '../../functions/core/alerts/message';
import type { DomainChange } from '../../functions/core/memory/state';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, reportOf } from '../support/report';

/**
 * Found by a review against AWS limits: the digest reserved room for its fixed lines (header,
 * changes, renewal costs, problems, resolved, footer) before any item, so when those lines took
 * the whole of the e-mail's room the digest named no finding at all: "0 named, 40 more critical",
 * the lean form then cut where the room ended. Each variable section is now bounded (and says how
 * many more the report holds) when not every item can be named, so the critical findings are.
 */
describe('a digest whose fixed sections would take its whole room', () => {
  const quarantines = Array.from({ length: 40 }, (_, i) =>
    domainFinding(`held-${i}.nl`, 'quarantine', 'critical', -10, { days_to_restore: 20 - (i % 20) }),
  );
  const base = {
    ...reportOf(quarantines),
    report_url: 'https://sentinel.example/report',
    report_json_url: 'https://sentinel.example/report.json',
  };
  const wide = '中'.repeat(200);
  const change = (i: number): DomainChange => ({
    domain_name: `changed-${i}.nl`,
    kind: 'registrant_changed',
    severity: 'warning',
    before: wide,
    after: `${wide}x`,
  });

  it('names the critical findings before the changes section, which is cut and counted', () => {
    const report = {
      ...base,
      changes: Array.from({ length: 100 }, (_, i) => change(i)),
      resolved: [],
    } as Report;
    const budget = 40_000;
    const digest = composeDigest(report, { budgetBytes: budget });
    expect(Buffer.byteLength(JSON.stringify(digest.text)) - 2).toBeLessThanOrEqual(budget);
    expect(digest.named.critical).toBe(40);
    for (const f of quarantines) expect(digest.text).toContain(`- ${f.domain_name}: `);
    expect(digest.text).toMatch(
      /- and \d+ more changes on the full report: https:\/\/sentinel\.example\/report\n/,
    );
  });

  it('names every critical finding when the renewal totals line alone passes SNS limit', () => {
    const totals = Array.from({ length: 40_000 }, (_, i) => ({ currency: `C${i}`, count: 1, amount: 1 }));
    const report = {
      ...base,
      renewal_costs: { window_days: 30, totals, premium: totals.length, custom: 0, unpriced: 0 },
    } as Report;
    const alert = buildAlertMessage(report);
    expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    const { email } = JSON.parse(alert.message) as { email: string };
    for (const f of quarantines) expect(email).toContain(`- ${f.domain_name}: `);
    expect(alert.digest.leftOut.critical).toBe(0);
    const line = /^RENEWAL COSTS: .*$/m.exec(email)?.[0] ?? '';
    expect(line).toMatch(
      /^RENEWAL COSTS: 40000 premium renewals due in 30 days: C0 1; C1 1; .*; and (\d+) renewals in \1 other currencies \(each finding states its price\)$/,
    );
    expect(email).not.toContain('The rest of this e-mail was cut');
  });
});

/**
 * Found by a second review: the sections were bounded only when an item was left out, so a report
 * with no finding at all (nothing to leave out) kept a renewal totals line of thousands of currencies
 * whole; the lean form then cut the e-mail inside it, before the unreadable record it had to name.
 */
describe('a digest with no finding whose sections pass its room', () => {
  const problem = {
    resource: 'domain' as const,
    key: 'held.nl',
    page: 1,
    reason: 'the record could not be read',
  };
  const totals = Array.from({ length: 40_000 }, (_, i) => ({ currency: `C${i}`, count: 1, amount: 1 }));
  const report = {
    ...reportOf([], [problem]),
    renewal_costs: { window_days: 30, totals, premium: totals.length, custom: 0, unpriced: 0 },
  } as Report;

  it('bounds the renewal totals so the digest fits and names the unreadable record', () => {
    const budget = 40_000;
    const digest = composeDigest(report, { budgetBytes: budget });
    expect(Buffer.byteLength(JSON.stringify(digest.text)) - 2).toBeLessThanOrEqual(budget);
    expect(digest.text).toContain('- domain held.nl on page 1: the record could not be read');
  });

  it('names the unreadable record in the alert e-mail, not cut by the lean form', () => {
    const alert = buildAlertMessage(report);
    expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    const { email } = JSON.parse(alert.message) as { email: string };
    expect(email).toContain('held.nl');
    expect(email).not.toContain('The rest of this e-mail was cut');
  });
});
