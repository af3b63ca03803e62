import { describe, expect, it } from 'vitest';
import { renderReportPage } from '../../functions/core/pages/report-page';
import { domainFinding, reportOf } from '../support/report';

/**
 * Review: the report page reflects the alert link's `of` parameter (not covered by the link's
 * signature: report-links.ts adds it beside exp/kid/sig) into the "a newer scan replaced" note.
 * It passes through safeText only, which leaves `<`, `>` and `"` alone, and the note is written
 * into the page unescaped (report-page.ts: `<p class="note">${leftOut.note}</p>`). Anyone holding
 * one valid report link can send a colleague the same link with markup of their own in `of`.
 */

const token = { exp: '1', kid: 'abcd1234', sig: 'x'.repeat(43) };

describe('the report page opened from a changed alert link (review)', () => {
  it('shows the `of` parameter as text, never as markup', () => {
    const report = reportOf([domainFinding('c1.nl', 'expired', 'critical', -1)]);
    const injected = '<a href=//evil.example>Restore here</a>'; // 39 characters: within the cut of 40
    const html = renderReportPage({ report, token: { ...token, of: injected, from: '0.0' } });
    expect(html).toContain('A newer scan replaced the report the alert was made from');
    expect(html).not.toContain('<a href=//evil.example>');
  });
});
