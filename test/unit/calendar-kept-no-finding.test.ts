import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { reportLines } from '../../functions/core/memory/report-json';
import { viewFromText } from '../../functions/core/memory/report-store';
import { DEADLINES_LISTED, responseBytes, viewOf } from '../../functions/core/memory/report-view';
import type { DomainMemory } from '../../functions/core/memory/state';
import { renderCalendar } from '../../functions/core/pages/calendar';
import type { Report } from '../../functions/core/scan/scan';
import { HOUR, T0 } from '../support/account-model';
import { keptRecord, unreadable } from '../support/kept-records';
import { reportOf } from '../support/report';
import { heldInQuarantine, renewedUndocumented, scanUnjudged as run } from '../support/state-scan';
import { EMPTY_STATE } from '../support/whole-state';

/**
 * The calendar feed of a quarantine memory keeps while its record, read by its dates only (a status
 * the API does not document), gives no finding at all (a problem record marked kept_quarantine):
 * its restore-by event stays, under the UID it had while the record read quarantine, as urgent as
 * that one, snoozed or not; and a view that leaves such a record out counts its event.
 */

/** In .nl quarantine (40 days to restore) since 35 days before T0: restore by 27 Nov 2026 06:00 UTC. */
const held = heldInQuarantine(T0, 35);
const healthy = renewedUndocumented(held, T0);

const events = (ics: string) =>
  new ICAL.Component(ICAL.parse(ics)).getAllSubcomponents('vevent').map((e) => new ICAL.Event(e));
const restoreBy = (ics: string) => events(ics).find((e) => e.summary.startsWith('Restore by:'));
const own = (ics: string) => events(ics).find((e) => e.summary.startsWith('Quarantine:'));
const uidsOf = (ics: string) => events(ics).map((e) => e.uid);

/** Read in quarantine at T0, then read healthy under an undocumented status (kept) a day on. */
function readThenKept(): { judged: Report; kept: Report } {
  const first = run([held], T0, EMPTY_STATE);
  const second = run([healthy], T0 + HOUR, first.next);
  const kept = run([healthy], T0 + 25 * HOUR, second.next).report as unknown as Report;
  return { judged: first.report as unknown as Report, kept };
}

async function* chunks(lines: Iterable<string>): AsyncIterable<string> {
  for (const line of lines) yield line;
}

describe('the calendar feed of a quarantine kept while its record gives no finding', () => {
  it('keeps the restore-by event under the UID it had while its record read quarantine', () => {
    const { judged, kept } = readThenKept();
    expect(kept.findings).toEqual([]);
    expect(kept.problems).toEqual([expect.objectContaining({ key: 'held.nl', kept_quarantine: true })]);
    const before = restoreBy(renderCalendar(judged));
    const ics = renderCalendar(kept);
    const after = restoreBy(ics);
    expect(before?.uid).toMatch(/@domain-sentinel$/);
    expect(after?.uid).toBe(before?.uid);
    expect(after?.startDate.toString()).toBe('2026-11-27');
    expect(after?.summary).toBe('Restore by: held.nl (last day to restore, last read in quarantine)');
    expect(after?.description).toContain('LAST DAYS: restore by 27 Nov 2026 06:00 UTC, 3 days left');
    expect(after?.description).toContain('as memory keeps it');
    expect(after?.description).toContain(
      'it was last read in quarantine, and its record now reads as nothing',
    );
    // The alarm a quarantine restore-by event has, as the event had while the record read.
    expect(ics).toContain('TRIGGER:-P7D');
    expect(renderCalendar(judged)).toContain('TRIGGER:-P7D');
    expect(events(ics)).toHaveLength(2);
  });

  it('keeps both events of the quarantine, under their UIDs, while its record reads quarantine, kept, then quarantine again', () => {
    const first = run([held], T0, EMPTY_STATE);
    const second = run([healthy], T0 + HOUR, first.next);
    const kept = run([healthy], T0 + 25 * HOUR, second.next);
    const again = run([held], T0 + 26 * HOUR, kept.next);
    const [read, keptIcs, readAgain] = [first, kept, again].map((r) =>
      renderCalendar(r.report as unknown as Report),
    ) as [string, string, string];
    expect(uidsOf(read)).toHaveLength(2);
    expect(uidsOf(keptIcs)).toEqual(uidsOf(read));
    expect(uidsOf(readAgain)).toEqual(uidsOf(read));
    const keptOwn = own(keptIcs);
    expect(keptOwn?.uid).toBe(own(read)?.uid);
    expect(keptOwn?.summary).toBe('Quarantine: held.nl (last read in quarantine)');
    expect(keptOwn?.description).toContain('as memory keeps it');
  });

  it('has the event of a snoozed kept record, with its alarm, as a snoozed finding keeps its events', () => {
    const ics = renderCalendar(reportOf([], [keptRecord('snoozed.nl', { snoozed: true })]));
    expect(restoreBy(ics)?.summary).toBe(
      'Restore by: snoozed.nl (last day to restore, last read in quarantine)',
    );
    expect(ics).toContain('TRIGGER:-P7D');
  });

  it('keeps the event while a snooze of the kept quarantine holds', () => {
    // 30 days to restore: a snooze holds (one in the last days to restore lapses).
    const early = heldInQuarantine(T0, 10);
    const healthy = renewedUndocumented(early, T0);
    const first = run([early], T0, EMPTY_STATE);
    const memory = first.next.domains['held.nl'] as DomainMemory;
    const iso = (ms: number) => new Date(ms).toISOString();
    const snooze = {
      until: iso(T0 + 30 * HOUR),
      at: iso(T0 + HOUR),
      kind: 'quarantine',
      severity: 'critical',
    } as const;
    const snoozed = {
      ...first.next,
      domains: { ...first.next.domains, 'held.nl': { ...memory, actions: { snooze } } },
    };
    const second = run([healthy], T0 + 2 * HOUR, snoozed);
    const report = run([healthy], T0 + 25 * HOUR, second.next).report as unknown as Report;
    expect(report.problems).toEqual([expect.objectContaining({ kept_quarantine: true })]);
    expect(report.problems[0]?.severity).toBeUndefined();
    expect(restoreBy(renderCalendar(report))?.uid).toBe(
      restoreBy(renderCalendar(first.report as unknown as Report))?.uid,
    );
  });

  it('has an event on the day of the scan for a kept record with its restore deadline not known, none for another record', () => {
    // It may be days from being lost: left out, the feed said nothing of it at all.
    const unknown = { ...keptRecord('unknown.nl'), restore_by: null };
    const report = reportOf([], [unknown, unreadable(1)]);
    const written = events(renderCalendar(report));
    expect(written.map((e) => e.summary)).toEqual([
      'Quarantine: unknown.nl (last read in quarantine, restore deadline unknown)',
    ]);
    expect(written[0]?.startDate.toString()).toBe(report.now.slice(0, 10));
    expect(written[0]?.description).toContain('restore deadline unknown');
    // Under one UID from scan to scan while its deadline stays unknown: the event moves to the new day.
    const later = { ...report, now: '2026-11-23T06:00:00.000Z', generated_at: '2026-11-23T06:00:00.000Z' };
    const next = events(renderCalendar(later));
    expect(next[0]?.uid).toBe(written[0]?.uid);
    expect(next[0]?.startDate.toString()).toBe('2026-11-23');
  });

  it('gives the same events, from the report or from its views, and counts those a view left out', async () => {
    const keptOnes = Array.from({ length: DEADLINES_LISTED + 3 }, (_, i) => keptRecord(`kept-${i}.nl`));
    const report = reportOf([], [...Array.from({ length: 150 }, (_, i) => unreadable(i)), ...keptOnes]);
    const whole = renderCalendar(report);
    // Each kept record with a known deadline: its own event and its restore-by event.
    expect(events(whole)).toHaveLength(2 * (DEADLINES_LISTED + 3));
    expect(whole).not.toContain('did not fit');
    const stored = await viewFromText(
      chunks(reportLines(viewOf(report, { purpose: 'page' }))),
      { purpose: 'calendar' },
      'latest-view.json',
    );
    // Every view carries them all: the feed has room for some 40 000 kept quarantines.
    for (const view of [viewOf(report, { purpose: 'calendar' }), viewOf(report, { purpose: 'page' }), stored])
      expect(renderCalendar(view)).toBe(whole);
    // A view that carries 20 of them after the first hundred records (KEPT_CARRIED, lowered).
    const bound = 2 * DEADLINES_LISTED;
    for (const view of [
      viewOf(report, { purpose: 'calendar' }, bound),
      viewOf(report, { purpose: 'page' }, bound),
      viewOf(viewOf(report, { purpose: 'page' }, bound), { purpose: 'calendar' }, bound),
    ]) {
      // The view counts the events the feed writes of those it left out: the feed's total, always.
      expect(view.view?.urgentLeft?.events).toBe(6);
      const ics = renderCalendar(view);
      const uids = events(ics).map((e) => e.uid);
      expect(uids.length + 6).toBe(events(whole).length);
      expect(uids).toEqual(
        events(whole)
          .map((e) => e.uid)
          .slice(0, 2 * DEADLINES_LISTED),
      );
      expect(ics.replace(/\r\n /g, '')).toContain('6 critical or warning events did not fit');
    }
  });

  it('stays within its budget with more kept records than fit, and counts those left out', () => {
    const report = reportOf(
      [],
      Array.from({ length: 200 }, (_, i) => keptRecord(`kept-${i}.nl`)),
    );
    const ics = renderCalendar(report, { budgetBytes: 8_000 });
    expect(responseBytes(ics)).toBeLessThanOrEqual(8_000);
    const written = events(ics).length;
    expect(written).toBeGreaterThan(10);
    expect(ics.replace(/\r\n /g, '')).toContain(
      `${2 * 200 - written} critical or warning events did not fit`,
    );
  });
});
