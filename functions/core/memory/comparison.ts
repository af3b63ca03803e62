import {
  type DomainFinding,
  type Finding,
  isDomainFinding,
  type RememberedFinding,
  type Severity,
  severityRank,
} from '../findings/classify';
import type { Report } from '../scan/scan';
import { type AppliedActions, applyActions } from './actions';
import { returning, returningActions } from './departures';
import { keptAlertAs, rungOf, sinceSnooze, stageOf } from './escalation';
import { newsLevel } from './group-news';
import { keptFindingOf, withKeptEscalations, withKeptQuarantines } from './kept-quarantine';
import { unconfirmedRegistryKeys } from './registry-memory';
import { withFailedRenewals } from './renewal-memory';
import type { ScanMemory } from './scan-memory';
import type {
  AccountBinding,
  AlertMemory,
  ContactMemory,
  Departure,
  DomainChange,
  FindingMemory,
  InGroup,
  Resolution,
  StatefulFinding,
  StateHead,
  StatePolicy,
  WatchedFields,
} from './state';
import { domainKey, isHashedKey, problemKeysOf, shownCut } from './state-bounds';
import { type JudgedFinding, judgedAs, unjudgedKeys } from './unjudged-memory';

export interface CompareInput {
  readonly report: Report;
  /** The last scan's memory of the domains and what this scan read of them. */
  readonly memory: ScanMemory;
  /** The rest of the state as loaded. */
  readonly head: StateHead;
  readonly policy: StatePolicy;
  /** The account the scan read (its base URL); saved in the state. */
  readonly scope?: string;
  /** The account's binding (state-account.ts) to save; the state's own is kept when absent. */
  readonly account?: AccountBinding;
}

/**
 * What the steps of the comparison (compare.ts) share: its input, the report as memory sees it
 * (renewals memory knows of, findings keyed, snoozes applied, kept quarantines published), and what
 * the steps find. The judgements each step asks of a finding (its group's level, its rung, whether
 * it is silenced, its last alert) follow. Pure.
 */
export interface Comparison {
  readonly input: CompareInput;
  readonly memory: ScanMemory;
  readonly nowMs: number;
  /** The report with memory's renewals, the problems of keying, and silenced findings marked. */
  readonly report: Report;
  readonly findingByKey: ReadonlyMap<string, DomainFinding>;
  readonly silencing: AppliedActions;
  /** Next watched fields where the renewal watch kept is not the one read (see stepRenewals). */
  readonly watchedNext: ReadonlyMap<string, WatchedFields>;
  /** The read proved the whole account: full mode, and every unreadable domain record named. */
  readonly complete: boolean;
  readonly unreadableDomains: ReadonlySet<string>;
  /** The report's unreadable records under their keys (problemKeysOf), in its order. */
  readonly problemKeys: readonly string[];
  /** Remembered findings this scan could not confirm or judge (a registry check not done, a status the API does not document): kept as they were, by why (the registry named when both): as their channels say it. */
  readonly unconfirmed: ReadonlyMap<string, NonNullable<RememberedFinding['because']>>;
  readonly priorContacts: ReadonlyMap<string, ContactMemory>;
  readonly findings: StatefulFinding[];
  /** New or escalated findings at the minimum severity, not silenced: what the message announces. */
  readonly announced: StatefulFinding[];
  readonly changes: DomainChange[];
  readonly resolved: Resolution[];
  /** Domains whose last finding was resolved (its last alert is not carried on). */
  readonly resolvedKeys: Set<string>;
  /** Domains that left now, and those memory knew only as gone that are back (departures.ts). */
  readonly left: Map<string, Departure>;
  readonly back: ReadonlyMap<string, Departure>;
  /** Domains whose critical finding, or record critical by what memory knew (kept-quarantine.ts), escalates now (escalation.ts). */
  readonly escalated: Set<string>;
  /** The last alert each record critical by what memory knew that escalates now remembers once published (withKeptEscalations). */
  readonly keptAlerts: ReadonlyMap<string, AlertMemory>;
  /** Domains whose ongoing finding is published again now by its repeat cadence (repeat.ts). */
  readonly repeated: Set<string>;
  /** The groups with recipients of their own whose message goes out now (group-news.ts), once decided. */
  heard: ReadonlySet<string>;
}

/** Steps one to three: renewals only memory knows of, findings under their keys, snoozes applied. */
export function prepare(input: CompareInput): Comparison {
  const { memory, policy } = input;
  const nowMs = Date.parse(input.report.now);
  const renewals = memory.stepRenewals(nowMs);
  const keyed = memory.keyFindings(withFailedRenewals(input.report, renewals.failed));
  const back = returning(input.head, memory.seen, memory.prior, nowMs);
  const unconfirmed = new Map([
    ...[...unjudgedKeys(keyed.report, memory)].map((k) => [k, 'status_undocumented'] as const),
    ...[...unconfirmedRegistryKeys(keyed.report, memory)].map((k) => [k, 'registry_unconfirmed'] as const),
  ]);
  const silencing = applySnoozes(memory, nowMs, keyed, back, unconfirmed);
  const silence = { lapsing: policy.lapsing, silenced: silencing.keptSilenced };
  const kept = withKeptQuarantines(silencing.report, memory, nowMs, silence);
  const { report, alerts } = withKeptEscalations(kept, memory, nowMs, policy);
  const domainProblems = report.problems.filter((p) => p.resource === 'domain');
  return {
    input,
    memory,
    nowMs,
    report,
    findingByKey: keyed.findingByKey,
    silencing,
    watchedNext: renewals.next,
    // A record that could not be read may be any domain: then nobody can be said to have left.
    complete: report.source.mode === 'full' && domainProblems.every((p) => p.key !== null),
    unreadableDomains: new Set(domainProblems.flatMap((p) => (p.key === null ? [] : [domainKey(p.key)]))),
    problemKeys: problemKeysOf(report.problems, report.source.incomplete),
    unconfirmed,
    priorContacts: new Map(Object.entries(input.head.contacts)),
    findings: [],
    announced: [],
    changes: [],
    resolved: [],
    resolvedKeys: new Set(),
    left: new Map(),
    back,
    escalated: new Set(alerts.keys()),
    keptAlerts: alerts,
    repeated: new Set(),
    heard: new Set(),
  };
}

/**
 * Snoozed and acknowledged findings stay in the report, marked, and are never announced; an action
 * that lapsed (expired, worse, changed, resolved) is dropped from the next state. A finding kept as
 * remembered is silenced no further than the remembered one's last days; one with no finding whose
 * finding memory keeps has its snooze judged against that one, and is not resolved.
 */
function applySnoozes(
  memory: ScanMemory,
  nowMs: number,
  keyed: { readonly report: Report; readonly findingByKey: ReadonlyMap<string, DomainFinding> },
  back: ReadonlyMap<string, Departure>,
  unconfirmed: ReadonlyMap<string, unknown>,
): AppliedActions {
  const actions = new Map([...returningActions(back), ...memory.actions()]);
  const kept = (f: DomainFinding) => {
    const key = domainKey(f.domain_name);
    return unconfirmed.has(key) ? judgedAs(f, memory.prior.get(key)?.finding, nowMs, null) : f;
  };
  const keptOnly = (key: string) => {
    const was = memory.prior.get(key)?.finding;
    return was && unconfirmed.has(key) && !keyed.findingByKey.has(key)
      ? keptFindingOf(key, was, nowMs)
      : undefined;
  };
  return applyActions(keyed.report, actions, nowMs, domainKey, kept, keptOnly);
}

export const atOrAbove = (s: Severity, level: Severity) => severityRank(s) >= severityRank(level);
/** Whether a finding (or a change, a resolution) reaches its group's minSeverity, else the deployment's. */
export const worth = (
  { input: { policy: p } }: Comparison,
  x: { readonly kind?: string; readonly severity: Severity; readonly policy?: string },
) =>
  atOrAbove(newsLevel(x), (x.policy !== undefined && p.minSeverityByGroup?.get(x.policy)) || p.minSeverity);
/** The finding memory keeps of a domain, if any. */
export const priorFinding = (c: Comparison, key: string): FindingMemory | undefined =>
  c.memory.prior.get(key)?.finding ?? undefined;
/** The rung a finding stands on, by its group's alertThresholds, else the deployment's; never back up (heldStage). */
export const stageIn = (c: Comparison, f: Finding) =>
  isDomainFinding(f)
    ? rungOf(c.input.policy, f.policy, f, priorFinding(c, domainKey(f.domain_name)))
    : stageOf(f, c.input.policy.thresholds);
export const lower = (a: number | null, b: number | null) => a !== null && (b === null || a < b);
/** Snoozed, acknowledged or let lapse: never announced, escalated or repeated, nor remembered as alerted. */
export const isSilenced = (c: Comparison, f: Finding) =>
  isDomainFinding(f) && (f.let_lapse === true || c.silencing.silenced.has(f.domain_name));

/** How a name is shown in changes and resolved entries: as read, or cut when it is kept under a hash. */
export const shownName = (name: string, key: string) => (isHashedKey(key) ? shownCut(name) : name);

/** What a change or resolution says of a domain's group: its policy, and whether that lets it lapse. */
export function inGroup(c: Comparison, group: string | undefined): InGroup {
  if (group === undefined) return {};
  return c.input.policy.lapsing?.has(group) ? { policy: group, let_lapse: true } : { policy: group };
}

/**
 * A domain finding as memory judges it: one kept as remembered (unconfirmed, unjudged) as that one,
 * on the rung its remembered expiry stands on now (stageIn), as a read one steps down its rungs.
 */
export function judged(c: Comparison, key: string, f: DomainFinding): JudgedFinding {
  const j = judgedAs(f, c.unconfirmed.has(key) ? priorFinding(c, key) : undefined, c.nowMs, null);
  return { ...j, stage: stageIn(c, j) };
}

/**
 * A domain's last alert (none once resolved); past a snooze or acknowledgement, escalation counts
 * from its end; of a finding kept as remembered (unconfirmed, unjudged), as the alert of the finding
 * memory judges now (keptAlertAs: an expiring one's, its expiry passed, the expired one's).
 */
export function priorAlert(c: Comparison, key: string, f: Finding): AlertMemory | null | undefined {
  if (c.resolvedKeys.has(key)) return null;
  const was = c.memory.prior.get(key);
  if (isSilenced(c, f)) return was?.alerted;
  // Kept yet not silencing: an acknowledgement that lapses now (a quarantine's last days begin).
  const ended = was?.actions?.acknowledged ? { until: c.report.now } : was?.actions?.snooze;
  const prev = sinceSnooze(was?.alerted, ended, c.nowMs);
  return isDomainFinding(f) && c.unconfirmed.has(key) ? keptAlertAs(prev, judged(c, key, f)) : prev;
}

/** The watched fields a domain read by this scan remembers next: as read, with the renewal watch decided. */
export function nextWatched(c: Comparison, key: string): WatchedFields | undefined {
  return c.watchedNext.get(key) ?? c.memory.seen.get(key)?.watched;
}
