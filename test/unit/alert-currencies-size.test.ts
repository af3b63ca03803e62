import { describe, expect, it } from 'vitest';
import { renewalCostLine, SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import { buildAlertMessage, reportJsonOf, snsPublishBytes } from '../../functions/core/alerts/message';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { RENEWAL_CURRENCIES_KEPT, renewalCosts } from '../../functions/core/scan/renewal-costs';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

/**
 * Found by a hostile review of AWS limits: `renewal_costs.totals` held one entry per currency, and
 * a currency is any three letters (17 576 codes). A reseller API that sent a different one on each
 * premium domain made the report's small fields, which the alert's JSON carries whole, and the
 * digest's totals line grow without bound: 8 000 of them made a publish of some 585 KB, which SNS
 * refuses (256 KB), so not one finding of the account was alerted.
 */
describe('renewal costs in thousands of currencies', () => {
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const codes = [...letters]
    .flatMap((a) => [...letters].flatMap((b) => [...letters].map((c) => a + b + c)))
    .filter((code) => code !== 'EUR' && code !== 'USD');
  const others = 8000 + 2 - RENEWAL_CURRENCIES_KEPT;
  const premium = (i: number, currency: string): DomainFinding =>
    domainFinding(`premium-${i}.nl`, 'expiring', 'info', 20, {
      auto_renew: true,
      price: { kind: 'premium', currency, amount: 123_456.78 },
    } as Partial<DomainFinding>);
  const critical = Array.from({ length: 50 }, (_, i) =>
    domainFinding(`shop-${i}.nl`, 'expiring', 'critical', 3),
  );
  // Two renewals in EUR and USD each, so those two are kept before any one-off code.
  const priced = [
    premium(0, 'EUR'),
    premium(1, 'EUR'),
    premium(2, 'USD'),
    premium(3, 'USD'),
    ...codes.slice(0, 8000).map((code, i) => premium(i + 4, code)),
  ];
  const findings = [...critical, ...priced];
  const costs = renewalCosts(findings, Date.parse(NOW_ISO), 30);
  const report = {
    ...reportOf(findings),
    renewal_costs: costs ?? undefined,
    report_json_url: 'https://sentinel.example/report.json',
  } as Report;

  it('keeps the currencies with the most renewals and counts the others', () => {
    expect(costs?.totals).toHaveLength(RENEWAL_CURRENCIES_KEPT);
    expect(costs?.totals.map((t) => t.currency)).toEqual(expect.arrayContaining(['EUR', 'USD']));
    expect(costs?.other_currencies).toEqual({ currencies: others, count: others });
    // Every priced renewal is counted once, kept or not.
    const kept = costs?.totals.reduce((n, t) => n + t.count, 0) ?? 0;
    expect(kept + (costs?.other_currencies?.count ?? 0)).toBe(priced.length);
    expect(renewalCostLine(costs as NonNullable<typeof costs>)).toContain(
      `; and ${others} renewals in ${others} other currencies (each finding states its price)`,
    );
  });

  it('publishes within SNS limit and names every critical finding', () => {
    const alert = buildAlertMessage(report);
    expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    expect(alert.digest.named.critical).toBe(critical.length);
    const { email } = JSON.parse(alert.message) as { email: string };
    expect(email).toMatch(/RENEWAL COSTS: .*other currencies/);
    expect(JSON.parse(reportJsonOf(alert)).renewal_costs.other_currencies.currencies).toBe(others);
  });
});
