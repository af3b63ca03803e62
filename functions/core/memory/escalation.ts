import { type DomainFinding, type Finding, isDomainFinding, severityRank } from '../findings/classify';
import type {
  AlertMemory,
  DomainMemory,
  EscalationPolicy,
  FindingMemory,
  Snooze,
  StatePolicy,
} from './state';
import { DAY_MS, HOUR_MS, isDue, notAfter } from './state-time';

/**
 * Escalation (docs/policies.md): a critical finding that nobody acknowledged or snoozed within
 * `afterHours` of its first alert as critical, and whose deadline (expiry, or restore-by in
 * quarantine) is within `withinDays`, is published again as an escalation, once per rung of the
 * threshold ladder.
 * Pure; compare.ts asks it per finding, and remembers the rung in the domain's `alerted`.
 */

/**
 * The rung a finding stands on, lower is more urgent: for `expiring`, the smallest threshold at
 * or above its days left; 0 once `expired`; -1 in `quarantine` (past expiry, below every rung);
 * null for findings off the ladder (auto-renew off beyond the window, contacts).
 */
export function stageOf(finding: Finding, thresholds: readonly number[]): number | null {
  if (!isDomainFinding(finding)) return null;
  if (finding.kind === 'quarantine') return -1;
  if (finding.kind === 'expired') return 0;
  if (finding.kind === 'auto_renew_off') return null;
  let stage: number | null = null;
  for (const t of thresholds) if (finding.days_left <= t && (stage === null || t < stage)) stage = t;
  return stage;
}

/**
 * The rung `f` stands on by the thresholds of its policy `group` (its `alertThresholds`), else the
 * deployment's, never higher than the rung memory knew (`prev`, {@link heldStage}): the one rule a
 * finding read (comparison.ts stageIn) and a finding memory keeps (kept-quarantine.ts) are put on a rung by.
 */
export const rungOf = (
  policy: Pick<StatePolicy, 'thresholds' | 'thresholdsByGroup'>,
  group: string | undefined,
  f: Finding,
  prev: FindingMemory | undefined,
): number | null =>
  heldStage(
    stageOf(f, (group !== undefined && policy.thresholdsByGroup?.get(group)) || policy.thresholds),
    prev,
    f,
  );

/**
 * The rung of a finding remembered as `prev`: `stage`, read at the scan's time, but never higher
 * than the remembered one while the finding is the same kind with the same expiry. Time alone only
 * lowers a rung; a scan whose clock ran back (--allow-clock-skew) would read it higher, and the next
 * scan at the real time would announce the rung it already announced as escalated again.
 */
export function heldStage(
  stage: number | null,
  prev: Pick<FindingMemory, 'kind' | 'stage' | 'date_expiry'> | undefined,
  f: Finding,
): number | null {
  if (stage === null || !prev || prev.stage === null || !isDomainFinding(f) || prev.kind !== f.kind)
    return stage;
  if (prev.date_expiry === undefined || Date.parse(prev.date_expiry) !== Date.parse(f.date_expiry))
    return stage;
  return Math.min(stage, prev.stage);
}

/**
 * The last alert as escalation counts from it: after a snooze or an acknowledgement (ended, or
 * lapsed early) the team has its `afterHours` again, so the count starts at its end, at the latest
 * `nowMs`, and an escalation from before it is forgotten: nobody acting once more is paged once more.
 * A first alert in the future of `nowMs` (saved by a scan whose clock ran ahead) cannot have come
 * after the snooze: the count starts at its end too, never at a time that has not come.
 */
export function sinceSnooze(
  alerted: AlertMemory | null | undefined,
  snooze: Pick<Snooze, 'until'> | undefined,
  nowMs: number,
): AlertMemory | null | undefined {
  if (!alerted || !snooze) return alerted;
  const ends = Math.min(Date.parse(snooze.until), nowMs);
  const first = Date.parse(alerted.first_at);
  if (!(first < ends) && !(first > nowMs)) return alerted;
  const { escalated: _before, ...rest } = alerted;
  return { ...rest, first_at: new Date(ends).toISOString() };
}

/**
 * The last alert `prev` of a finding memory keeps (a record that gives none: kept-quarantine.ts
 * keptFindingOf; one it cannot judge: unjudged-memory.ts judgedAs), as the alert of the finding it
 * stands for now (`now`): once its remembered expiry has passed, an `expiring` finding is `expired`,
 * and its alert, still of the expiring one, is the expired one's, first alerted at that expiry (at
 * the first alert when later: a snooze that ended), not escalated yet; as a readable record's
 * expired finding is another finding, first alerted at the first scan past its expiry. Memory keeps
 * it so (compare.ts keptAlerted, carriedOn): the record read again finds the expired finding's first
 * alert, and its `afterHours` go on rather than start again.
 */
export function keptAlertAs(
  prev: AlertMemory | null | undefined,
  now: Pick<DomainFinding, 'kind' | 'date_expiry'>,
): AlertMemory | null | undefined {
  if (now.kind !== 'expired' || prev?.kind !== 'expiring') return prev;
  const expiry = Date.parse(now.date_expiry);
  const { escalated: _expiring, ...rest } = prev;
  const first = Date.parse(prev.first_at);
  return { ...rest, kind: 'expired', first_at: new Date(first > expiry ? first : expiry).toISOString() };
}

/**
 * The deadline a person must act by: restore-by in quarantine (when known), the registry's expiry
 * on a mismatch (the day the domain ends on, as quiet hours judge it), else the expiry.
 */
export function deadlineOf(f: DomainFinding): string {
  if (f.kind === 'registry_expiry_mismatch' && f.registry?.date_expiry) return f.registry.date_expiry;
  return f.kind === 'quarantine' && f.restore_by ? f.restore_by : f.date_expiry;
}

/** Findings whose deadline is now: the registry deletes or holds the domain already (quiet-hours.ts). */
const DUE_NOW: ReadonlySet<string> = new Set(['registry_redemption', 'registry_hold', 'registry_unknown']);

/**
 * Hours the finding went without action since its first alert, when it escalates now; null when
 * it does not. `prev` is its last alert (null: never alerted, so nothing to escalate yet); a
 * silenced finding (snoozed, acknowledged) was acted on and never escalates.
 */
export function escalationHours(
  f: Finding,
  prev: AlertMemory | null | undefined,
  input: {
    readonly policy: EscalationPolicy | undefined;
    readonly nowMs: number;
    readonly stage: number | null;
    readonly silenced: boolean;
  },
): number | null {
  const { policy, nowMs, stage } = input;
  if (!policy || input.silenced || f.severity !== 'critical' || !isDomainFinding(f)) return null;
  // Alerted before as this very critical finding; an alert of another kind (expiring, now in
  // quarantine) is another finding, and an alert as a warning is not this critical one's first.
  if (!prev || prev.kind !== f.kind || prev.severity !== 'critical') return null;
  if (prev.escalated !== undefined && prev.escalated === stage) return null;
  // A stored time in the future counts as due (isDue): a clock that jumped never holds an escalation back.
  const first = prev.first_at;
  if (!isDue(first, nowMs, policy.afterHours * HOUR_MS)) return null;
  const left = DUE_NOW.has(f.kind) ? 0 : Date.parse(deadlineOf(f)) - nowMs;
  if (!(left <= policy.withinDays * DAY_MS)) return null;
  const waited = nowMs - Date.parse(first);
  return waited >= 0 ? Math.floor(waited / HOUR_MS) : policy.afterHours;
}

/**
 * The alert memory after this scan published a finding: the first alert kept while the finding
 * stays the same kind (and, once critical, critical: escalation counts from its first critical
 * alert), the rung of an escalation kept until the next one. A first alert after this scan's time
 * (a scan whose clock ran ahead saved it) is brought back to this scan's time: kept in the future,
 * no snooze could restart the count from it (sinceSnooze).
 */
export function nextAlertMemory(
  f: Finding,
  prev: AlertMemory | null | undefined,
  now: { readonly at: string; readonly stage: number | null; readonly escalatedNow: boolean },
): AlertMemory {
  const turnedCritical = f.severity === 'critical' && prev?.severity !== 'critical';
  const same = prev?.kind === f.kind && !turnedCritical ? prev : undefined;
  const escalated = now.escalatedNow ? now.stage : same?.escalated;
  return {
    kind: f.kind,
    severity: f.severity,
    stage: now.stage,
    at: now.at,
    first_at: same ? notAfter(same.first_at, now.at) : now.at,
    ...(escalated !== undefined ? { escalated } : {}),
  };
}

/**
 * True when silence just stopped holding `f` (its snooze ended or lapsed, its acknowledgement
 * lifted: `was` kept an action, `silenced` is false now) and `f` is worse than its last alert:
 * another kind, a higher severity or a lower rung than the reader heard. The scans in between
 * marked that escalation but left it out of the message; a snooze must not swallow it.
 */
export function missedWhileSilenced(
  was: DomainMemory | undefined,
  f: DomainFinding,
  stage: number | null,
  silenced: boolean,
): boolean {
  const last = was?.alerted;
  if (!was?.actions || !last || silenced) return false;
  const lowerRung = stage !== null && (last.stage === null || stage < last.stage);
  return severityRank(f.severity) > severityRank(last.severity) || lowerRung || last.kind !== f.kind;
}
