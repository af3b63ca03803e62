import { describe, expect, it } from 'vitest';
import { renderReportPage } from '../../functions/core/pages/report-page';
import { domainFinding, reportOf } from '../support/report';

/**
 * Found by a review: the report page reflects the alert link's `of` parameter (not covered by the link's
 * signature: report-links.ts adds it beside exp/kid/sig) into the "a newer scan replaced" note.
 * It passes through safeText only, which leaves `<`, `>` and `"` alone, and the note is written
 * into the page unescaped (report-page.ts: `<p class="note">${leftOut.note}</p>`). Anyone holding
 * one valid report link can send a colleague the same link with markup of their own in `of`.
 */

const token = { exp: '1', kid: 'abcd1234', sig: 'x'.repeat(43) };

describe('the report page opened from a changed alert link', () => {
  it('shows the `of` parameter as text, never as markup', () => {
    const report = reportOf([domainFinding('c1.nl', 'expired', 'critical', -1)]);
    const injected = '<a href=//evil.example>Restore here</a>'; // 39 characters: within the cut of 40
    const html = renderReportPage({ report, token: { ...token, of: injected, from: '0.0' } });
    expect(html).toContain('A newer scan replaced the report the alert was made from');
    expect(html).not.toContain('<a href=//evil.example>');
    expect(html).not.toContain('evil.example');
  });

  it('names the scan the alert was made from when `of` is a scan’s time', () => {
    const report = reportOf([domainFinding('c1.nl', 'expired', 'critical', -1)]);
    const html = renderReportPage({
      report,
      token: { ...token, of: '2026-11-20T06:00:00.000Z', from: '0.0' },
    });
    expect(html).toContain(
      '<p class="note">A newer scan replaced the report the alert was made from (2026-11-20T06:00:00.000Z): this is the latest report, whole.</p>',
    );
  });
});
