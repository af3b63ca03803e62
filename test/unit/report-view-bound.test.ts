import { describe, expect, it } from 'vitest';
import { type Finding, sortFindings } from '../../functions/core/findings/classify';
import { reportLines } from '../../functions/core/memory/report-json';
import { viewFromText } from '../../functions/core/memory/report-store';
import { LEAST_ITEM_BYTES, type ReportView, viewOf } from '../../functions/core/memory/report-view';
import { renderCalendar } from '../../functions/core/pages/calendar';
import { renderReportPage } from '../../functions/core/pages/report-page';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, reportOf } from '../support/report';

/**
 * A view keeps as many critical and warning findings as an answer can show and counts the rest.
 * Here with a small answer (BUDGET) and the bound lowered to match it, as URGENT_KEPT is made from
 * the 5 MB one: the page and the feed of the bounded view must be those of a view with every one.
 */
const BUDGET = 40_000;
const BOUND = Math.ceil(BUDGET / LEAST_ITEM_BYTES);

/** `urgent` critical and warning findings in a mixed order (lapsing, quarantined, a contact), and some info ones. */
function account(urgent: number): Report {
  const findings: Finding[] = [];
  for (let i = 0; i < urgent; i++) {
    if (i % 7 === 0)
      findings.push(
        domainFinding(`quarantined-${i}.nl`, 'quarantine', 'critical', -20, {
          date_deleted: '2026-11-10T00:00:00.000Z',
          restore_by: '2026-12-10T00:00:00.000Z',
          days_to_restore: 18,
        }),
      );
    else if (i % 11 === 0)
      findings.push(domainFinding(`lapsing-${i}.nl`, 'expiring', 'warning', 20, { let_lapse: true }));
    else if (i === 5)
      findings.push({
        handle: 'C9',
        kind: 'contact_pending_validation',
        severity: 'warning',
        name: 'Anna',
        company_name: 'Bloem BV',
        email: 'anna@example.nl',
      } as Finding);
    else
      findings.push(
        domainFinding(`urgent-${i}.nl`, 'expiring', i % 3 ? 'warning' : 'critical', 1 + (i % 20)),
      );
  }
  for (let i = 0; i < 50; i++) findings.push(domainFinding(`calm-${i}.nl`, 'auto_renew_off', 'info', 200));
  return reportOf(findings);
}

const page = (report: ReportView, query?: string) =>
  renderReportPage({ report, token: {}, budgetBytes: BUDGET, ...(query ? { query } : {}) });

async function* chunks(lines: Iterable<string>) {
  yield* lines;
}

describe('a view of more critical and warning findings than an answer can show', () => {
  it('carries a bounded number, counts the rest, and the page is the same byte for byte', () => {
    const report = account(3_000);
    const every = viewOf(report, { purpose: 'page' });
    const bounded = viewOf(report, { purpose: 'page' }, BOUND);
    expect(every.view?.urgentLeft).toBeUndefined();
    const left = bounded.view?.urgentLeft;
    // Each of the page's three urgent lists and the feed keeps at most BOUND: well under 3 000.
    expect(bounded.findings.length).toBeLessThan(2_000);
    expect(left?.total).toBe(every.findings.length - bounded.findings.length);
    const isLapsing = (f: Finding) => 'let_lapse' in f && f.let_lapse === true;
    const lapsing = report.findings.filter(isLapsing).length;
    // Listed after 2 700 critical and warning ones: none is needed for the list, and some are counted.
    expect(left?.lapsing).toBeGreaterThan(0);
    expect(left?.lapsing).toBe(lapsing - bounded.findings.filter(isLapsing).length);
    const quarantined = report.findings.filter((f) => f.kind === 'quarantine').length;
    expect(left?.quarantine).toBe(
      quarantined - bounded.findings.filter((f) => f.kind === 'quarantine').length,
    );

    const shown = page(bounded);
    expect(shown).toBe(page(every));
    expect(shown).toContain(`<h2>Restore deadlines (${quarantined})</h2>`);
    // Not every one of them is listed below when the lists do not fit: the note says how to find one.
    expect(shown).toMatch(/and \d+ more \(in CRITICAL below, or filter the page to find one\)/);
    // The lists (after the filter form) count every finding, carried or not.
    const kept = shown.split('<form class="filter"')[1]?.match(/<li class=/g)?.length ?? 0;
    expect(kept).toBeGreaterThan(100);
    expect(kept).toBeLessThan(BOUND);
    expect(shown).toContain(`None of the ${report.findings.length} items show registrant and links`);
    expect(shown).toContain(`${report.findings.length - kept} more items did not fit on this page`);
  });

  it('gives the same feed, from the report or from the view kept beside it, and counts the events left out', async () => {
    // In the order a scan puts its findings: the view keeps the first, the feed writes the most urgent first.
    const whole = account(3_000);
    const report = { ...whole, findings: sortFindings([...whole.findings]) };
    const every = renderCalendar(viewOf(report, { purpose: 'calendar' }), { budgetBytes: BUDGET });
    const bounded = viewOf(report, { purpose: 'calendar' }, BOUND);
    expect(bounded.findings.length).toBeLessThanOrEqual(BOUND + 50);
    expect(renderCalendar(bounded, { budgetBytes: BUDGET })).toBe(every);
    const stored = await viewFromText(
      chunks(reportLines(viewOf(report, { purpose: 'page' }, BOUND))),
      { purpose: 'calendar' },
      'latest-view.json',
    );
    expect(renderCalendar(stored, { budgetBytes: BUDGET })).toBe(every);
    const events = report.findings.reduce(
      (n, f) => n + (f.severity === 'info' || !('domain_name' in f) ? 0 : f.restore_by ? 2 : 1),
      0,
    );
    const written = every.match(/BEGIN:VEVENT/g)?.length ?? 0;
    expect(every.replace(/\r\n /g, '')).toContain(
      `${events - written} critical or warning events did not fit: the report page's filter finds any of them\\, and the JSON report lists every one.`,
    );
  });

  it('gives the feed a quarantine whose restore deadline is unknown, first as the feed puts it, behind more known ones than the bound', () => {
    // A scan lists known deadlines first and an unknown one last; the feed puts the unknown first
    // (it may end any day): the view must carry it however many known ones come before it.
    const known = Array.from({ length: BOUND }, (_, i) =>
      domainFinding(`known-${i}.nl`, 'quarantine', 'critical', -20, {
        date_deleted: '2026-11-10T00:00:00.000Z',
        restore_by: '2026-12-10T00:00:00.000Z',
        days_to_restore: 18,
      }),
    );
    const unknown = domainFinding('unknown.nl', 'quarantine', 'critical', -20, {
      date_deleted: '2026-11-10T00:00:00.000Z',
      restore_by: null,
      days_to_restore: null,
    });
    const report = reportOf(sortFindings([unknown, ...known]));
    expect(report.findings.at(-1)).toBe(unknown);
    const every = renderCalendar(viewOf(report, { purpose: 'calendar' }), { budgetBytes: BUDGET });
    expect(every).toContain('SUMMARY:Quarantine: unknown.nl');
    for (const purpose of ['calendar', 'page'] as const)
      expect(renderCalendar(viewOf(report, { purpose }, BOUND), { budgetBytes: BUDGET })).toBe(every);
  });

  it('counts two events left out of the feed for a quarantine kept while its record reads expired', () => {
    // Read expired under a status the API does not document, kept as the quarantine it was read in:
    // the feed gives it its own event and one on the remembered restore-by.
    const kept = (i: number) =>
      domainFinding(`kept-${i}.nl`, 'expired', 'critical', -3, {
        remembered: {
          kind: 'quarantine',
          severity: 'critical',
          restore_by: '2026-12-10T00:00:00.000Z',
          days_to_restore: 18,
          because: 'status_undocumented',
        },
      });
    const report = reportOf(Array.from({ length: 2_000 }, (_, i) => kept(i)));
    const every = renderCalendar(viewOf(report, { purpose: 'calendar' }), { budgetBytes: BUDGET });
    const bounded = viewOf(report, { purpose: 'calendar' }, BOUND);
    expect(bounded.view?.urgentLeft?.events).toBeGreaterThan(0);
    expect(renderCalendar(bounded, { budgetBytes: BUDGET })).toBe(every);
    const written = every.match(/BEGIN:VEVENT/g)?.length ?? 0;
    expect(every.replace(/\r\n /g, '')).toContain(
      `${4_000 - written} critical or warning events did not fit`,
    );
  });

  it('finds with the filter a finding beyond the bound, and the filtered page is the same', () => {
    const report = account(3_000);
    const query = 'urgent-2999.nl';
    const bounded = viewOf(report, { purpose: 'page', query }, BOUND);
    expect(bounded.findings.some((f) => 'domain_name' in f && f.domain_name === query)).toBe(true);
    expect(page(bounded, query)).toBe(page(viewOf(report, { purpose: 'page', query }), query));
    expect(page(bounded, query)).toContain(`1 of ${report.findings.length} findings match`);
  });

  it('counts nothing while every one fits under the bound', () => {
    const report = account(200);
    const bounded = viewOf(report, { purpose: 'page' }, BOUND);
    expect(bounded.view?.urgentLeft).toBeUndefined();
    expect(page(bounded)).toBe(page(viewOf(report, { purpose: 'page' })));
  });
});
