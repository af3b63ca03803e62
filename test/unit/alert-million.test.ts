import { describe, expect, it } from 'vitest';
import { SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import { buildAlertMessage, snsPublishBytes } from '../../functions/core/alerts/message';
import { compareFindings, type DomainFinding } from '../../functions/core/findings/classify';
import type { DomainChange } from '../../functions/core/memory/state';
import type { Report } from '../../functions/core/scan/scan';
import { capForMessage } from '../../functions/use-cases/publish-alert';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

/**
 * The product's promise at the largest account it is built for (alert.test.ts has 100 000 mixed
 * findings): 1 000 000 domains, 50 000 of them in quarantine, 10 000 unreadable records and 2 000
 * changes. The publish fits SNS's 256 KB with each SMS disposition a publish can carry, and every
 * channel (the e-mail, the SMS, the JSON that chat and webhooks read) names the domain on its last
 * day to restore first, though the report lists it in the middle.
 */
describe('an alert for a million domains', { timeout: 120_000 }, () => {
  const hour = 3_600_000;
  const quarantine = (name: string, days: number): DomainFinding =>
    domainFinding(name, 'quarantine', 'critical', -40, {
      date_deleted: NOW_ISO,
      restore_by: new Date(Date.parse(NOW_ISO) + (days * 24 + 1) * hour).toISOString(),
      days_to_restore: days,
    });
  const findings = Array.from({ length: 50_000 }, (_, i) =>
    i === 25_000
      ? quarantine('crown-jewel.nl', 0)
      : quarantine(`brand-${i}-holding.example.co.uk`, 1 + (i % 29)),
  ).sort(compareFindings);
  const problems: Report['problems'] = Array.from({ length: 10_000 }, (_, i) => ({
    resource: 'domain',
    page: 1 + Math.floor(i / 100),
    key: `unreadable-${i}.nl`,
    reason: 'status says quarantine, date_deleted missing',
    severity: 'critical',
  }));
  // Warnings: a critical change (a departure) is said before every finding by design (alert.ts smsItems).
  const changes: DomainChange[] = Array.from({ length: 2_000 }, (_, i) => ({
    domain_name: `moved-${i}.nl`,
    kind: 'nameservers_changed',
    severity: 'warning',
    before: { nsgroup: 'ns-a', dns_hosted: false },
    after: { nsgroup: `ns-${i}`, dns_hosted: true },
  }));
  const base = reportOf(findings, problems);
  const report = capForMessage({
    ...base,
    stats: { ...base.stats, domains_scanned: 1_000_000, requests: 10_020 },
    report_url: 'https://links.example/prod/report?exp=1795932000&kid=abcdef12&sig=s',
    report_json_url: 'https://links.example/prod/report.json?of=x&exp=1795932000&kid=abcdef12&sig=s',
    changes,
    resolved: [],
  } as Report);
  const alert = buildAlertMessage(report, { accountLabel: 'Brand A holdings' });
  const variants = JSON.parse(alert.message) as { default: string; email: string; sms: string };

  it('fits SNS limit with each SMS disposition the publish carries', () => {
    expect(Object.keys(variants).sort()).toEqual(['default', 'email', 'sms']);
    for (const sms of [undefined, 'send', 'held', 'release'] as const)
      expect(
        snsPublishBytes({ ...alert, attributes: { ...alert.attributes, ...(sms ? { sms } : {}) } }),
      ).toBeLessThanOrEqual(SNS_MAX_BYTES);
    expect(alert.attributes.critical_count).toBe(60_000);
  });

  it('names the most urgent critical finding first in the e-mail, in full', () => {
    const critical = variants.email.slice(variants.email.indexOf('\nCRITICAL (60000)\n'));
    const items = critical.split('\n').filter((line) => line.startsWith('- '));
    expect(items[0]).toMatch(/^- crown-jewel\.nl: in quarantine/);
    expect(variants.email).toContain('Next: Restore it by 22 Nov 2026 07:00 UTC (the last day)');
    expect(alert.digest.named.critical).toBeGreaterThan(100);
    expect(alert.digest.named.critical + alert.digest.leftOut.critical).toBe(60_000);
    expect(variants.email).toMatch(
      /- and \d+ more critical, not named here: https:\/\/links\.example\/prod\/report\?of=/,
    );
    expect(variants.email).toMatch(/CHANGES \(2000\)\n[\s\S]*- and \d+ more changes on the full report/);
  });

  it('names it first in the SMS and in the JSON', () => {
    expect(variants.sms).toMatch(
      /^Brand A holdings: 60000 critical: crown-jewel\.nl LAST DAYS 0d to restore/,
    );
    const json = JSON.parse(variants.default);
    expect(json.findings[0].domain_name).toBe('crown-jewel.nl');
    expect(json.truncated).toBe(true);
    expect(json.summary.critical).toBe(50_000);
    expect(json.findings.length + json.omitted.findings).toBe(50_000);
    expect(json.problems.length + json.omitted.problems).toBe(10_000);
    expect(json.report_json_url).toBe(report.report_json_url);
  });
});
