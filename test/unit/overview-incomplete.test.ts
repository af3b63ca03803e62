import { describe, expect, it } from 'vitest';
import { accountSummaryOf } from '../../functions/core/alerts/account-summary';
import { renderOverviewPage } from '../../functions/core/pages/overview-page';
import type { Report } from '../../functions/core/scan/scan';

const report = (incomplete?: string) =>
  ({
    generated_at: '2026-11-22T06:00:00.000Z',
    summary: { critical: 1, warning: 2, info: 0 },
    findings: [],
    problems: [{}],
    stats: { domains_scanned: 480 },
    source: incomplete === undefined ? {} : { incomplete },
  }) as unknown as Report;

describe('an account of several whose last scan could not read it whole', () => {
  it('is marked incomplete in its summary and on the overview, beside its counts', () => {
    const cut = accountSummaryOf(report('the domain list changed while it was read (…)'), 'brand-a');
    const whole = accountSummaryOf(report(), 'brand-b');
    expect(cut.incomplete).toBe(true);
    expect(whole).not.toHaveProperty('incomplete');
    const html = renderOverviewPage([
      { account: 'brand-a', summary: cut, reportHref: 'accounts/brand-a/report' },
      { account: 'brand-b', summary: whole, reportHref: 'accounts/brand-b/report' },
    ]);
    const row = (name: string) =>
      html.slice(html.indexOf(`<td>${name}</td>`), html.indexOf('</tr>', html.indexOf(`<td>${name}</td>`)));
    expect(row('brand-a')).toContain('2026-11-22 06:00 UTC <strong class="critical">incomplete</strong>');
    expect(row('brand-b')).not.toContain('incomplete');
  });
});

describe('an account whose alert counted critical items that are not findings', () => {
  // The alert's "N critical" (alert.ts criticalCount) counts critical findings, records that say
  // quarantine (or are critical by what memory knew) and domains that left the account; the overview
  // counted findings alone, so an account whose only critical item was a quarantined domain whose
  // record broke showed 0 critical beside an alert that said 1.
  it('counts them as its alert did, and the overview says critical items', () => {
    const summary = accountSummaryOf(
      {
        generated_at: '2026-11-22T06:00:00.000Z',
        summary: { critical: 0, warning: 0, info: 0 },
        findings: [],
        problems: [
          {
            resource: 'domain',
            key: 'haven-6.com',
            page: 1,
            reason: 'status: quarantine',
            severity: 'critical',
          },
          {
            resource: 'domain',
            key: 'fiets-1n.org',
            page: 1,
            reason: 'date_expiry: null',
            severity: 'warning',
          },
        ],
        stats: { domains_scanned: 58 },
        source: {},
      } as unknown as Report,
      'brand-c',
    );
    expect(summary.summary.critical).toBe(1);
    expect(summary.problems).toBe(2);
    const html = renderOverviewPage([{ account: 'brand-c', summary, reportHref: 'accounts/brand-c/report' }]);
    expect(html).toContain('<td class="n critical">1</td>');
    expect(html).toContain('1 critical item across all accounts.');
  });
});
