import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { acknowledgementOf, snoozeOf } from '../../functions/core/memory/actions';
import { DAY, domain, scanWithState } from '../support/state-scan';
import { EMPTY_STATE, parseState, type ScanState } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;

const run = scanWithState;
const findingOf = (r: ReturnType<typeof run>, name: string) =>
  r.report.findings.find((f) => 'domain_name' in f && f.domain_name === name) as
    | (DomainFinding & { change: string })
    | undefined;

/** The state with a snooze set on `name`, as the snooze link's POST leaves it. */
function snoozed(
  state: ScanState,
  name: string,
  finding: DomainFinding,
  days: number,
  at: number,
): ScanState {
  const memory = state.domains[name];
  if (!memory) throw new Error(`no memory of ${name}`);
  return {
    ...state,
    domains: { ...state.domains, [name]: { ...memory, actions: { snooze: snoozeOf(finding, days, at) } } },
  };
}

describe('compareWithState with snoozes and acknowledgements', () => {
  const warning = domain('warning.nl', T0, { auto_renew: false, date_expiry: T0 + 15 * DAY + HOUR });
  const critical = domain('critical.nl', T0, { auto_renew: false, date_expiry: T0 + 5 * DAY + HOUR });

  it('never announces a snoozed finding that escalates on the ladder, keeps the snooze, and marks it', () => {
    const first = run([warning], T0, EMPTY_STATE);
    const w = findingOf(first, 'warning.nl') as DomainFinding;
    const state = snoozed(first.next, 'warning.nl', w, 7, T0 + HOUR);
    // Two days on, 13 days left: down from the 30 rung to the 14 rung, still a warning.
    const later = run([warning], T0 + 2 * DAY, state);
    expect(findingOf(later, 'warning.nl')).toMatchObject({
      change: 'escalated',
      severity: 'warning',
      snoozed_until: expect.any(String),
    });
    expect(later.silenced).toEqual(new Set(['warning.nl']));
    expect([later.publish, later.why]).toEqual([
      false,
      ['nothing new, escalated, changed or resolved at warning or above'],
    ]);
    expect(later.next.domains['warning.nl']?.actions?.snooze?.until).toBe(
      new Date(T0 + HOUR + 7 * DAY).toISOString(),
    );
    expect(parseState(JSON.parse(JSON.stringify(later.next)), 'test').domains['warning.nl']?.actions).toEqual(
      later.next.domains['warning.nl']?.actions,
    );
  });

  it('lets a snoozed domain come back at once when it enters quarantine, and drops the snooze', () => {
    const first = run([warning, critical], T0, EMPTY_STATE);
    const state = snoozed(first.next, 'warning.nl', findingOf(first, 'warning.nl') as DomainFinding, 30, T0);
    const quarantined = { ...warning, status: ['quarantine'], date_deleted: T0 + 2 * DAY };
    const later = run([quarantined, critical], T0 + 2 * DAY + HOUR, state);
    expect(findingOf(later, 'warning.nl')).toMatchObject({ kind: 'quarantine', change: 'escalated' });
    expect(findingOf(later, 'warning.nl')).not.toHaveProperty('snoozed_until');
    expect(later.silenced.size).toBe(0);
    expect(later.publish).toBe(true);
    expect(later.next.domains['warning.nl']?.actions).toBeUndefined();
  });

  it('does not repeat a snoozed critical after a day, but repeats the others', () => {
    const other = domain('other.nl', T0, { auto_renew: false, date_expiry: T0 + 6 * DAY + HOUR });
    const first = run([critical, other], T0, EMPTY_STATE);
    const state = snoozed(first.next, 'critical.nl', findingOf(first, 'critical.nl') as DomainFinding, 7, T0);
    const later = run([critical, other], T0 + 21 * HOUR, state);
    expect(later.why).toEqual(['1 critical repeated after 20 h']);
  });
});

describe('a snoozed or acknowledged quarantine near its restore-by date', () => {
  // .nl: 40 days from date_deleted, so restore by T0 + 9 days.
  const lost = (now: number) =>
    domain('lost.nl', now, {
      status: ['quarantine'],
      auto_renew: false,
      date_expiry: T0 - 40 * DAY,
      date_deleted: T0 - 31 * DAY,
    });

  it.each([
    ['snoozed for 30 days', 'snooze'],
    ['acknowledged', 'acknowledge'],
  ] as const)(
    'when %s, is alerted every day of its last days to restore and after its restore-by date passed',
    (_, action) => {
      const first = run([lost(T0)], T0, EMPTY_STATE);
      const finding = findingOf(first, 'lost.nl') as DomainFinding;
      expect(finding.days_to_restore).toBe(9);
      const memory = first.next.domains['lost.nl'];
      if (!memory) throw new Error('no memory of lost.nl');
      // As a state saved before a quarantine's silence ended with its last days would hold it.
      const actions =
        action === 'snooze'
          ? {
              snooze: {
                until: new Date(T0 + 30 * DAY).toISOString(),
                at: new Date(T0).toISOString(),
                kind: 'quarantine' as const,
                severity: 'critical' as const,
              },
            }
          : { acknowledged: acknowledgementOf(finding, T0) };
      let state: ScanState = { ...first.next, domains: { 'lost.nl': { ...memory, actions } } };
      const days: Array<[number, boolean, boolean]> = [];
      for (let day = 1; day <= 12; day++) {
        const r = run([lost(T0 + day * DAY)], T0 + day * DAY, state);
        const left = (findingOf(r, 'lost.nl') as DomainFinding).days_to_restore as number;
        days.push([left, r.silenced.has('lost.nl'), r.publish]);
        state = r.next;
      }
      // Silent while more than 7 days are left; from then on (and past the deadline) published daily.
      expect(days).toEqual([
        [8, true, false],
        ...[7, 6, 5, 4, 3, 2, 1, 0, -1, -2, -3].map((left) => [left, false, true]),
      ]);
      expect(state.domains['lost.nl']?.actions).toBeUndefined();
    },
  );
});
