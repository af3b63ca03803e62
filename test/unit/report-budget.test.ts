import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import type { DomainFinding, Finding } from '../../functions/core/findings/classify';
import { parseSigningKeys } from '../../functions/core/links/links';
import { INFO_LISTED, responseBytes, viewOf } from '../../functions/core/memory/report-view';
import { eventUid, renderCalendar } from '../../functions/core/pages/calendar';
import { renderReportPage, renderTimeline } from '../../functions/core/pages/report-page';
import { attachLinks } from '../../functions/core/scan/report-links';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

const keys = parseSigningKeys('b'.repeat(40));

/** An account's report: `urgent` critical and warning findings and `info` info ones, with every link. */
function account(urgent: number, info: number) {
  const findings: Finding[] = [];
  for (let i = 0; i < urgent; i++)
    findings.push(
      i % 3 === 0
        ? domainFinding(`quarantined-${i}.nl`, 'quarantine', 'critical', -20, {
            date_deleted: '2026-11-10T00:00:00.000Z',
            restore_by: '2026-12-10T00:00:00.000Z',
            days_to_restore: 18,
          })
        : domainFinding(`urgent-${i}.nl`, 'expiring', i % 3 === 1 ? 'critical' : 'warning', 3 + (i % 20)),
    );
  for (let i = 0; i < info; i++)
    findings.push(domainFinding(`calm-${i}.nl`, 'auto_renew_off', 'info', 200 + (i % 90)));
  return attachLinks(reportOf(findings), {
    baseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/',
    keys,
    now: Date.parse(NOW_ISO),
    ttlDays: 7,
  });
}

const urgentNames = (findings: readonly Finding[]) =>
  findings
    .filter((f): f is DomainFinding => 'domain_name' in f && f.severity !== 'info')
    .map((f) => f.domain_name);

describe('the report page within one Lambda answer', () => {
  it('keeps every critical and warning item, the most urgent with links, the rest brief, and counts the info ones', () => {
    const report = account(1_500, 3_000);
    const budget = 400_000;
    const full = renderReportPage({ report, token: {}, budgetBytes: 1e12 });
    expect(responseBytes(full)).toBeGreaterThan(budget);

    const page = renderReportPage({
      report: viewOf(report, { purpose: 'page' }),
      token: {},
      budgetBytes: budget,
    });
    expect(responseBytes(page)).toBeLessThanOrEqual(budget);
    expect(responseBytes(page)).toBe(Buffer.byteLength(JSON.stringify(page)) - 2);
    for (const name of urgentNames(report.findings)) expect(page).toContain(`data-domain="${name}"`);
    // The first items carry their links; the page says where the brief ones begin.
    expect(page.indexOf('href="https://abc123')).toBeLessThan(page.indexOf('data-domain="urgent-1.nl"'));
    expect(page).toMatch(
      /The first \d+ of 2 500 items show registrant and links|The first \d+ of 2500 items show registrant and links/,
    );
    expect(page).toContain(
      `and ${3_000 - INFO_LISTED} more info findings (${3_000 - INFO_LISTED} auto renew off): type a name, registrant or kind in the filter`,
    );
    expect(page).toContain(`<h2>INFO (3000)</h2>`);
  });

  it('finds an info finding the page does not list through the filter, and counts the matches', () => {
    const report = account(10, 3_000);
    const view = viewOf(report, { purpose: 'page', query: 'calm-2999.nl' });
    const page = renderReportPage({ report: view, token: {}, query: 'calm-2999.nl' });
    expect(page).toContain('data-domain="calm-2999.nl"');
    expect(page).toContain('1 of 3010 findings match “calm-2999.nl”.');
  });

  it('draws the same timeline from a view as from the whole report', () => {
    const report = account(200, 3_000);
    expect(renderTimeline(viewOf(report, { purpose: 'page' }))).toBe(renderTimeline(report));
  });

  it('leaves out the least urgent, and says so, when even brief items do not fit', () => {
    const report = account(3_000, 0);
    const page = renderReportPage({ report, token: {}, budgetBytes: 150_000 });
    expect(responseBytes(page)).toBeLessThanOrEqual(150_000);
    expect(page).toMatch(/\d+ more items did not fit on this page: filter to find them/);
    expect(page).toContain('data-domain="quarantined-0.nl"');
  });
});

describe('the calendar feed within one Lambda answer', () => {
  const events = (text: string) =>
    new ICAL.Component(ICAL.parse(text)).getAllSubcomponents('vevent').map((event) => {
      const e = new ICAL.Event(event);
      return { uid: e.uid, summary: e.summary, alarms: event.getAllSubcomponents('valarm').length };
    });

  it('keeps every critical and warning event, the most urgent whole, and says which info ones it left out', () => {
    const report = account(1_500, 3_000);
    const budget = 400_000;
    const feed = renderCalendar(viewOf(report, { purpose: 'calendar' }), { budgetBytes: budget });
    expect(responseBytes(feed)).toBeLessThanOrEqual(budget);
    const parsed = events(feed);
    const uids = new Set(parsed.map((e) => e.uid));
    for (const f of report.findings)
      if ('domain_name' in f && f.severity !== 'info') expect(uids.has(eventUid(f))).toBe(true);
    // The most urgent keep their alarms; events written short keep their UID, day and summary.
    expect(parsed[1]?.alarms).toBe(1);
    expect(parsed.at(-1)?.alarms).toBe(0);
    const description = new ICAL.Component(ICAL.parse(feed)).getFirstPropertyValue('x-wr-caldesc');
    expect(String(description)).toMatch(/^\d+ info findings are not in this feed/);
  });

  it('is the same feed as before for an account that fits', () => {
    const report = account(20, 30);
    expect(renderCalendar(viewOf(report, { purpose: 'calendar' }))).toBe(renderCalendar(report));
    expect(events(renderCalendar(report)).every((e) => e.summary && e.uid)).toBe(true);
  });
});
