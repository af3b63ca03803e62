import { describe, expect, it } from 'vitest';
import { reportLines } from '../../functions/core/memory/report-json';
import { viewFromText } from '../../functions/core/memory/report-store';
import {
  DEADLINES_LISTED,
  KEPT_CARRIED,
  PROBLEMS_LISTED,
  RESPONSE_BUDGET_BYTES,
  responseBytes,
  URGENT_KEPT,
  viewOf,
} from '../../functions/core/memory/report-view';
import { renderCalendar } from '../../functions/core/pages/calendar';
import { renderReportPage } from '../../functions/core/pages/report-page';
import type { Problem } from '../../functions/core/reseller/client';
import { keptRecord, unreadable } from '../support/kept-records';
import { NOW_ISO, reportOf } from '../support/report';

const DAY = 86_400_000;
/** A kept quarantine `minutes` past `days` days from NOW. */
const keptIn = (name: string, days: number, minutes = 0): Problem =>
  keptRecord(name, {
    restore_by: new Date(Date.parse(NOW_ISO) + days * DAY + minutes * 60_000).toISOString(),
  });

async function* chunks(lines: Iterable<string>) {
  yield* lines;
}

/** The view as the web function reads it: stored, then read back for `purpose`. */
const stored = (problems: Problem[], purpose: 'page' | 'calendar') =>
  viewFromText(chunks(reportLines(viewOf(reportOf([], problems), { purpose: 'page' }))), { purpose }, 'test');

describe('the stored view of many kept quarantines', () => {
  it('gives the feed every one of 500 kept quarantines behind a hundred unreadable records, none "did not fit"', async () => {
    const keptOnes = Array.from({ length: 500 }, (_, i) => keptIn(`kept-${i}.nl`, 3 + (i % 30)));
    const problems = [...Array.from({ length: 150 }, (_, i) => unreadable(i)), ...keptOnes];
    const ics = renderCalendar(await stored(problems, 'calendar'));
    for (let i = 0; i < 500; i++) expect(ics).toContain(`Restore by: kept-${i}.nl (`);
    expect(ics).not.toContain('did not fit');
    // The same feed as from the whole report.
    expect(ics).toBe(renderCalendar(reportOf([], problems)));
  });

  it('keeps the page bounded: the deadlines and unreadable records it lists, every one counted', async () => {
    const keptOnes = Array.from({ length: 500 }, (_, i) => keptIn(`kept-${i}.nl`, 40 - (i % 30)));
    const problems = [...Array.from({ length: 150 }, (_, i) => unreadable(i)), ...keptOnes];
    const html = renderReportPage({ report: await stored(problems, 'page'), token: {} });
    expect(html).toContain('<h2>Restore deadlines (500)</h2>');
    expect(html.match(/<li class="critical"><strong>kept-/g)).toHaveLength(DEADLINES_LISTED);
    // Kept quarantines were read, by their dates only: not all 650 are unreadable.
    expect(html).toContain('<h2 id="unreadable">Problem records (650)</h2>');
    const unreadableList = html.slice(html.indexOf('<h2 id="unreadable">'));
    expect(unreadableList.match(/<li>/g)).toHaveLength(PROBLEMS_LISTED);
    expect(unreadableList).toContain(`and ${650 - PROBLEMS_LISTED} more in the JSON report`);
  });

  it('lists a kept quarantine whose restore-by is unknown among the page’s deadlines, first, before 30 known ones', async () => {
    const known = Array.from({ length: 30 }, (_, i) => keptIn(`kept-${i}.nl`, 2 + i));
    const unknown = keptRecord('unknown.nl', { restore_by: null });
    const html = renderReportPage({ report: await stored([...known, unknown], 'page'), token: {} });
    const deadlines = html.slice(html.indexOf('<h2>Restore deadlines'), html.indexOf('<form class="filter"'));
    expect(deadlines.indexOf('unknown.nl')).toBeGreaterThan(0);
    expect(deadlines.indexOf('unknown.nl')).toBeLessThan(deadlines.indexOf('kept-0.nl'));
  });

  it('carries no more kept quarantines than the feed could hold of 100 000, the soonest, and counts the rest', () => {
    // A kept quarantine has two events; each takes more than LEAST_ITEM_BYTES: no feed holds more.
    expect(KEPT_CARRIED).toBe(Math.ceil(URGENT_KEPT / 2));
    const keptOnes = Array.from({ length: 100_000 }, (_, i) => keptIn(`kept-${i}.nl`, 60, -i));
    const view = viewOf(reportOf([], keptOnes), { purpose: 'page' });
    expect(view.problems).toHaveLength(100 + KEPT_CARRIED);
    // The soonest are carried: the last records, whose restore-by comes first.
    expect(view.problems.at(-1)?.key).toBe(`kept-${100_000 - KEPT_CARRIED}.nl`);
    expect(view.problems[100]?.key).toBe('kept-99999.nl');
    expect(view.view?.urgentLeft?.quarantine).toBe(100_000 - 100 - KEPT_CARRIED);
    expect(view.view?.urgentLeft?.events).toBe(2 * (100_000 - 100 - KEPT_CARRIED));
    // The stored view stays some 9 MB (a record of each carried), read by a web function of 1 024 MB.
    let bytes = 0;
    for (const line of reportLines(view)) bytes += Buffer.byteLength(line);
    expect(bytes).toBeLessThan(3 * RESPONSE_BUDGET_BYTES);
    // The feed of it fits one Lambda answer.
    expect(responseBytes(renderCalendar(view))).toBeLessThanOrEqual(RESPONSE_BUDGET_BYTES);
  });
});

describe('the kept quarantines a view carries, its restore-by unknown', () => {
  it('carries one whose restore-by is unknown first, as the feed writes it first, behind more known ones than it carries', () => {
    const keptOnes = Array.from({ length: 30 }, (_, i) => keptIn(`kept-${i}.nl`, 3 + i));
    const first = Array.from({ length: 100 }, (_, i) => unreadable(i));
    const report = reportOf([], [...first, ...keptOnes, keptRecord('unknown.nl', { restore_by: null })]);
    // A view that carries 20 kept quarantines (KEPT_CARRIED, lowered).
    const view = viewOf(report, { purpose: 'calendar' }, 2 * DEADLINES_LISTED);
    expect(view.problems.filter((p) => p.kept_quarantine)).toHaveLength(DEADLINES_LISTED);
    expect(view.problems[100]?.key).toBe('unknown.nl');
    expect(renderCalendar(view)).toContain('SUMMARY:Quarantine: unknown.nl (last read in quarantine');
  });
});
