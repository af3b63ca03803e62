import { describe, expect, it } from 'vitest';
import { chatTitle } from '../../functions/core/alerts/chat';
import { renderDigest } from '../../functions/core/alerts/digest';
import { renderReportPage } from '../../functions/core/pages/report-page';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, reportOf } from '../support/report';

const token = { exp: '1', kid: 'abcd1234', sig: 'x'.repeat(43) };

/** A report whose domain list moved while it was read (scan.ts, paging.ts onMove: 'report'). */
function incomplete(): Report {
  const moved =
    'the domain list changed while it was read (total_results changed from 500 to 501 while domain list pages were read (page 3): the account changed during the scan): the domains read were checked, but domains may be missing from what was read, so none is judged to have left the account';
  const report = reportOf(
    [domainFinding('q1.nl', 'quarantine', 'critical', -20)],
    [{ resource: 'domain', key: null, page: 3, reason: moved }],
  );
  return { ...report, source: { ...report.source, incomplete: moved } };
}

describe('a report marked incomplete', () => {
  it('opens the digest with INCOMPLETE, before its findings, and names the move among the problems', () => {
    const digest = renderDigest(incomplete());
    const lines = digest.split('\n');
    expect(lines[0]).toBe('domain-sentinel: INCOMPLETE read, 1 critical, 0 warning, 1 unreadable record');
    expect(lines[2]).toBe(
      'INCOMPLETE: the scan could not read the whole account. The findings below are those of the domains read; others may be missing (see PROBLEMS), and no domain is judged to have left. The scan is reported as failed.',
    );
    expect(digest.indexOf('INCOMPLETE')).toBeLessThan(digest.indexOf('q1.nl'));
    expect(digest).toContain(
      '- domain (no name) on page 3: the domain list changed while it was read (total_results changed',
    );
    expect(renderDigest(reportOf([domainFinding('q1.nl', 'quarantine', 'critical', -20)]))).not.toContain(
      'INCOMPLETE',
    );
  });

  it('says so in the chat title, before the counts', () => {
    expect(chatTitle(incomplete(), 'Acme')).toBe(
      'domain-sentinel (Acme): INCOMPLETE read, 1 critical, 0 warning, 1 unreadable record',
    );
    expect(chatTitle(reportOf([]))).toBe('domain-sentinel: 0 critical, 0 warning');
  });

  it('says so on the report page, above the lists', () => {
    const html = renderReportPage({ report: incomplete(), token });
    expect(html).toContain('<strong>Incomplete:</strong> the scan could not read the whole account.');
    expect(html.indexOf('Incomplete:')).toBeLessThan(html.indexOf('q1.nl'));
    expect(renderReportPage({ report: reportOf([]), token })).not.toContain('Incomplete:');
  });
});
