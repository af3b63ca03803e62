import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { renderCalendar } from '../../functions/core/pages/calendar';
import type { Problem } from '../../functions/core/reseller/client';
import type { Report } from '../../functions/core/scan/scan';
import { HOUR, T0, withAction } from '../support/account-model';
import { heldInQuarantine, scanWithState } from '../support/state-scan';
import { EMPTY_STATE } from '../support/whole-state';

/**
 * The calendar feed of a domain memory last read in quarantine whose record can no longer be read
 * at all: the report publishes it critical with its remembered restore-by (`remembered_kind`,
 * memory/kept-quarantine.ts), and the feed keeps its events under the UIDs they had, so the
 * reseller's calendar does not drop the last-days reminder of a domain days from being lost.
 */

/** In .nl quarantine (40 days to restore) since 35 days before T0: restore by 27 Nov 2026 06:00 UTC. */
const held = heldInQuarantine(T0, 35);
const broken: Problem = { resource: 'domain', key: 'held.nl', page: 1, reason: 'date_expiry: Invalid input' };

const events = (ics: string) =>
  new ICAL.Component(ICAL.parse(ics)).getAllSubcomponents('vevent').map((e) => new ICAL.Event(e));

describe('the calendar feed of a quarantine whose record can no longer be read', () => {
  it('keeps its own and its restore-by events, under the UIDs they had while the record read quarantine', () => {
    const first = scanWithState([held], T0, EMPTY_STATE);
    const broke = scanWithState([], T0 + HOUR, first.next, { problems: [broken] });
    expect(broke.report.problems).toEqual([
      expect.objectContaining({ key: 'held.nl', remembered_kind: 'quarantine', severity: 'critical' }),
    ]);
    const before = events(renderCalendar(first.report as unknown as Report));
    const after = events(renderCalendar(broke.report as unknown as Report));
    expect(after.map((e) => e.uid)).toEqual(before.map((e) => e.uid));
    const restoreBy = after.find((e) => e.summary.startsWith('Restore by:'));
    expect(restoreBy?.startDate.toString()).toBe('2026-11-27');
    expect(restoreBy?.description).toContain('its record could not be read');
  });

  it('keeps them while a snooze or an acknowledgement of it holds, as a snoozed quarantine finding keeps its own', () => {
    // 30 days to restore: a snooze and an acknowledgement are offered (not in the last days).
    const first = scanWithState([heldInQuarantine(T0, 10)], T0, EMPTY_STATE);
    const shown = first.report.findings[0] as DomainFinding;
    const acked = withAction(first.next, 'held.nl', 'ack', shown, 0, T0, T0);
    const mem = first.next.domains['held.nl'];
    if (!acked || !mem) throw new Error('no acknowledgement of held.nl');
    const until = new Date(T0 + 5 * 24 * HOUR).toISOString();
    const snooze = {
      until,
      at: new Date(T0).toISOString(),
      kind: 'quarantine' as const,
      severity: 'critical' as const,
    };
    const snoozed = { ...first.next, domains: { 'held.nl': { ...mem, actions: { snooze } } } };
    for (const quiet of [acked, snoozed]) {
      const broke = scanWithState([], T0 + HOUR, quiet, { problems: [broken] });
      expect(broke.report.problems).toEqual([expect.not.objectContaining({ severity: 'critical' })]);
      const before = events(renderCalendar(first.report as unknown as Report));
      const after = events(renderCalendar(broke.report as unknown as Report));
      expect(after.map((e) => e.uid)).toEqual(before.map((e) => e.uid));
    }
  });
});
