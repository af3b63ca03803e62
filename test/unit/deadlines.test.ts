import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { renderSms } from '../../functions/core/alerts/alert';
import { renderDigest } from '../../functions/core/alerts/digest';
import { ConfigError } from '../../functions/core/base/errors';
import {
  classify,
  DEFAULT_POLICY,
  type DomainFinding,
  sortFindings,
} from '../../functions/core/findings/classify';
import {
  parseQuarantineDays,
  QUARANTINE_PERIODS,
  quarantinePeriodOf,
  restoreDeadline,
} from '../../functions/core/findings/quarantine-periods';
import { renderCalendar } from '../../functions/core/pages/calendar';
import { renderReportPage, renderTimeline } from '../../functions/core/pages/report-page';
import { ResellerClient } from '../../functions/core/reseller/client';
import { type Domain, DomainSchema } from '../../functions/core/reseller/schemas';
import { loadScanSettings, parseSetting } from '../../functions/core/scan/config';
import { renewalCosts } from '../../functions/core/scan/renewal-costs';
import { scanAccount } from '../../functions/core/scan/scan';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

const NOW = Date.parse(NOW_ISO);
const DAY = 86_400_000;
const HOUR = 3_600_000;

const domain = (overrides: Partial<Domain> = {}): Domain => ({
  domain_name: 'example.nl',
  status: ['registered'],
  date_expiry: NOW + 200 * DAY,
  auto_renew: true,
  auto_renew_period: 12,
  date_deleted: null,
  registrant_handle: 'C1',
  ...overrides,
});

const quarantined = (name: string, deletedDaysAgo: number | null) =>
  classify(
    domain({
      domain_name: name,
      status: ['quarantine'],
      date_expiry: NOW - 50 * DAY,
      auto_renew: false,
      date_deleted: deletedDaysAgo === null ? null : NOW - deletedDaysAgo * DAY,
    }),
    NOW,
  ) as DomainFinding;

describe('the quarantine-period table', () => {
  it.each([
    ['example.nl', 40, 0],
    ['example.be', 40, 0],
    ['example.eu', 40, 0],
    ['example.xn--e1a4c', 40, 0], // .ею (EURid)
    ['example.ευ', 40, 0], // Unicode TLDs are looked up in ASCII
    ['example.de', 30, 0],
    ['example.com', 30, 5],
    ['example.net', 30, 5],
    ['example.org', 30, 5],
    ['example.info', 30, 5],
    ['example.biz', 30, 5],
  ])('knows %s: %i days to restore, then %i days of pending delete', (name, days, pending) => {
    expect(quarantinePeriodOf(name)).toMatchObject({ restoreDays: days, pendingDeleteDays: pending });
  });

  it.each(['x.constructor', 'x.tostring', 'x.hasownproperty', 'x.valueof'])(
    "knows no period for %s: a TLD is data, not a key of the language's own objects",
    (name) => {
      expect(quarantinePeriodOf(name)).toBeNull();
      expect(quarantinePeriodOf(name, parseQuarantineDays('nl=40'))).toBeNull();
      expect(restoreDeadline(name, NOW - 10 * DAY, NOW)).toMatchObject({ known: false });
    },
  );

  it('names a registry policy page for every entry', () => {
    for (const [tld, period] of Object.entries(QUARANTINE_PERIODS)) {
      expect(period.sources.length, tld).toBeGreaterThan(0);
      for (const source of period.sources) expect(source, tld).toMatch(/^https?:\/\/[a-z0-9.-]+\.[a-z]+\//);
    }
  });

  it('puts restore_by at date_deleted + the period, with the whole days left', () => {
    // Deleted 25 Oct 06:00; .nl's 40 days end 4 Dec 06:00: 12 days after 22 Nov 06:00.
    expect(restoreDeadline('shop.nl', Date.parse('2026-10-25T06:00:00Z'), NOW)).toEqual({
      known: true,
      restore_by: '2026-12-04T06:00:00.000Z',
      days_to_restore: 12,
    });
    // One hour before the end is the last day (0), one hour after it has passed (-1).
    const lastHour = restoreDeadline('shop.de', NOW - 30 * DAY + HOUR, NOW);
    expect(lastHour).toMatchObject({ days_to_restore: 0 });
    expect(restoreDeadline('shop.de', NOW - 30 * DAY - HOUR, NOW)).toMatchObject({ days_to_restore: -1 });
  });

  it('says "unknown" and never guesses for a TLD it does not know, or without date_deleted', () => {
    const unknownTld = restoreDeadline('shop.co.uk', NOW - DAY, NOW);
    expect(unknownTld).toEqual({
      known: false,
      reason: expect.stringContaining('no quarantine period is known for .uk'),
    });
    expect(restoreDeadline('shop.shop', NOW - DAY, NOW)).toMatchObject({ known: false });
    expect(restoreDeadline('shop.nl', null, NOW)).toEqual({
      known: false,
      reason: expect.stringContaining('no date_deleted'),
    });
  });

  it('says "unknown" for a date_deleted in the future: no domain gets more days than its TLD allows', () => {
    expect(restoreDeadline('shop.nl', NOW + 365 * DAY, NOW)).toEqual({
      known: false,
      reason: 'date_deleted is in the future, so when the quarantine ends is not known',
    });
    expect(restoreDeadline('shop.nl', NOW + 2 * HOUR, NOW)).toMatchObject({ known: false });
    // Within the leeway for two hosts' clocks the deadline stands, and stays within the period.
    expect(restoreDeadline('shop.nl', NOW + 30 * 60_000, NOW)).toMatchObject({
      known: true,
      days_to_restore: 40,
    });
  });

  it('says "unknown" rather than write a deadline past the year 9999', () => {
    const late = Date.parse('9999-12-20T00:00:00Z');
    expect(restoreDeadline('shop.nl', late, late)).toEqual({
      known: false,
      reason: 'the restore deadline falls after the year 9999',
    });
  });

  it('takes QUARANTINE_DAYS over the table and for TLDs the table lacks', () => {
    const overrides = parseSetting('quarantineDays', 'nl=45, .SHOP=30,ευ=10');
    expect(overrides).toEqual({ nl: 45, shop: 30, 'xn--qxa6a': 10 });
    expect(quarantinePeriodOf('a.nl', overrides)).toMatchObject({
      restoreDays: 45,
      source: 'QUARANTINE_DAYS',
    });
    expect(restoreDeadline('a.shop', NOW - 10 * DAY, NOW, overrides)).toMatchObject({ days_to_restore: 20 });
    expect(quarantinePeriodOf('a.be', overrides)).toMatchObject({ restoreDays: 40 });
    expect(loadScanSettings({ resellerBaseUrl: 'https://api.test' }).quarantineDays).toEqual({});
  });

  it('refuses a QUARANTINE_DAYS it cannot read, naming the variable and the pair', () => {
    for (const bad of ['nl', 'nl=0', 'nl=400', 'n l=40', 'nl=40,be=x', '-x-=3']) {
      expect(() => parseSetting('quarantineDays', bad), bad).toThrow(ConfigError);
    }
    expect(() => parseSetting('quarantineDays', 'nl=40,be=x')).toThrow(/QUARANTINE_DAYS .*"be=x"/);
    expect(() => parseQuarantineDays('nl=40,,be=40')).not.toThrow();
  });
});

describe('classify: restore deadlines', () => {
  it('carries restore_by and days_to_restore on a quarantine finding', () => {
    expect(quarantined('shop.nl', 31)).toMatchObject({
      kind: 'quarantine',
      severity: 'critical',
      restore_by: new Date(NOW + 9 * DAY).toISOString(),
      days_to_restore: 9,
    });
  });

  it('carries restore_by null and the reason when the deadline is unknown', () => {
    const unknown = quarantined('shop.com.au', 3);
    expect(unknown).toMatchObject({ restore_by: null, days_to_restore: null });
    expect(unknown.restore_deadline_unknown).toMatch(/\.au/);
    expect(quarantined('shop.nl', null)).toMatchObject({ restore_by: null, days_to_restore: null });
  });

  it('orders quarantined domains by days left to restore, an unknown deadline after the known, before other criticals', () => {
    const findings = [
      classify(domain({ domain_name: 'gone.nl', date_expiry: NOW - 90 * DAY }), NOW) as DomainFinding,
      quarantined('unknown.co.uk', 3),
      quarantined('later.nl', 5), // 35 days left
      quarantined('soon.de', 27), // 3 days left
      quarantined('past.de', 31), // passed a day ago
    ];
    expect(sortFindings(findings).map((f) => [f.domain_name, f.days_to_restore ?? null])).toEqual([
      ['past.de', -1],
      ['soon.de', 3],
      ['later.nl', 35],
      ['unknown.co.uk', null],
      ['gone.nl', null],
    ]);
  });
});

describe('classify: renewal_failed', () => {
  const renewing = (renewalAgo: number, expiryIn: number, extra: Partial<Domain> = {}) =>
    classify(
      domain({ date_renewal: NOW - renewalAgo, date_expiry: NOW + expiryIn, auto_renew: true, ...extra }),
      NOW,
    );

  it('flags a renewal 25 hours past as failed, critical, with the date it was due', () => {
    expect(renewing(25 * HOUR, 20 * DAY)).toMatchObject({
      kind: 'renewal_failed',
      severity: 'critical',
      date_renewal: new Date(NOW - 25 * HOUR).toISOString(),
    });
  });

  it('waits a day: a renewal 23 hours past is not yet failed', () => {
    expect(renewing(23 * HOUR, 20 * DAY)).toMatchObject({ kind: 'expiring', severity: 'info' });
  });

  it('takes a date_renewal 59 days before expiry as the scheduled one, and one 61 days before as last year’s', () => {
    expect(renewing(2 * DAY, 57 * DAY)).toMatchObject({ kind: 'renewal_failed' }); // due 59 days before expiry
    expect(renewing(2 * DAY, 59 * DAY)).toBeNull(); // due 61 days before expiry
  });

  it('lets expired win once the domain has expired, and ignores domains without auto-renew', () => {
    expect(renewing(3 * DAY, -HOUR)).toMatchObject({ kind: 'expired' });
    expect(renewing(3 * DAY, 20 * DAY, { auto_renew: false })).toMatchObject({
      kind: 'expiring',
      severity: 'warning',
    });
    expect(renewing(3 * DAY, 20 * DAY, { auto_renew: null })).toMatchObject({ kind: 'expiring' });
  });

  it('stays off when the scan turned the rule off for the account', () => {
    const off = { ...DEFAULT_POLICY, renewalCheck: false };
    expect(
      classify(domain({ date_renewal: NOW - 3 * DAY, date_expiry: NOW + 20 * DAY }), NOW, off),
    ).toMatchObject({ kind: 'expiring', severity: 'info' });
  });

  it('reads date_renewal and prices from the record, tolerating odd values', () => {
    const base = { domain_name: 'p.com', date_expiry: '2027-01-01T00:00:00Z', auto_renew: true };
    expect(
      DomainSchema.parse({
        ...base,
        date_renewal: '2026-12-31T00:00:00+01:00',
        premium_domain: true,
        premium_price: { currency: 'eur', price: '1240.5' },
      }),
    ).toMatchObject({
      date_renewal: Date.parse('2026-12-30T23:00:00Z'),
      price: { kind: 'premium', currency: 'EUR', amount: 1240.5 },
    });
    const odd = DomainSchema.parse({
      ...base,
      date_renewal: 'soon',
      premium_domain: true,
      premium_price: { currency: 'EURO<script>', price: -3 },
    });
    expect(odd.date_renewal).toBeUndefined();
    expect(odd.price).toEqual({ kind: 'premium' });
    expect(DomainSchema.parse({ ...base, custom_price_domain: true }).price).toEqual({ kind: 'custom' });
  });
});

/** A fake reseller that serves `records` on one page. */
function client(records: unknown[]) {
  const fetch = (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    const data = url.pathname === '/v2/domains' ? records : [];
    return new Response(
      JSON.stringify({
        data,
        pagination: { current_page: 1, per_page: 100, total_pages: 1, total_results: data.length },
      }),
      { status: 200 },
    );
  }) as typeof globalThis.fetch;
  return new ResellerClient({ baseUrl: 'https://api.test', apiKey: 'k-unit-deadlines', fetch });
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('scanAccount: renewal_failed per account', () => {
  const failing = {
    domain_name: 'failing.nl',
    date_expiry: iso(NOW + 20 * DAY),
    date_renewal: iso(NOW - 3 * DAY),
    auto_renew: true,
  };

  it('flags a renewal that did not happen when the account’s date_renewal is the coming renewal', async () => {
    const healthy = [1, 2, 3].map((n) => ({
      domain_name: `ok${n}.nl`,
      date_expiry: iso(NOW + 100 * n * DAY),
      date_renewal: iso(NOW + (100 * n - 1) * DAY),
      auto_renew: true,
    }));
    const report = await scanAccount({
      client: client([failing, ...healthy]),
      now: NOW,
      policy: DEFAULT_POLICY,
      mode: 'full',
    });
    expect(report.findings).toEqual([
      expect.objectContaining({ domain_name: 'failing.nl', kind: 'renewal_failed' }),
    ]);
    expect(report.renewal_rule_off).toBeUndefined();
  });

  it('turns the rule off, and says why, when most records it judges show date_renewal a year before expiry', async () => {
    const lastYear = [1, 2, 3].map((n) => ({
      domain_name: `old${n}.nl`,
      date_expiry: iso(NOW + (25 + 10 * n) * DAY),
      date_renewal: iso(NOW + (25 + 10 * n - 365) * DAY),
      auto_renew: true,
    }));
    const report = await scanAccount({
      client: client([failing, ...lastYear]),
      now: NOW,
      policy: DEFAULT_POLICY,
      mode: 'full',
    });
    expect(report.findings).toEqual([
      expect.objectContaining({ domain_name: 'failing.nl', kind: 'expiring', severity: 'info' }),
    ]);
    expect(report.renewal_rule_off).toMatch(
      /on 3 of the 4 domains with auto-renew on that expire within 59 days/,
    );
    expect(renderDigest(report)).toContain(
      'Failed renewals were not checked: date_renewal is 300 days or more',
    );
  });
});

describe('scanAccount: the renewal vote, the same in every mode', () => {
  it('is taken among the domains the rule judges (expiring within 59 days), which every read lists', async () => {
    const failing = {
      domain_name: 'failing.nl',
      date_expiry: iso(NOW + 20 * DAY),
      date_renewal: iso(NOW - 3 * DAY),
      auto_renew: true,
    };
    // Many domains far out whose date_renewal lies a year before expiry (a filtered read leaves them
    // unread): they cannot be judged by the rule, and do not turn it off for the ones it can.
    const far = [1, 2, 3, 4, 5].map((n) => ({
      domain_name: `far${n}.nl`,
      date_expiry: iso(NOW + (200 + n) * DAY),
      date_renewal: iso(NOW + (200 + n - 365) * DAY),
      auto_renew: true,
    }));
    const report = await scanAccount({
      client: client([failing, ...far]),
      now: NOW,
      policy: DEFAULT_POLICY,
      mode: 'full',
    });
    expect(report.renewal_rule_off).toBeUndefined();
    expect(report.findings).toEqual([
      expect.objectContaining({ domain_name: 'failing.nl', kind: 'renewal_failed' }),
    ]);
  });
});

describe('what renewals will cost', () => {
  const premium = (name: string, amount: number, currency = 'EUR', days = 10) =>
    domainFinding(name, 'expiring', 'info', days, {
      auto_renew: true,
      price: { kind: 'premium', currency, amount },
    });

  it('sums the priced renewals due in the window per currency, in cents', () => {
    const findings = [
      premium('a.com', 400),
      premium('b.com', 839.9),
      premium('c.com', 0.1),
      premium('d.com', 25, 'USD'),
      premium('far.com', 999, 'EUR', 45),
      domainFinding('x.com', 'expiring', 'info', 5, { price: { kind: 'custom' } }),
    ];
    expect(renewalCosts(findings, NOW, 30)).toEqual({
      window_days: 30,
      totals: [
        { currency: 'EUR', count: 3, amount: 1240 },
        { currency: 'USD', count: 1, amount: 25 },
      ],
      premium: 4,
      custom: 1,
      unpriced: 1,
    });
    expect(renewalCosts([premium('far.com', 1, 'EUR', 45)], NOW, 30)).toBeNull();
  });

  it('shows the totals and each priced renewal in the digest and on the report page', () => {
    const findings = [premium('a.com', 400), premium('b.com', 839.9), premium('c.com', 0.1)];
    const report = { ...reportOf(findings), renewal_costs: renewalCosts(findings, NOW, 30) ?? undefined };
    const digest = renderDigest(report);
    expect(digest).toContain('RENEWAL COSTS: 3 premium renewals due in 30 days: EUR 1 240');
    expect(digest).toContain('- b.com: premium, EUR 839.90, expires 2 Dec 2026, auto-renew on');
    const page = renderReportPage({ report, token: {} });
    expect(page).toContain('<strong>Renewal costs:</strong> 3 premium renewals due in 30 days: EUR 1 240');
  });
});

describe('alerts: restore deadlines', () => {
  const report = reportOf(
    sortFindings([
      quarantined('soon.de', 27),
      quarantined('later.nl', 5),
      quarantined('past.de', 31),
      quarantined('odd.co.uk', 3),
    ]),
  );

  it('says in the digest when to restore by, LAST DAYS in the last week, past critically, and unknown plainly', () => {
    const digest = renderDigest(report);
    expect(digest).toContain(
      '- later.nl: in quarantine since 17 Nov 2026, 5 days; restore by 27 Dec 2026 06:00 UTC, 35 days left',
    );
    expect(digest).toContain(
      '- soon.de: in quarantine since 26 Oct 2026, 27 days; LAST DAYS: restore by 25 Nov 2026 06:00 UTC, 3 days left',
    );
    expect(digest).toContain(
      '- past.de: in quarantine since 22 Oct 2026, 31 days; its restore-by date 21 Nov 2026 06:00 UTC has PASSED (1 day ago) and it is still listed',
    );
    expect(digest).toContain(
      '- odd.co.uk: in quarantine since 19 Nov 2026, 3 days; restore deadline unknown (no quarantine period is known for .uk',
    );
    expect(digest.indexOf('past.de')).toBeLessThan(digest.indexOf('soon.de'));
  });

  it('says LAST DAYS in the SMS', () => {
    expect(renderSms(report)).toBe(
      '4 critical: past.de restore-by PASSED; soon.de LAST DAYS 3d to restore; later.nl quarantine 35d left; odd.co.uk quarantine',
    );
  });

  it('says a failed renewal in the digest and the SMS', () => {
    const failed = classify(
      domain({ domain_name: 'shop.com', date_renewal: NOW - 10 * DAY, date_expiry: NOW + 30 * DAY }),
      NOW,
    );
    const r = reportOf([failed as DomainFinding]);
    expect(renderDigest(r)).toContain(
      "- shop.com: auto-renew is on but the renewal due on 12 Nov 2026 did not happen: check the account's balance and payment method; expires 22 Dec 2026 in 30 days",
    );
    expect(renderSms(r)).toBe('1 critical: shop.com renewal failed');
  });

  it('puts an event on the restore-by day, with a UID of its own', () => {
    const feed = new ICAL.Component(ICAL.parse(renderCalendar(reportOf([quarantined('later.nl', 5)]))));
    const events = feed.getAllSubcomponents('vevent').map((e) => new ICAL.Event(e));
    expect(events.map((e) => [e.summary, e.startDate.toString()])).toEqual([
      ['Quarantine: later.nl', '2026-11-17'],
      ['Restore by: later.nl (last day to restore)', '2026-12-27'],
    ]);
    expect(new Set(events.map((e) => e.uid)).size).toBe(2);
  });

  it('dates the restore-by event on the last day a restore is possible in the alert’s time zone', () => {
    const deadline = (restore_by: string) =>
      reportOf([{ ...quarantined('zone.nl', 5), restore_by, days_to_restore: 9 } as DomainFinding]);
    const restoreEvent = (report: ReturnType<typeof deadline>, timeZone?: string) =>
      new ICAL.Component(ICAL.parse(renderCalendar(report, timeZone ? { timeZone } : {})))
        .getAllSubcomponents('vevent')
        .map((e) => new ICAL.Event(e))
        .find((e) => e.summary.startsWith('Restore by:')) as InstanceType<typeof ICAL.Event>;
    const at2 = deadline('2026-12-02T02:00:00.000Z');
    // 18:00 on 1 Dec in Los Angeles, the digest's "restore by 1 Dec 2026": not on 2 Dec, when it has passed.
    const west = restoreEvent(at2, 'America/Los_Angeles');
    expect(west.startDate.toString()).toBe('2026-12-01');
    expect(west.description).toContain('restore by 1 Dec 2026 18:00 America/Los_Angeles');
    expect(renderDigest(at2, { timeZone: 'America/Los_Angeles' })).toContain(
      'restore by 1 Dec 2026 18:00 America/Los_Angeles',
    );
    expect(restoreEvent(at2, 'Europe/Amsterdam').startDate.toString()).toBe('2026-12-02');
    expect(restoreEvent(at2).startDate.toString()).toBe('2026-12-02');
    // A deadline at midnight sharp leaves nothing of its day.
    expect(restoreEvent(deadline('2026-12-02T00:00:00.000Z')).startDate.toString()).toBe('2026-12-01');
    // The UID names the deadline, not the zone's day: the same event everywhere, scan after scan.
    expect(west.uid).toBe(restoreEvent(at2, 'Asia/Tokyo').uid);
  });

  it('dates an event of a year before 100 in that year, not in the 1900s', () => {
    // A record the reseller dated 0050 (a typo for 2050, or a placeholder): shown as written.
    const odd = domainFinding('typo.nl', 'expired', 'critical', -1, {
      date_expiry: '0050-03-01T00:00:00.000Z',
    });
    const ics = renderCalendar(reportOf([odd]));
    const events = new ICAL.Component(ICAL.parse(ics))
      .getAllSubcomponents('vevent')
      .map((e) => new ICAL.Event(e));
    expect(events.map((e) => e.startDate.year)).toEqual([50]);
    expect(ics).toContain('DTSTART;VALUE=DATE:00500301\r\n');
  });

  it('lists the deadlines on the report page and marks them on the timeline', () => {
    const page = renderReportPage({ report, token: {} });
    expect(page).toContain('<h2>Restore deadlines (4)</h2>');
    expect(page).toContain('<strong>later.nl</strong>: restore by 27 Dec 2026 06:00 UTC, 35 days left');
    const svg = renderTimeline(report);
    expect([...svg.matchAll(/<g class="tl-critical tl-restore"><title>([^<]+)</g)].map((m) => m[1])).toEqual([
      'past.de: its restore-by date 21 Nov 2026 06:00 UTC has PASSED (1 day ago) and it is still listed: the registry may release it at any moment; restore it now or check it in the reseller&#39;s control panel (critical)',
      'soon.de: LAST DAYS: restore by 25 Nov 2026 06:00 UTC, 3 days left (critical)',
      'later.nl: restore by 27 Dec 2026 06:00 UTC, 35 days left (critical)',
    ]);
  });

  it('lists the restore attempts of the audit trail on the report page, escaped', () => {
    const page = renderReportPage({
      report,
      token: {},
      audit: [
        {
          action: 'restore',
          at: '2026-11-22T05:00:00.000Z',
          domain: 'later.nl',
          outcome: 'restored',
          status: 200,
          via: 'web',
          key_id: 'abcd1234',
          client_ip: '203.0.113.9',
          user_agent: '<script>x</script>',
          sent: true,
          link_expires: '2026-12-22T05:00:00.000Z',
          repeats: 0,
        },
      ],
    });
    // Escaped, and the client address shown only as its network: the page goes to every report-link holder.
    expect(page).toContain(
      '<h2>Restore attempts (1)</h2><ul class="items"><li>2026-11-22 05:00:00 UTC  later.nl: restored (HTTP 200), sent to the reseller; link key abcd1234, 203.0.113.x, &#34;&#60;script&#62;x&#60;/script&#62;&#34;</li></ul>',
    );
    expect(page).not.toContain('203.0.113.9');
    expect(renderReportPage({ report, token: {}, audit: null })).toContain(
      'The audit trail could not be read',
    );
    expect(renderReportPage({ report, token: {} })).not.toContain('Restore attempts');
  });
});
