import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { responseBytes } from '../../functions/core/memory/report-view';
import { renderCalendar } from '../../functions/core/pages/calendar';
import { keptRecord } from '../support/kept-records';
import { domainFinding, reportOf } from '../support/report';

/**
 * The order a feed too large for its budget keeps its events in: the most urgent first, whatever
 * they come from (a finding, or a quarantine memory keeps with no finding).
 */

const events = (ics: string) =>
  new ICAL.Component(ICAL.parse(ics)).getAllSubcomponents('vevent').map((e) => new ICAL.Event(e));
const unfolded = (ics: string) => ics.replace(/\r\n /g, '');

describe('the calendar feed over its budget', () => {
  it("keeps a kept quarantine's events before warnings' and counts the warnings it left out", () => {
    const warnings = Array.from({ length: 200 }, (_, i) =>
      domainFinding(`warn-${i}.nl`, 'expiring', 'warning', 20),
    );
    const report = reportOf(warnings, [keptRecord('kept.nl')]);
    const budget = 8_000;
    const ics = renderCalendar(report, { budgetBytes: budget });
    expect(responseBytes(ics)).toBeLessThanOrEqual(budget);
    const summaries = events(ics).map((e) => e.summary);
    expect(summaries.slice(0, 2)).toEqual([
      'Quarantine: kept.nl (last read in quarantine)',
      'Restore by: kept.nl (last day to restore, last read in quarantine)',
    ]);
    const warningsWritten = summaries.filter((s) => s.includes('warn-')).length;
    expect(warningsWritten).toBeGreaterThan(0);
    expect(unfolded(ics)).toContain(`${200 - warningsWritten} critical or warning events did not fit`);
  });
});

describe('the order of the critical events', () => {
  it('puts quarantines, read or kept, by their restore-by before the other critical events', () => {
    const expired = domainFinding('expired.nl', 'expired', 'critical', -2);
    const later = domainFinding('later.nl', 'quarantine', 'critical', -10, {
      restore_by: '2026-12-10T06:00:00.000Z',
      days_to_restore: 18,
    });
    const report = reportOf([later, expired], [keptRecord('kept.nl')]);
    const names = events(renderCalendar(report)).map((e) => e.summary.split(': ')[1]?.split(' ')[0]);
    expect(names).toEqual(['kept.nl', 'kept.nl', 'later.nl', 'later.nl', 'expired.nl']);
  });

  it('puts a quarantine whose restore-by is not known first among them, as quiet hours take it as urgent', () => {
    const later = domainFinding('later.nl', 'quarantine', 'critical', -10, {
      restore_by: '2026-12-10T06:00:00.000Z',
      days_to_restore: 18,
    });
    // A quarantine of a TLD whose quarantine period is not known: its own event, no restore-by one.
    const unknown = domainFinding('unknown.io', 'quarantine', 'critical', -3, {
      restore_by: null,
      days_to_restore: null,
    });
    const report = reportOf([later, unknown], [keptRecord('kept.nl')]);
    const names = events(renderCalendar(report)).map((e) => e.summary.split(': ')[1]?.split(' ')[0]);
    expect(names).toEqual(['unknown.io', 'kept.nl', 'kept.nl', 'later.nl', 'later.nl']);
  });
});
