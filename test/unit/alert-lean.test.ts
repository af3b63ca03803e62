import { describe, expect, it } from 'vitest';
import { SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import { chatNotificationOf } from '../../functions/core/alerts/chat';
import { buildAlertMessage, reportJsonOf, snsPublishBytes } from '../../functions/core/alerts/message';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, reportOf } from '../support/report';

/**
 * Found by a hostile review of AWS limits: the message builder cut findings, unreadable records and
 * the digest's items to fit SNS's 256 KB, but a report whose small fields (or the digest's fixed
 * lines) alone passed it came out over the limit, and SNS refused the whole publish: no one heard
 * of any finding. `renewal_costs` with a currency per domain did that (bounded since); this is the
 * net under any such bound missed: the lean form, within the limit, saying what it left out.
 */
describe('a report whose small fields alone pass SNS limit', () => {
  const critical = Array.from({ length: 40 }, (_, i) =>
    domainFinding(`shop-${i}.nl`, 'expiring', 'critical', 3),
  );
  const base = {
    ...reportOf(critical),
    report_url: 'https://sentinel.example/report',
    report_json_url: 'https://sentinel.example/report.json',
  };

  it('sends the lean JSON, naming the fields it left out, beside the whole digest', () => {
    // A restore period for each of 30 000 TLDs: some 900 KB in the message's JSON, none of it in the e-mail.
    const quarantine = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`tld${i}`, 30]));
    const report = { ...base, policy: { ...base.policy, quarantine_days: quarantine } } as Report;
    const alert = buildAlertMessage(report);
    expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    const json = JSON.parse(reportJsonOf(alert));
    expect(json).toMatchObject({
      truncated: true,
      report_json_url: 'https://sentinel.example/report.json',
      summary: { critical: 40 },
      omitted: { findings: 40, problems: 0 },
    });
    expect(json.omitted_fields).toContain('policy');
    expect(alert.findingsCut).toBe(40);
    const { email } = JSON.parse(alert.message) as { email: string };
    for (const f of critical) expect(email).toContain(f.domain_name);
    expect(email).not.toContain('The rest of this e-mail was cut');
    // Chat and the webhooks read this JSON: they still say what the scan found.
    expect(chatNotificationOf(alert).content.title).toContain('40 critical');
  });

  it('says how many of the records it left out could not be read, so chat does not count a record read as unreadable', () => {
    const quarantine = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`tld${i}`, 30]));
    const problems = [
      { resource: 'domain' as const, key: 'broken.nl', page: 1, reason: 'date_expiry: Invalid input' },
      {
        resource: 'domain' as const,
        key: 'odd.nl',
        page: 1,
        reason: 'status "pending_delete"',
        dates_only: true as const,
      },
    ];
    const report = { ...base, problems, policy: { ...base.policy, quarantine_days: quarantine } } as Report;
    const alert = buildAlertMessage(report);
    expect(JSON.parse(reportJsonOf(alert)).omitted).toMatchObject({ problems: 2, unread_problems: 1 });
    expect(chatNotificationOf(alert).metadata.additionalContext).toMatchObject({ unreadableRecords: '1' });
  });

  it('cuts the e-mail where its room ends when its own fixed lines pass the limit, saying so', () => {
    // The digest bounds its variable sections (digest-fixed-bounds.test.ts); a heading no bound
    // holds (an account label of 300 000 characters) is what the net is for.
    const alert = buildAlertMessage(base as Report, { accountLabel: 'x'.repeat(300_000) });
    expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    const { email } = JSON.parse(alert.message) as { email: string };
    expect(email).toMatch(
      /\[The rest of this e-mail was cut: it was longer than an alert may be\. The whole report: https:\/\/sentinel\.example\/report\]$/,
    );
    expect(snsPublishBytes(alert)).toBeGreaterThan(SNS_MAX_BYTES - 1024);
  });

  it('leaves room for the SMS disposition that quiet hours add to the attributes after it is built', () => {
    // publish-alert.ts sets `sms` (send, held, release) on the built message: up to 16 bytes as SNS
    // counts them. The lean e-mail is cut to within a few bytes of the limit; this label left 8.
    const alert = buildAlertMessage(base as Report, {
      accountLabel: `${'中'.repeat(39)}${'x'.repeat(300_000)}`,
    });
    for (const sms of ['send', 'held', 'release'] as const)
      expect(snsPublishBytes({ ...alert, attributes: { ...alert.attributes, sms } })).toBeLessThanOrEqual(
        SNS_MAX_BYTES,
      );
  });
});
