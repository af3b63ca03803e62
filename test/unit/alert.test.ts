import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ALERT_TOPIC_DISPLAY_NAME,
  gsm7Length,
  renderSms,
  renderSubject,
  SNS_MAX_BYTES,
  smsAsDelivered,
} from '../../functions/core/alerts/alert';
import { chatNotificationOf } from '../../functions/core/alerts/chat';
import { composeDigest, renderDigest } from '../../functions/core/alerts/digest';
import { planAlerts } from '../../functions/core/alerts/groups';
import { buildAlertMessage, snsPublishBytes } from '../../functions/core/alerts/message';
import {
  parseAlertReport,
  renderSlackMessage,
  renderTeamsMessage,
} from '../../functions/core/alerts/webhook-formats';
import {
  type ContactFinding,
  compareFindings,
  type DomainFinding,
} from '../../functions/core/findings/classify';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

const quarantine = domainFinding('example.nl', 'quarantine', 'critical', -25, {
  date_deleted: '2026-11-02T09:00:00.000Z',
  restore_url: 'https://restore.example/prod/restore/example.nl?exp=1&kid=a&sig=b',
});
const expiring = domainFinding('shop.nl', 'expiring', 'critical', 3);
const warning = domainFinding('later.eu', 'expiring', 'warning', 20, {
  auto_renew: null,
  registrant: { handle: 'C7' },
});
const info = domainFinding('fine.com', 'expiring', 'info', 12, { auto_renew: true });
const problemOf = (key: string) => ({
  resource: 'domain' as const,
  key,
  page: 1,
  reason: 'date_expiry: not a date',
});
const contact: ContactFinding = {
  handle: 'C9',
  kind: 'contact_pending_validation',
  severity: 'warning',
  name: 'Bram Bos',
  company_name: '',
  email: 'bram@example.nl',
};

describe('renderDigest', () => {
  const report = reportOf([quarantine, expiring, warning, contact, info]);

  it('says what is wrong in words, critical first, with registrant, next step and its one link', () => {
    const digest = renderDigest(report);
    expect(digest.split('\n')[0]).toBe('domain-sentinel: 2 critical, 2 warning, 1 info');
    expect(digest).toContain('- example.nl: in quarantine since 2 Nov 2026, 19 days');
    // Without a finding page (a report without links but the restore link), the restore link is its one link.
    expect(digest).toContain('  Act: https://restore.example/prod/restore/example.nl?exp=1&kid=a&sig=b');
    expect(digest).toContain(
      "  Next: Renew it, or turn auto-renew on, in the reseller's control panel before 25 Nov 2026.",
    );
    expect(digest).toContain('- shop.nl: expires 25 Nov 2026 in 3 days, auto-renew OFF');
    expect(digest).toContain('  Registrant: Anna de Vries (Bloem BV) <anna@example.nl> [C1]');
    expect(digest).toContain(
      '- later.eu: expires 12 Dec 2026 in 20 days, auto-renew UNKNOWN (treated as off)',
    );
    expect(digest).toContain('- contact C9: validation pending');
    expect(digest.indexOf('CRITICAL (2)')).toBeLessThan(digest.indexOf('WARNING (2)'));
    expect(digest).toContain('INFO (1): 1 expiring within 30 days with auto-renew on, 0 with auto-renew off');
    expect(digest).toContain('Scanned 1200 domains and 60 contacts at 22 Nov 2026, 06:00 UTC');
    expect(digest).toContain('EXPIRY_DAYS and CRITICAL_DAYS');
  });

  // Whoever registers a domain writes its registrant's name: a link there would be a link in our alert.
  it('shows a URL or host name in a registrant name or company as text no mail client links', () => {
    const phishing: DomainFinding = {
      ...expiring,
      registrant: {
        handle: 'C1',
        name: 'Renew now at https://pay-renewal.example/x or www.pay.example',
        company_name: 'Bloem.nl B.V.',
        email: 'anna@example.nl',
      },
    };
    const digest = renderDigest(reportOf([phishing]));
    expect(digest).toContain(
      '  Registrant: Renew now at https[:]//pay-renewal[.]example/x or www[.]pay[.]example (Bloem[.]nl B.V.) <anna@example.nl> [C1]',
    );
    expect(digest).not.toMatch(/https:\/\/pay|pay-renewal\.example|www\.pay/);
  });

  it('shows a URL in the name of an unreadable record as text no mail client links', () => {
    const digest = renderDigest(reportOf([], [problemOf('http://pay.example/x'), problemOf('fine.nl')]));
    expect(digest).toContain('- domain http[:]//pay[.]example/x on page 1: date_expiry: not a date');
    expect(digest).toContain('- domain fine.nl on page 1: date_expiry: not a date');
  });

  it('shows an IDN in punycode and in the script its customer reads', () => {
    const idn = domainFinding('xn--bcher-kva.de', 'expired', 'critical', -2);
    expect(renderDigest(reportOf([idn]))).toContain('- xn--bcher-kva.de (bücher.de): expired');
  });

  it('shows dates in the configured time zone and names it', () => {
    const late = domainFinding('late.nl', 'expiring', 'critical', 2, {
      date_expiry: '2026-11-24T23:30:00.000Z',
    });
    const digest = renderDigest(reportOf([late]), { timeZone: 'Europe/Amsterdam' });
    expect(digest).toContain('expires 25 Nov 2026');
    expect(digest).toContain('at 22 Nov 2026, 07:00 Europe/Amsterdam');
    expect(digest).toContain('Dates are shown in Europe/Amsterdam');
  });

  it('lists unreadable records so nothing is lost silently', () => {
    const digest = renderDigest(
      reportOf([], [{ resource: 'domain', key: 'odd.nl', page: 3, reason: 'date_expiry: bad' }]),
    );
    expect(digest).toContain('PROBLEMS: 1 record could not be read and was not checked:');
    expect(digest).toContain('- domain odd.nl on page 3: date_expiry: bad');
  });

  it('names criticals first within its budget, counts what it leaves out per severity and links exactly those', () => {
    const many = [
      ...Array.from({ length: 50 }, (_, i) => domainFinding(`d${i}.nl`, 'expired', 'critical', -1 - i)),
      ...Array.from({ length: 30 }, (_, i) => domainFinding(`w${i}.nl`, 'expiring', 'warning', 20)),
    ];
    const linked = {
      ...reportOf(many),
      report_url: 'https://links.example/prod/report?exp=1795932000&kid=abcdef12&sig=s',
    };
    const digest = composeDigest(linked, { budgetBytes: 4_000 });
    const named = digest.text.match(/^- d\d+\.nl/gm) ?? [];
    expect(named.length).toBeGreaterThan(5);
    expect(named.length).toBeLessThan(50);
    expect(digest.text.match(/^- w\d+\.nl/gm)).toBeNull();
    expect(digest.named).toEqual({ critical: named.length, warning: 0 });
    expect(digest.leftOut).toEqual({ critical: 50 - named.length, warning: 30 });
    const link = `https://links.example/prod/report?of=2026-11-22T06%3A00%3A00.000Z&from=${named.length}.0&exp=1795932000&kid=abcdef12&sig=s`;
    expect(digest.text).toContain(
      `Not named in this e-mail: ${50 - named.length} critical, 30 warning: ${link}`,
    );
    expect(digest.text).toContain(`- and ${50 - named.length} more critical, not named here: ${link}`);
    expect(digest.text).toContain(`- and 30 more warning, not named here: ${link}`);
    expect(Buffer.byteLength(JSON.stringify(digest.text)) - 2).toBeLessThanOrEqual(4_000);
  });

  it('keeps the next step and link of the most urgent items when an account has more than the e-mail can name', () => {
    // Everything in quarantine at once: far more items than 256 KB can even name.
    const findings = Array.from({ length: 20_000 }, (_, i) =>
      domainFinding(`q${i}.nl`, 'quarantine', 'critical', -30, {
        date_deleted: '2026-11-02T09:00:00.000Z',
        days_to_restore: Math.floor(i / 1_000),
        restore_by: '2026-12-12T09:00:00.000Z',
        actions: { page: `https://links.example/prod/finding/q${i}.nl?exp=1795932000&kid=abcdef12&sig=s` },
      }),
    );
    const alert = buildAlertMessage({
      ...reportOf(findings),
      report_url: 'https://links.example/prod/report?exp=1795932000&kid=abcdef12&sig=s',
    });
    expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    const email: string = JSON.parse(alert.message).email;
    for (let i = 0; i < 10; i++)
      expect(email).toMatch(
        new RegExp(
          `\\n- q${i}\\.nl: [^\\n]*\\n(  [^\\n]*\\n)*  Next: [^\\n]+\\n  Act: https://links\\.example/prod/finding/q${i}\\.nl\\?`,
        ),
      );
    // The rest are named, or counted with the link to exactly those.
    expect(alert.digest.named.critical).toBeGreaterThan(1_000);
    expect(alert.digest.named.critical + alert.digest.leftOut.critical).toBe(20_000);
  });

  it('says, after a proven filtered read, how many domains the account holds and that only some were read', () => {
    const coverage = {
      all: 5000,
      in_window: 400,
      beyond_window: 4600,
      no_expiry: 0,
      beyond_renewing: 4400,
      beyond_not_renewing: 200,
      beyond_renewal_unknown: 0,
      beyond_renewing_registered: 4400,
      beyond_renewing_quarantined: 0,
    };
    const filtered = {
      ...reportOf([]),
      source: { base_url: 'x', mode: 'auto', read: 'filtered', coverage },
    } as const;
    expect(renderDigest(filtered)).toContain(
      'The account holds 5000 domains; search counts proved which could need attention, and only those were read.',
    );
    expect(renderDigest(reportOf([]))).not.toContain('The account holds');
  });

  it('tells a group where its own thresholds are changed, not the deployment settings', () => {
    const account = reportOf([]);
    const vip = { ...account, source: { ...account.source, group: 'vip' } };
    const digest = renderDigest(vip);
    expect(digest).toContain('Change them with the expiryDays and criticalDays of policy vip.');
    expect(digest).not.toContain('EXPIRY_DAYS');
    expect(renderDigest(account)).toContain('Change them with EXPIRY_DAYS and CRITICAL_DAYS');
  });
});

describe('renderSms', () => {
  it('names critical items in GSM-7 with no link', () => {
    const sms = renderSms(reportOf([quarantine, expiring, warning]));
    expect(sms).toBe('2 critical: example.nl quarantine; shop.nl 3d no renew 1 warning');
    expect(sms).not.toContain('http');
  });

  it('names a quarantine on its last day to restore before the departures of a bulk transfer out', () => {
    // Thirty domains gone from the account fill the SMS; the one that can still be saved today must not wait for the e-mail.
    const lastDay = domainFinding('save-me.nl', 'quarantine', 'critical', -30, { days_to_restore: 0 });
    const later = domainFinding('later.nl', 'quarantine', 'critical', -20, { days_to_restore: 9 });
    const gone = Array.from({ length: 30 }, (_, i) => ({
      domain_name: `gone-${String(i).padStart(2, '0')}.nl`,
      kind: 'left_account' as const,
      severity: 'critical' as const,
    }));
    const sms = renderSms({ ...reportOf([lastDay, later]), changes: gone } as Parameters<
      typeof renderSms
    >[0]);
    expect(sms).toMatch(/^32 critical: save-me\.nl LAST DAYS 0d to restore; gone-00\.nl LEFT ACCOUNT; /);
  });

  it('says first that the read was incomplete, for its counts are not the whole account', () => {
    const cut = (findings: Parameters<typeof reportOf>[0]) => {
      const report = reportOf(findings);
      return { ...report, source: { ...report.source, incomplete: 'the domain list moved' } };
    };
    expect(renderSms(cut([quarantine, warning]), { accountLabel: 'Acme' })).toBe(
      'Acme: INCOMPLETE read; 1 critical: example.nl quarantine 1 warning',
    );
    expect(renderSms(cut([warning]))).toBe('INCOMPLETE read; no critical items; 1 warning. See e-mail.');
    const many = Array.from({ length: 40 }, (_, i) =>
      domainFinding(`d-${i}.example.nl`, 'expired', 'critical', -1),
    );
    const delivered = smsAsDelivered(renderSms(cut(many), { accountLabel: 'A'.repeat(40) }));
    expect(delivered).toMatch(
      /^domain-sentinel> A{20}: INCOMPLETE read; 40 critical: d-0\.example\.nl expired;.* \+\d+ more$/,
    );
    expect(gsm7Length(delivered)).toBeLessThanOrEqual(160);
  });

  it('fits one 160-character part together with the prefix SNS adds from the topic display name', () => {
    const many = Array.from({ length: 40 }, (_, i) =>
      domainFinding(`domain-${i}.example.nl`, 'expired', 'critical', -1),
    );
    const delivered = smsAsDelivered(renderSms(reportOf(many), { accountLabel: 'Reseller Holland' }));
    expect(
      delivered.startsWith(
        `${ALERT_TOPIC_DISPLAY_NAME}> Reseller Holland: 40 critical: domain-0.example.nl expired;`,
      ),
    ).toBe(true);
    expect(delivered).toMatch(/ \+\d+ more$/);
    expect(gsm7Length(delivered)).toBeLessThanOrEqual(160);
    expect(gsm7Length(delivered)).toBeGreaterThan(140); // the budget is used, not wasted
  });

  // 253 characters, the most a valid domain name has.
  const longName = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.nl`;

  it('names the first critical domain, cut with a visible mark, when it is too long to fit whole', () => {
    const findings = [
      domainFinding(longName, 'quarantine', 'critical', -40, { days_to_restore: 3, restore_by: NOW_ISO }),
      ...Array.from({ length: 12_344 }, (_, i) => domainFinding(`d${i}.nl`, 'expired', 'critical', -1)),
      ...Array.from({ length: 3 }, (_, i) => domainFinding(`w${i}.nl`, 'expiring', 'warning', 20)),
    ];
    const delivered = smsAsDelivered(renderSms(reportOf(findings), { accountLabel: 'A'.repeat(40) }));
    // The label keeps its 20 characters and the counts stay whole; the name takes the room left, to the last character.
    expect(delivered).toBe(
      `domain-sentinel> ${'A'.repeat(20)}: 12345 critical: ${'a'.repeat(55)}... LAST DAYS 3d to restore +12344 more, 3 warning`,
    );
    expect(gsm7Length(delivered)).toBe(160);
  });

  it('marks a name cut to its share of the SMS even when it is the only item', () => {
    const sms = renderSms(reportOf([domainFinding(longName, 'expired', 'critical', -2)]));
    expect(gsm7Length(smsAsDelivered(sms))).toBeLessThanOrEqual(160);
    expect(sms).toBe(`1 critical: ${longName.slice(0, 77)}... expired`);
  });

  it('names the first unreadable quarantine record, cut to fit', () => {
    const problems = [{ ...problemOf(longName), severity: 'critical' as const }];
    const sms = renderSms(reportOf([], problems));
    expect(gsm7Length(smsAsDelivered(sms))).toBeLessThanOrEqual(160);
    expect(sms).toBe(`1 critical: ${longName.slice(0, 77)}... quarantine?`);
  });

  it('writes IDN names in punycode and replaces characters outside GSM-7', () => {
    const idn = domainFinding('bücher.de', 'expired', 'critical', -2);
    // é is in GSM-7, ë and ™ are not.
    expect(renderSms(reportOf([idn]), { accountLabel: 'Café Zoë™' })).toBe(
      'Café Zo??: 1 critical: xn--bcher-kva.de expired',
    );
  });

  const anyFinding = (name: fc.Arbitrary<string>) =>
    fc
      .record({
        name,
        kind: fc.constantFrom('quarantine', 'expired', 'expiring', 'auto_renew_off') as fc.Arbitrary<
          DomainFinding['kind']
        >,
        severity: fc.constantFrom('critical', 'warning', 'info') as fc.Arbitrary<DomainFinding['severity']>,
        days: fc.integer({ min: -4000, max: 4000 }),
      })
      .map((f) => domainFinding(f.name, f.kind, f.severity, f.days));

  it('stays within 160 GSM-7 characters with the prefix, for any findings and any label', () => {
    const label = fc.option(fc.string({ maxLength: 60 }), { nil: undefined });
    fc.assert(
      fc.property(
        fc.array(anyFinding(fc.string({ maxLength: 300 })), { maxLength: 300 }),
        label,
        (findings, accountLabel) => {
          const sms = renderSms(reportOf(findings), accountLabel === undefined ? {} : { accountLabel });
          expect(gsm7Length(smsAsDelivered(sms))).toBeLessThanOrEqual(160);
          // With anything critical, the first critical item is named, however long its name: never counts alone.
          if (findings.some((f) => f.severity === 'critical'))
            expect(sms).not.toMatch(/critical:( \+\d+ more)?(,? ?\d+ warning)?$/);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('names or counts every critical item', () => {
    fc.assert(
      fc.property(fc.array(anyFinding(fc.domain()), { maxLength: 300 }), (findings) => {
        const sms = renderSms(reportOf(findings));
        const critical = findings.filter((f) => f.severity === 'critical').length;
        fc.pre(critical > 0);
        const warning = findings.filter((f) => f.severity === 'warning').length;
        // What it leaves out is said at its end: the critical ones not named, and the warnings.
        const tail = / ?(?:\+(\d+) more)?(?:, )?(?:(\d+) warning)?$/.exec(sms);
        const listed = sms.slice(sms.indexOf('critical:') + 'critical:'.length, tail?.index);
        const named = listed.trim() ? listed.split(';').length : 0;
        expect(named + Number(tail?.[1] ?? 0)).toBe(critical);
        expect(Number(tail?.[2] ?? 0)).toBe(warning);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the Slack header of a large incomplete read', () => {
  it('keeps every count whole by saying them in fewer words when the full ones pass 150 characters', () => {
    const report = reportOf([quarantine, warning], [problemOf('a.nl')]);
    const big = {
      ...report,
      source: { ...report.source, incomplete: 'out of time' },
      summary: { critical: 1_234_567, warning: 1_234_567, info: 1_234_567 },
      // A message's cut leaves most unreadable records out, counted (message.ts).
      omitted: { problems: 1_234_566 },
    };
    const header = renderSlackMessage(big, { accountLabel: 'Acme Reseller Holdings International B.V' })
      .blocks[0] as { text: { text: string } };
    expect(header.text.text.length).toBeLessThanOrEqual(150);
    expect(header.text.text).toBe(
      'domain-sentinel (Acme Reseller Holdings International B.V): INCOMPLETE, 1234567 critical, 1234567 warning, 1234567 info, 1234567 unreadable',
    );
    const small = renderSlackMessage(report).blocks[0] as { text: { text: string } };
    expect(small.text.text).toBe('domain-sentinel: 1 critical, 1 warning, 1 unreadable record');
  });
});

describe('renderSubject', () => {
  it('says the counts and the account in printable ASCII', () => {
    const subject = renderSubject(reportOf([quarantine, warning]), 'Reseller Bücher '.repeat(10));
    expect(subject.length).toBeLessThanOrEqual(100);
    expect(subject).toMatch(/^[\x20-\x7e]+$/);
    expect(renderSubject(reportOf([quarantine, warning]))).toBe('domain-sentinel: 1 critical, 1 warning');
  });

  it('says INCOMPLETE before the counts of a read that was not the whole account, cutting the label first', () => {
    const report = reportOf([quarantine, warning], [problemOf('a.nl')]);
    const cut = { ...report, source: { ...report.source, incomplete: 'out of time' } };
    expect(renderSubject(cut)).toBe(
      'domain-sentinel: INCOMPLETE read, 1 critical, 1 warning, 1 unreadable record',
    );
    const big = { ...cut, summary: { critical: 12_345, warning: 67_890, info: 123_456 } };
    const subject = renderSubject(big, 'Acme Reseller Holdings International B.V');
    expect(subject.length).toBeLessThan(100);
    expect(subject).toMatch(
      /^domain-sentinel \[Acme Res\.\.\.\]: INCOMPLETE, 12345 critical, 67890 warning, 123456 info, 1 unreadable$/,
    );
  });

  it('still names the account of an incomplete read, saying INCOMPLETE and unreadable shorter to make room', () => {
    const problems = Array.from({ length: 12 }, (_, i) => problemOf(`p${i}.nl`));
    const report = reportOf([quarantine, warning], problems);
    const cut = {
      ...report,
      source: { ...report.source, incomplete: 'out of time' },
      summary: { critical: 12, warning: 340, info: 15_000 },
    };
    expect(renderSubject(cut, 'Brand B (test)')).toBe(
      'domain-sentinel [Brand B (test)]: INCOMPLETE, 12 critical, 340 warning, 15000 info, 12 unreadable',
    );
    // A 40-character label keeps what the shorter counts leave, and no count is cut.
    expect(renderSubject(cut, 'Acme Reseller Holdings International B.V')).toBe(
      'domain-sentinel [Acme Reseller...]: INCOMPLETE, 12 critical, 340 warning, 15000 info, 12 unreadable',
    );
  });

  it('keeps every count whole beside records that were read, saying all problem records as one count when short of room', () => {
    const read = { ...problemOf('held.nl'), dates_only: true as const };
    const report = reportOf([quarantine, warning], [problemOf('a.nl'), read]);
    const huge = {
      ...report,
      source: { ...report.source, incomplete: 'out of time' },
      summary: { critical: 3, warning: 20_000, info: 20_000 },
      omitted: { problems: 39_998, unread_problems: 19_999 },
    };
    const subject = renderSubject(huge, 'Acme Reseller Holdings International B.V');
    expect(subject.length).toBeLessThan(100);
    expect(subject).toBe(
      'domain-sentinel [Acme Reselle...]: INCOMPLETE, 3 critical, 20000 warning, 20000 info, 40000 records',
    );
  });

  it('keeps every count whole in an incomplete read of a huge account, saying INCOMPLETE shorter', () => {
    const report = reportOf([quarantine, warning], [problemOf('a.nl')]);
    const huge = {
      ...report,
      source: { ...report.source, incomplete: 'out of time' },
      summary: { critical: 1_234_567, warning: 1_234_567, info: 1_234_567 },
      omitted: { problems: 1_234_566 },
    };
    const subject = renderSubject(huge, 'Acme Reseller Holdings International B.V');
    expect(subject.length).toBeLessThan(100);
    expect(subject).toBe(
      'domain-sentinel: INCOMPLETE, 1234567 critical, 1234567 warning, 1234567 info, 1234567 unreadable',
    );
  });

  it('stays under 100 characters, as SNS requires, and cuts the label rather than the counts', () => {
    // A 40-character label (ACCOUNT_LABEL's most) and a large account: 116 characters before any cut.
    const report = reportOf([quarantine, warning], [problemOf('a.nl'), problemOf('b.nl')]);
    const big = { ...report, summary: { critical: 12_345, warning: 67_890, info: 123_456 } };
    const subject = renderSubject(big, 'Acme Reseller Holdings International B.V');
    expect(subject.length).toBeLessThan(100);
    expect(subject).toBe(
      'domain-sentinel [Acme Reseller Holdin...]: 12345 critical, 67890 warning, 123456 info, 2 unreadable',
    );
  });
});

describe('buildAlertMessage', () => {
  it('carries the JSON once, in default (every protocol without a key of its own gets it), beside email and sms', () => {
    const alert = buildAlertMessage(reportOf([quarantine, warning, info]));
    const message = JSON.parse(alert.message);
    expect(Object.keys(message).sort()).toEqual(['default', 'email', 'sms']);
    expect(message.email).toContain('CRITICAL (1)');
    const json = JSON.parse(message.default);
    expect(json.findings).toHaveLength(3);
    expect(json.truncated).toBeUndefined();
    expect(alert.json).toBe('whole');
    expect(alert.attributes).toEqual({ severity: 'critical', critical_count: 1, warning_count: 1 });
    expect(alert.findingsCut).toBe(0);
  });

  it('counts what SNS counts: message, subject and every attribute name, type and value', () => {
    const alert = buildAlertMessage({
      ...reportOf([quarantine]),
      source: { ...reportOf([]).source, account: 'brand-a' },
    });
    expect(snsPublishBytes(alert)).toBe(
      Buffer.byteLength(alert.message) +
        Buffer.byteLength(alert.subject) +
        'severity'.length +
        'String'.length +
        'critical'.length +
        'critical_count'.length +
        'Number'.length +
        1 +
        'warning_count'.length +
        'Number'.length +
        1 +
        'account'.length +
        'String'.length +
        'brand-a'.length,
    );
  });

  it('stays under 256 KB for 100 000 findings: the JSON says it is cut and links the whole, the digest names criticals first', () => {
    const findings = Array.from({ length: 100_000 }, (_, i) =>
      domainFinding(
        `a-rather-long-domain-name-number-${i}.example.co.uk`,
        i % 3 ? 'expiring' : 'expired',
        i % 2 ? 'critical' : 'warning',
        i % 40,
      ),
    ).sort(compareFindings);
    const report = {
      ...reportOf(findings),
      report_url: 'https://links.example/prod/report?exp=1795932000&kid=abcdef12&sig=s',
      report_json_url: 'https://links.example/prod/report.json?of=x&exp=1795932000&kid=abcdef12&sig=s',
    };
    const alert = buildAlertMessage(report);
    expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    expect(alert.findingsCut).toBeGreaterThan(0);
    expect(alert.json).toBe('linked');
    const message = JSON.parse(alert.message);
    const json = JSON.parse(message.default);
    expect(json.truncated).toBe(true);
    expect(json.omitted.findings + json.findings.length).toBe(100_000);
    expect(json.report_json_url).toBe(report.report_json_url);
    expect(json.findings.every((f: { next_step?: string }) => typeof f.next_step === 'string')).toBe(true);
    expect(json.summary.critical).toBe(50_000);
    expect(alert.digest.named.critical).toBeGreaterThan(0);
    expect(alert.digest.named.warning).toBe(0);
    expect(alert.digest.named.critical + alert.digest.leftOut.critical).toBe(50_000);
    expect(message.email).toMatch(
      /- and \d+ more critical, not named here: https:\/\/links\.example\/prod\/report\?of=/,
    );
  });

  it('names every critical domain in the digest or counts it in an "and N more" line, and fits, for any findings', () => {
    const finding = fc
      .record({
        name: fc.domain(),
        severity: fc.constantFrom('critical', 'warning', 'info') as fc.Arbitrary<DomainFinding['severity']>,
        days: fc.integer({ min: -100, max: 100 }),
      })
      .map((f) => domainFinding(f.name, 'expiring', f.severity, f.days));
    fc.assert(
      fc.property(
        fc.uniqueArray(finding, { maxLength: 3_000, selector: (f) => f.domain_name }),
        (findings) => {
          const report = reportOf(findings.sort(compareFindings));
          const alert = buildAlertMessage(report);
          expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
          const digest: string = JSON.parse(alert.message).email;
          const critical = findings.filter((f) => f.severity === 'critical');
          const named = critical.filter((f) =>
            new RegExp(`^- ${f.domain_name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[: ]`, 'm').test(digest),
          ).length;
          const more = Number(/- and (\d+) more critical/.exec(digest)?.[1] ?? 0);
          expect(named + more).toBe(critical.length);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('buildAlertMessage with unreadable records', () => {
  const problem = (i: number, reason = 'date_expiry: not an RFC 3339 date-time: "2027-12-17 sometime"') => ({
    resource: 'domain' as const,
    key: `unreadable-${i}.example.nl`,
    page: 1 + Math.floor(i / 100),
    reason,
  });

  it('cuts 1 000 unreadable records with "and N more unreadable records" and stays under 256 KB', () => {
    const problems = Array.from({ length: 1_000 }, (_, i) => problem(i));
    const alert = buildAlertMessage(reportOf([quarantine], problems));
    expect(Buffer.byteLength(alert.message)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    const message = JSON.parse(alert.message);
    expect(message.email).toContain('PROBLEMS: 1000 records could not be read and were not checked:');
    expect(message.email).toContain('- and 980 more unreadable records');
    const json = JSON.parse(message.default);
    expect(json.truncated).toBe(true);
    expect(json.problems.length + json.omitted.problems).toBe(1_000);
    expect(alert.problemsCut).toBe(json.omitted.problems);
  });

  it('stays under 256 KB in bytes for 100 000 findings and 100 000 problems together, any reason length', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.string({ maxLength: 3_000, unit: 'grapheme' }),
        (findingCount, problemCount, reason) => {
          const findings = Array.from({ length: findingCount }, (_, i) =>
            domainFinding(`d${i}.example.nl`, 'expired', i % 2 ? 'critical' : 'warning', -1),
          );
          const problems = Array.from({ length: problemCount }, (_, i) => problem(i, reason));
          const alert = buildAlertMessage(reportOf(findings, problems));
          expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
          const json = JSON.parse(JSON.parse(alert.message).default);
          expect(json.findings.length + (json.omitted?.findings ?? 0)).toBe(findingCount);
          expect(json.problems.length + (json.omitted?.problems ?? 0)).toBe(problemCount);
        },
      ),
      { numRuns: 6 },
    );
  }, 120_000);
});

/** Half of a character without its other half (a surrogate cut apart). */
const LONE_HALF = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('buildAlertMessage with hostile text from the API', () => {
  it('carries every finding in the JSON when one record holds a name of megabytes: its names are cut, not the others', () => {
    const huge = 'x'.repeat(300_000);
    const hostile = domainFinding(`${huge}.nl`, 'expired', 'critical', -9_000, {
      registrant: { handle: huge, name: huge, company_name: huge, email: huge },
    });
    const others = Array.from({ length: 10 }, (_, i) =>
      domainFinding(`ok${i}.nl`, 'expired', 'critical', -3),
    );
    const alert = buildAlertMessage(reportOf([hostile, ...others]));
    expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    const json = JSON.parse(JSON.parse(alert.message).default);
    expect(json.findings.map((f: DomainFinding) => f.domain_name).slice(1)).toEqual(
      others.map((f) => f.domain_name),
    );
    expect(json.findings[0].domain_name).toBe(`${'x'.repeat(259)}…`);
    expect(JSON.stringify(json.findings[0]).length).toBeLessThan(5_000);
    // Chat reads that JSON (chat.ts chatNotificationOf): it lists them all too.
    const chat = chatNotificationOf(alert).content.description;
    for (const f of others) expect(chat).toContain(`\`${f.domain_name}\``);
  });

  it('never cuts a name inside a character: every text of the message, chat and the webhooks is well-formed UTF-16', () => {
    // Emoji take two UTF-16 units: an odd prefix puts each cut (120, 260, 300, 520, 3 000) inside one.
    const emoji = (prefix: string, n: number) => `${prefix}${'\u{1F600}'.repeat(n)}`;
    const letters = (prefix: string, n: number) => `${prefix}${'\u{1D49C}'.repeat(n)}`; // a letter chat keeps
    const finding = domainFinding(emoji('ab', 400), 'expired', 'critical', -5, {
      registrant: {
        handle: emoji('h', 100),
        name: emoji('ab', 200),
        company_name: emoji('c', 200),
        email: 'e',
      },
    });
    const contactOf = { ...contact, handle: letters('ab', 2_000), severity: 'warning' as const };
    const problem = {
      ...problemOf(emoji('ab', 300)),
      reason: emoji('r', 400),
      severity: 'critical' as const,
    };
    const alert = buildAlertMessage(reportOf([finding, contactOf], [problem]));
    const message = JSON.parse(alert.message);
    const texts: Record<string, string> = {
      email: message.email,
      sms: message.sms,
      default: JSON.stringify(JSON.parse(message.default)),
      chat: JSON.stringify(chatNotificationOf(alert)),
      slack: JSON.stringify(renderSlackMessage(parseAlertReport(message.default))),
      teams: JSON.stringify(renderTeamsMessage(parseAlertReport(message.default))),
    };
    // JSON.stringify writes a lone half as a \udXXX escape, which a strict reader refuses.
    for (const [form, text] of Object.entries(texts)) {
      expect(text, form).not.toMatch(LONE_HALF);
      expect(text, form).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/i);
    }
  });
});

describe('the notify policy (planAlerts without memory)', () => {
  const notifies = (report: ReturnType<typeof reportOf>, minSeverity: 'info' | 'warning' | 'critical') =>
    planAlerts(report, { minSeverity }).length > 0;
  it('publishes at or above the minimum severity, and for unreadable records', () => {
    expect(notifies(reportOf([info]), 'warning')).toBe(false);
    expect(notifies(reportOf([info]), 'info')).toBe(true);
    expect(notifies(reportOf([warning]), 'warning')).toBe(true);
    expect(notifies(reportOf([warning]), 'critical')).toBe(false);
    expect(notifies(reportOf([]), 'warning')).toBe(false);
    expect(
      notifies(reportOf([], [{ resource: 'domain', key: null, page: 1, reason: 'x' }]), 'critical'),
    ).toBe(true);
  });
});

describe('planAlerts with memory at a million domains', () => {
  it('plans the message of a bulk change of 200 000 domains, every change and resolution counted', () => {
    const many = 200_000;
    const changes = Array.from({ length: many }, (_, i) => ({
      domain_name: `d${i}.nl`,
      kind: 'registrant_changed',
      severity: 'warning' as const,
      before: 'H1',
      after: 'H2',
    }));
    const resolved = changes.map((c) => ({ ...c, kind: 'expiring' }));
    const report = { ...reportOf([]), changes, resolved };
    const plan = planAlerts(report, { minSeverity: 'warning', decided: true })[0];
    if (!plan) throw new Error('no alert planned');
    expect(plan.report.changes).toHaveLength(many);
    expect(plan.report.resolved).toHaveLength(many);
    const message = buildAlertMessage(plan.report);
    expect(snsPublishBytes(message)).toBeLessThanOrEqual(256 * 1024);
    const email = JSON.parse(message.message).email as string;
    expect(email).toMatch(/200[\s,]?000/);
  });
});
