import { describe, expect, it } from 'vitest';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

/**
 * Found by a hostile review: the digest named the unreadable records that say quarantine before
 * every finding, so an account with a few thousand of them (a bulk import the API answers badly)
 * got an e-mail naming only those, and not the quarantined domain whose last day to restore is today.
 */
describe('unreadable quarantine records beside a known restore deadline', () => {
  const lastDay = domainFinding('crown-jewel.nl', 'quarantine', 'critical', -40, {
    date_deleted: NOW_ISO,
    restore_by: new Date(Date.parse(NOW_ISO) + 3_600_000).toISOString(),
    days_to_restore: 0,
  });
  const expired = domainFinding('old.com', 'expired', 'critical', -3);
  const problems: Report['problems'] = Array.from({ length: 3000 }, (_, i) => ({
    resource: 'domain',
    page: 1,
    key: `unreadable-${i}-${'x'.repeat(40)}.nl`,
    reason: `status says quarantine, date_expiry missing ${'r'.repeat(60)}`,
    severity: 'critical',
  }));
  const report = {
    ...reportOf([lastDay, expired], problems),
    report_url: 'https://links.example.test/report?sig=abc',
  };

  it('names the quarantine with a known deadline first, in full', () => {
    const email = (JSON.parse(buildAlertMessage(report).message) as { email: string }).email;
    const critical = email.split('\n').filter((line) => line.startsWith('- '));
    expect(critical[0]).toMatch(/^- crown-jewel\.nl: in quarantine/);
    expect(email).toContain('Next: Restore it by 22 Nov 2026 07:00 UTC (the last day)');
  });

  it('links the findings it left out from the first finding it did not name', () => {
    const alert = buildAlertMessage(report);
    const email = (JSON.parse(alert.message) as { email: string }).email;
    expect(alert.digest.leftOut.critical).toBeGreaterThan(0);
    // crown-jewel.nl named, old.com (after the unreadable records) not: the page starts at the second finding.
    expect(email).toContain('from=1.0');
  });

  it('gives the SMS the same order: the last day to restore first', () => {
    const sms = (JSON.parse(buildAlertMessage(report).message) as { sms: string }).sms;
    expect(sms).toMatch(/^3002 critical: crown-jewel\.nl LAST DAYS 0d to restore/);
  });
});
