import { describe, expect, it } from 'vitest';
import { composeDigest } from '../../functions/core/alerts/digest';
import { planAlerts } from '../../functions/core/alerts/groups';
import { renderReportPage } from '../../functions/core/pages/report-page';
import { parsePolicies, resolvePolicies } from '../../functions/core/scan/policies';
import type { Report } from '../../functions/core/scan/scan';
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

describe('the left-out link of a group’s own message', () => {
  // A policy with recipients of its own gets a message of its group's domains alone (planAlerts):
  // what that message could not name is a run of the group's findings, not of the account's.
  const findings = [
    domainFinding('a1.nl', 'expired', 'critical', -9, { policy: 'other' }),
    domainFinding('v1.nl', 'expired', 'critical', -8, { policy: 'vip' }),
    domainFinding('a2.nl', 'expired', 'critical', -7, { policy: 'other' }),
    domainFinding('v2.nl', 'expired', 'critical', -6, { policy: 'vip' }),
    domainFinding('v3.nl', 'expired', 'critical', -5, { policy: 'vip' }),
  ];
  const account = {
    ...reportOf(findings),
    report_url: `https://links.example/prod/report?exp=${token.exp}&kid=${token.kid}&sig=${token.sig}`,
  };

  it('names the group, and the page lists the group’s findings the message had no room for, no other', () => {
    const [, group] = planAlerts(account, {
      minSeverity: 'warning',
      policies: resolvePolicies(
        parsePolicies(
          { policies: [{ name: 'vip', match: { tags: ['vip'] }, alertEmails: ['vip@example.nl'] }] },
          'p.json',
        ),
        { classify: { expiryDays: 30, criticalDays: 7 }, minSeverity: 'warning' },
      ),
    });
    const report = group?.report as Report;
    expect(report.findings.map((f) => (f as { domain_name: string }).domain_name)).toEqual([
      'v1.nl',
      'v2.nl',
      'v3.nl',
    ]);
    // A digest too small for all three: it names the first and links the rest.
    const digest = composeDigest(report, { budgetBytes: 1_600 });
    expect(digest.named.critical).toBeGreaterThan(0);
    expect(digest.leftOut.critical).toBeGreaterThan(0);
    const link = new URL(/- and \d+ more critical, not named here: (\S+)/.exec(digest.text)?.[1] as string);
    expect(link.searchParams.get('group')).toBe('vip');

    const html = renderReportPage({ report: account, token: Object.fromEntries(link.searchParams) });
    const listed = findings.filter((f) => html.includes(`>${f.domain_name}<`)).map((f) => f.domain_name);
    expect(listed).toEqual(['v1.nl', 'v2.nl', 'v3.nl'].slice(digest.named.critical));
  });
});
