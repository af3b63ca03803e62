import * as z from 'zod';
import { ConfigError, SentinelError } from '../base/errors';
import { normalizeDomainName, safeText } from '../base/text';
import {
  DOMAIN_FINDING_KINDS,
  type DomainFinding,
  type DomainFindingKind,
  type Finding,
  isDomainFinding,
  SEVERITIES,
  type Severity,
  severityRank,
} from '../findings/classify';
import type { Problem } from '../reseller/paging';
import type { Domain } from '../reseller/schemas';
import type { Report } from '../scan/scan';
import { applyActions, type DomainActions, DomainActionsSchema, type Lapse } from './actions';
import { unconfirmedRegistryIds } from './registry-memory';
import {
  type FailedRenewal,
  lastDaysRepeatDue,
  premiumPriceChange,
  premiumPriceOf,
  type RenewalWatch,
  renewalObservation,
  renewalStep,
  renewalStepOf,
  withFailedRenewals,
} from './renewal-memory';
import { type AccountBinding, AccountBindingSchema } from './state-account';
import {
  boundedProblemKeys,
  boundField,
  boundProblemKey,
  domainKey,
  isHashedKey,
  isPlainKey,
  keyOf,
  MAX_FIELD_LENGTH,
  MAX_KEY_LENGTH,
  shownCut,
  storedContactKey,
  storedDomainKey,
} from './state-bounds';
import { fastMemory, MemoryTable, NEXT, type RenewalNumbers } from './state-table';
import { isDue, StoredDateTime } from './state-time';

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
  /** Auto-renew domains: the renewal watched for (functions/core/memory/renewal-memory.ts). */
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
  /** The name (cut) when the memory is kept under a hash of it (see state-bounds.ts). */
  readonly name?: string;
  readonly watched: WatchedFields;
  readonly finding: FindingMemory | null;
  readonly alerted: AlertMemory | null;
  /** Snooze and acknowledgement (functions/core/memory/actions.ts); absent when neither is set. */
  readonly actions?: DomainActions;
}

export interface ContactMemory {
  /** The handle (cut) when the memory is kept under a hash of it. */
  readonly handle?: string;
  readonly finding: FindingMemory;
  readonly alerted: AlertMemory | null;
}

/** Everything remembered about one account. */
export interface ScanState {
  readonly version: 1;
  /** The reseller base URL the state belongs to; a store refuses to mix accounts. */
  readonly scope: string | null;
  /** The account (API key) the state belongs to, never the key itself; null until the first save. */
  readonly account: AccountBinding | null;
  /** The first scan saved (the weekly summary counts from it until the first publish). */
  readonly started_at: string | null;
  readonly last_scan_at: string | null;
  readonly last_published_at: string | null;
  /** `domain:<name>` / `contact:<handle>` / `domain@page<n>` of the records that could not be read (bounded). */
  readonly problem_keys: readonly string[];
  /** The digest of every unreadable-record key, when there were more than `problem_keys` holds. */
  readonly problem_keys_digest?: string;
  /** By key: the normalised name, or a hash of it (functions/core/memory/state-bounds.ts). */
  readonly domains: Readonly<Record<string, DomainMemory>>;
  /** By key: the handle, or a hash of it. */
  readonly contacts: Readonly<Record<string, ContactMemory>>;
}

/** The account-wide part of the state before the first scan. */
export const EMPTY_STATE_HEADER = {
  version: 1,
  scope: null,
  account: null,
  started_at: null,
  last_scan_at: null,
  last_published_at: null,
  problem_keys: [],
} as const satisfies z.input<typeof StateHeaderSchema>;

/** The state before the first scan. */
export const EMPTY_STATE: ScanState = { ...EMPTY_STATE_HEADER, problem_keys: [], domains: {}, contacts: {} };

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
  /** The account's binding (state-account.ts) to save; the state's own is kept when absent. */
  readonly account?: AccountBinding;
  /** The page each domain (by name as read) was read on, for the problems the memory adds. */
  readonly pages?: ReadonlyMap<string, number>;
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

function memoryOf(f: Finding, thresholds: readonly number[]): FindingMemory {
  return {
    kind: f.kind,
    severity: f.severity,
    stage: stageOf(f, thresholds),
    ...(isDomainFinding(f) ? { date_expiry: f.date_expiry } : {}),
  };
}

function problemKey(p: Problem): string {
  return boundProblemKey(
    p.key === null ? `${p.resource}@page${p.page}` : `${p.resource}:${p.key.toLowerCase()}`,
  );
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

/** A stored record's entries by key, own entries only; keys of older states are made again. */
function byKey<T>(record: Readonly<Record<string, T>>, rekey: (key: string) => string): Map<string, T> {
  const out = new Map<string, T>();
  for (const [stored, value] of Object.entries(record)) {
    const key = rekey(stored);
    if (!out.has(key)) out.set(key, value);
  }
  return out;
}

/** How a name is shown in changes and resolved entries: as read, or cut when it is kept under a hash. */
const shownName = (name: string, key: string) => (isHashedKey(key) ? shownCut(name) : name);

const BOUNDED_FIELDS = ['registrant_handle', 'nsgroup', 'dnssec'] as const;

/** A second record whose name is one already read once normalised: kept for the problem it becomes. */
interface SecondRecord {
  readonly name: string;
  /** The name of the first record of that key, as read. */
  readonly first: string;
  readonly page: number;
  readonly watched: WatchedFields;
}

/**
 * What one scan read of the account's domains, put beside the memory of the last scan: each domain
 * under its memory key in a {@link MemoryTable}, the first record of a key only. What the memory
 * cannot keep as it is becomes a problem record, so nothing from the reseller can wedge a store or
 * be mistaken for another domain: a second record whose normalised name is one already read (its
 * finding is left out of the findings and named in a problem, critical when the finding was, as
 * paging does for a name repeated in other letter case), a name longer than any domain name (kept
 * under a hash of it), and a watched field too long to keep (kept cut, with a hash, so a change is
 * still seen). Fed one domain at a time while the account is read, so nothing but the compact
 * table grows with the account.
 */
export class ScanMemory {
  /** The first records' problems (a name or a field too long to keep), in the order read. */
  private nameProblems: Problem[] = [];
  private seconds: SecondRecord[] = [];

  constructor(readonly table: MemoryTable = new MemoryTable()) {}

  /** The memory of `state.domains`, as a store would hand it over (keys of older states made again). */
  static of(domains: Readonly<Record<string, DomainMemory>>): ScanMemory {
    const memory = new ScanMemory();
    for (const [stored, value] of Object.entries(domains))
      memory.table.addPrior(storedDomainKey(stored), value);
    return memory;
  }

  /** One domain as read, with its watched fields, on `page`. */
  observe(name: string, watched: WatchedFields, page: number): void {
    const key = domainKey(name);
    const id = this.table.idOf(key);
    if (this.table.isSeen(id)) {
      this.seconds.push({ name, first: this.table.seenName(id), page, watched });
      return;
    }
    const length = normalizeDomainName(name).length;
    if (length > MAX_KEY_LENGTH)
      this.nameProblems.push(
        problemOf(
          name,
          page,
          `the name is ${length} characters, longer than any domain name (${MAX_KEY_LENGTH}): remembered under a hash of it; the domain itself was checked`,
        ),
      );
    let kept = watched;
    for (const field of BOUNDED_FIELDS) {
      const value = watched[field];
      if (typeof value !== 'string') continue;
      const bounded = boundField(value);
      if (bounded === value) continue;
      kept = { ...kept, [field]: bounded };
      this.nameProblems.push(
        problemOf(
          name,
          page,
          `its ${field} is ${value.length} characters, more than the ${MAX_FIELD_LENGTH} the state keeps: remembered cut, with a hash that still shows a change; the domain itself was checked`,
        ),
      );
    }
    this.table.markSeen(id, name, kept, page, key);
  }

  /**
   * One domain as read ({@link observe} with watchedFieldsOf(domain)), without making its watched
   * fields as objects when they fit the table as they are.
   */
  observeDomain(domain: Domain, page: number): void {
    const name = domain.domain_name;
    const key = domainKey(name);
    const id = this.table.idOf(key);
    // A hashed key (a name too long or odd to keep) goes the long way, which names the problem.
    if (!this.table.isSeen(id) && !isHashedKey(key) && this.table.markSeenDomain(id, domain, page, key))
      return;
    this.observe(name, watchedFieldsOf(domain), page);
  }

  /** Forgets the prior memories: the state moved on and is read again (what was read stays). */
  forgetPrior(): void {
    this.table.clearPrior();
  }

  /** Forgets what was read so far: the read started over, only the last attempt's domains count. */
  restart(): void {
    this.table.clearSeen();
    this.nameProblems = [];
    this.seconds = [];
  }

  /** The prior memory of the domain a name stands for. */
  prior(name: string): DomainMemory | undefined {
    const id = this.table.find(domainKey(name));
    return id < 0 ? undefined : this.table.priorMemory(id);
  }

  /**
   * The renewal memory's step (renewal-memory.ts) for every domain read: the watch each one keeps
   * next is set in the table, and the renewals that failed while watched come back by name.
   */
  stepRenewals(now: number): Map<string, FailedRenewal> {
    const table = this.table;
    const failed = new Map<string, FailedRenewal>();
    const seen: RenewalNumbers = { has: false, due: Number.NaN, expiry: Number.NaN };
    const prior: RenewalNumbers = { has: false, due: Number.NaN, expiry: Number.NaN };
    const none: RenewalNumbers = { has: false, due: Number.NaN, expiry: Number.NaN };
    for (let id = 0; id < table.size; id++) {
      if (!table.isSeen(id)) continue;
      const read = table.renewalOf('seen', id, seen);
      const before = table.hasPrior(id) ? table.renewalOf('prior', id, prior) : none;
      if (read && before) {
        // Compact records hold canonical times: equal numbers are equal strings.
        if (!read.has && !before.has) continue;
        const step = renewalStep(
          read.has,
          read.due,
          before.has ? before.due : NaN,
          read.expiry === before.expiry,
          now,
        );
        if (step.failed)
          failed.set(table.seenName(id), {
            due: new Date(before.due).toISOString(),
            expiry: new Date(read.expiry).toISOString(),
            watched: table.seenWatched(id),
          });
        table.keepRenewal(id, step.keep === 'before' ? 'prior' : step.keep === 'current' ? 'seen' : 'none');
        continue;
      }
      const watched = table.seenWatched(id);
      const remembered = table.priorWatched(id)?.renewal;
      const step = renewalStepOf(watched.renewal, remembered, now);
      if (step.failed && remembered?.due)
        failed.set(table.seenName(id), {
          due: remembered.due,
          expiry: watched.renewal?.expiry ?? '',
          watched,
        });
      const keep =
        step.keep === 'before' ? remembered : step.keep === 'current' ? watched.renewal : undefined;
      const { renewal: _read, ...rest } = watched;
      table.setNextWatched(id, keep ? { ...rest, renewal: keep } : rest);
    }
    for (const second of this.seconds) {
      const remembered = this.prior(second.name)?.watched.renewal;
      const step = renewalStepOf(second.watched.renewal, remembered, now);
      if (step.failed && remembered?.due && !failed.has(second.name))
        failed.set(second.name, {
          due: remembered.due,
          expiry: second.watched.renewal?.expiry ?? '',
          watched: second.watched,
        });
    }
    return failed;
  }

  /**
   * Puts every domain finding under its memory key and turns what cannot be remembered into
   * problems (see the class comment): a finding of a key that already has one, or of a name other
   * than the first one read of its key, is left out and named.
   */
  keyFindings(report: Report): { report: Report; findingById: Map<number, DomainFinding> } {
    const table = this.table;
    const extra: Problem[] = [...this.nameProblems];
    const secondPages = new Map(this.seconds.map((s) => [s.name, s.page]));
    const pageOf = (name: string) => {
      const page = secondPages.get(name);
      if (page !== undefined) return page;
      const id = table.find(domainKey(name));
      return id >= 0 && table.isSeen(id) && table.seenName(id) === name ? table.pageOf(id) : 0;
    };
    const second = (name: string, first: string, critical: boolean) =>
      extra.push(
        problemOf(
          name,
          pageOf(name),
          name === first
            ? `a second domain record named ${JSON.stringify(shownCut(name))}; only the first is remembered and alerted on`
            : `a second domain record whose name is the same as ${JSON.stringify(shownCut(first))} once normalised; only the first is remembered and alerted on`,
          critical,
        ),
      );
    const findings: Finding[] = [];
    const findingById = new Map<number, DomainFinding>();
    const named = new Set<string>();
    for (const f of report.findings) {
      if (!isDomainFinding(f)) {
        findings.push(f);
        continue;
      }
      const id = table.idOf(domainKey(f.domain_name));
      const owner = findingById.get(id)?.domain_name ?? (table.isSeen(id) ? table.seenName(id) : undefined);
      if (findingById.has(id) || (owner !== undefined && owner !== f.domain_name)) {
        second(f.domain_name, owner ?? f.domain_name, f.severity === 'critical');
        named.add(f.domain_name);
        continue;
      }
      if (!table.isSeen(id)) {
        const length = normalizeDomainName(f.domain_name).length;
        if (length > MAX_KEY_LENGTH)
          extra.push(
            problemOf(
              f.domain_name,
              pageOf(f.domain_name),
              `the name is ${length} characters, longer than any domain name (${MAX_KEY_LENGTH}): remembered under a hash of it; the domain itself was checked`,
            ),
          );
      }
      findingById.set(id, f);
      findings.push(f);
    }
    for (const s of this.seconds) if (!named.has(s.name)) second(s.name, s.first, false);
    if (extra.length === 0) return { report, findingById };
    const summary: Record<Severity, number> = { critical: 0, warning: 0, info: 0 };
    for (const f of findings) summary[f.severity]++;
    return {
      report: { ...report, findings, summary, problems: [...report.problems, ...extra] },
      findingById,
    };
  }

  /** Every domain's snooze and acknowledgement, by memory key. */
  actions(): Map<string, DomainActions> {
    const out = new Map<string, DomainActions>();
    for (const [id, memory] of this.table.fullPriors())
      if (memory.actions && (memory.actions.snooze || memory.actions.acknowledged))
        out.set(this.table.keyOf(id), memory.actions);
    return out;
  }
}

const problemOf = (name: string, page: number, reason: string, critical = false): Problem => ({
  resource: 'domain',
  key: shownCut(name),
  page,
  reason,
  ...(critical ? { severity: 'critical' as const } : {}),
});

/** Everything remembered about one account but its domains (which a {@link ScanMemory} holds). */
export type StateHead = Omit<ScanState, 'domains'>;

export interface MemoryCompareInput {
  readonly report: Report;
  /** The state's domains and what this scan read of them (see {@link ScanMemory.observe}). */
  readonly memory: ScanMemory;
  /** The rest of the state as loaded. */
  readonly state: StateHead;
  readonly policy: StatePolicy;
  /** The account the scan read (its base URL); saved in the state. */
  readonly scope?: string;
  /** The account's binding (state-account.ts) to save; the state's own is kept when absent. */
  readonly account?: AccountBinding;
}

/** What to remember next: the account-wide part, and each domain's next memory in the table. */
export interface NextState {
  readonly head: StateHead;
  readonly memory: ScanMemory;
  /** How many domains' memories changed (items to write or delete). */
  readonly changed: number;
}

export interface MemoryCompareResult extends Omit<CompareResult, 'next'> {
  readonly next: NextState;
}

/** A domain memory as JSON, fields in the schema's order: equal memories give equal text. */
export function memoryJson(memory: DomainMemory): string {
  return JSON.stringify(DomainMemorySchema.parse(memory));
}

/**
 * Compares this scan with the memory of the last one: marks each finding new, escalated or
 * ongoing; lists the changes to watched fields and the domains that left the account (only from a
 * read proven complete: full mode, every unreadable record identified); lists what was resolved;
 * decides whether to publish; and sets in the table what to remember once that is done.
 *
 * Escalated: the severity rose, or the finding stands on a lower rung of the threshold ladder
 * than when last seen, however many runs were missed in between (30 → 5 days left escalates once,
 * to the 7-day rung). A renewal (later expiry) resolves the old finding; what remains is new.
 *
 * Stored times are checked, never trusted: an age from a time in the future (or one that does not
 * parse) counts as due, so no stored value can hold a repeat or the summary back.
 *
 * It walks the table once per step with typed-array checks; objects are made only for domains with
 * a finding, an alert, an action or a change.
 */
export function compareMemory(input: MemoryCompareInput): MemoryCompareResult {
  const { state, policy, memory } = input;
  const table = memory.table;
  table.resetNext();
  const nowMs = Date.parse(input.report.now);
  // First, what only memory can tell about renewals (renewal-memory.ts): its own step.
  const renewed = withFailedRenewals(input.report, memory.stepRenewals(nowMs));
  const keyed = memory.keyFindings(renewed);
  const findingById = keyed.findingById;
  const priorContacts = byKey(state.contacts, storedContactKey);
  // Snoozed and acknowledged findings stay in the report, marked, and are never announced; an
  // action that lapsed (expired, worse, changed, resolved) is dropped from the next state.
  const silencing = applyActions(keyed.report, memory.actions(), nowMs, domainKey);
  const report = silencing.report;
  const now = report.now;
  const { thresholds, minSeverity } = policy;
  const problemKeys = report.problems.map(problemKey);
  const unreadableDomains = new Set<string>();
  const unreadableContacts = new Set<string>();
  for (const p of report.problems) {
    if (p.key === null) continue;
    if (p.resource === 'domain') unreadableDomains.add(domainKey(p.key));
    else unreadableContacts.add(keyOf(p.key.toLowerCase())).add(keyOf(p.key));
  }
  // A record that could not be read may be any domain: then nobody can be said to have left.
  const complete =
    report.source.mode === 'full' && report.problems.every((p) => p.resource !== 'domain' || p.key !== null);
  const firstRun = state.last_scan_at === null;
  // Registry findings the registry check could not confirm this time: kept as they were (registry-memory.ts).
  const unconfirmed = unconfirmedRegistryIds(report, table);

  const findings: StatefulFinding[] = [];
  const resolved: Resolution[] = [];
  const changes: DomainChange[] = [];
  const nextContacts: Record<string, ContactMemory> = {};
  const announced: StatefulFinding[] = [];
  const resolvedIds = new Set<number>();
  const silenced = (f: Finding) => isDomainFinding(f) && silencing.silenced.has(f.domain_name);
  const idOfFinding = (f: DomainFinding) => table.find(domainKey(f.domain_name));
  const priorFinding = (id: number) => (id < 0 ? undefined : (table.priorFinding(id) ?? undefined));
  const nameOf = (id: number) => (table.isSeen(id) ? table.seenName(id) : undefined);

  for (const f of report.findings) {
    const dom = isDomainFinding(f);
    const id = dom ? idOfFinding(f) : -1;
    const prev = dom ? priorFinding(id) : priorContacts.get(keyOf(f.handle))?.finding;
    let change: Change = 'ongoing';
    const renewal =
      dom && prev?.date_expiry !== undefined && Date.parse(f.date_expiry) > Date.parse(prev.date_expiry);
    if (!prev) change = 'new';
    else if (unconfirmed.has(id)) change = 'ongoing';
    else if (dom && (renewal || severityRank(f.severity) < severityRank(prev.severity))) {
      // Renewed but still flagged (e.g. renewed for too short a term), or fell in severity
      // (auto-renew turned on): the old finding is resolved, with what stands now.
      resolved.push({
        domain_name: shownName(f.domain_name, table.keyOf(id)),
        kind: prev.kind,
        severity: prev.severity,
        reason: resolvedReason(prev, f, table.isSeen(id) ? table.nextWatched(id) : undefined),
        now: { kind: f.kind, severity: f.severity },
      });
      resolvedIds.add(id);
      if (renewal) change = 'new';
    } else if (
      severityRank(f.severity) > severityRank(prev.severity) ||
      lower(stageOf(f, thresholds), prev.stage)
    ) {
      change = 'escalated';
    }
    const marked = { ...f, change } as StatefulFinding;
    findings.push(marked);
    if (change !== 'ongoing' && atOrAbove(f.severity, minSeverity) && !silenced(f)) announced.push(marked);
  }

  // Domains remembered: resolved, left, or (read incomplete / unreadable) carried over unchanged.
  for (let id = 0; id < table.size; id++) {
    if (!table.hasPrior(id)) continue;
    const seenNow = table.isSeen(id);
    const found = findingById.has(id);
    if (!seenNow && !found) {
      const key = complete ? table.keyOf(id) : '';
      if (complete && !unreadableDomains.has(key)) {
        const was = table.priorMemory(id);
        const name = was?.name ?? key;
        changes.push({
          domain_name: name,
          kind: 'left_account',
          severity: 'critical',
          before: 'in the account',
          after: 'not in the account',
        });
        if (was?.finding)
          resolved.push({
            domain_name: name,
            kind: was.finding.kind,
            severity: was.finding.severity,
            reason: 'left_account',
            now: null,
          });
        table.setNext(id, NEXT.none);
      } else {
        table.setNext(id, NEXT.prior);
      }
      continue;
    }
    // Only a memory kept as an object can hold a finding; compact ones compare as numbers.
    const fieldsMoved = complete && seenNow && !table.sameFields(id);
    const priorFindingNow = found || unconfirmed.has(id) ? undefined : table.priorFinding(id);
    if (!fieldsMoved && !priorFindingNow) continue;
    const was = table.priorMemory(id);
    const key = table.keyOf(id);
    const seenName = nameOf(id);
    const name = seenName !== undefined ? shownName(seenName, key) : (was?.name ?? key);
    if (fieldsMoved && was) changes.push(...fieldChanges(name, was.watched, table.nextWatched(id)));
    if (priorFindingNow) {
      resolved.push({
        domain_name: name,
        kind: priorFindingNow.kind,
        severity: priorFindingNow.severity,
        reason: resolvedReason(priorFindingNow, null, seenNow ? table.nextWatched(id) : undefined),
        now: null,
      });
    }
  }
  const contactFindings = new Set<string>();
  for (const f of report.findings) if (!isDomainFinding(f)) contactFindings.add(keyOf(f.handle));
  for (const [key, remembered] of priorContacts) {
    if (contactFindings.has(key)) continue;
    if (
      unreadableContacts.has(key) ||
      (isPlainKey(key) && unreadableContacts.has(keyOf(key.toLowerCase())))
    ) {
      nextContacts[key] = remembered;
      continue;
    }
    resolved.push({
      handle: remembered.handle ?? key,
      kind: remembered.finding.kind,
      severity: remembered.finding.severity,
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
  const repeatMs = policy.criticalRepeatHours * HOUR_MS;
  const priorAlert = (id: number) => (id < 0 ? undefined : table.priorAlert(id));
  const repeatDue = (f: StatefulFinding) => {
    if (f.severity !== 'critical' || f.change !== 'ongoing' || !isDomainFinding(f) || silenced(f))
      return false;
    const alerted = priorAlert(idOfFinding(f));
    return !alerted || isDue(alerted.at, nowMs, repeatMs);
  };
  const prior = (name: string) => memory.prior(name);
  if (atOrAbove('critical', minSeverity))
    count(findings.filter(repeatDue).length, `critical repeated after ${policy.criticalRepeatHours} h`);
  if (atOrAbove('critical', minSeverity))
    count(
      findings.filter(
        (f) =>
          isDomainFinding(f) &&
          !silencing.silenced.has(f.domain_name) &&
          lastDaysRepeatDue(f, prior, nowMs, policy.criticalRepeatHours),
      ).length,
      'in the last days to restore, repeated daily',
    );
  const oldProblems = new Set(state.problem_keys);
  // More than a state keeps: the same set as last time (by its digest) is nothing new.
  const sameOverflow =
    state.problem_keys_digest !== undefined &&
    boundedProblemKeys(problemKeys).digest === state.problem_keys_digest;
  if (!sameOverflow) count(problemKeys.filter((k) => !oldProblems.has(k)).length, 'new unreadable records');
  // A record that says quarantine but cannot be read is as critical as a quarantine finding:
  // repeated on the same rhythm until it is fixed.
  if (
    why.length === 0 &&
    atOrAbove('critical', minSeverity) &&
    state.last_published_at !== null &&
    isDue(state.last_published_at, nowMs, repeatMs)
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
    isDue(lastSpoke, nowMs, policy.summaryEveryDays * DAY_MS)
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
    if (silenced(f)) return prev ?? null;
    if (publish && atOrAbove(f.severity, minSeverity))
      return { kind: f.kind, severity: f.severity, stage: stageOf(f, thresholds), at };
    return prev ?? null;
  };
  const hashedName = (id: number, name: string) => (table.isHashed(id) ? { name: shownCut(name) } : {});
  for (let id = 0; id < table.size; id++) {
    if (!table.isSeen(id)) continue;
    const f = findingById.get(id);
    if (unconfirmed.has(id)) {
      const was = table.priorMemory(id);
      table.setNext(id, NEXT.full, {
        ...was,
        watched: table.nextWatched(id),
        finding: table.priorFinding(id),
        alerted: table.priorAlert(id),
      });
      continue;
    }
    if (!f) {
      // What most of an account is: read, nothing to say. Kept compact unless its key is a hash.
      if (!table.isHashed(id)) table.setNextCompact(id, null, null);
      else
        table.setNext(id, NEXT.full, {
          ...hashedName(id, table.seenName(id)),
          watched: table.nextWatched(id),
          finding: null,
          alerted: null,
        });
      continue;
    }
    const name = table.seenName(id);
    const prevAlert = resolvedIds.has(id) ? null : priorAlert(id);
    const finding = memoryOf(f, thresholds);
    const alerted = alertedNow(f, prevAlert);
    if (!table.isHashed(id) && table.setNextCompact(id, finding, alerted)) continue;
    table.setNext(id, NEXT.full, {
      ...hashedName(id, name),
      watched: table.nextWatched(id),
      finding,
      alerted,
    });
  }
  for (const [id, f] of findingById) {
    if (table.isSeen(id)) continue;
    const prevAlert = resolvedIds.has(id) ? null : priorAlert(id);
    table.setNext(id, NEXT.full, {
      ...hashedName(id, f.domain_name),
      watched: table.priorWatched(id) ?? {},
      finding: memoryOf(f, thresholds),
      alerted: alertedNow(f, prevAlert),
    });
  }
  for (const f of report.findings) {
    if (isDomainFinding(f)) continue;
    const key = keyOf(f.handle);
    nextContacts[key] = {
      ...(isHashedKey(key) ? { handle: shownCut(f.handle) } : {}),
      finding: memoryOf(f, thresholds),
      alerted: alertedNow(f, priorContacts.get(key)?.alerted),
    };
  }

  carryActions(table, silencing.lapsed);
  const changed = table.markChanged(memoryJson);

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
      head: {
        version: 1,
        scope: input.scope ?? state.scope,
        account: input.account ?? state.account ?? null,
        started_at: state.started_at ?? now,
        last_scan_at: now,
        last_published_at: publish ? now : state.last_published_at,
        // Bounded: past the cap, a digest of them all tells the next scan whether the set changed.
        ...problemMemory(problemKeys),
        contacts: nextContacts,
      },
      memory,
      changed,
    },
  };
}

/**
 * Compares this scan with the memory of the last one ({@link compareMemory}), for a state held
 * whole as objects: the command line's tests and small states. `observed` holds the watched
 * fields of every domain read, by name as read.
 */
export function compareWithState(input: CompareInput): CompareResult {
  const { state, observed, pages } = input;
  const memory = ScanMemory.of(state.domains);
  for (const [name, watched] of observed) memory.observe(name, watched, pages?.get(name) ?? 0);
  const { domains: _domains, ...head } = state;
  const result = compareMemory({
    report: input.report,
    memory,
    state: head,
    policy: input.policy,
    ...(input.scope !== undefined ? { scope: input.scope } : {}),
    ...(input.account !== undefined ? { account: input.account } : {}),
  });
  return { ...result, next: stateOf(result.next) };
}

/** The next state whole, as objects (a file store writes it so; tests read it). */
export function stateOf(next: NextState): ScanState {
  const table = next.memory.table;
  // Memory keys are never names objects answer to by themselves (state-bounds.ts): a plain object is safe.
  const domains: Record<string, DomainMemory> = {};
  for (let id = 0; id < table.size; id++) {
    const memory = table.nextMemory(id);
    if (memory) domains[table.keyOf(id)] = memory;
  }
  return { ...next.head, domains };
}

/** The state as loaded: `head` with the prior memories of `memory` as objects. */
export function priorStateOf(head: StateHead, memory: ScanMemory): ScanState {
  const table = memory.table;
  const domains: Record<string, DomainMemory> = {};
  for (let id = 0; id < table.size; id++) {
    const prior = table.priorMemory(id);
    if (prior) domains[table.keyOf(id)] = prior;
  }
  return { ...head, domains };
}

/**
 * Makes `domains` (a state handled whole) the next memory of every domain in `memory`: the ones it
 * leaves out are forgotten. Throws (the schema's error) for a memory no store may keep.
 */
export function nextFromState(memory: ScanMemory, domains: Readonly<Record<string, DomainMemory>>): number {
  const table = memory.table;
  table.resetNext();
  for (const [stored, value] of Object.entries(domains)) {
    const id = table.idOf(storedDomainKey(stored));
    if (table.nextKind(id) === NEXT.none) table.setNext(id, NEXT.full, value);
  }
  return table.markChanged(memoryJson);
}

/**
 * One stored domain memory, read back: a plain one needs no schema (most of an account, see
 * fastMemory), anything else is checked by DomainMemorySchema and refused with the place and the
 * reason, as {@link parseState} refuses a state.
 */
export function readStoredMemory(value: unknown, storedKey: string, where: string): DomainMemory {
  const fast = fastMemory(value);
  if (fast) return fast;
  const parsed = DomainMemorySchema.safeParse(value);
  if (parsed.success) return parsed.data as DomainMemory;
  throw stateIssue(
    where,
    ['domains', storedKey, ...(parsed.error.issues[0]?.path ?? [])],
    parsed.error.issues[0]?.message,
  );
}

function stateIssue(where: string, path: readonly PropertyKey[], message: string | undefined): StateError {
  return new StateError(
    `the state in ${where} cannot be used (${message !== undefined ? `${statePath(path)}: ${safeText(message)}` : 'invalid'}); ` +
      'correct that value, point --state elsewhere, or remove the state to start over',
  );
}

/** Every domain's snooze and acknowledgement, by memory key (for a valid domain name: its normalised name). */
export function actionsOf(state: ScanState): Map<string, DomainActions> {
  const out = new Map<string, DomainActions>();
  for (const [name, memory] of Object.entries(state.domains))
    if (memory.actions && (memory.actions.snooze || memory.actions.acknowledged))
      out.set(storedDomainKey(name), memory.actions);
  return out;
}

/** Keeps each domain's actions in the next state, less the ones that lapsed. */
function carryActions(table: MemoryTable, lapsed: readonly Lapse[]): void {
  const gone = new Set(lapsed.map((l) => `${l.domain_name} ${l.action}`));
  for (const [id, memory] of table.fullPriors()) {
    if (!memory.actions) continue;
    const kind = table.nextKind(id);
    // Carried over as it was (not read): its actions with it.
    if (kind === NEXT.none || kind === NEXT.prior) continue;
    const key = table.keyOf(id);
    const { snooze, acknowledged } = memory.actions;
    const kept: DomainActions = {
      ...(snooze && !gone.has(`${key} snooze`) ? { snooze } : {}),
      ...(acknowledged && !gone.has(`${key} acknowledge`) ? { acknowledged } : {}),
    };
    const target = table.nextMemory(id);
    if (target && (kept.snooze || kept.acknowledged))
      table.setNext(id, NEXT.full, { ...target, actions: kept });
  }
}

/** The state could not be read or written. */
export class StateError extends SentinelError {
  override readonly name: string = 'StateError';
}

/**
 * This scan must not use this state: it belongs to another account, or the scan's time does not
 * fit it (see state-time.ts). A usage error (exit 2): the message says what to pass or point elsewhere.
 */
export class StateRefusedError extends ConfigError {
  override readonly name: string = 'StateRefusedError';
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
  ...DOMAIN_FINDING_KINDS,
  'contact_pending_validation',
] as const satisfies ReadonlyArray<DomainFindingKind | 'contact_pending_validation'>);
const FindingMemorySchema = z.object({
  kind: findingKind,
  severity,
  stage: z.number().nullable(),
  date_expiry: StoredDateTime.optional(),
});
const AlertMemorySchema = z.object({
  kind: findingKind,
  severity,
  stage: z.number().nullable(),
  at: StoredDateTime,
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
  renewal: z.object({ due: StoredDateTime.nullable(), expiry: StoredDateTime }).optional(),
});
/** One domain's memory, as a store keeps it. */
export const DomainMemorySchema = z.object({
  name: z.string().optional(),
  watched: WatchedSchema,
  finding: FindingMemorySchema.nullable(),
  alerted: AlertMemorySchema.nullable(),
  actions: DomainActionsSchema.optional(),
});
/** One contact's memory, as a store keeps it. */
export const ContactMemorySchema = z.object({
  handle: z.string().optional(),
  finding: FindingMemorySchema,
  alerted: AlertMemorySchema.nullable(),
});
/**
 * The account-wide part of the state (everything but the per-domain and per-contact records). A
 * state written before states were bound to an account has no `account`: it is bound by its next scan.
 */
export const StateHeaderSchema = z.object({
  version: z.literal(1),
  scope: z.string().nullable(),
  account: AccountBindingSchema.nullable().default(null),
  started_at: StoredDateTime.nullable(),
  last_scan_at: StoredDateTime.nullable(),
  last_published_at: StoredDateTime.nullable(),
  problem_keys: z.array(z.string()),
  /** With more unreadable records than `problem_keys` holds: the sha256 of them all, sorted. */
  problem_keys_digest: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'not a sha256 digest')
    .optional(),
});
const ScanStateSchema = StateHeaderSchema.extend({
  domains: z.record(z.string(), DomainMemorySchema),
  contacts: z.record(z.string(), ContactMemorySchema),
});

/** Where in the state an issue is, e.g. `domains["example.nl"].alerted.at` (names cut and made safe). */
export function statePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (typeof part === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(part))
      out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(shownCut(String(part)))}]`;
  }
  return out || 'root';
}

/** Validates stored state; a store that holds something else fails with the place and the reason. */
export function parseState(value: unknown, where: string): ScanState {
  const parsed = ScanStateSchema.safeParse(value);
  if (parsed.success) return parsed.data as ScanState;
  const issue = parsed.error.issues[0];
  throw stateIssue(where, issue?.path ?? [], issue?.message);
}

/** The unreadable records a state remembers: the first keys, and the digest of all when they overflow. */
function problemMemory(keys: readonly string[]): { problem_keys: string[]; problem_keys_digest?: string } {
  const { kept, digest } = boundedProblemKeys(keys);
  return digest === undefined ? { problem_keys: kept } : { problem_keys: kept, problem_keys_digest: digest };
}
