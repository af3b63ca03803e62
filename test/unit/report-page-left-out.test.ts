import { describe, expect, it } from 'vitest';
import { renderReportPage } from '../../functions/core/pages/report-page';
import { domainFinding, reportOf } from '../support/report';

/**
 * Found by a review: the page an alert's "and N more" link opens says which findings the alert left
 * out and offers the whole report "one link away". The note is written with its link in it and then
 * escaped as a whole (the fix for the unsigned `of` parameter escaped the note at the point it is
 * written), so the page showed `<a href="?exp=…">full report</a>` as text and had no link at all.
 */

const token = { exp: '1795932000', kid: 'abcd1234', sig: 'x'.repeat(43) };

describe('the report page opened from an alert’s left-out link', () => {
  it('links to the whole report, a link to its own signed URL, not the link’s markup as text', () => {
    const report = reportOf([
      domainFinding('c1.nl', 'expired', 'critical', -1),
      domainFinding('c2.nl', 'expired', 'critical', -1),
    ]);
    const html = renderReportPage({ report, token: { ...token, of: report.generated_at, from: '1.0' } });
    expect(html).toContain('The 1 finding the alert had no room to name (1 critical, 0 warning).');
    expect(html).not.toContain('&#60;a href');
    expect(html).toContain(
      `The whole report is one link away: <a href="?exp=1795932000&#38;kid=abcd1234&#38;sig=${token.sig}">full report</a>.`,
    );
  });
});
