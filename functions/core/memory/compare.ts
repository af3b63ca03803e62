import {
  type DomainFinding,
  type Finding,
  isDomainFinding,
  type Severity,
  severityRank,
} from '../findings/classify';
import type { Problem } from '../reseller/client';
import type { Report } from '../scan/scan';
import { unreadIn } from '../scan/scan-problems';
import { withActions } from './actions';
import {
  atOrAbove,
  type CompareInput,
  type Comparison,
  inGroup,
  isSilenced,
  judged,
  lower,
  nextWatched,
  prepare,
  priorAlert,
  priorFinding,
  shownName,
  stageIn,
  worth,
} from './comparison';
import { departureOf, nextDeparted } from './departures';
import { escalationHours, keptAlertAs, missedWhileSilenced, nextAlertMemory } from './escalation';
import { groupsHearing, unreadableGroupNews } from './group-news';
import {
  criticalRepeats,
  keptAlertSaid,
  keptInLastDays,
  keptKeys,
  keptNews,
  keptPriorAlert,
  keptSnoozeEnded,
  keptWorse,
  lapsesIn,
} from './kept-quarantine';
import { lastDaysRepeatDue, renewedOrRestored } from './renewal-memory';
import { cadenceHours, carriedOn, nextRepeats, repeatDecision, repeatFor } from './repeat';
import { resolution, resolveContacts, resolvedReason, sortEntries } from './resolutions';
import {
  type AlertMemory,
  type Change,
  type ContactMemory,
  type DomainChange,
  type DomainMemory,
  type FindingMemory,
  fieldChanges,
  type InGroup,
  STATE_VERSION,
  type StatefulFinding,
  type StatefulReport,
  type StateHead,
  sameMemory,
  sameWatched,
  type WatchedFields,
} from './state';
import { boundedProblemKeys, domainKey, isHashedKey, isNewProblemKey, keyOf, shownCut } from './state-bounds';
import { DAY_MS, isDue, notAfter } from './state-time';
import { inReportOrder, withRemembered } from './unjudged-memory';

/** What to remember next. */
export interface NextState {
  readonly head: StateHead;
  /** Every domain's next memory (a domain forgotten is left out). */
  readonly domains: ReadonlyMap<string, DomainMemory>;
  /** The domains whose memory changed: the next one, or null for one forgotten (items to write or delete). */
  readonly changed: ReadonlyMap<string, DomainMemory | null>;
}

export interface CompareResult {
  readonly report: StatefulReport;
  /** Domains whose finding a snooze or acknowledgement keeps out of the alert (see alertView). */
  readonly silenced: ReadonlySet<string>;
  readonly publish: boolean;
  /** Why it publishes, or why not, in words for the log. */
  readonly why: readonly string[];
  /** True when the read proved the whole account (left_account and field changes were decided). */
  readonly complete: boolean;
  /** The state to save once the message (if any) is delivered. */
  readonly next: NextState;
}

/**
 * Compares this scan with the memory of the last one, as named steps (pure): renewals memory knows
 * of, findings keyed and silenced (comparison.ts prepare); each finding marked new, escalated or
 * ongoing; the remembered domains walked: the changes to watched fields of those read, those that
 * left the account (only from a read proven complete: full mode, every unreadable record
 * identified), what was resolved; the contacts; whether to publish; what to remember once that is done.
 *
 * Escalated: the severity rose, or the finding stands on a lower rung of the threshold ladder
 * than when last seen, however many runs were missed in between (30 → 5 days left escalates once,
 * to the 7-day rung). A renewal (later expiry) resolves the old finding; what remains is new.
 *
 * Stored times are checked, never trusted: an age from a time in the future (or one that does not
 * parse) counts as due, so no stored value can hold a repeat or the summary back.
 */
export function compareMemory(input: CompareInput): CompareResult {
  const c = prepare(input);
  markFindings(c);
  walkRemembered(c);
  const carriedContacts = resolveContacts(c.priorContacts, c.report, c.resolved);
  const { publish, why, kept } = decidePublish(c);
  c.heard = groupsHearing(
    { ...c, report: kept },
    (x) => worth(c, x),
    (f) => isSilenced(c, f),
  );
  const next = {
    head: nextHead(c, publish, carriedContacts),
    ...nextDomains(c, publish, kept),
  };
  sortEntries(c.changes, c.resolved);
  return {
    report: { ...inReportOrder(kept, c.findings), changes: c.changes, resolved: c.resolved },
    silenced: c.silencing.silenced,
    publish,
    why,
    complete: c.complete,
    next,
  };
}

/** Step four: each finding new, escalated or ongoing, said as memory judges it, and announced when news. */
function markFindings(c: Comparison): void {
  for (const f of c.report.findings) {
    const key = isDomainFinding(f) ? domainKey(f.domain_name) : '';
    const change = changeOf(c, f, key);
    const j = isDomainFinding(f) ? judged(c, key, f) : undefined;
    const hours = j
      ? escalationHours(j, priorAlert(c, key, f), {
          policy: c.input.policy.escalation,
          nowMs: c.nowMs,
          stage: j.stage,
          silenced: isSilenced(c, f),
        })
      : null;
    if (hours !== null) c.escalated.add(key);
    const marked = {
      ...(j ? withRemembered(f, j, c.unconfirmed.get(key)) : f), // kept as remembered: said as that one too
      change,
      ...(hours !== null ? { escalated_after_hours: hours } : {}),
    } as StatefulFinding;
    c.findings.push(marked);
    // At the level memory judges it by (withRemembered): a kept critical read as info is news too.
    if (change !== 'ongoing' && worth(c, marked) && !isSilenced(c, f)) c.announced.push(marked);
  }
}

/** What a finding is beside the one remembered; a renewed or lessened domain finding resolves that one. */
function changeOf(c: Comparison, f: Finding, key: string): Change {
  const dom = isDomainFinding(f);
  const prev = dom ? priorFinding(c, key) : c.priorContacts.get(keyOf(f.handle))?.finding;
  if (!prev) return 'new';
  if (dom && c.unconfirmed.has(key)) return keptWorseThanSaid(c, key, f) ? 'escalated' : 'ongoing';
  const renewal = dom && renewedOrRestored(prev, f);
  if (dom && (renewal || severityRank(f.severity) < severityRank(prev.severity))) {
    // Renewed but still flagged (e.g. renewed for too short a term), or fell in severity
    // (auto-renew turned on): the old finding is resolved, with what stands now.
    const of = { domain_name: shownName(f.domain_name, key), ...inGroup(c, f.policy) };
    c.resolved.push(resolution(of, prev, resolvedReason(prev, f, nextWatched(c, key)), f));
    c.resolvedKeys.add(key);
    return renewal ? 'new' : 'ongoing';
  }
  if (
    severityRank(f.severity) > severityRank(prev.severity) ||
    lower(stageIn(c, f), prev.stage) ||
    prev.kind !== f.kind // another kind at the same severity and rung: a renewal that failed
  )
    return 'escalated';
  // Worse than its last alert while a snooze held: said once the silence ends.
  const missed = dom && missedWhileSilenced(c.memory.prior.get(key), f, stageIn(c, f), isSilenced(c, f));
  return missed ? 'escalated' : 'ongoing';
}

/**
 * Whether a finding kept as remembered (unconfirmed, unjudged) stands worse now than its last alert
 * said: on a lower rung by its remembered expiry, or past that expiry (keptAlertAs). News at once,
 * as a read finding on a lower rung or turned expired is, and as a record with none is (keptWorse),
 * not at its next repeat; the message leaves its alert so (carriedOn), so the next scan does not say it again.
 */
function keptWorseThanSaid(c: Comparison, key: string, f: DomainFinding): boolean {
  const last = c.memory.prior.get(key)?.alerted;
  // Silenced (snoozed, let lapse), its alert stays as said: not marked escalated scan after scan,
  // but once the silence ends (a step missed while snoozed, as missedWhileSilenced).
  if (!last || isSilenced(c, f)) return false;
  const j = judged(c, key, f);
  return keptAlertAs(last, j) !== last || lower(j.stage, last.stage);
}

/**
 * Step five, every domain remembered: one not read by a complete scan left the account; one read
 * shows what changed in its watched fields; a finding it had and has no more is resolved.
 */
function walkRemembered(c: Comparison): void {
  for (const [key, was] of c.memory.prior) {
    const seen = c.memory.seen.get(key);
    if (!seen && !c.findingByKey.has(key)) {
      if (!c.complete || c.unreadableDomains.has(key)) continue;
      const of = { domain_name: was.name ?? key, ...inGroup(c, was.group) };
      c.changes.push(membership(of, false));
      if (was.finding) c.resolved.push(resolution(of, was.finding, 'left_account'));
      c.left.set(key, departureOf(was, c.report.now));
      continue;
    }
    const watched = nextWatched(c, key);
    const of = {
      domain_name: seen ? shownName(seen.name, key) : (was.name ?? key),
      ...inGroup(c, seen ? seen.group : was.group),
    };
    // Said even when another record could not be read: the next scan compares with what this saves.
    if (c.report.source.mode === 'full' && seen && watched && !sameWatched(was.watched, seen.watched))
      for (const change of fieldChanges(of.domain_name, was.watched, watched))
        c.changes.push({ ...change, ...of });
    if (was.finding && !c.findingByKey.has(key) && !c.unconfirmed.has(key))
      c.resolved.push(resolution(of, was.finding, resolvedReason(was.finding, null, watched)));
  }
  // Announced as gone, listed again: back (its findings are new, its snooze holds again).
  for (const key of c.back.keys()) {
    const seen = c.memory.seen.get(key);
    if (seen)
      c.changes.push(membership({ domain_name: shownName(seen.name, key), ...inGroup(c, seen.group) }, true));
  }
}

/** A domain back in the account (a warning), or gone from it (critical). */
const membership = (of: { domain_name: string } & InGroup, back: boolean): DomainChange => ({
  ...of,
  kind: back ? 'returned' : 'left_account',
  severity: back ? 'warning' : 'critical',
  before: back ? 'not in the account' : 'in the account',
  after: back ? 'in the account' : 'not in the account',
});

/** Step seven: whether to speak, why (or why not) in words for the log, and the records critical by what memory knew said (keptNews). */
function decidePublish(c: Comparison): { publish: boolean; why: string[]; kept: Report } {
  const { policy, head } = c.input;
  const { minSeverity } = policy;
  const why: string[] = [];
  const count = (n: number, what: string, many = what) => n > 0 && why.push(`${n} ${n === 1 ? what : many}`);
  count(c.announced.filter((f) => f.change === 'new').length, 'new');
  count(c.announced.filter((f) => f.change === 'escalated').length, 'escalated');
  // What happens to a domain its policy lets lapse is never news (docs/policies.md).
  const news = (x: InGroup & { kind?: string; severity: Severity }) => !x.let_lapse && worth(c, x);
  count(c.changes.filter(news).length, 'changed');
  count(c.resolved.filter(news).length, 'resolved');
  // The kept quarantines in their last days, and whose snooze ended, and which unreadable records are
  // new: asked once, for the log's counts and for the news they are (keptNews).
  const { problems } = c.report;
  const keys = c.problemKeys;
  const isNew = isNewProblemKey(head, keys);
  const fresh = (i: number) => isNew(keys[i] as string);
  const lastDays = new Set(keptInLastDays(problems, c.memory, c.nowMs, c.input));
  const ended = new Set(keptSnoozeEnded(problems, c.silencing.lapsed));
  const worse = new Set(keptWorse(problems, c.memory, c.nowMs, policy));
  countRepeats(c, count, lastDays.size);
  count(c.escalated.size, 'critical not acted on, escalated');
  const freshOnes = problems.filter((_, i) => fresh(i));
  const freshCount = freshOnes.length;
  // A new record read by its dates or with its registrant given twice was read: not an unreadable one.
  const unread = unreadIn(freshOnes);
  count(unread, 'new unreadable record', 'new unreadable records');
  count(freshCount - unread, 'new record to look at', 'new records to look at');
  const told = (p: Problem) =>
    ended.has(p) || lastDays.has(p) || worse.has(p) || p.escalated_after_hours !== undefined;
  const { due, lines } = atOrAbove('critical', minSeverity)
    ? criticalRepeats(
        problems,
        c.memory,
        c.nowMs,
        {
          policy,
          lastPublished: head.last_published_at,
          findings: () => saidWith(c),
        },
        told,
        fresh,
      )
    : { due: new Set<Problem>(), lines: [] };
  for (const [n, one, many] of lines) count(n, one, many);
  // A kept quarantine critical again as its snooze ends: said now, as a snoozed finding is; counted
  // after the critical cadence, which it must not take the place of (the others' groups hear that).
  count(ended.size, 'snooze ended on a kept quarantine', 'snoozes ended on kept quarantines');
  countWorse(worse, count);
  const lastSpoke = head.last_published_at ?? head.started_at;
  const every = policy.summaryEveryDays;
  if (why.length === 0 && every > 0 && lastSpoke !== null && isDue(lastSpoke, c.nowMs, every * DAY_MS))
    why.push(`summary: nothing published for ${every} days`);
  const publish = why.length > 0;
  if (!publish)
    why.push(
      head.last_scan_at === null
        ? `first scan: nothing at ${minSeverity} or above`
        : `nothing new, escalated, changed or resolved at ${minSeverity} or above`,
    );
  const kept = keptNews(c.report, { publish, due, lastDays, ended, worse, keys, isNew });
  if (!publish || freshCount === 0) return { publish, why, kept };
  const lapsing = lapsesIn(policy.lapsing);
  return {
    publish,
    why,
    kept: { ...kept, problems: unreadableGroupNews(kept.problems, c.memory, lapsing, fresh) },
  };
}

/**
 * The log's lines for the records worse by their remembered expiry (keptWorse): said now, as a
 * readable record on a lower rung or turned expired is escalated at once; one escalated now is
 * counted as that.
 */
function countWorse(
  worse: ReadonlySet<Problem>,
  count: (n: number, what: string, many: string) => unknown,
): void {
  const now = [...worse].filter((p) => p.escalated_after_hours === undefined);
  const passed = now.filter((p) => p.remembered_expiry !== undefined).length;
  count(
    passed,
    'unreadable record past its remembered expiry',
    'unreadable records past their remembered expiry',
  );
  count(
    now.length - passed,
    'unreadable record on a lower rung by its remembered expiry',
    'unreadable records on a lower rung by their remembered expiry',
  );
}

/**
 * The findings a record that says quarantine beside its domain's is said with (criticalRepeats,
 * scan-problems.ts criticalRecords): those this message announces or repeats (countRepeats marked
 * them first), and a quarantine, whose last days to restore are repeated whatever the cap. Not one
 * silenced (the alert leaves it out), nor another capped: an expired finding that has used its
 * repeats must not take the record's critical cadence with it, as nothing else repeats that quarantine.
 */
const saidWith = (c: Comparison): Finding[] =>
  c.findings.filter(
    (f) =>
      !(isDomainFinding(f) && c.silencing.silenced.has(f.domain_name)) &&
      (f.change !== 'ongoing' ||
        f.repeated === true ||
        (isDomainFinding(f) && (f.kind === 'quarantine' || f.remembered?.kind === 'quarantine'))),
  );

/**
 * The ongoing domain findings at the minimum severity, neither silenced nor let lapse, whose repeat
 * cadence is due and not capped (`1 critical repeated after 20 h`), then the quarantines in their
 * last days to restore, repeated daily whatever the cadence or its cap, with the `keptLastDays`
 * kept quarantines in theirs (decidePublish asked which).
 */
function countRepeats(
  c: Comparison,
  count: (n: number, what: string) => unknown,
  keptLastDays: number,
): void {
  const by = new Map<string, number>();
  let lastDays = keptLastDays;
  const prior = (name: string) => c.memory.priorOf(name);
  c.findings.forEach((f, i) => {
    if (f.change !== 'ongoing' || !isDomainFinding(f) || isSilenced(c, f)) return;
    const [repeat, key] = [repeatFor(c.input.policy, f), domainKey(f.domain_name)];
    // A finding kept as remembered (unconfirmed, unjudged) keeps that finding's alert (carriedOn):
    // its level, cap and last days are that one's (its restore-by remembered), not the one read (an
    // info read of a kept quarantine); yet a record read as a quarantine in its last days is one.
    const j = judged(c, key, f);
    if (!worth(c, j)) return;
    const decision = repeatDecision(j, prior(f.domain_name)?.alerted, repeat, c.nowMs);
    const severity = j.severity;
    const within = decision === 'capped' ? Infinity : repeat.critical;
    const lastDaysDue = (x: Finding) => lastDaysRepeatDue({ ...x, change: f.change }, prior, c.nowMs, within);
    if (decision === 'due') {
      c.repeated.add(key);
      const what = `${severity} repeated after ${cadenceHours(repeat, severity)} h`;
      by.set(what, (by.get(what) ?? 0) + 1);
    } else if (lastDaysDue(j) || (j.kind !== f.kind && lastDaysDue(f))) lastDays++;
    else return;
    // Published again: news to its group too (group-news.ts).
    c.findings[i] = { ...f, repeated: true };
  });
  for (const [what, n] of [...by].sort(([a], [b]) => a.localeCompare(b))) count(n, what);
  count(lastDays, 'in the last days to restore, repeated daily');
}

/** The memory of a finding at the minimum severity once published (a silenced one keeps the last announced). */
function alertedNow(
  c: Comparison,
  publish: boolean,
  f: Finding,
  prev: AlertMemory | null | undefined,
  stage = stageIn(c, f),
): AlertMemory | null {
  // A silenced finding was left out of the message: its memory stays what was last announced, so
  // it comes back (and repeats) as if the silence had not been there (a lapse too, untagged).
  if (isSilenced(c, f) || !publish || !worth(c, f)) return prev ?? null;
  const key = isDomainFinding(f) ? domainKey(f.domain_name) : undefined;
  // In a group with recipients of its own whose message does not go out now: they did not hear of it.
  const group = isDomainFinding(f) ? f.policy : undefined;
  if (group !== undefined && c.input.policy.ownRecipients?.has(group) && !c.heard.has(group))
    return prev ?? null;
  const next = nextAlertMemory(f, prev, {
    at: c.report.now,
    stage,
    escalatedNow: key !== undefined && c.escalated.has(key),
  });
  const repeats = nextRepeats(prev, next, key !== undefined && c.repeated.has(key));
  return repeats > 0 ? { ...next, repeats } : next;
}

function findingMemoryOf(c: Comparison, f: Finding): FindingMemory {
  return {
    kind: f.kind,
    severity: f.severity,
    stage: stageIn(c, f),
    ...(isDomainFinding(f) ? { date_expiry: f.date_expiry } : {}),
    ...(isDomainFinding(f) && f.kind === 'quarantine' && f.restore_by ? { restore_by: f.restore_by } : {}),
  };
}

/**
 * Step eight, each domain's next memory, with its actions less the lapsed. Where nothing changed,
 * the remembered object itself, so only what changed is written.
 */
function nextDomains(c: Comparison, publish: boolean, said: Report): Pick<NextState, 'domains' | 'changed'> {
  const domains = new Map<string, DomainMemory>();
  const changed = new Map<string, DomainMemory | null>();
  const lapsed = new Set(c.silencing.lapsed.map((l) => `${l.domain_name} ${l.action}`));
  const kept = keptKeys(said.problems);
  for (const key of everyDomain(c)) {
    const was = c.memory.prior.get(key);
    const made = nextMemory(c, publish, key, kept);
    if (made === null) changed.set(key, null);
    else if (made === was) domains.set(key, was);
    else {
      const next = withActions(made, was?.actions ?? c.back.get(key)?.actions, key, lapsed);
      const same = was && sameMemory(was, next);
      domains.set(key, same ? was : next);
      if (!same) changed.set(key, next);
    }
  }
  return { domains, changed };
}

/** The keys of the domains read, then of those found but not read, then of the rest remembered. */
function* everyDomain({ memory: { seen, prior }, findingByKey }: Comparison): Generator<string> {
  yield* seen.keys();
  for (const key of findingByKey.keys()) if (!seen.has(key)) yield key;
  for (const key of prior.keys()) if (!seen.has(key) && !findingByKey.has(key)) yield key;
}

/**
 * A domain's next memory: what was read (renewal watch as decided) with its finding and alert; a
 * domain not read and not gone as it was remembered (null: gone). The remembered object itself
 * when it stays as it is.
 */
function nextMemory(
  c: Comparison,
  publish: boolean,
  key: string,
  kept: ReadonlyMap<string, Problem>,
): DomainMemory | null {
  const was = c.memory.prior.get(key);
  const read = c.memory.seen.get(key);
  const f = c.findingByKey.get(key);
  if (!read && f)
    return memoryOf(c, publish, key, { name: f.domain_name, group: f.policy }, was?.watched ?? {}, f);
  if (!read) {
    // Not read: gone from an account read whole, else carried over as it was; a critical finding
    // memory knew, said by its unreadable record, with its last alert moved as a kept quarantine's.
    if (c.left.has(key) || !was) return null;
    const alerted = kept.has(key) ? keptAlerted(c, publish, key, was, kept.get(key)) : undefined;
    if (alerted === undefined || alerted === was.alerted) return was;
    // Loud, so no action silences it (ended, or in a quarantine's last days): nextDomains keeps those
    // that did not lapse, so escalation counts from now, not again from each scan's end of one.
    const { actions: _kept, ...as } = was;
    return { ...as, alerted };
  }
  const watched = nextWatched(c, key) ?? read.watched;
  // Most of an account: read as remembered, nothing to say. The remembered memory stays as it is.
  if (!f && was && isQuiet(was) && read.group === was.group && sameWatched(was.watched, watched)) return was;
  if (!was || !c.unconfirmed.has(key)) return memoryOf(c, publish, key, read, watched, f);
  // A finding not confirmed or judged this time: its finding and alert as they were, the alert's
  // time moved on by a message that carried it (kept, every scan past its cadence repeated it).
  const prev = f && priorAlert(c, key, f);
  const j = f && judged(c, key, f);
  // A record critical by what memory knew, with no finding, keeps its last alert, marked escalated
  // once a message said so; past a snooze or an acknowledgement, counted from its end, as
  // priorAlert counts a finding's.
  const next =
    (prev && j && carriedOn(prev, alertedNow(c, publish, j, prev, j.stage), c.repeated.has(key))) ||
    (f ? (publish ? c.keptAlerts.get(key) : undefined) : keptAlerted(c, publish, key, was, kept.get(key)));
  // Its actions as nextDomains keeps them, less those that lapsed: spread with the rest, a lapsed one stayed.
  const { actions: _kept, ...as } = was;
  return { ...as, watched, group: read.group, ...(next ? { alerted: next } : {}) };
}

/**
 * The last alert of a domain whose record gives no finding (`p`, published critical by what
 * memory knew, as the message says it: keptNews): as it was (less a snooze's time, keptPriorAlert), escalated when the
 * message says so, and moved to now by a message its recipients hear it in (the account's, which
 * lists every problem record; its group's own when it has recipients of its own, which carries it
 * only as `news`: alerts/groups.ts), so its critical cadence counts from what they were last told
 * (criticalRepeats). Not when the group hears other news alone: its repeat would wait on that.
 */
function keptAlerted(
  c: Comparison,
  publish: boolean,
  key: string,
  was: DomainMemory,
  p: Problem | undefined,
): AlertMemory | null | undefined {
  const prev =
    (publish ? c.keptAlerts.get(key) : undefined) ??
    keptPriorAlert(was, c.silencing.keptSilenced.has(key), c.nowMs);
  const group = p?.policy;
  const unheard = group !== undefined && c.input.policy.ownRecipients?.has(group) && p?.news !== true;
  if (!prev || !p || !publish || unheard) return prev;
  // Said on its rung, or expired, by its remembered expiry (keptWorse): remembered as said, so not news again.
  const said = keptAlertSaid(prev, key, was, c.nowMs, { policy: c.input.policy, group });
  return { ...said, at: c.report.now };
}

/** A memory of nothing but watched fields (and its group), under its own name. */
const isQuiet = (m: DomainMemory) => !(m.finding || m.alerted || m.actions) && m.name === undefined;

function memoryOf(
  c: Comparison,
  publish: boolean,
  key: string,
  read: { readonly name: string; readonly group?: string | undefined },
  watched: WatchedFields,
  f: DomainFinding | undefined,
): DomainMemory {
  return {
    ...(isHashedKey(key) ? { name: shownCut(read.name) } : {}),
    ...(read.group === undefined ? {} : { group: read.group }),
    watched,
    finding: f ? findingMemoryOf(c, f) : null,
    alerted: f ? alertedNow(c, publish, f, priorAlert(c, key, f)) : null,
  };
}

/** The account-wide part to remember next, with each flagged contact's memory. */
function nextHead(c: Comparison, publish: boolean, contacts: Record<string, ContactMemory>): StateHead {
  const { head } = c.input;
  const now = c.report.now;
  for (const f of c.report.findings) {
    if (isDomainFinding(f)) continue;
    const key = keyOf(f.handle);
    contacts[key] = {
      ...(isHashedKey(key) ? { handle: shownCut(f.handle) } : {}),
      finding: findingMemoryOf(c, f),
      alerted: alertedNow(c, publish, f, c.priorContacts.get(key)?.alerted),
    };
  }
  // Bounded: past the cap, a digest of them all tells the next scan whether the set changed.
  const departed = nextDeparted(head, c.left, c.back, c.nowMs);
  const { kept, digest } = boundedProblemKeys(c.problemKeys);
  return {
    version: STATE_VERSION,
    scope: c.input.scope ?? head.scope,
    account: c.input.account ?? head.account ?? null,
    started_at: head.started_at === null ? now : notAfter(head.started_at, now),
    last_scan_at: now,
    last_published_at: publish ? now : head.last_published_at,
    problem_keys: kept,
    ...(digest === undefined ? {} : { problem_keys_digest: digest }),
    contacts,
    ...(departed === undefined ? {} : { departed }),
  };
}
