import { describe, expect, it } from 'vitest';
import type { Domain } from '../../functions/core/reseller/schemas';
import { HOUR, T0 } from '../support/account-model';
import {
  DAY,
  heldInQuarantine,
  renewedUndocumented,
  scanUnjudged as runWith,
  whysAt,
} from '../support/state-scan';
import { DEFAULT_STATE_POLICY, EMPTY_STATE, parseState, type ScanState } from '../support/whole-state';

/**
 * A quarantine kept as remembered while its record cannot be judged (a status the API does not
 * document: by its dates it reads expired): memory remembers its restore-by, so the last-days rule
 * and escalation judge it from that date.
 */

type Policy = typeof DEFAULT_STATE_POLICY;

/** In .nl quarantine (40 days to restore) since `deletedDaysAgo` days before T0. */
const held = (deletedDaysAgo: number) => heldInQuarantine(T0, deletedDaysAgo);

/** Alerted at T0 in quarantine, then read with an undocumented status an hour on; the why of each scan at `hours`. */
function keptRuns(policy: Policy, before: Domain, hours: readonly number[], forget = false) {
  const first = runWith([before], T0, EMPTY_STATE, policy);
  expect(first.why).toEqual(['1 new']);
  const odd = { ...before, status: ['pendingDelete'] };
  let state = runWith([odd], T0 + HOUR, first.next, policy).next;
  if (forget) state = withoutRestoreBy(state);
  return whysAt(
    hours.map((h) => T0 + h * HOUR),
    state,
    (now, s) => runWith([odd], now, s, policy),
  );
}

/** The state as a build before restore-by was remembered saved it: the same, without the field. */
function withoutRestoreBy(state: ScanState): ScanState {
  const text = JSON.stringify(state).replace(/,"restore_by":"[^"]{1,40}"/g, '');
  expect(text).not.toContain('restore_by');
  return parseState(JSON.parse(text), 'test');
}

describe('a quarantine remembered', () => {
  it('keeps the restore-by it was read with in its finding memory', () => {
    const first = runWith([held(35)], T0, EMPTY_STATE);
    expect(first.next.domains['held.nl']?.finding).toEqual({
      kind: 'quarantine',
      severity: 'critical',
      stage: -1,
      date_expiry: new Date(T0 - 36 * DAY).toISOString(),
      restore_by: new Date(T0 + 5 * DAY).toISOString(),
    });
  });
});

describe('a quarantine kept because its record could not be judged, read as expired', () => {
  it('is repeated daily in its last days to restore, whatever a longer critical cadence', () => {
    const policy = { ...DEFAULT_STATE_POLICY, repeat: { critical: 48, warning: 168 } };
    expect(keptRuns(policy, held(35), [21, 42, 63, 84])).toEqual([
      ['1 in the last days to restore, repeated daily'],
      ['1 in the last days to restore, repeated daily'],
      ['1 in the last days to restore, repeated daily'],
      ['1 in the last days to restore, repeated daily'],
    ]);
  });

  it('is escalated once when nobody acted on it and its restore-by is near', () => {
    const policy = { ...DEFAULT_STATE_POLICY, escalation: { afterHours: 24, withinDays: 7 } };
    expect(keptRuns(policy, held(35), [21, 25, 26, 45])).toEqual([
      ['1 critical repeated after 20 h'],
      ['1 critical not acted on, escalated'],
      [],
      ['1 critical repeated after 20 h'],
    ]);
  });

  it('is not escalated while its restore-by is further than the escalation window', () => {
    const policy = { ...DEFAULT_STATE_POLICY, escalation: { afterHours: 24, withinDays: 7 } };
    expect(keptRuns(policy, held(1), [25])).toEqual([['1 critical repeated after 20 h']]);
  });

  it('is held by its repeat cap while its restore-by is further than its last days', () => {
    const policy = { ...DEFAULT_STATE_POLICY, repeat: { critical: 20, warning: 168, cap: 1 } };
    expect(keptRuns(policy, held(1), [21, 42, 63]).map((w) => w.length > 0)).toEqual([true, false, false]);
  });

  it('repeats daily past its cap in its last days to restore', () => {
    const policy = { ...DEFAULT_STATE_POLICY, repeat: { critical: 20, warning: 168, cap: 1 } };
    expect(keptRuns(policy, held(35), [21, 42, 63])).toEqual([
      ['1 critical repeated after 20 h'],
      ['1 in the last days to restore, repeated daily'],
      ['1 in the last days to restore, repeated daily'],
    ]);
  });

  it('remembered by a state saved before restore-by was kept: repeated daily past its cap, as its last days may have come', () => {
    const policy = { ...DEFAULT_STATE_POLICY, repeat: { critical: 20, warning: 168, cap: 1 } };
    expect(keptRuns(policy, held(1), [21, 42, 63], true).map((w) => w.length > 0)).toEqual([
      true,
      true,
      true,
    ]);
  });
});

describe('a quarantine kept while its record reads renewed with a status the API does not document', () => {
  /** Alerted at T0 in quarantine 5 days before its restore-by, then read renewed with an undocumented status. */
  function renewedRuns(autoRenew: boolean, hours: readonly number[]) {
    const first = runWith([held(35)], T0, EMPTY_STATE);
    const odd = renewedUndocumented(held(35), T0, 300, autoRenew);
    let state = first.next;
    return hours.map((h) => {
      const r = runWith([odd], T0 + h * HOUR, state);
      state = r.next;
      expect(state.domains['held.nl']?.finding?.kind).toBe('quarantine');
      return r.publish;
    });
  }

  it('is repeated daily in its last days though it reads as an info finding', () => {
    expect(renewedRuns(false, [1, 22, 44, 66])).toEqual([true, true, true, true]);
  });

  it('is repeated on the critical cadence when the record read gives no finding at all', () => {
    expect(renewedRuns(true, [1, 22, 23, 44, 66])).toEqual([true, true, false, true, true]);
  });
});
