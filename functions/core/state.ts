import * as z from 'zod';
import { applyActions, type DomainActions, DomainActionsSchema, type Lapse } from './actions';
import {
  type DomainFinding,
  type DomainFindingKind,
  type Finding,
  isDomainFinding,
  SEVERITIES,
  type Severity,
  severityRank,
} from './classify';
import { SentinelError } from './errors';
import {
  lastDaysRepeatDue,
  premiumPriceChange,
  premiumPriceOf,
  type RenewalWatch,
  rememberRenewals,
  renewalObservation,
} from './renewal-memory';
import type { Report } from './scan';
import type { Domain } from './schemas';
import { normalizeDomainName } from './text';

/**
 * Memory between scans, pure: what one scan remembers for the next, and the one function that
 * compares a scan with that memory (what is new, escalated, changed or resolved, and whether to
 * publish). The stores that keep it live in functions/adapters.
 */

/** How a finding relates to the last scan. */
export type Change = 'new' | 'escalated' | 'ongoing';

/** Kinds of change to a domain that are news in themselves, finding or not. */
export const CHANGE_KINDS = [
  'left_account',
  'transfer_lock_off',
  'auth_code_issued',
  'registrant_changed',
  'nameservers_changed',
  'auto_renew_turned_off',
  'dnssec_unsigned',
  'premium_price_changed',
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** Why a finding went away (or fell in severity). */
export const RESOLVED_REASONS = [
  'renewed',
  'auto_renew_on',
  'restored',
  'left_account',
  'no_longer_pending',
  'no_longer_flagged',
] as const;
export type ResolvedReason = (typeof RESOLVED_REASONS)[number];

/**
 * The fields of a domain watched between scans. A field absent here was absent from the record:
 * nothing is inferred from or to an unknown value. The auth code itself is a secret: only whether
 * one exists is kept.
 */
export interface WatchedFields {
  readonly registrant_handle?: string | null;
  readonly transfer_lock?: boolean | null;
  readonly auth_code_present?: boolean;
  readonly nsgroup?: string | null;
  readonly dns_hosted?: boolean | null;
  readonly auto_renew?: boolean | null;
  readonly dnssec?: string | null;
  /** Premium domains: the price as read; null when the record states none. */
  readonly premium_price?: { readonly currency: string; readonly amount: number } | null;
  /** Auto-renew domains: the renewal watched for (functions/core/renewal-memory.ts). */
  readonly renewal?: RenewalWatch;
}

/** The watched fields of one domain as read. */
export function watchedFieldsOf(domain: Domain): WatchedFields {
  const out: { -readonly [K in keyof WatchedFields]: WatchedFields[K] } = {
    registrant_handle: domain.registrant_handle,
    auto_renew: domain.auto_renew,
  };
  if (domain.transfer_lock !== undefined) out.transfer_lock = domain.transfer_lock;
  if (domain.auth_code_present !== undefined) out.auth_code_present = domain.auth_code_present;
  if (domain.nsgroup !== undefined) out.nsgroup = domain.nsgroup;
  if (domain.dns_hosted !== undefined) out.dns_hosted = domain.dns_hosted;
  if (domain.dnssec !== undefined) out.dnssec = domain.dnssec;
  const premium = premiumPriceOf(domain);
  if (premium !== undefined) out.premium_price = premium;
  const renewal = renewalObservation(domain);
  if (renewal) out.renewal = renewal;
  return out;
}

/** A finding as remembered: enough to tell new from escalated from ongoing, and why it went away. */
export interface FindingMemory {
  readonly kind: Finding['kind'];
  readonly severity: Severity;
  /** The ladder rung the finding stood on (see stageOf); null off the ladder. */
  readonly stage: number | null;
  readonly date_expiry?: string;
}

/** The last alert that carried a finding. */
export interface AlertMemory {
  readonly kind: Finding['kind'];
  readonly severity: Severity;
  readonly stage: number | null;
  /** ISO 8601: the `now` of the scan that published it. */
  readonly at: string;
}

export interface DomainMemory {
  readonly watched: WatchedFields;
  readonly finding: FindingMemory | null;
  readonly alerted: AlertMemory | null;
  /** Snooze and acknowledgement (functions/core/actions.ts); absent when neither is set. */
  readonly actions?: DomainActions;
}

export interface ContactMemory {
  readonly finding: FindingMemory;
  readonly alerted: AlertMemory | null;
}

/** Everything remembered about one account. */
export interface ScanState {
  readonly version: 1;
  /** The reseller base URL the state belongs to; a store refuses to mix accounts. */
  readonly scope: string | null;
  /** The first scan saved (the weekly summary counts from it until the first publish). */
  readonly started_at: string | null;
  readonly last_scan_at: string | null;
  readonly last_published_at: string | null;
  /** `domain:<name>` / `contact:<handle>` / `domain@page<n>` of the records that could not be read. */
  readonly problem_keys: readonly string[];
  readonly domains: Readonly<Record<string, DomainMemory>>;
  readonly contacts: Readonly<Record<string, ContactMemory>>;
}

/** The state before the first scan. */
export const EMPTY_STATE: ScanState = {
  version: 1,
  scope: null,
  started_at: null,
  last_scan_at: null,
  last_published_at: null,
  problem_keys: [],
  domains: {},
  contacts: {},
};

/** When to speak up, with state. */
export interface StatePolicy {
  /** Days-left rungs; crossing one since the last alert escalates. @default [30, 14, 7, 3, 1] */
  readonly thresholds: readonly number[];
  /** A critical finding is repeated when it was last alerted this many hours ago or more. @default 20 */
  readonly criticalRepeatHours: number;
  /** A summary goes out when nothing was published for this many days; 0 turns it off. @default 7 */
  readonly summaryEveryDays: number;
  /** Only what reaches this severity makes a message. @default 'warning' */
  readonly minSeverity: Severity;
}

export const DEFAULT_STATE_POLICY: StatePolicy = {
  thresholds: [30, 14, 7, 3, 1],
  criticalRepeatHours: 20,
  summaryEveryDays: 7,
  minSeverity: 'warning',
};

/** `{domain_name, kind, severity, before, after}`: something about a domain changed. */
export interface DomainChange {
  readonly domain_name: string;
  readonly kind: ChangeKind;
  readonly severity: Severity;
  readonly before: unknown;
  readonly after: unknown;
}

/** A finding of the last scan that went away or fell in severity, and why. */
export interface Resolution {
  /** Set for a domain finding. */
  readonly domain_name?: string;
  /** Set for a contact finding. */
  readonly handle?: string;
  readonly kind: Finding['kind'];
  /** Its severity in the last scan. */
  readonly severity: Severity;
  readonly reason: ResolvedReason;
  /** What is left of it now, when the domain still has a (lesser) finding. */
  readonly now: { readonly kind: Finding['kind']; readonly severity: Severity } | null;
}

export type StatefulFinding = Finding & { readonly change: Change };

/** The report with memory: each finding marked, plus what changed and what was resolved. */
export interface StatefulReport extends Omit<Report, 'findings'> {
  readonly findings: readonly StatefulFinding[];
  readonly changes: readonly DomainChange[];
  readonly resolved: readonly Resolution[];
}

export interface CompareInput {
  readonly report: Report;
  /** The watched fields of every domain read in this scan, by (lower-case) name. */
  readonly observed: ReadonlyMap<string, WatchedFields>;
  readonly state: ScanState;
  readonly policy: StatePolicy;
  /** The account the scan read (its base URL); saved in the state. */
  readonly scope?: string;
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
  readonly next: ScanState;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

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

const atOrAbove = (s: Severity, level: Severity) => severityRank(s) >= severityRank(level);
const lower = (a: number | null, b: number | null) => a !== null && (b === null || a < b);
const keyOfFinding = (f: Finding) => (isDomainFinding(f) ? f.domain_name : f.handle);

function memoryOf(f: Finding, thresholds: readonly number[]): FindingMemory {
  return {
    kind: f.kind,
    severity: f.severity,
    stage: stageOf(f, thresholds),
    ...(isDomainFinding(f) ? { date_expiry: f.date_expiry } : {}),
  };
}

function problemKey(p: Report['problems'][number]): string {
  return p.key === null ? `${p.resource}@page${p.page}` : `${p.resource}:${p.key.toLowerCase()}`;
}

/** The watched-field changes between two reads of one domain. */
export function fieldChanges(name: string, before: WatchedFields, after: WatchedFields): DomainChange[] {
  const out: DomainChange[] = [];
  const add = (kind: ChangeKind, b: unknown, a: unknown) =>
    out.push({ domain_name: name, kind, severity: 'warning', before: b, after: a });
  if (before.transfer_lock === true && after.transfer_lock === false) add('transfer_lock_off', true, false);
  if (before.auth_code_present === false && after.auth_code_present === true)
    add('auth_code_issued', false, true);
  if (
    typeof before.registrant_handle === 'string' &&
    typeof after.registrant_handle === 'string' &&
    before.registrant_handle !== after.registrant_handle
  )
    add('registrant_changed', before.registrant_handle, after.registrant_handle);
  const known = (w: WatchedFields) => w.nsgroup !== undefined && w.dns_hosted !== undefined;
  if (
    known(before) &&
    known(after) &&
    (before.nsgroup !== after.nsgroup || before.dns_hosted !== after.dns_hosted)
  )
    add(
      'nameservers_changed',
      { nsgroup: before.nsgroup, dns_hosted: before.dns_hosted },
      { nsgroup: after.nsgroup, dns_hosted: after.dns_hosted },
    );
  if (before.auto_renew === true && after.auto_renew !== undefined && after.auto_renew !== true)
    add('auto_renew_turned_off', true, after.auto_renew);
  if (before.dnssec === 'signed' && after.dnssec === 'unsigned') add('dnssec_unsigned', 'signed', 'unsigned');
  const price = premiumPriceChange(name, before, after);
  if (price) out.push(price);
  return out;
}

function resolvedReason(
  before: FindingMemory,
  now: DomainFinding | null,
  watchedNow: WatchedFields | undefined,
): ResolvedReason {
  if (before.kind === 'quarantine' && now?.kind !== 'quarantine') return 'restored';
  if (before.date_expiry && now && Date.parse(now.date_expiry) > Date.parse(before.date_expiry))
    return 'renewed';
  if (watchedNow?.auto_renew === true) return 'auto_renew_on';
  return 'no_longer_flagged';
}

/**
 * Compares this scan with the memory of the last one: marks each finding new, escalated or
 * ongoing; lists the changes to watched fields and the domains that left the account (only from a
 * read proven complete: full mode, every unreadable record identified); lists what was resolved;
 * decides whether to publish; and returns the state to save once that is done.
 *
 * Escalated: the severity rose, or the finding stands on a lower rung of the threshold ladder
 * than when last seen, however many runs were missed in between (30 → 5 days left escalates once,
 * to the 7-day rung). A renewal (later expiry) resolves the old finding; what remains is new.
 */
export function compareWithState(input: CompareInput): CompareResult {
  const { state, policy } = input;
  // First, what only memory can tell about renewals (renewal-memory.ts): its own step.
  const renewals = rememberRenewals({ report: input.report, observed: input.observed, state });
  const observed = renewals.observed;
  // Snoozed and acknowledged findings stay in the report, marked, and are never announced; an
  // action that lapsed (expired, worse, changed, resolved) is dropped from the next state.
  const silencing = applyActions(
    renewals.report,
    actionsOf(state),
    Date.parse(input.report.now),
    normalizeDomainName,
  );
  const report = silencing.report;
  const now = report.now;
  const nowMs = Date.parse(now);
  const { thresholds, minSeverity } = policy;
  const problemKeys = report.problems.map(problemKey);
  const unreadable = new Set(problemKeys);
  // A record that could not be read may be any domain: then nobody can be said to have left.
  const complete =
    report.source.mode === 'full' && report.problems.every((p) => p.resource !== 'domain' || p.key !== null);
  const firstRun = state.last_scan_at === null;

  const findings: StatefulFinding[] = [];
  const resolved: Resolution[] = [];
  const changes: DomainChange[] = [];
  const nextDomains: Record<string, DomainMemory> = {};
  const nextContacts: Record<string, ContactMemory> = {};
  const announced: StatefulFinding[] = [];
  const resolvedNames = new Set<string>();
  const findingByDomain = new Map<string, DomainFinding>();
  for (const f of report.findings) if (isDomainFinding(f)) findingByDomain.set(f.domain_name, f);

  /** The finding remembered for `key` went away or fell: a resolved entry, with what stands now. */
  const resolveStill = (key: string, prev: FindingMemory, f: DomainFinding) => {
    resolved.push({
      domain_name: key,
      kind: prev.kind,
      severity: prev.severity,
      reason: resolvedReason(prev, f, observed.get(key)),
      now: { kind: f.kind, severity: f.severity },
    });
    resolvedNames.add(key);
  };
  for (const f of report.findings) {
    const key = keyOfFinding(f);
    const prev = isDomainFinding(f) ? state.domains[key]?.finding : state.contacts[key]?.finding;
    let change: Change = 'ongoing';
    if (!prev) change = 'new';
    else if (
      isDomainFinding(f) &&
      prev.date_expiry &&
      Date.parse(f.date_expiry) > Date.parse(prev.date_expiry)
    ) {
      // Renewed but still flagged (e.g. renewed for too short a term): the old finding is resolved.
      resolveStill(key, prev, f);
      change = 'new';
    } else if (severityRank(f.severity) < severityRank(prev.severity) && isDomainFinding(f)) {
      // Fell in severity (auto-renew turned on): resolved, whatever rung it now stands on.
      resolveStill(key, prev, f);
    } else if (
      severityRank(f.severity) > severityRank(prev.severity) ||
      lower(stageOf(f, thresholds), prev.stage)
    ) {
      change = 'escalated';
    }
    const marked = { ...f, change } as StatefulFinding;
    findings.push(marked);
    if (change !== 'ongoing' && atOrAbove(f.severity, minSeverity) && !silencing.silenced.has(key))
      announced.push(marked);
  }

  // Domains remembered: resolved, left, or (read incomplete / unreadable) carried over unchanged.
  for (const [name, memory] of Object.entries(state.domains)) {
    const seen = observed.has(name) || findingByDomain.has(name);
    if (!seen) {
      if (complete && !unreadable.has(`domain:${name}`)) {
        changes.push({
          domain_name: name,
          kind: 'left_account',
          severity: 'critical',
          before: 'in the account',
          after: 'not in the account',
        });
        if (memory.finding)
          resolved.push({
            domain_name: name,
            kind: memory.finding.kind,
            severity: memory.finding.severity,
            reason: 'left_account',
            now: null,
          });
      } else {
        nextDomains[name] = memory;
      }
      continue;
    }
    const watchedNow = observed.get(name);
    if (complete && watchedNow) changes.push(...fieldChanges(name, memory.watched, watchedNow));
    if (memory.finding && !findingByDomain.has(name)) {
      resolved.push({
        domain_name: name,
        kind: memory.finding.kind,
        severity: memory.finding.severity,
        reason: resolvedReason(memory.finding, null, watchedNow),
        now: null,
      });
    }
  }
  for (const [handle, memory] of Object.entries(state.contacts)) {
    const still = report.findings.some((f) => !isDomainFinding(f) && f.handle === handle);
    if (still) continue;
    if (unreadable.has(`contact:${handle.toLowerCase()}`)) {
      nextContacts[handle] = memory;
      continue;
    }
    resolved.push({
      handle,
      kind: memory.finding.kind,
      severity: memory.finding.severity,
      reason: 'no_longer_pending',
      now: null,
    });
  }

  // Whether to speak.
  const why: string[] = [];
  const count = (n: number, what: string) => n > 0 && why.push(`${n} ${what}`);
  count(announced.filter((f) => f.change === 'new').length, 'new');
  count(announced.filter((f) => f.change === 'escalated').length, 'escalated');
  count(changes.filter((c) => atOrAbove(c.severity, minSeverity)).length, 'changed');
  count(resolved.filter((r) => atOrAbove(r.severity, minSeverity)).length, 'resolved');
  const repeatDue = (f: StatefulFinding) => {
    if (f.severity !== 'critical' || f.change !== 'ongoing' || !isDomainFinding(f)) return false;
    if (silencing.silenced.has(f.domain_name)) return false;
    const alerted = state.domains[f.domain_name]?.alerted;
    return !alerted || nowMs - Date.parse(alerted.at) >= policy.criticalRepeatHours * HOUR_MS;
  };
  if (atOrAbove('critical', minSeverity))
    count(findings.filter(repeatDue).length, `critical repeated after ${policy.criticalRepeatHours} h`);
  if (atOrAbove('critical', minSeverity))
    count(
      findings.filter(
        (f) =>
          isDomainFinding(f) &&
          !silencing.silenced.has(f.domain_name) &&
          lastDaysRepeatDue(f, state, nowMs, policy.criticalRepeatHours),
      ).length,
      'in the last days to restore, repeated daily',
    );
  const oldProblems = new Set(state.problem_keys);
  count(problemKeys.filter((k) => !oldProblems.has(k)).length, 'new unreadable records');
  // A record that says quarantine but cannot be read is as critical as a quarantine finding:
  // repeated on the same rhythm until it is fixed.
  const lastPublished = state.last_published_at === null ? null : Date.parse(state.last_published_at);
  if (
    why.length === 0 &&
    atOrAbove('critical', minSeverity) &&
    lastPublished !== null &&
    nowMs - lastPublished >= policy.criticalRepeatHours * HOUR_MS
  )
    count(
      report.problems.filter((p) => p.severity === 'critical').length,
      `unreadable records in quarantine repeated after ${policy.criticalRepeatHours} h`,
    );
  const lastSpoke = state.last_published_at ?? state.started_at;
  if (
    why.length === 0 &&
    policy.summaryEveryDays > 0 &&
    lastSpoke !== null &&
    nowMs - Date.parse(lastSpoke) >= policy.summaryEveryDays * DAY_MS
  )
    why.push(`summary: nothing published for ${policy.summaryEveryDays} days`);
  const publish = why.length > 0;
  if (!publish)
    why.push(
      firstRun
        ? `first scan: nothing at ${minSeverity} or above`
        : `nothing new, escalated, changed or resolved at ${minSeverity} or above`,
    );

  // The next state, assuming the message (if any) is delivered.
  const at = now;
  const alertedNow = (f: Finding, prev: AlertMemory | null | undefined): AlertMemory | null => {
    // A silenced finding was left out of the message: its memory stays what was last announced,
    // so it comes back (and repeats) as if the silence had not been there.
    if (isDomainFinding(f) && silencing.silenced.has(f.domain_name)) return prev ?? null;
    if (publish && atOrAbove(f.severity, minSeverity))
      return { kind: f.kind, severity: f.severity, stage: stageOf(f, thresholds), at };
    return prev ?? null;
  };
  for (const [name, watched] of observed) {
    const f = findingByDomain.get(name) ?? null;
    const prevAlert = resolvedNames.has(name) ? null : state.domains[name]?.alerted;
    nextDomains[name] = {
      watched,
      finding: f ? memoryOf(f, thresholds) : null,
      alerted: f ? alertedNow(f, prevAlert) : null,
    };
  }
  for (const f of report.findings) {
    if (isDomainFinding(f)) {
      if (!observed.has(f.domain_name)) {
        const prevAlert = resolvedNames.has(f.domain_name) ? null : state.domains[f.domain_name]?.alerted;
        nextDomains[f.domain_name] = {
          watched: state.domains[f.domain_name]?.watched ?? {},
          finding: memoryOf(f, thresholds),
          alerted: alertedNow(f, prevAlert),
        };
      }
    } else {
      nextContacts[f.handle] = {
        finding: memoryOf(f, thresholds),
        alerted: alertedNow(f, state.contacts[f.handle]?.alerted),
      };
    }
  }

  carryActions(state, nextDomains, silencing.lapsed);

  const order = (a: { domain_name?: string; handle?: string }, b: typeof a) =>
    (a.domain_name ?? a.handle ?? '').localeCompare(b.domain_name ?? b.handle ?? '');
  changes.sort(
    (a, b) =>
      severityRank(b.severity) - severityRank(a.severity) || order(a, b) || a.kind.localeCompare(b.kind),
  );
  resolved.sort((a, b) => severityRank(b.severity) - severityRank(a.severity) || order(a, b));

  return {
    report: { ...report, findings, changes, resolved },
    silenced: silencing.silenced,
    publish,
    why,
    complete,
    next: {
      version: 1,
      scope: input.scope ?? state.scope,
      started_at: state.started_at ?? now,
      last_scan_at: now,
      last_published_at: publish ? now : state.last_published_at,
      problem_keys: problemKeys,
      domains: nextDomains,
      contacts: nextContacts,
    },
  };
}

/** Every domain's snooze and acknowledgement, by normalised name. */
export function actionsOf(state: ScanState): Map<string, DomainActions> {
  const out = new Map<string, DomainActions>();
  for (const [name, memory] of Object.entries(state.domains))
    if (memory.actions && (memory.actions.snooze || memory.actions.acknowledged))
      out.set(normalizeDomainName(name), memory.actions);
  return out;
}

/** Keeps each domain's actions in the next state, less the ones that lapsed. */
function carryActions(state: ScanState, next: Record<string, DomainMemory>, lapsed: readonly Lapse[]): void {
  const gone = new Set(lapsed.map((l) => `${l.domain_name} ${l.action}`));
  for (const [name, memory] of Object.entries(state.domains)) {
    const target = next[name];
    if (!memory.actions || !target || target === memory) continue;
    const key = normalizeDomainName(name);
    const { snooze, acknowledged } = memory.actions;
    const kept: DomainActions = {
      ...(snooze && !gone.has(`${key} snooze`) ? { snooze } : {}),
      ...(acknowledged && !gone.has(`${key} acknowledge`) ? { acknowledged } : {}),
    };
    if (kept.snooze || kept.acknowledged) next[name] = { ...target, actions: kept };
  }
}

/** The state could not be read or written. */
export class StateError extends SentinelError {
  override readonly name: string = 'StateError';
}

/**
 * Another scan moved the state first (its generation changed) or holds the lease: this scan must
 * not publish what that one may announce. The caller re-reads and recomputes, or fails.
 */
export class StateConflictError extends StateError {
  override readonly name: string = 'StateConflictError';
}

const severity = z.enum(SEVERITIES);
const findingKind = z.enum([
  'quarantine',
  'expired',
  'renewal_failed',
  'expiring',
  'auto_renew_off',
  'contact_pending_validation',
] as const satisfies ReadonlyArray<DomainFindingKind | 'contact_pending_validation'>);
const FindingMemorySchema = z.object({
  kind: findingKind,
  severity,
  stage: z.number().nullable(),
  date_expiry: z.string().optional(),
});
const AlertMemorySchema = z.object({
  kind: findingKind,
  severity,
  stage: z.number().nullable(),
  at: z.string(),
});
const WatchedSchema = z.object({
  registrant_handle: z.string().nullable().optional(),
  transfer_lock: z.boolean().nullable().optional(),
  auth_code_present: z.boolean().optional(),
  nsgroup: z.string().nullable().optional(),
  dns_hosted: z.boolean().nullable().optional(),
  auto_renew: z.boolean().nullable().optional(),
  dnssec: z.string().nullable().optional(),
  premium_price: z
    .object({ currency: z.string().max(3), amount: z.number() })
    .nullable()
    .optional(),
  renewal: z
    .object({
      due: z.iso.datetime({ offset: true }).nullable(),
      expiry: z.iso.datetime({ offset: true }),
    })
    .optional(),
});
/** One domain's memory, as a store keeps it. */
export const DomainMemorySchema = z.object({
  watched: WatchedSchema,
  finding: FindingMemorySchema.nullable(),
  alerted: AlertMemorySchema.nullable(),
  actions: DomainActionsSchema.optional(),
});
/** One contact's memory, as a store keeps it. */
export const ContactMemorySchema = z.object({
  finding: FindingMemorySchema,
  alerted: AlertMemorySchema.nullable(),
});
/** The account-wide part of the state (everything but the per-domain and per-contact records). */
export const StateHeaderSchema = z.object({
  version: z.literal(1),
  scope: z.string().nullable(),
  started_at: z.string().nullable(),
  last_scan_at: z.string().nullable(),
  last_published_at: z.string().nullable(),
  problem_keys: z.array(z.string()),
});
const ScanStateSchema = StateHeaderSchema.extend({
  domains: z.record(z.string(), DomainMemorySchema),
  contacts: z.record(z.string(), ContactMemorySchema),
});

/** Validates stored state; a store that holds something else fails with the place and the reason. */
export function parseState(value: unknown, where: string): ScanState {
  const parsed = ScanStateSchema.safeParse(value);
  if (parsed.success) return parsed.data as ScanState;
  const issue = parsed.error.issues[0];
  throw new StateError(
    `the state in ${where} is not domain-sentinel state (${issue ? `${issue.path.join('.') || 'root'}: ${issue.message}` : 'invalid'}); ` +
      'point --state elsewhere, or remove it to start over',
  );
}
