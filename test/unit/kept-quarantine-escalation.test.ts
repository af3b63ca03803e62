import { describe, expect, it } from 'vitest';
import { renderDigest } from '../../functions/core/alerts/digest';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import type { Domain } from '../../functions/core/reseller/schemas';
import type { Report } from '../../functions/core/scan/scan';
import { HOUR, T0 } from '../support/account-model';
import { heldInQuarantine, renewedUndocumented, scanUnjudged as run, whysAt } from '../support/state-scan';
import { DEFAULT_STATE_POLICY, EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * A quarantine kept as remembered while its record, read by its dates only, gives no finding is
 * published as a critical problem record (kept-quarantine.ts). Nobody acting on it within the
 * escalation delay escalates it as a quarantine finding escalates (docs/policies.md#escalation):
 * once, to the escalation recipients (the `escalation` attribute), said in the digest.
 */

/** In .nl quarantine since 35 days before T0: restore by 27 Nov 2026 06:00 UTC, 5 days after T0. */
const held = heldInQuarantine(T0, 35);
const healthy: Domain = renewedUndocumented(held, T0);
const policy = { ...DEFAULT_STATE_POLICY, escalation: { afterHours: 24, withinDays: 7 } };

/** First alerted in quarantine at T0, then read healthy under an undocumented status an hour on. */
function keptState(): ScanState {
  const first = run([held], T0, EMPTY_STATE, policy);
  return run([healthy], T0 + HOUR, first.next, policy).next;
}

describe('a kept quarantine whose record gives no finding, not acted on', () => {
  it('escalates once afterHours past its first critical alert, as a quarantine finding does', () => {
    const times = [20, 25, 45, 49].map((h) => T0 + h * HOUR);
    const kept = whysAt(times, keptState(), (now, s) => run([healthy], now, s, policy));
    const first = run([held], T0, EMPTY_STATE, policy);
    const found = whysAt(times, first.next, (now, s) => run([held], now, s, policy));
    const escalated = (whys: string[][]) => whys.map((w) => w.filter((x) => x.includes('escalated')).length);
    expect(escalated(found)).toEqual([0, 1, 0, 0]);
    expect(escalated(kept)).toEqual([0, 1, 0, 0]);
    expect(kept[1]).toEqual(['1 critical not acted on, escalated']);
  });

  it('goes to the escalation recipients and says how long nobody acted on it', () => {
    const report = run([healthy], T0 + 25 * HOUR, keptState(), policy).report as unknown as Report;
    expect(report.problems[0]).toEqual(
      expect.objectContaining({ key: 'held.nl', escalated_after_hours: 25 }),
    );
    expect(buildAlertMessage(report).attributes.escalation).toBe('true');
    expect(renderDigest(report)).toContain('  escalated: not acted on for 25 hours');
  });

  it('does not escalate without an escalation policy, nor once its restore-by is beyond withinDays', () => {
    const at = T0 + 25 * HOUR;
    const plain = run([healthy], at, keptState(), DEFAULT_STATE_POLICY);
    expect(plain.why.some((w) => w.includes('escalated'))).toBe(false);
    const far = { ...DEFAULT_STATE_POLICY, escalation: { afterHours: 24, withinDays: 3 } };
    const first = run([held], T0, EMPTY_STATE, far);
    const state = run([healthy], T0 + HOUR, first.next, far).next;
    expect(run([healthy], at, state, far).why.some((w) => w.includes('escalated'))).toBe(false);
  });
});
