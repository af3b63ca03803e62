import { describe, expect, it } from 'vitest';
import { renderOverviewPage } from '../../functions/core/pages/overview-page';
import { accountSummaryOf } from '../../functions/core/scan/accounts';

const report = (incomplete?: string) => ({
  generated_at: '2026-11-22T06:00:00.000Z',
  summary: { critical: 1, warning: 2, info: 0 },
  problems: [{}],
  stats: { domains_scanned: 480 },
  source: incomplete === undefined ? {} : { incomplete },
});

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
