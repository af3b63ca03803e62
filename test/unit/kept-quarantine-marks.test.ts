import { describe, expect, it } from 'vitest';
import { keptInLastDays, withKeptQuarantines } from '../../functions/core/memory/kept-quarantine';
import { ScanMemory } from '../../functions/core/memory/scan-memory';
import type { Problem } from '../../functions/core/reseller/client';
import { judgedByDatesOnly, undocumentedStatusProblem } from '../../functions/core/scan/scan-problems';
import { HOUR, T0 } from '../support/account-model';
import { heldInQuarantine, renewedUndocumented, scanUnjudged as run } from '../support/state-scan';
import { EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * A record read by its dates only, and the kept quarantine memory publishes for one, are told by
 * marks on the record (`dates_only`, `kept_quarantine`), not by the words of its reason: a reason
 * reworded or cut is the same record, and a reason that spells those words is not one.
 */

const held = heldInQuarantine(T0, 35);
const healthy = renewedUndocumented(held, T0);
const dated = undocumentedStatusProblem(healthy, 1) as Problem;

describe('judgedByDatesOnly', () => {
  it('knows the record by its mark, its reason reworded or cut', () => {
    expect(judgedByDatesOnly(dated)).toBe(true);
    expect(judgedByDatesOnly({ ...dated, reason: dated.reason.slice(0, 40) })).toBe(true);
    expect(judgedByDatesOnly({ ...dated, reason: 'status pendingDelete, read by its dates' })).toBe(true);
  });

  it('does not take a record without the mark for one, whatever its reason says', () => {
    const { dates_only: _mark, ...words } = dated;
    expect(judgedByDatesOnly(words)).toBe(false);
  });
});

describe('a kept quarantine published as a problem record', () => {
  /** Alerted at T0 in quarantine (restore by T0 + 5 days), read healthy, undocumented, an hour on. */
  function kept(): { state: ScanState; problems: readonly Problem[] } {
    const first = run([held], T0, EMPTY_STATE);
    const state = run([healthy], T0 + HOUR, first.next).next;
    return { state, problems: run([healthy], T0 + 22 * HOUR, state).report.problems };
  }
  const memoryOf = (state: ScanState) => {
    const memory = new ScanMemory();
    for (const [key, value] of Object.entries(state.domains)) memory.remember(key, value);
    return memory;
  };
  /** A critical cadence of 48 h: its last days repeat it daily before that (keptInLastDays). */
  const input = (state: ScanState) => ({ head: state, policy: { repeat: { critical: 48 } } });

  it('is in its last days by its mark, its reason reworded', () => {
    const { state, problems } = kept();
    expect(problems[0]).toEqual(expect.objectContaining({ kept_quarantine: true }));
    const reworded = problems.map((p) => ({ ...p, reason: 'held in quarantine by memory' }));
    const now = T0 + 22 * HOUR;
    expect(keptInLastDays(reworded, memoryOf(state), now, input(state))).toHaveLength(1);
  });

  it('is not one without the mark, even with its reason', () => {
    const { state, problems } = kept();
    const unmarked = problems.map(({ kept_quarantine: _mark, ...p }) => p);
    const now = T0 + 22 * HOUR;
    expect(keptInLastDays(unmarked, memoryOf(state), now, input(state))).toEqual([]);
  });
});

describe('withKeptQuarantines', () => {
  it('marks one record of a domain listed twice, under two spellings, kept', () => {
    // Prepare: held.nl alerted in quarantine at T0, then read by its dates only as HELD.nl too.
    const state = run([held], T0, EMPTY_STATE).next;
    const memory = new ScanMemory();
    for (const [key, value] of Object.entries(state.domains)) memory.remember(key, value);
    const twice = [dated, { ...dated, key: 'HELD.nl' }];
    // Act
    const { problems } = withKeptQuarantines({ problems: twice, findings: [] }, memory, T0 + HOUR);
    // Assess: the first is the kept quarantine, critical; the second stays the record it was.
    expect(problems.map((p) => [p.key, p.kept_quarantine, p.severity])).toEqual([
      ['held.nl', true, 'critical'],
      ['HELD.nl', undefined, dated.severity],
    ]);
  });
});
