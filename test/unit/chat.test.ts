import { describe, expect, it } from 'vitest';
import { SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import {
  CUSTOM_NOTIFICATION_LIMITS,
  chatItems,
  chatName,
  chatNotificationOf,
} from '../../functions/core/alerts/chat';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import {
  parseAlertReport,
  renderSlackMessage,
  renderTeamsMessage,
  SIGNATURE_TOLERANCE_SECONDS,
  signWebhookBody,
  TEAMS_MAX_BYTES,
  verifyWebhookSignature,
} from '../../functions/core/alerts/webhook-formats';
import type { DomainFinding, Finding } from '../../functions/core/findings/classify';
import type { Report } from '../../functions/core/scan/scan';
import {
  adaptiveCardProblems,
  blocksText,
  CustomNotificationSchema,
  SlackMessageSchema,
  TeamsMessageSchema,
} from '../support/chat-schemas';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

const RESTORE = 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/restore/';
const inQuarantine = (name: string, daysToRestore: number, extra: Partial<DomainFinding> = {}) =>
  domainFinding(name, 'quarantine', 'critical', -20, {
    date_deleted: '2026-11-02T09:00:00.000Z',
    restore_by: new Date(Date.parse(NOW_ISO) + daysToRestore * 86_400_000).toISOString(),
    days_to_restore: daysToRestore,
    restore_url: `${RESTORE}${encodeURIComponent(name)}?exp=1795500000&kid=k1&sig=${'a'.repeat(43)}`,
    ...extra,
  });

const small = (): Report => ({
  ...reportOf([
    inQuarantine('example.nl', 3),
    domainFinding('shop.nl', 'expiring', 'critical', 2),
    domainFinding('later.eu', 'expiring', 'warning', 20),
    domainFinding('fine.com', 'expiring', 'info', 12, { auto_renew: true }),
  ]),
  report_url: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/report?exp=1&kid=k1&sig=s',
});

/** What Amazon Q Developer reads from the chat topic: the notification of the one SNS message. */
const notify = (report: Report, accountLabel?: string) =>
  chatNotificationOf(
    buildAlertMessage(report, accountLabel ? { accountLabel } : {}),
    accountLabel ? { accountLabel } : {},
  );

describe('the chat message (custom notification)', () => {
  it('is a valid custom notification for a small account: counts in the title, critical first with restore-by and link, next steps, a thread per day', () => {
    const message = notify(small(), 'Acme Hosting');
    expect(CustomNotificationSchema.parse(message)).toEqual(message);
    expect(message.content.title).toBe('domain-sentinel (Acme Hosting): 2 critical, 1 warning, 1 info');
    const d = message.content.description;
    expect(d.indexOf('CRITICAL (2)')).toBeLessThan(d.indexOf('WARNING (1)'));
    expect(d).toContain(
      '- `example.nl`: in quarantine since 2 Nov 2026, 19 days; LAST DAYS: restore by 25 Nov 2026 06:00 UTC, 3 days left',
    );
    // One link per item, and its next step (a report without finding pages: the restore link).
    expect(d).toContain(`  Act: ${RESTORE}example.nl?exp=1795500000`);
    expect(d).toContain(
      '  Next: Restore it by 25 Nov 2026 06:00 UTC (3 days left) through its link, with the registrant',
    );
    expect(d).toContain('- `later.eu`: expires 12 Dec 2026 in 20 days, auto-renew OFF');
    expect(d).not.toContain('fine.com');
    expect(d.split('\n')[0]).toBe(`Full report: ${small().report_url}`);
    expect(message.content.nextSteps?.[0]).toMatch(
      /^Open each item's link: its page says what to do by when/,
    );
    expect(message.content.keywords).toEqual(['domain-sentinel', '2 critical', 'Acme Hosting']);
    expect(message.metadata.threadId).toBe('domain-sentinel-acme-hosting-2026-11-22');
    expect(message.metadata.summary).toBe(message.content.title);
    // The same day's next alert joins the thread; the next day's starts another.
    const later = { ...small(), now: '2026-11-22T18:00:00.000Z', generated_at: '2026-11-22T18:00:01.000Z' };
    const nextDay = { ...small(), now: '2026-11-23T06:00:00.000Z', generated_at: '2026-11-23T06:00:01.000Z' };
    expect(notify(later, 'Acme Hosting').metadata.threadId).toBe(message.metadata.threadId);
    expect(notify(nextDay, 'Acme Hosting').metadata.threadId).toBe('domain-sentinel-acme-hosting-2026-11-23');
    expect(notify(later, 'Acme Hosting').id).not.toBe(message.id);
  });

  it('writes our own setting and field names as they are: QUARANTINE_DAYS, not QUARANTINE\\u005fDAYS', () => {
    const unknown = inQuarantine('shop.example', 0, {
      restore_by: undefined,
      days_to_restore: null,
      restore_deadline_unknown:
        "no quarantine period is known for .example (set QUARANTINE_DAYS, e.g. example=40, from the registry's policy)",
    } as Partial<DomainFinding>);
    const d = notify({ ...small(), findings: [unknown] }).content.description;
    expect(d).toContain('(set QUARANTINE_DAYS, e.g. example=40');
    expect(d).not.toContain('\\u005f');
  });

  it('cuts a 100 000-domain account within the limits, counting what it left out and pointing to the report', () => {
    const findings: Finding[] = [];
    for (let i = 0; i < 30_000; i++) findings.push(inQuarantine(`quarantined-${i}.nl`, i % 40));
    for (let i = 0; i < 70_000; i++)
      findings.push(domainFinding(`expiring-${i}.com`, 'expiring', 'warning', 10 + (i % 20)));
    const base = reportOf(findings);
    const report = {
      ...base,
      stats: { ...base.stats, domains_scanned: 100_000 },
      report_url: small().report_url,
    };
    const alert = buildAlertMessage(report);
    expect(Buffer.byteLength(alert.message)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    expect(alert.findingsCut).toBeGreaterThan(0);

    const message = notify(report);
    expect(CustomNotificationSchema.parse(message)).toEqual(message);
    const d = message.content.description;
    expect(d.length).toBeLessThanOrEqual(CUSTOM_NOTIFICATION_LIMITS.description);
    const shown = d.split('\n').filter((l) => l.startsWith('- `')).length;
    expect(shown).toBeGreaterThan(5);
    // Everything not shown is counted, including what SNS's 256 KB cut from the report.
    // Per severity: criticals come first, so what is left out is the rest of them and every warning.
    expect(d).toContain(
      `… and ${100_000 - shown} more (${30_000 - shown} critical, 70000 warning): see the full report`,
    );
    expect(message.content.title).toBe('domain-sentinel: 30000 critical, 70000 warning');

    const slack = renderSlackMessage(parseAlertReport(JSON.parse(alert.message).default));
    expect(SlackMessageSchema.safeParse(slack).error).toBeUndefined();
    expect(blocksText(slack.blocks)).toBeLessThanOrEqual(12_000);
    expect(slack.blocks.at(-2)).toMatchObject({
      text: { text: expect.stringMatching(/^… and \d+ more \(\d+ critical, 70000 warning\)/) },
    });

    const teams = renderTeamsMessage(parseAlertReport(JSON.parse(alert.message).default));
    expect(TeamsMessageSchema.safeParse(teams).error).toBeUndefined();
    expect(Buffer.byteLength(JSON.stringify(teams))).toBeLessThanOrEqual(TEAMS_MAX_BYTES);
    expect(adaptiveCardProblems(teams.attachments[0]?.content as never)).toEqual([]);
  });

  it('counts "and N more" from the summary: info the SNS cut left out is not counted as unshown critical items', () => {
    const findings: Finding[] = [
      inQuarantine('one.nl', 5),
      domainFinding('two.nl', 'expiring', 'critical', 2),
    ];
    for (let i = 0; i < 40_000; i++)
      findings.push(domainFinding(`renewing-${i}.com`, 'expiring', 'info', 12, { auto_renew: true }));
    const report = reportOf(findings);
    const alert = buildAlertMessage(report);
    expect(alert.findingsCut).toBeGreaterThan(0);
    const message = chatNotificationOf(alert);
    expect(message.content.description).toContain('CRITICAL (2)');
    expect(message.content.description).not.toContain('more');
    const slack = renderSlackMessage(parseAlertReport(JSON.parse(alert.message).default));
    expect(JSON.stringify(slack)).not.toContain('more (');
  });

  it('counts every unreadable record, critical ones too, when the message carries only the first of them', () => {
    // An API change that makes 1 000 records unparseable: 400 of them say quarantine.
    const problems = Array.from({ length: 1_000 }, (_, i) => ({
      resource: 'domain' as const,
      key: `unreadable-${i}.nl`,
      page: 1 + Math.floor(i / 100),
      reason: 'date_expiry: not an RFC 3339 date-time',
      ...(i % 5 < 2 ? { severity: 'critical' as const } : {}),
    }));
    const report = { ...reportOf([inQuarantine('one.nl', 5)], problems), report_url: small().report_url };
    const alert = buildAlertMessage(report);
    expect(alert.problemsCut).toBeGreaterThan(0);
    const title = 'domain-sentinel: 401 critical, 0 warning, 1000 unreadable records';
    const message = chatNotificationOf(alert);
    expect(message.content.title).toBe(title);
    expect(message.metadata.additionalContext).toMatchObject({ critical: '401', unreadableRecords: '1000' });
    const shown = message.content.description.split('\n').filter((l) => l.startsWith('- `')).length;
    expect(message.content.description).toContain(
      `… and ${401 - shown} more (${401 - shown} critical, 0 warning)`,
    );
    const json = parseAlertReport(JSON.parse(alert.message).default);
    expect(renderSlackMessage(json).blocks[0]).toMatchObject({ text: { text: title } });
    expect(JSON.stringify(renderTeamsMessage(json))).toContain(title);
  });

  it('shows every item when one record carries an over-long name: the name is cut, the others still listed', () => {
    // A hostile record: a 50 000-character name, expired long ago, so it sorts first.
    const long = `${'x'.repeat(50_000)}.nl`;
    const others = Array.from({ length: 5 }, (_, i) => inQuarantine(`ok${i}.nl`, 3 + i));
    const report = { ...reportOf([domainFinding(long, 'expired', 'critical', -9_000), ...others]) };
    const message = notify(report);
    const slack = renderSlackMessage(report);
    const teams = renderTeamsMessage(report);
    for (const [format, text] of Object.entries({
      chat: message.content.description,
      slack: JSON.stringify(slack),
      teams: JSON.stringify(teams),
    })) {
      for (let i = 0; i < 5; i++) expect(text, format).toContain(`ok${i}.nl`);
      // The long one is named (cut, shown so) with its next step.
      expect(text, format).toMatch(/x{200}[^x]*\u2026|x{200}…/);
      expect(text, format).not.toContain('x'.repeat(1_000));
      expect(text, format).not.toContain('more (');
    }
    expect(message.content.description).toContain('Next: Renew it now');
  });

  const HOSTILE = [
    '<!channel>.nl',
    '@here.nl',
    '*bold*_it_~s~.nl',
    '[click](https://evil.example).nl',
    '<https://evil.example|click>.nl',
    '<at>everyone</at>.nl',
    'abc\u202Egnp.exe',
    'zero\u200Bwidth.nl',
    '`code`:smile:.nl',
  ];
  const hostile = (): Report =>
    reportOf(
      HOSTILE.map((name, i) =>
        i % 2 ? domainFinding(name, 'expiring', 'critical', 2) : inQuarantine(name, 10 + i),
      ),
      [{ resource: 'domain', key: '<!here> @channel', page: 1, reason: 'x', severity: 'critical' } as never],
    );

  it('keeps hostile names data: no markdown, mention, link or bidi from the API survives, in any format', () => {
    const message = notify(hostile(), 'Ops <!channel>');
    expect(CustomNotificationSchema.parse(message)).toEqual(message);
    const slack = renderSlackMessage(hostile(), { accountLabel: 'Ops <!channel>' });
    const teams = renderTeamsMessage(hostile(), { accountLabel: 'Ops <!channel>' });
    expect(SlackMessageSchema.safeParse(slack).error).toBeUndefined();
    expect(adaptiveCardProblems(teams.attachments[0]?.content as never)).toEqual([]);
    const texts = {
      chat: JSON.stringify(message),
      slack: JSON.stringify(slack),
      teams: JSON.stringify(teams),
    };
    for (const [format, text] of Object.entries(texts)) {
      for (const raw of [
        '<!channel>',
        '<!here>',
        '@here',
        '@channel',
        '*bold*',
        '](https',
        '<https',
        '|click',
        '<at>',
        '`code`',
        ':smile:',
      ])
        expect(text, `${format} carries ${raw}`).not.toContain(raw);
      expect(text, format).not.toMatch(/[\u202E\u200B]/);
      // Each name is there, in its chat-safe form, so people still see what the API sent.
      expect(text, format).toContain(JSON.stringify(chatName('<!channel>.nl')).slice(1, -1));
    }
    expect(chatName('<!channel>.nl')).toBe('\\u003c\\u0021channel\\u003e.nl');
    expect(chatName('abc\u202Egnp.exe')).toBe('abc\\u202egnp.exe');
    expect(chatName('pаypal.com')).toBe('xn--pypal-4ve.com (pаypal.com)');
    // In markdown the names sit in code spans; in the card they are TextRuns, which are never markdown.
    expect(message.content.description).toContain('- `\\u003c\\u0021channel\\u003e.nl`:');
    const runs = JSON.stringify(teams.attachments[0]?.content.body);
    expect(runs).not.toMatch(/"type":"TextBlock","text":"[^"]*\\\\u003c/);
  });
});

describe('the JSON webhook signature', () => {
  const key = 'k'.repeat(40);
  const body = JSON.stringify(small());
  const deliveryId = '3f2c9a40-1b7e-4c51-9a3e-0d6f5b2e8c11';
  const t = 1_795_300_000;
  const check = (changes: Partial<Parameters<typeof verifyWebhookSignature>[0]> = {}) =>
    verifyWebhookSignature({ body, deliveryId, key, header, nowSeconds: t + 10, ...changes });
  const header = signWebhookBody({ body, deliveryId, key, unixSeconds: t });

  it('verifies as a receiver checks it, and refuses a changed body, delivery id or key, or an old time', () => {
    expect(header).toMatch(/^t=1795300000,v1=[0-9a-f]{64}$/);
    expect(check()).toBeNull();
    expect(check({ body: `${body} ` })).toBe('signature does not match');
    // A captured delivery replayed as a new alert: the id is signed, so it cannot be changed.
    expect(check({ deliveryId: '3f2c9a40-1b7e-4c51-9a3e-0d6f5b2e8c12' })).toBe('signature does not match');
    expect(check({ key: 'x'.repeat(40) })).toBe('signature does not match');
    expect(check({ nowSeconds: t + SIGNATURE_TOLERANCE_SECONDS + 1 })).toMatch(/replay/);
    expect(check({ header: undefined })).toBe('no valid signature header');
    expect(check({ header: 't=1,v1=zz', nowSeconds: 1 })).toBe('no valid signature header');
  });

  it('refuses to sign a delivery id that could move part of the body into the id (a dot) or break a header', () => {
    for (const bad of ['', 'a.b', 'a\r\nX-Evil: 1', 'x'.repeat(129)])
      expect(() => signWebhookBody({ body, deliveryId: bad, key, unixSeconds: t })).toThrow(RangeError);
  });
});

describe('the chat thread of an account of several', () => {
  it('is the account name, so two accounts whose labels read alike never share a thread', () => {
    const of = (account: string, label: string) => {
      const r = small();
      return notify({ ...r, source: { ...r.source, account, account_label: label } }, label).metadata
        .threadId;
    };
    // Labels a slug cannot tell apart: none of their letters are a-z, or only their case differs.
    expect(of('brand-jp', '日本')).not.toBe(of('brand-cn', '中国'));
    expect(of('brand-a', 'Brand A')).not.toBe(of('brand-b', 'brand a'));
    expect(of('brand-jp', '日本')).toBe('domain-sentinel-brand-jp-2026-11-22');
  });
});

describe('the order of the chat items', () => {
  const restoreIn = (name: string, days: number) =>
    domainFinding(name, 'quarantine', 'critical', -30, { days_to_restore: days });
  const unreadable = (n: number): Report['problems'] =>
    Array.from({ length: n }, (_, i) => ({
      resource: 'domain' as const,
      key: `odd-${String(i).padStart(2, '0')}.nl`,
      page: 1,
      reason: 'date_expiry: missing',
      severity: 'critical' as const,
    }));

  it('puts quarantines with a known restore-by before unreadable records, as the digest and the SMS do', () => {
    const items = chatItems(reportOf([restoreIn('known.nl', 5)], unreadable(45)));
    expect(items[0]?.name).toBe('known.nl');
    expect(items.slice(1, 3).map((i) => i.name)).toEqual(['odd-00.nl', 'odd-01.nl']);
  });

  it('puts a quarantine on its last day to restore before the departures of a bulk transfer out', () => {
    const gone = Array.from({ length: 45 }, (_, i) => ({
      domain_name: `gone-${String(i).padStart(2, '0')}.nl`,
      kind: 'left_account' as const,
      severity: 'critical' as const,
    }));
    const report = { ...reportOf([restoreIn('later.nl', 9), restoreIn('save-me.nl', 0)]), changes: gone };
    const names = chatItems(report as Report).map((i) => i.name);
    expect(names[0]).toBe('save-me.nl');
    expect(names[1]).toBe('gone-00.nl');
    expect(names.indexOf('later.nl')).toBe(46);
  });
});
