import { type Finding, isDomainFinding, type Severity } from '../findings/classify';
import { MAX_REPEAT_CAP, type Repeat } from '../scan/policies';
import type { AlertMemory, StatePolicy } from './state';
import { HOUR_MS, isDue } from './state-time';

/**
 * The repeat cadence (docs/policies.md#repeat-cadence): an ongoing finding is published again once
 * its severity's hours passed since its last alert (critical daily, warning weekly unless the
 * policies say otherwise), at most `cap` times after its first alert. The count lives in the
 * domain's memory (`alerted.repeats`) and starts over when the finding changes (another kind,
 * severity or rung). Escalation (escalation.ts) and the daily repeat in the last days to restore
 * (renewal-memory.ts) are deadlines, not repeats: the cap holds neither back. Pure.
 */

/** What the cadence says of one ongoing finding now. */
export type RepeatDecision = 'due' | 'capped' | 'not_due';

/** The finding as it stands now: what tells one finding from the next (its kind, severity and rung). */
export type RepeatedFinding = Pick<AlertMemory, 'kind' | 'severity' | 'stage'>;

/** True when the last alert carried this very finding: the same kind, severity and rung. */
const sameFinding = (alerted: AlertMemory, f: RepeatedFinding) =>
  alerted.kind === f.kind && alerted.severity === f.severity && alerted.stage === f.stage;

/** The repeat cadence of a finding: its policy's (by the name it carries), else the deployment's. */
export const repeatFor = (policy: Pick<StatePolicy, 'repeat' | 'repeatByGroup'>, f: Finding): Repeat =>
  (isDomainFinding(f) && f.policy !== undefined && policy.repeatByGroup?.get(f.policy)) || policy.repeat;

/** The hours between repeats of a severity; null for one with no cadence (info). */
export const cadenceHours = (repeat: Repeat, severity: Severity): number | null =>
  severity === 'critical' ? repeat.critical : severity === 'warning' ? repeat.warning : null;

/**
 * Whether an ongoing finding is published again now. `alerted` is its last alert (none, or one of
 * another finding: this one was never alerted, so it is due whatever the cap). Info findings have
 * no cadence. A stored time in the future counts as due (isDue), so no stored value holds a repeat
 * back; only the cap does, and only once this very finding was repeated `cap` times.
 */
export function repeatDecision(
  f: RepeatedFinding,
  alerted: AlertMemory | null | undefined,
  repeat: Repeat,
  nowMs: number,
): RepeatDecision {
  const hours = cadenceHours(repeat, f.severity);
  if (hours === null) return 'not_due';
  if (alerted && !isDue(alerted.at, nowMs, hours * HOUR_MS)) return 'not_due';
  // A last alert of another finding was not this one's first: this one is not capped yet.
  if (alerted && sameFinding(alerted, f) && repeat.cap !== undefined && (alerted.repeats ?? 0) >= repeat.cap)
    return 'capped';
  return 'due';
}

/**
 * The count to remember in the alert memory `next` a published message leaves: one more than the
 * last alert's when this was a repeat of the same finding, the last alert's when the message
 * carried it for other news, and none (0) once the finding changed.
 */
export function nextRepeats(
  prev: AlertMemory | null | undefined,
  next: RepeatedFinding,
  repeatedNow: boolean,
): number {
  if (!prev || !sameFinding(prev, next)) return 0;
  // Bounded by the largest cap (1 000), so what is written always reads back.
  return Math.min((prev.repeats ?? 0) + (repeatedNow ? 1 : 0), MAX_REPEAT_CAP);
}

/**
 * The last alert of a finding kept as it was (a record this scan could not judge or confirm, whose
 * finding as read may be another): `prev` with the time and rung of `next` (what this scan remembers
 * as alerted of the finding as memory judges it) and one more repeat when this scan repeated it. It
 * stays the alert of the finding remembered (kind, escalation), so its cadence counts from this
 * message and the next scan is not due again; an escalation said now is kept. Its rung is the one
 * its remembered expiry stands on now (comparison.ts judged): a lower one starts the count of
 * repeats again, as for a finding read, so the cap holds it on each rung once its repeats are used.
 * Undefined when this scan did not alert it.
 */
export function carriedOn(
  prev: AlertMemory,
  next: AlertMemory | null,
  repeatedNow: boolean,
): AlertMemory | undefined {
  if (next === null || next === prev) return undefined;
  const now = { ...prev, stage: next.stage };
  const repeats = nextRepeats(prev, now, repeatedNow);
  const { repeats: _was, escalated, ...rest } = now;
  // An escalation said now is remembered (its rung), as for any finding: said once.
  const rung = next.escalated ?? escalated;
  return {
    ...rest,
    at: next.at,
    ...(rung !== undefined ? { escalated: rung } : {}),
    ...(repeats > 0 ? { repeats } : {}),
  };
}
