import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { parseSigningKeys } from '../../functions/core/links/links';
import { filterText } from '../../functions/core/memory/report-view';
import { CALENDAR_CONTENT_TYPE, eventUid, renderCalendar } from '../../functions/core/pages/calendar';
import {
  REPORT_PAGE_HEADERS,
  renderReportPage,
  renderTimeline,
} from '../../functions/core/pages/report-page';
import { attachLinks, CALENDAR_LINK_TTL_DAYS } from '../../functions/core/scan/report-links';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

const NOW = Date.parse(NOW_ISO);
const keys = parseSigningKeys('r'.repeat(40));

function parseFeed(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  return calendar.getAllSubcomponents('vevent').map((event) => {
    const e = new ICAL.Event(event);
    const alarms = event.getAllSubcomponents('valarm').map((a) => String(a.getFirstPropertyValue('trigger')));
    return {
      uid: e.uid,
      summary: e.summary,
      start: e.startDate.toString(),
      allDay: e.startDate.isDate,
      alarms,
    };
  });
}

const findings = (): DomainFinding[] => [
  domainFinding('lost.nl', 'quarantine', 'critical', -40, { date_deleted: '2026-11-10T00:00:00.000Z' }),
  domainFinding('gone.nl', 'expired', 'critical', -2),
  domainFinding('soon.nl', 'expiring', 'critical', 3),
  domainFinding('later.nl', 'expiring', 'warning', 20),
  domainFinding('far.nl', 'auto_renew_off', 'info', 200),
];

describe('renderCalendar', () => {
  it('has one all-day event per domain finding: the expiry date, or the day quarantine began', () => {
    const report = reportOf([
      ...findings(),
      {
        handle: 'C9',
        kind: 'contact_pending_validation',
        severity: 'warning',
        name: 'n',
        company_name: '',
        email: '',
      },
    ]);
    const events = parseFeed(renderCalendar(report));
    expect(events.map((e) => [e.summary, e.start, e.allDay])).toEqual([
      ['Quarantine: lost.nl', '2026-11-10', true],
      ['Expired: gone.nl', '2026-11-20', true],
      ['Expires: soon.nl (auto-renew off)', '2026-11-25', true],
      ['Expires: later.nl (auto-renew off)', '2026-12-12', true],
      ['Expires: far.nl (auto-renew off)', '2027-06-10', true],
    ]);
  });

  it('sets an alarm CRITICAL_DAYS before each future expiry, and none on the past or quarantine', () => {
    const events = parseFeed(
      renderCalendar({ ...reportOf(findings()), policy: { expiry_days: 30, critical_days: 5 } }),
    );
    expect(events.map((e) => e.alarms)).toEqual([[], [], ['-P5D'], ['-P5D'], ['-P5D']]);
  });

  it('keeps the UIDs across two scans a day apart, and gives a renewed domain a new event', () => {
    const first = parseFeed(renderCalendar(reportOf(findings())));
    const nextDay = findings().map((f) => ({ ...f, days_left: f.days_left - 1 }));
    const second = parseFeed(
      renderCalendar({ ...reportOf(nextDay), generated_at: '2026-11-23T06:00:00.000Z' }),
    );
    expect(second.map((e) => e.uid)).toEqual(first.map((e) => e.uid));
    expect(new Set(first.map((e) => e.uid)).size).toBe(5);
    const renewed = domainFinding('later.nl', 'expiring', 'warning', 385);
    expect(eventUid(renewed)).not.toBe(first[3]?.uid);
  });

  it('gives two records whose names normalise the same two events, not one', () => {
    const twins = [
      domainFinding('twin.nl', 'expiring', 'warning', 10),
      domainFinding('TWIN.nl.', 'expiring', 'warning', 10),
    ];
    const events = parseFeed(renderCalendar(reportOf(twins)));
    expect(events).toHaveLength(2);
    expect(new Set(events.map((e) => e.uid)).size).toBe(2);
  });

  it('carries hostile names as text: no line of the feed can be forged', () => {
    const evil = domainFinding('evil.nl\r\nBEGIN:VEVENT\r\nUID:forged', 'expiring', 'warning', 10);
    const text = renderCalendar(reportOf([evil]));
    expect(text.match(/^BEGIN:VEVENT/gm)).toHaveLength(1);
    expect(text).not.toMatch(/^UID:forged/m);
    expect(CALENDAR_CONTENT_TYPE).toBe('text/calendar; charset=utf-8');
  });
});

describe('attachLinks', () => {
  it('gives every domain finding its page, snooze and acknowledge links (restore where it has one) and the report its URLs', () => {
    const quarantined = {
      ...findings()[0],
      restore_url: 'https://x.example/restore/lost.nl?exp=1',
    } as DomainFinding;
    const report = attachLinks(reportOf([quarantined, findings()[3] as DomainFinding]), {
      baseUrl: 'https://x.example/prod',
      keys,
      now: NOW,
      ttlDays: 7,
    });
    const [a, b] = report.findings as DomainFinding[];
    expect(Object.keys(a?.actions ?? {})).toEqual(['restore', 'snooze', 'acknowledge', 'page']);
    expect(Object.keys(b?.actions ?? {})).toEqual(['snooze', 'acknowledge', 'page']);
    // The one link the digest gives it: its page, signed for its domain, read-only.
    expect(b?.actions?.page).toMatch(
      /^https:\/\/x\.example\/prod\/finding\/later\.nl\?exp=\d+&kid=[0-9a-f]{8}&sig=/,
    );
    // The whole report as JSON, for this very report (`of`), behind the report link's signature.
    const json = new URL(report.report_json_url ?? '');
    expect(json.pathname).toBe('/prod/report.json');
    expect(json.searchParams.get('of')).toBe(report.generated_at);
    expect(json.searchParams.get('sig')).toBe(new URL(report.report_url ?? '').searchParams.get('sig'));
    // Each carries the finding it was sent for (see action-decision.ts).
    expect(b?.actions?.snooze).toMatch(
      new RegExp(`^https://x\\.example/prod/snooze/later\\.nl\\?kind=${b?.kind}&sev=${b?.severity}&exp=`),
    );
    expect(report.report_url).toMatch(/^https:\/\/x\.example\/prod\/report\?exp=(\d+)&/);
    const exp = (url: string | undefined) => Number(new URL(url ?? '').searchParams.get('exp'));
    expect(exp(report.report_url)).toBe(NOW / 1000 + 7 * 86_400);
    expect(exp(report.calendar_url)).toBe(NOW / 1000 + CALENDAR_LINK_TTL_DAYS * 86_400);
  });

  it('leaves the findings it was given alone, unless they are its own to link (owned)', () => {
    const signing = { baseUrl: 'https://x.example/prod', keys, now: NOW, ttlDays: 7 };
    const given = reportOf(findings().slice(0, 2));
    const copied = attachLinks(given, signing);
    expect(copied.findings[0]).not.toBe(given.findings[0]);
    expect(given.findings.some((f) => 'actions' in f)).toBe(false);
    const owned = attachLinks(given, signing, true);
    expect(owned.findings[0]).toBe(given.findings[0]);
    // The same links either way.
    expect(JSON.stringify(owned.findings)).toBe(JSON.stringify(copied.findings));
  });
});

describe('renderReportPage', () => {
  const report = reportOf([
    ...findings(),
    domainFinding('<script>alert(1)</script>.nl', 'expiring', 'warning', 12, {
      registrant: { handle: 'C"1', name: '<img src=x onerror=alert(1)>' },
    }),
  ]);
  const token = { exp: '1', kid: 'abcd1234', sig: 'x'.repeat(43) };

  it('groups findings under the digest’s words, critical first', () => {
    const html = renderReportPage({ report, token });
    const headings = [...html.matchAll(/<h2>([^<]+)<\/h2>/g)].map((m) => m[1]);
    expect(headings).toEqual([
      'Restore deadlines (1)',
      'CRITICAL (3)',
      'WARNING (2)',
      'INFO (1)',
      'Expiries and restore deadlines in the next 90 days',
    ]);
    expect(html).toContain('<strong>soon.nl</strong>: expires 25 Nov 2026 in 3 days, auto-renew OFF');
  });

  it('escapes everything from the API', () => {
    const html = renderReportPage({ report, token });
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;.nl');
  });

  it('filters by the text typed, keeping the link’s token in the form', () => {
    const html = renderReportPage({ report, token, query: 'SOON' });
    expect(html).toContain('1 of 6 findings match “SOON”.');
    expect(html).toContain('<strong>soon.nl</strong>');
    expect(html).not.toContain('<strong>later.nl</strong>');
    expect(html).toContain(`<input type="hidden" name="sig" value="${token.sig}">`);
  });

  it('lists the domains a policy lets lapse under "Letting lapse", not under their severity', () => {
    const lapsing = domainFinding('bye.nl', 'expiring', 'critical', 2);
    lapsing.policy = 'lapse';
    lapsing.let_lapse = true;
    const html = renderReportPage({ report: reportOf([...findings(), lapsing]), token });
    const critical = html.slice(html.indexOf('<h2>CRITICAL'), html.indexOf('<h2>WARNING'));
    expect(critical).not.toContain('bye.nl');
    const letting = html.slice(html.indexOf('<h2>Letting lapse (1)</h2>'));
    expect(letting).toContain('<strong>bye.nl</strong>');
    expect(renderReportPage({ report, token })).not.toContain('Letting lapse');
  });

  it('shows the changes since the last scan when the report has them', () => {
    const withChanges = {
      ...report,
      changes: [
        {
          domain_name: 'shop.nl',
          kind: 'transfer_lock_off',
          severity: 'warning',
          before: true,
          after: false,
        },
      ],
    };
    expect(renderReportPage({ report: withChanges, token })).toContain(
      `<h2>Changes since the last scan (1)</h2><ul class="items"><li><strong>shop.nl</strong>: transfer lock off (true → false)<div class="next">Next: If nobody here turned it off, turn the transfer lock on again in the reseller&#39;s control panel today.</div></li>`,
    );
    expect(renderReportPage({ report, token })).not.toContain('Changes since');
  });

  it('marks snoozed and acknowledged domains, which stay in the report', () => {
    const marked = reportOf([
      domainFinding('quiet.nl', 'expiring', 'warning', 10, { snoozed_until: '2026-11-29T06:00:00.000Z' }),
      domainFinding('letgo.nl', 'expiring', 'warning', 11, { acknowledged: true }),
    ]);
    const html = renderReportPage({ report: marked, token });
    expect(html).toContain('<strong>quiet.nl</strong><span class="tag">snoozed until 29 Nov 2026</span>');
    expect(html).toContain('<strong>letgo.nl</strong><span class="tag">acknowledged</span>');
  });

  it('draws the expiries of the next 90 days on the timeline, and nothing past or beyond', () => {
    const svg = renderTimeline(report);
    const names = [...svg.matchAll(/text-anchor="end">([^<]+)</g)].map((m) => m[1]);
    expect(names).toEqual(['soon.nl', '&#60;script&#62;alert(1)&#60;/script&#62;.nl', 'later.nl']);
    // What its marks mean is said beside it.
    expect(svg).toContain('expiry date</li>');
    expect(svg).toContain('restore-by day (quarantine)</li>');
  });

  it('labels an IDN on the timeline in its own script, whole', () => {
    const idn = domainFinding('xn--knigsberger-stadtbibliothek-pyc.de', 'expiring', 'warning', 12);
    const names = [...renderTimeline(reportOf([idn])).matchAll(/text-anchor="end">([^<]+)</g)].map(
      (m) => m[1],
    );
    expect(names).toEqual(['königsberger-stadtbibliothek.de']);
  });

  it('opens with the most urgent finding, its next step and its one link, and links its JSON and unreadable records', () => {
    const linked = reportOf(
      [
        domainFinding('urgent.nl', 'expired', 'critical', -1, {
          actions: { page: 'https://x.example/prod/finding/urgent.nl?exp=1&kid=abcd1234&sig=s' },
        }),
      ],
      [{ resource: 'domain', key: 'odd.nl', page: 2, reason: 'date_expiry: bad' }],
    );
    const html = renderReportPage({ report: linked, token });
    const first = html.indexOf('Most urgent: urgent.nl');
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(html.indexOf('<h2>'));
    expect(html).toContain(
      '<a class="act" href="https://x.example/prod/finding/urgent.nl?exp=1&#38;kid=abcd1234&#38;sig=s"',
    );
    expect(html).toContain(`<a href="report.json?exp=1&#38;kid=abcd1234&#38;sig=${token.sig}">JSON</a>`);
    expect(html).toContain('<a href="#unreadable">Unreadable records (1)</a>');
    expect(html).toContain('<h2 id="unreadable">Unreadable records (1)</h2>');
    expect(html).toContain('domain odd.nl on page 2: date_expiry: bad');
  });

  it('calls its records problem records, not unreadable, when one of them was read (by its dates only)', () => {
    const read = reportOf(
      [],
      [
        { resource: 'domain', key: 'odd.nl', page: 2, reason: 'date_expiry: bad' },
        { resource: 'domain', key: 'held.nl', page: 2, reason: 'status "pendingDelete" …', dates_only: true },
      ],
    );
    const html = renderReportPage({ report: read, token });
    expect(html).toContain('<a href="#unreadable">Problem records (2)</a>');
    expect(html).toContain('<h2 id="unreadable">Problem records (2)</h2>');
    expect(html).toContain('or read and found something to look at (each says which)');
    expect(html).not.toContain('Unreadable records');
  });

  /** A damaged item of our own state: its remedy is in its reason, not in the reseller's control panel. */
  const damagedState = {
    resource: 'state' as const,
    key: 'bloem.nl',
    page: 0,
    reason: "could not be read (not JSON): … this scan's save writes it again",
  };

  it("sends no one to the reseller's control panel for a damaged item of its own state", () => {
    const html = renderReportPage({ report: reportOf([], [damagedState]), token });
    const section = html.slice(html.indexOf('<h2 id="unreadable">'));
    expect(section).toContain('<h2 id="unreadable">Problem records (1)</h2>');
    expect(section).toContain('state item bloem.nl: could not be read');
    expect(section).not.toContain('control panel');
    expect(section).toContain("Items of this monitor's own stored state that could not be read");
  });

  it("sends the reseller's records to its control panel and leaves a state item to its own remedy", () => {
    const both = reportOf(
      [],
      [{ resource: 'domain', key: 'odd.nl', page: 2, reason: 'date_expiry: bad' }, damagedState],
    );
    const html = renderReportPage({ report: both, token });
    expect(html).not.toContain('check them in the reseller');
    expect(html).toContain(
      "check the reseller's records in its control panel; a state item is of this monitor's own stored state and says what mends it",
    );
  });

  it('lists exactly what an alert left out when opened from its link, and the whole report once a newer scan replaced it', () => {
    const many = reportOf([
      ...['c1', 'c2', 'c3'].map((n) => domainFinding(`${n}.nl`, 'expired', 'critical', -1)),
      domainFinding('quiet.nl', 'expired', 'critical', -1, { snoozed_until: '2026-11-29T06:00:00.000Z' }),
      ...['w1', 'w2'].map((n) => domainFinding(`${n}.nl`, 'expiring', 'warning', 20)),
    ]);
    const leftOut = renderReportPage({
      report: many,
      token: { ...token, of: many.generated_at, from: '2.1' },
    });
    const listed = [...leftOut.matchAll(/<li class="(?:critical|warning)" data-domain="([^"]+)"/g)].map(
      (m) => m[1],
    );
    // The alert named c1, c2 and w1 (the snoozed domain was never in it): the page lists c3 and w2.
    expect(listed).toEqual(['c3.nl', 'w2.nl']);
    const replaced = renderReportPage({
      report: many,
      token: { ...token, of: '2026-11-21T06:00:00.000Z', from: '2.1' },
    });
    expect(replaced).toContain('A newer scan replaced the report the alert was made from');
    expect([...replaced.matchAll(/<li class="(?:critical|warning)" data-domain="/g)]).toHaveLength(6);
  });

  it('allows its own stylesheet by hash and nothing inline besides', () => {
    const csp = REPORT_PAGE_HEADERS['Content-Security-Policy'] ?? '';
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[^']+' 'sha256-[^']+'; form-action 'self'/);
    expect(csp).not.toContain('unsafe-inline');
    expect(renderReportPage({ report, token })).toContain(
      '<meta name="viewport" content="width=device-width,initial-scale=1">',
    );
  });
});

describe('the report page filter text', () => {
  it('is cut at 200 characters without splitting a character in two', () => {
    const cut = filterText(`${'a'.repeat(199)}😀tail`);
    expect(cut).toBe('a'.repeat(199));
    expect(cut).not.toMatch(/[\uD800-\uDBFF]$/);
    expect(filterText(`  ${'b'.repeat(300)}  `)).toBe('b'.repeat(200));
  });
});
