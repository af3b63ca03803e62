import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { acknowledgementOf, snoozeOf } from '../../functions/core/memory/actions';
import type { Domain } from '../../functions/core/reseller/schemas';
import { HOUR, T0 } from '../support/account-model';
import { DAY, domain, heldInQuarantine, scanUnjudged as runWith, whysAt } from '../support/state-scan';
import { DEFAULT_STATE_POLICY, EMPTY_STATE, parseState, type ScanState } from '../support/whole-state';

/**
 * A finding kept as remembered (its record not judged this scan) is judged as the one remembered;
 * what the record does say of a quarantine in its last days is not lost by it, and a remembered
 * restore-by that cannot be true (edited by hand) never holds a repeat back.
 */

type Policy = typeof DEFAULT_STATE_POLICY;
const capped: Policy = { ...DEFAULT_STATE_POLICY, repeat: { critical: 20, warning: 168, cap: 1 } };

/** What each scan at `hours` (from T0) says, `state` carried from one to the next. */
const whyAt = (policy: Policy, d: Domain, hours: readonly number[], state: ScanState) =>
  whysAt(
    hours.map((h) => T0 + h * HOUR),
    state,
    (now, s) => runWith([d], now, s, policy),
  );

/** The state with each remembered restore-by replaced by `by`, as a hand edit would leave it. */
function restoreByEdited(state: ScanState, by: string): ScanState {
  const text = JSON.stringify(state).replace(/"restore_by":"[^"]{1,40}"/g, `"restore_by":"${by}"`);
  expect(text).toContain(`"restore_by":"${by}"`);
  return parseState(JSON.parse(text), 'test');
}

describe('a finding remembered as expired, its record read as a quarantine it cannot judge', () => {
  it('is repeated daily past its cap while the record says its last days to restore have come', () => {
    // Alerted as expired; then the record says quarantine (with a status the API does not document)
    // and a later expiry: kept as the expired finding remembered, at the same severity.
    const expired = domain('gone.nl', T0, { auto_renew: false, date_expiry: T0 - 10 * DAY });
    const first = runWith([expired], T0, EMPTY_STATE, capped);
    expect(first.why).toEqual(['1 new']);
    const odd = {
      ...expired,
      status: ['quarantine', 'pendingDelete'],
      date_expiry: T0 - 5 * DAY,
      date_deleted: T0 - 37 * DAY, // .nl: 40 days, restore by T0 + 3 days
    };
    const kept = runWith([odd], T0 + HOUR, first.next, capped);
    expect(kept.next.domains['gone.nl']?.finding?.kind).toBe('expired');
    expect(whyAt(capped, odd, [21, 42, 63], kept.next)).toEqual([
      ['1 critical repeated after 20 h'],
      ['1 in the last days to restore, repeated daily'],
      ['1 in the last days to restore, repeated daily'],
    ]);
  });
});

describe('a quarantine kept as remembered whose remembered restore-by was edited by hand', () => {
  /** Alerted at T0 in .nl quarantine restorable 39 more days; then read as expired by its dates only. */
  function keptState() {
    const held = heldInQuarantine(T0, 1);
    const first = runWith([held], T0, EMPTY_STATE, capped);
    const odd = { ...held, status: ['pendingDelete'] };
    const kept = runWith([odd], T0 + HOUR, first.next, capped);
    return { odd, state: kept.next };
  }

  it('is repeated daily past its cap when the restore-by is later than any restore period allows', () => {
    const { odd, state } = keptState();
    const edited = restoreByEdited(state, '9999-12-31T00:00:00Z');
    expect(whyAt(capped, odd, [21, 42, 63], edited).map((w) => w.length > 0)).toEqual([true, true, true]);
  });

  it('is escalated from a remembered restore-by that is a leap second the state accepts', () => {
    const { odd, state } = keptState();
    const edited = restoreByEdited(state, '2026-11-28T23:59:60Z');
    const policy = { ...DEFAULT_STATE_POLICY, escalation: { afterHours: 24, withinDays: 7 } };
    expect(whyAt(policy, odd, [21, 25], edited)).toEqual([
      ['1 critical repeated after 20 h'],
      ['1 critical not acted on, escalated'],
    ]);
  });

  it('is judged by the sooner restore-by its record says while it reads as a quarantine', () => {
    const { odd, state } = keptState();
    // Read as a quarantine again, with a later expiry (kept: it may be a renewal it cannot judge)
    // and a restore-by three days on; memory says 39 days.
    const sooner = {
      ...odd,
      status: ['quarantine', 'pendingDelete'],
      date_expiry: T0,
      date_deleted: T0 - 37 * DAY,
    };
    expect(whyAt(capped, sooner, [21, 42, 63], state)).toEqual([
      ['1 critical repeated after 20 h'],
      ['1 in the last days to restore, repeated daily'],
      ['1 in the last days to restore, repeated daily'],
    ]);
  });
});

describe('a quarantine kept as remembered, read as expired, then snoozed or acknowledged as read', () => {
  it.each([
    ['snoozed for 30 days', 'snooze'],
    ['acknowledged', 'acknowledge'],
  ] as const)(
    'when %s, is silenced until its remembered restore-by enters its last days, then alerted daily',
    (_, action) => {
      // .nl: 40 days from date_deleted, so restore by T0 + 12 days; last days from T0 + 5 days.
      const held = domain('held.nl', T0, {
        auto_renew: false,
        status: ['quarantine'],
        date_expiry: T0 - 30 * DAY,
        date_deleted: T0 - 28 * DAY,
      });
      const first = runWith([held], T0, EMPTY_STATE);
      const odd = { ...held, status: ['pendingDelete'] };
      const kept = runWith([odd], T0 + HOUR, first.next);
      // What the alert showed, and what the link judged: the record as read, expired.
      const published = kept.report.findings[0] as DomainFinding;
      expect(published.kind).toBe('expired');
      // A link now caps its snooze at the remembered last days (kept-snooze-link.test.ts); one made
      // by the record alone (an older link) is capped by the scan.
      const { remembered: _kept, ...read } = published;
      expect(snoozeOf(published, 30, T0 + 2 * HOUR).until).toBe(new Date(T0 + 4 * DAY).toISOString());
      const at = T0 + 2 * HOUR;
      const actions =
        action === 'snooze'
          ? { snooze: snoozeOf(read, 30, at) }
          : { acknowledged: acknowledgementOf(read, at) };
      const memory = kept.next.domains['held.nl'];
      if (!memory) throw new Error('no memory of held.nl');
      let state: ScanState = { ...kept.next, domains: { 'held.nl': { ...memory, actions } } };
      const days: Array<[number, boolean, boolean]> = [];
      for (let day = 1; day <= 8; day++) {
        const r = runWith([odd], T0 + day * DAY, state);
        days.push([day, r.silenced.has('held.nl'), r.publish]);
        state = r.next;
      }
      expect(days).toEqual([
        ...[1, 2, 3, 4].map((day) => [day, true, false]),
        ...[5, 6, 7, 8].map((day) => [day, false, true]),
      ]);
      expect(state.domains['held.nl']?.actions).toBeUndefined();
    },
  );
});
