import {
  type DomainFinding,
  daysLeft,
  type Finding,
  isDomainFinding,
  RENEWAL_GRACE_MS,
  type Severity,
  sortFindings,
} from '../findings/classify';
import { LAST_DAYS } from '../findings/quarantine-periods';
import type { Domain } from '../reseller/schemas';
import type { Report } from '../scan/scan';
import type { DomainChange, DomainMemory, StatefulFinding, WatchedFields } from './state';

/**
 * What memory adds to the deadline rules, as steps of their own that the comparison with the last
 * scan (state.ts) calls: a renewal that fell due between two scans without the expiry moving is a
 * `renewal_failed` finding even when the record no longer shows it (the reseller moved
 * `date_renewal` on, or it lies outside the 60-day window); a premium price that changed is a
 * change; quarantined domains in their last days to restore are repeated daily.
 */

/** The renewal a domain is watched for: when it is due, and the expiry it is to extend. */
export interface RenewalWatch {
  /** ISO 8601; null in an observation whose record has no `date_renewal`. */
  readonly due: string | null;
  /** ISO 8601: the expiry as read. */
  readonly expiry: string;
}

/** The renewal fields of a domain read now: only auto-renew domains are renewed by the reseller. */
export function renewalObservation(domain: Domain): RenewalWatch | undefined {
  if (domain.auto_renew !== true) return undefined;
  const due = typeof domain.date_renewal === 'number' ? new Date(domain.date_renewal).toISOString() : null;
  return { due, expiry: new Date(domain.date_expiry).toISOString() };
}

/** The premium price as watched between scans: null for a premium domain whose record states none. */
export function premiumPriceOf(domain: Domain): WatchedFields['premium_price'] {
  if (domain.price?.kind !== 'premium') return undefined;
  const { currency, amount } = domain.price;
  return currency !== undefined && amount !== undefined ? { currency, amount } : null;
}

/** `premium_price_changed` when a premium domain's price or currency differs from the last scan's. */
export function premiumPriceChange(
  name: string,
  before: WatchedFields,
  after: WatchedFields,
): DomainChange | null {
  const b = before.premium_price;
  const a = after.premium_price;
  if (!b || !a || (b.currency === a.currency && b.amount === a.amount)) return null;
  return { domain_name: name, kind: 'premium_price_changed', severity: 'warning', before: b, after: a };
}

export interface RenewalMemoryInput {
  readonly report: Report;
  readonly observed: ReadonlyMap<string, WatchedFields>;
  /** The memory of the domain a name read now stands for (names are keyed as the state keys them). */
  readonly prior: (name: string) => DomainMemory | undefined;
}

export interface RenewalMemoryResult {
  /** The report with renewals that failed while watched marked `renewal_failed` (summary and order updated). */
  readonly report: Report;
  /** The observations with `renewal` as the next state keeps it. */
  readonly observed: ReadonlyMap<string, WatchedFields>;
}

/** What to keep of a domain's renewal watch, and whether its renewal failed while watched. */
export interface RenewalStep {
  /** 'none': no watch; 'before': the remembered one (it passed, the expiry did not move); 'current': the one read now. */
  readonly keep: 'none' | 'before' | 'current';
  readonly failed: boolean;
}

/**
 * One domain's step of the renewal memory, on numbers so a scan of a million domains allocates
 * nothing for it: the watch read now (whether there is one, its due time, NaN for none), the
 * remembered due time (NaN for none), whether the expiry is the one remembered, and the scan's time.
 */
export function renewalStep(
  current: boolean,
  currentDue: number,
  beforeDue: number,
  sameExpiry: boolean,
  now: number,
): RenewalStep {
  if (current && sameExpiry && beforeDue <= now)
    return { keep: 'before', failed: now - beforeDue >= RENEWAL_GRACE_MS };
  if (current && currentDue > now) return { keep: 'current', failed: false };
  return { keep: 'none', failed: false };
}

/** {@link renewalStep} for a watch as objects (a stored one may be written any RFC 3339 way). */
export function renewalStepOf(
  current: RenewalWatch | undefined,
  before: RenewalWatch | undefined,
  now: number,
): RenewalStep {
  return renewalStep(
    current !== undefined,
    current?.due ? Date.parse(current.due) : Number.NaN,
    before?.due ? Date.parse(before.due) : Number.NaN,
    current !== undefined && before !== undefined && current.expiry === before.expiry,
    now,
  );
}

/** A renewal that fell due while watched and did not happen: what its finding is made of. */
export interface FailedRenewal {
  readonly due: string;
  readonly expiry: string;
  readonly watched: WatchedFields;
}

/**
 * Compares each domain's renewal with the one remembered. The state keeps a renewal only once a
 * scan saw it still ahead, so "passed between two scans" is proven, not assumed; it keeps it while
 * it passed and the expiry did not move. Once it is 24 hours past (as the rule without memory
 * allows), the domain's finding becomes `renewal_failed` unless it is already worse.
 */
export function rememberRenewals(input: RenewalMemoryInput): RenewalMemoryResult {
  const { report, observed, prior } = input;
  const now = Date.parse(report.now);
  const next = new Map<string, WatchedFields>();
  const failed = new Map<string, FailedRenewal>();
  for (const [name, watched] of observed) {
    const { keep, miss } = compareRenewal(watched, prior(name), now);
    if (miss) failed.set(name, miss);
    const { renewal: _seen, ...rest } = watched;
    next.set(name, keep ? { ...rest, renewal: keep } : rest);
  }
  return { report: withFailedRenewals(report, failed), observed: next };
}

/**
 * The report with the renewals that failed while watched as `renewal_failed` findings (summary and
 * order updated): a domain already expired, in quarantine or failed keeps its finding; one whose
 * expiry already passed gets none from memory.
 */
export function withFailedRenewals(report: Report, failed: ReadonlyMap<string, FailedRenewal>): Report {
  if (failed.size === 0 || report.renewal_rule_off) return report;
  const now = Date.parse(report.now);
  const findings: Finding[] = [];
  const seen = new Set<string>();
  for (const f of report.findings) {
    const miss = isDomainFinding(f) ? failed.get(f.domain_name) : undefined;
    if (!miss || !isDomainFinding(f)) {
      findings.push(f);
      continue;
    }
    seen.add(f.domain_name);
    findings.push(withMiss(f, f.domain_name, miss, now) as DomainFinding);
  }
  for (const [name, miss] of failed)
    if (!seen.has(name)) {
      const f = withMiss(null, name, miss, now);
      if (f) findings.push(f);
    }
  sortFindings(findings);
  const summary: Record<Severity, number> = { critical: 0, warning: 0, info: 0 };
  for (const f of findings) summary[f.severity]++;
  return { ...report, findings, summary };
}

/** The renewal to keep watching, and the one that was missed (24 hours past, expiry unmoved), if any. */
function compareRenewal(
  watched: WatchedFields,
  memory: DomainMemory | undefined,
  now: number,
): { keep?: RenewalWatch; miss?: FailedRenewal } {
  const before = memory?.watched.renewal;
  const step = renewalStepOf(watched.renewal, before, now);
  const keep = step.keep === 'before' ? before : step.keep === 'current' ? watched.renewal : undefined;
  const miss =
    step.failed && before?.due
      ? { due: before.due, expiry: watched.renewal?.expiry ?? '', watched }
      : undefined;
  return { ...(keep ? { keep } : {}), ...(miss ? { miss } : {}) };
}

/** The finding once a missed renewal is known: `renewal_failed` unless it is already that or worse. */
function withMiss(
  f: DomainFinding | null,
  name: string,
  miss: FailedRenewal,
  now: number,
): DomainFinding | null {
  if (f && (f.kind === 'quarantine' || f.kind === 'expired' || f.kind === 'renewal_failed')) return f;
  if (!f && Date.parse(miss.expiry) <= now) return null;
  return failedFinding(name, miss, now, f ?? undefined);
}

/**
 * One domain's finding as a scan with memory reports it (with the renewal rule on): the record's
 * `finding`, or `renewal_failed` where the memory proves a renewal fell due and did not happen.
 * For the snooze and acknowledge links, which must act on what the alert showed.
 */
export function findingWithMemory(
  finding: DomainFinding | null,
  domain: Domain,
  memory: DomainMemory | undefined,
  now: number,
): DomainFinding | null {
  const watched = renewalObservation(domain);
  const observed: WatchedFields = watched
    ? { registrant_handle: domain.registrant_handle, renewal: watched }
    : { registrant_handle: domain.registrant_handle };
  const { miss } = compareRenewal(observed, memory, now);
  return miss ? withMiss(finding, domain.domain_name, miss, now) : finding;
}

function failedFinding(name: string, miss: FailedRenewal, now: number, was?: DomainFinding): DomainFinding {
  const expiry = Date.parse(miss.expiry);
  const handle = miss.watched.registrant_handle;
  return {
    domain_name: name,
    date_expiry: new Date(expiry).toISOString(),
    days_left: daysLeft(expiry, now),
    auto_renew: true,
    registrant: was?.registrant ?? (handle ? { handle } : null),
    kind: 'renewal_failed',
    severity: 'critical',
    date_renewal: miss.due,
    ...(was?.price ? { price: was.price } : {}),
    ...(was?.registry ? { registry: was.registry } : {}),
    // Not `was.actions`: its snooze and acknowledge links were signed for the finding replaced
    // here, and would act on that one; the scan signs links for this one (scan-job.ts).
  };
}

/** Hours between repeats of a quarantine in its last days to restore: daily, with room for a late run. */
export const LAST_DAYS_REPEAT_HOURS = 20;

/**
 * True when a quarantine finding in its last {@link LAST_DAYS} days to restore is due again daily,
 * where CRITICAL_REPEAT_HOURS is longer than a day (the rule for other criticals covers the rest).
 */
export function lastDaysRepeatDue(
  f: StatefulFinding,
  prior: (name: string) => DomainMemory | undefined,
  now: number,
  criticalRepeatHours: number,
): boolean {
  if (!isDomainFinding(f) || f.kind !== 'quarantine' || f.change !== 'ongoing') return false;
  const left = f.days_to_restore;
  if (typeof left !== 'number' || left > LAST_DAYS) return false;
  const at = prior(f.domain_name)?.alerted?.at;
  const elapsed = at === undefined ? Number.NaN : now - Date.parse(at);
  return (
    Number.isFinite(elapsed) &&
    elapsed >= LAST_DAYS_REPEAT_HOURS * 3_600_000 &&
    elapsed < criticalRepeatHours * 3_600_000
  );
}
