import { type DomainFinding, daysLeft, isDomainFinding } from '../findings/classify';
import { LAST_DAYS } from '../findings/quarantine-periods';
import type { Problem } from '../reseller/client';
import type { Report } from '../scan/scan';
import { type DATES_ONLY, judgedByDatesOnly } from '../scan/scan-problems';
import { cannotBeSilenced, type Lapse, snoozeLapse } from './actions';
import { escalationHours, keptAlertAs, rungOf, sinceSnooze } from './escalation';
import { LAST_DAYS_REPEAT_HOURS } from './renewal-memory';
import type { ScanMemory } from './scan-memory';
import type { AlertMemory, DomainMemory, FindingMemory, StatePolicy } from './state';
import { domainKey } from './state-bounds';
import { isDue } from './state-time';
import { believableRestoreBy, unreadableQuarantineCount } from './unjudged-memory';

/** What a kept quarantine's problem record adds to its reason; after {@link DATES_ONLY}, so no quoted status can spell it. */
const KEPT = '; last read in quarantine, ';
const HOUR_MS = 3_600_000;

/** The remembered quarantine a record read by its dates only keeps, when it gives no finding and is not let lapse. */
function keptQuarantine(
  p: Problem,
  found: ReadonlySet<string>,
  memory: ScanMemory,
  lapsing: ReadonlySet<string> | undefined,
): (DomainMemory & { readonly finding: FindingMemory }) | null {
  if (!judgedByDatesOnly(p) || p.key === null || p.severity === 'critical' || found.has(domainKey(p.key)))
    return null;
  const was = memory.prior.get(domainKey(p.key));
  if (
    !hasFinding(was) ||
    was.finding.kind !== 'quarantine' ||
    (was.group !== undefined && lapsing?.has(was.group))
  )
    return null;
  return was;
}

/** Whether memory `was` remembers a finding of its domain. */
const hasFinding = (
  was: DomainMemory | undefined,
): was is DomainMemory & { readonly finding: FindingMemory } => was?.finding != null;

/**
 * The finding memory keeps for a domain whose record gives none (`key`, its remembered finding
 * `was`) as it stands at `nowMs`: its severity and expiry remembered, its days left to that expiry,
 * its kind (an `expiring` one `expired`, critical, once that expiry has passed, as classify reads a
 * record then), in quarantine its restore-by (null: unknown). What a snooze or an acknowledgement is
 * judged against while memory keeps it (actions.ts applyActions, {@link keptCritical}), and what
 * escalates ({@link keptFindingNow}). Pure.
 */
export function keptFindingOf(key: string, was: FindingMemory, nowMs: number): DomainFinding {
  const quarantine = was.kind === 'quarantine' ? restoreOf(was, nowMs) : null;
  const date_expiry = was.date_expiry ?? new Date(nowMs).toISOString();
  const passed = was.kind === 'expiring' && was.date_expiry !== undefined && Date.parse(date_expiry) <= nowMs;
  return {
    kind: passed ? 'expired' : was.kind,
    severity: passed ? 'critical' : was.severity,
    domain_name: key,
    date_expiry,
    days_left: daysLeft(Date.parse(date_expiry), nowMs),
    ...(quarantine ? { restore_by: quarantine.by, days_to_restore: quarantine.left } : {}),
  } as unknown as DomainFinding;
}

/**
 * A kept finding's last alert as escalation counts from it: after a snooze (ended, or lapsed
 * early) or an acknowledgement (lapsed now), from its end (sinceSnooze), as a quarantine finding's
 * (comparison.ts priorAlert); an expiring one's, its expiry passed, as the expired one's
 * (keptAlertAs); while one silences it, as it was.
 */
export function keptPriorAlert(
  was: DomainMemory | undefined,
  silenced: boolean,
  nowMs: number,
): AlertMemory | null | undefined {
  if (silenced) return was?.alerted;
  const ended = was?.actions?.acknowledged ? { until: new Date(nowMs).toISOString() } : was?.actions?.snooze;
  const prev = sinceSnooze(was?.alerted, ended, nowMs);
  return was?.finding ? keptAlertAs(prev, keptFindingOf(was.name ?? '', was.finding, nowMs)) : prev;
}

/** The restore-by memory knows, and the days left to it (null: not known). */
function restoreOf(kept: FindingMemory, nowMs: number): { by: string | null; left: number | null } {
  const by = believableRestoreBy(kept.restore_by, nowMs);
  return { by, left: by === null ? null : daysLeft(Date.parse(by), nowMs) };
}

/**
 * "restore by 2026-11-27 06:00 UTC (days left: 3)": the count after a colon, never "1 day" against
 * "3 days", so the problem's key (its digits left out, state-bounds.ts steadyReason) is the same
 * from scan to scan until the restore-by passes (a moved one keeps it: its digits are left out).
 */
function restoreText({ by, left }: { by: string | null; left: number | null }): string {
  if (by === null || left === null) return 'its restore deadline is not known';
  const at = `${by.replace('T', ' ').slice(0, 16)} UTC`;
  return left < 0
    ? `its restore-by ${at} has PASSED (days ago: ${-left})`
    : `restore by ${at} (days left: ${left})`;
}

/**
 * The report with each record read by its dates only (a status the API does not document) that
 * gives no finding, of a domain memory keeps in quarantine (unjudged-memory.ts), published as a
 * record that says quarantine: critical, its reason saying what memory knows. A record that reads
 * healthy gives no finding to keep the quarantine in (no kind says "reads fine"); as a critical
 * problem record it is a critical item in every channel (`name LAST DAYS 3d to restore?` in the SMS), counted
 * in the digest's header and repeated as one (unreadableQuarantineCount). One a snooze still holds
 * for (`silenced`, keys: actions.ts keptSilenced) says the same, at the severity its record gives
 * (never critical, in no SMS, never repeated or escalated): marked kept, its record's key is the
 * same as when critical (state-bounds.ts problemKey), so the snooze's end is no new unreadable
 * record. Let lapse: left as it was (keptCritical marks it, never critical). It carries its group
 * (`policy`) as a finding does, so the group's message says it when the account's announces or
 * repeats it ({@link keptNews}). A domain listed twice (two spellings of one key) is kept once, by
 * its first record: one critical row, one snooze's end, one calendar deadline. Pure.
 */
export function withKeptQuarantines<R extends Pick<Report, 'problems' | 'findings'>>(
  report: R,
  memory: ScanMemory,
  nowMs: number,
  silence: { readonly lapsing?: ReadonlySet<string>; readonly silenced?: ReadonlySet<string> } = {},
): R {
  const found = new Set(report.findings.filter(isDomainFinding).map((f) => domainKey(f.domain_name)));
  // A domain listed twice (two spellings of one key) is one kept quarantine: the first record.
  const marked = new Set<string>();
  const kept = report.problems.map((p) => {
    const was = keptQuarantine(p, found, memory, silence.lapsing);
    if (was === null || p.key === null || marked.has(domainKey(p.key))) return p;
    marked.add(domainKey(p.key));
    const restore = restoreOf(was.finding, nowMs);
    const snoozed = silence.silenced?.has(domainKey(p.key)) === true;
    return {
      ...p,
      ...(was.group === undefined ? {} : { policy: was.group }),
      ...(snoozed ? {} : { severity: 'critical' as const }),
      kept_quarantine: true as const,
      reason: `${p.reason}${KEPT}${restoreText(restore)}`,
      restore_by: restore.by,
    };
  });
  const problems = withRememberedCritical(kept, found, memory, nowMs, silence.lapsing);
  return marked.size > 0 || problems !== kept ? { ...report, problems } : report;
}

/**
 * `problems` with each record {@link keptCritical} marks critical by what memory knew of its
 * domain, after the kept quarantines: a domain with a critical record already (one that says
 * quarantine, a kept quarantine, snoozed or not) is one item by it, and a domain listed twice is
 * marked once, by its first record. The same array when none is marked.
 */
function withRememberedCritical(
  problems: Problem[],
  found: ReadonlySet<string>,
  memory: ScanMemory,
  nowMs: number,
  lapsing: ReadonlySet<string> | undefined,
): Problem[] {
  const critical = new Set(
    problems.flatMap((p) =>
      (p.severity === 'critical' || p.kept_quarantine) && p.resource === 'domain' && p.key !== null
        ? [domainKey(p.key)]
        : [],
    ),
  );
  const before = critical.size;
  const marked = problems.map((p) => {
    if (p.key === null || critical.has(domainKey(p.key))) return p;
    const said = keptCritical(p, found, memory, nowMs, lapsing);
    if (said !== p) critical.add(domainKey(p.key));
    return said;
  });
  return critical.size > before ? marked : problems;
}

/**
 * `p` published critical when its record was not read at all, or read by its dates only gives no
 * finding, and memory knows its domain as critical (no snooze or acknowledgement holds, not let
 * lapse): marked with the kind memory knew as it stands now (`remembered_kind`, keptFindingOf: an
 * `expiring` one `expired` once its remembered expiry has passed, with that expiry, `remembered_expiry`)
 * and its group (`policy`), in quarantine its remembered restore-by too, so every channel says it as
 * that (`name expired?` in the SMS) and counts it critical, and it stands for its finding as a
 * kept quarantine does ({@link isKept}); a quarantine silenced (a snooze, an acknowledgement, let
 * lapse) is marked at its record's severity. A record read and judged (a registrant given twice)
 * is left as it is: its finding, or none, is what stands. Else `p`.
 */
function keptCritical(
  p: Problem,
  found: ReadonlySet<string>,
  memory: ScanMemory,
  nowMs: number,
  lapsing: ReadonlySet<string> | undefined,
): Problem {
  if (p.resource !== 'domain' || p.key === null || p.severity === 'critical') return p;
  const key = domainKey(p.key);
  if (found.has(key) || (memory.seen.has(key) && !judgedByDatesOnly(p))) return p;
  const was = memory.prior.get(key);
  if (was?.finding?.severity !== 'critical') return p;
  const quarantine = was.finding.kind === 'quarantine';
  // Loud unless let lapse, or a snooze or an acknowledgement still holds, judged against the finding
  // as it stands now (keptFindingOf), as actions.ts applyActions judges one read: a snooze lapses at
  // its end, when worse (expiring turned expired) or in a quarantine's last days to restore, which
  // are heard whatever anyone chose; an acknowledgement then too, or once the kind turned (changed).
  const now = keptFindingOf(p.key, was.finding, nowMs);
  const { snooze, acknowledged } = was.actions ?? {};
  const acked = acknowledged !== undefined && now.kind === was.finding.kind && !cannotBeSilenced(now);
  const silenced = acked || (snooze !== undefined && snoozeLapse(snooze, now, nowMs) === null);
  const loud = !silenced && !lapsesIn(lapsing)(was.group);
  // Silenced, a quarantine keeps its mark and restore-by (not its severity): its restore deadline
  // stays in the feed and on the page, as a snoozed quarantine finding's does.
  if (!loud && !quarantine) return p;
  return {
    ...p,
    ...(was.group === undefined ? {} : { policy: was.group }),
    ...(loud ? { severity: 'critical' as const } : {}),
    remembered_kind: now.kind,
    ...(now.kind !== was.finding.kind ? { remembered_expiry: now.date_expiry } : {}),
    ...(quarantine ? { restore_by: restoreOf(was.finding, nowMs).by } : {}),
  };
}

/**
 * The report with each record published critical by what memory knew ({@link isKept}) that
 * escalates now marked `escalated_after_hours`, as its finding nobody acted on would be
 * (escalation.ts, docs/policies.md): first alerted as that finding `afterHours` ago or more (its
 * domain's last alert, which memory keeps from the finding it had; a snooze that ended restarts the
 * count), its remembered deadline (a quarantine's restore-by, else its expiry) within `withinDays`,
 * once per rung: the rung its remembered expiry stands on now by its group's thresholds (`policy`,
 * as the record carries its group; else the deployment's), never higher than memory knew (heldStage),
 * as a readable record's finding steps down its rungs and turns expired with time alone ({@link keptFindingNow}).
 * A quarantine has one rung (-1).
 * `alerts`: for each, the last alert its domain remembers once the message carrying it goes out,
 * so the next scan does not escalate it again. Pure.
 */
export function withKeptEscalations<R extends Pick<Report, 'problems'>>(
  report: R,
  memory: ScanMemory,
  nowMs: number,
  policy: Pick<StatePolicy, 'escalation' | 'thresholds' | 'thresholdsByGroup'>,
): { report: R; alerts: ReadonlyMap<string, AlertMemory> } {
  const alerts = new Map<string, AlertMemory>();
  if (!policy.escalation || !report.problems.some(isKept)) return { report, alerts };
  const problems = report.problems.map((p) => {
    const key = p.key === null ? null : domainKey(p.key);
    const was = key === null ? undefined : memory.prior.get(key);
    if (!isKept(p) || key === null || !hasFinding(was)) return p;
    const { finding, prev } = keptFindingNow(p.key as string, was, nowMs);
    const stage = rungOf(policy, p.policy, finding, was.finding);
    const input = { policy: policy.escalation, nowMs, stage, silenced: false };
    const hours = escalationHours(finding, prev, input);
    if (hours === null || !prev) return p;
    alerts.set(key, { ...prev, escalated: stage });
    return { ...p, escalated_after_hours: hours };
  });
  return { report: alerts.size > 0 ? { ...report, problems } : report, alerts };
}

/**
 * The finding a record {@link isKept} stands for at `nowMs` ({@link keptFindingOf}: the finding
 * its domain's memory `was` remembers), and its last alert as escalation counts from it
 * ({@link keptPriorAlert}: once its remembered expiry has passed, the expired finding's, first
 * alerted at that expiry).
 */
function keptFindingNow(
  key: string,
  was: DomainMemory & { readonly finding: FindingMemory },
  nowMs: number,
): { finding: DomainFinding; prev: AlertMemory | null | undefined } {
  return { finding: keptFindingOf(key, was.finding, nowMs), prev: keptPriorAlert(was, false, nowMs) };
}

/** The thresholds a record's rung is read by (escalation.ts rungOf). */
type RungPolicy = Pick<StatePolicy, 'thresholds' | 'thresholdsByGroup'>;

/**
 * The last alert `prev` of a domain memory knows as `expiring` (`was`), whose record gives no
 * finding, as a message that says its record now leaves it: on the rung its remembered expiry
 * stands on now by its group's thresholds (`group`, escalation.ts rungOf) when lower, and once that
 * expiry has passed, the expired one's (escalation.ts keptAlertAs). `prev` itself when neither: what
 * memory last told is what stands. Any other alert as it is.
 */
export function keptAlertSaid(
  prev: AlertMemory,
  key: string,
  was: DomainMemory,
  nowMs: number,
  at: { readonly policy: RungPolicy; readonly group: string | undefined },
): AlertMemory {
  if (!hasFinding(was) || was.finding.kind !== 'expiring' || prev.kind !== 'expiring') return prev;
  const finding = keptFindingOf(key, was.finding, nowMs);
  const rung = rungOf(at.policy, at.group, finding, was.finding);
  const said = keptAlertAs(prev, finding) ?? prev;
  const lower = rung !== null && (prev.stage === null || rung < prev.stage);
  return lower ? { ...said, stage: rung } : said;
}

/**
 * The records {@link isKept} of a domain memory knew as `expiring` that stand worse now than their
 * last alert said ({@link keptAlertSaid}): on a lower rung by their remembered expiry, or past it
 * (`remembered_expiry`, keptCritical). News now, as a readable record's finding on a lower rung or
 * turned expired is (escalated at once, compare.ts changeOf), not at its next repeat; the message
 * that says it leaves its alert so (compare.ts keptAlerted), so the next scan does not tell it again.
 */
export const keptWorse = (
  problems: readonly Problem[],
  memory: ScanMemory,
  nowMs: number,
  policy: RungPolicy,
): Problem[] =>
  problems.filter((p) => {
    const was = isKept(p) ? memory.prior.get(domainKey(p.key as string)) : undefined;
    const last = was?.alerted;
    return (
      !!was &&
      !!last &&
      keptAlertSaid(last, p.key as string, was, nowMs, { policy, group: p.policy }) !== last
    );
  });

/**
 * Whether a problem record is published critical by what memory knew of its domain: a kept
 * quarantine ({@link withKeptQuarantines}, no snooze holds) or a remembered critical
 * ({@link keptCritical}). Either stands for its finding: repeated on its group's critical cadence by
 * its own last alert ({@link criticalRepeats}), escalated ({@link withKeptEscalations}), news to its
 * group ({@link keptNews}), its last alert moved by the messages that say it ({@link keptKeys}).
 */
const isKept = (p: Problem): boolean =>
  (p.kept_quarantine === true || p.remembered_kind !== undefined) &&
  p.key !== null &&
  p.severity === 'critical';

/** Whether a record {@link isKept} stands for a quarantine: only a quarantine has last days to restore. */
const isKeptQuarantine = (p: Problem): boolean =>
  isKept(p) && (p.kept_quarantine === true || p.remembered_kind === 'quarantine');

/**
 * The report with each record {@link isKept} the account's message announces or repeats now (`publish`:
 * a new unreadable record, one in `due` ({@link criticalRepeats}), a kept quarantine in its last days
 * (`lastDays`: {@link keptInLastDays}), one that escalates, one whose snooze ended now (`ended`:
 * {@link keptSnoozeEnded}), one worse by its remembered expiry (`worse`: {@link keptWorse})) marked `news`: alerts/groups.ts gives its group's message those, and
 * group-news.ts groupsHearing counts the group heard. The sets are decidePublish's (compare.ts),
 * which counted them for its log: asked once a scan.
 */
export function keptNews<R extends Report>(
  report: R,
  said: {
    readonly publish: boolean;
    /** The records {@link isKept} repeated on the critical cadence now ({@link criticalRepeats}). */
    readonly due: ReadonlySet<Problem>;
    readonly lastDays: ReadonlySet<Problem>;
    readonly ended: ReadonlySet<Problem>;
    /** The records worse by their remembered expiry than their last alert said ({@link keptWorse}). */
    readonly worse: ReadonlySet<Problem>;
    /** The problem keys of `report` (problemKeysOf), and which are new since the last message (isNewProblemKey). */
    readonly keys: readonly string[];
    readonly isNew: (key: string) => boolean;
  },
): R {
  const { problems } = report;
  if (!said.publish || !problems.some(isKept)) return report;
  const { due: repeated, lastDays, ended, worse, keys, isNew } = said;
  const marked = problems.map((p, i) => {
    const fresh = isKept(p) && isNew(keys[i] as string);
    const escalated = p.escalated_after_hours !== undefined;
    const due = repeated.has(p) || fresh || escalated || lastDays.has(p) || ended.has(p) || worse.has(p);
    if (!isKept(p) || !due) return p;
    return { ...p, news: true as const };
  });
  return { ...report, problems: marked };
}

/** Whether a domain of group `g` is let lapse, by the groups that let theirs lapse (`lapsing`, docs/policies.md). */
export const lapsesIn =
  (lapsing: ReadonlySet<string> | undefined) =>
  (g: string | undefined): boolean =>
    g !== undefined && lapsing?.has(g) === true;

/** A line of the publish log: how many, said for one and for more (`1 unreadable record …`, `2 unreadable records …`). */
export type LogLine = readonly [n: number, one: string, many: string];

/**
 * The records this scan could not read that are repeated on the critical cadence now, with the
 * log's lines for them. A record that says quarantine is as critical as a quarantine finding:
 * repeated on the top level's rhythm until it is fixed, whatever else is news; every message lists
 * them, so the account's last one (`lastPublished`) is when they were last said. One published
 * critical by what memory knew ({@link isKept}) stands for its finding, whose group may not have
 * heard that message: each is due (`due`) by its own last alert, which moves when its recipients
 * hear it (the account's, or its group's own: compare.ts keptAlerted), or by the account's last
 * message when it has none, on its group's cadence (a line of its own), whatever the cap. Less
 * those `told` otherwise now (escalated, in their last days, snooze ended) and the new ones
 * (`fresh`, by their index in `problems`: counted as new alone), so no line of the log counts one twice.
 */
export function criticalRepeats(
  problems: readonly Problem[],
  memory: ScanMemory,
  nowMs: number,
  at: {
    readonly policy: CadencePolicy & Pick<StatePolicy, 'lapsing'>;
    readonly lastPublished: string | null;
    /**
     * The findings a record beside its domain's critical finding is said with (compare.ts saidWith):
     * it is repeated with one of them, not on its own. Asked only when such a record may be due: a
     * scan of many findings and no record that says quarantine does not filter them all.
     */
    readonly findings: () => Report['findings'];
  },
  told: (p: Problem) => boolean,
  fresh: (i: number) => boolean,
): { due: Set<Problem>; lines: LogLine[] } {
  const { policy, lastPublished } = at;
  const hours = policy.repeat.critical;
  const due = new Set(
    problems.filter((p, i) => {
      if (!isKept(p) || told(p) || fresh(i)) return false;
      const last = memory.prior.get(domainKey(p.key as string))?.alerted?.at ?? lastPublished;
      return last !== null && isDue(last, nowMs, keptCadence(policy, p) * HOUR_MS);
    }),
  );
  const spoke = lastPublished !== null && isDue(lastPublished, nowMs, hours * HOUR_MS);
  const said = problems.filter((_, i) => !fresh(i));
  // Only a critical record memory does not stand for can count (unreadableQuarantineCount).
  const quarantines =
    spoke && said.some((p) => p.severity === 'critical' && !p.kept_quarantine && !p.remembered_kind)
      ? unreadableQuarantineCount(said, at.findings(), memory, lapsesIn(policy.lapsing))
      : 0;
  /** The line of those due that are kept quarantines (else remembered criticals), on the top cadence (else their group's). */
  const line = (quarantine: boolean, top: boolean, more = 0): LogLine => {
    const n = [...due].filter(
      (p) => (p.kept_quarantine === true) === quarantine && (keptCadence(policy, p) === hours) === top,
    ).length;
    const [one, many] = quarantine
      ? ['record in quarantine', 'records in quarantine']
      : ['record of a critical finding', 'records of critical findings'];
    const [its, their] = top
      ? [`after ${hours} h`, `after ${hours} h`]
      : ["on its group's cadence", "on their group's cadence"];
    return [n + more, `unreadable ${one} repeated ${its}`, `unreadable ${many} repeated ${their}`];
  };
  return {
    due,
    lines: [line(true, true, quarantines), line(false, true), line(true, false), line(false, false)],
  };
}

/** The critical cadences a record {@link isKept} is repeated by: the top level's, and each group's own. */
interface CadencePolicy {
  readonly repeat: { readonly critical: number };
  readonly repeatByGroup?: ReadonlyMap<string, { readonly critical: number }>;
}

/**
 * The hours between the critical repeats of a record {@link isKept}: its group's own cadence
 * (`policy`, as the record carries its group), else the top level's, as its finding's was (repeat.ts
 * repeatFor): a domain in a group repeated every 12 h is not repeated less often once its record
 * can no longer be judged.
 */
export const keptCadence = (policy: CadencePolicy, p: Problem): number =>
  (p.policy !== undefined && policy.repeatByGroup?.get(p.policy)?.critical) || policy.repeat.critical;

/**
 * The memory keys of the records published critical by what memory knew ({@link isKept}): their
 * last alert moves with each message that says them (compare.ts keptAlerted), their repeats count from it.
 */
export const keptKeys = (problems: readonly Problem[]): Map<string, Problem> =>
  new Map(problems.filter(isKept).map((p) => [domainKey(p.key as string), p]));

/**
 * The records published critical as the quarantine memory knew ({@link isKeptQuarantine}: a kept
 * quarantine, or one whose record could not be read), that are in their last days to
 * restore (LAST_DAYS, or unknown) and due daily: their domain's last alert (moved by a message its
 * recipients hear it in, compare.ts keptAlerted; none: the account's last message) at least
 * LAST_DAYS_REPEAT_HOURS ago (or in the future: a clock that ran back) and less than the critical
 * cadence, which repeats them otherwise ({@link criticalRepeats}); as a quarantine finding in its
 * last days is (lastDaysRepeatDue, by its own last alert too): a group with recipients of its own
 * hears it daily however often the account speaks of other news.
 */
export function keptInLastDays(
  problems: readonly Problem[],
  memory: ScanMemory,
  nowMs: number,
  input: { head: { last_published_at: string | null }; policy: CadencePolicy },
): Problem[] {
  return problems.filter((p) => {
    if (!isKeptQuarantine(p) || p.key === null) return false;
    const was = memory.prior.get(domainKey(p.key));
    const at = was?.alerted?.at ?? input.head.last_published_at;
    const elapsed = at === null ? Number.NaN : nowMs - Date.parse(at);
    const due =
      Number.isFinite(elapsed) &&
      (elapsed < 0 || elapsed >= LAST_DAYS_REPEAT_HOURS * HOUR_MS) &&
      elapsed < keptCadence(input.policy, p) * HOUR_MS;
    const left = was?.finding ? restoreOf(was.finding, nowMs).left : null;
    return due && (left === null || left <= LAST_DAYS);
  });
}

/**
 * The kept quarantines {@link withKeptQuarantines} published critical whose snooze this scan saw end
 * or lapse early (`lapsed`: applyActions', its worse or last days; a remembered critical's snooze
 * that ended is due by its cadence from its last alert, {@link criticalRepeats}, as a readable
 * finding's is): news once, as a snoozed
 * quarantine finding is published again as its snooze ends, not at the account's next repeat of
 * critical records. Memory drops the snooze with the message that says it (withActions), so the
 * next scan does not see it end again.
 */
export function keptSnoozeEnded(problems: readonly Problem[], lapsed: readonly Lapse[]): Problem[] {
  const ended = new Set(lapsed.filter((l) => l.action === 'snooze').map((l) => l.domain_name));
  return problems.filter((p) => p.kept_quarantine && isKept(p) && ended.has(domainKey(p.key as string)));
}
