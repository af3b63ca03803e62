import {
  type DomainFinding,
  daysLeft,
  type Finding,
  isDomainFinding,
  RENEWAL_GRACE_MS,
  sortFindings,
  summaryOf,
} from '../findings/classify';
import { LAST_DAYS } from '../findings/quarantine-periods';
import type { Domain } from '../reseller/schemas';
import type { Report } from '../scan/scan';
import {
  type DomainMemory,
  type FindingMemory,
  type RenewalWatch,
  type StatefulFinding,
  WATCHED,
  type WatchedFields,
} from './state';

/**
 * What memory adds to the deadline rules, as steps of their own that the comparison with the last
 * scan (compare.ts) calls: a renewal that fell due between two scans without the expiry moving is
 * a `renewal_failed` finding even when the record no longer shows it (the reseller moved
 * `date_renewal` on, or it lies outside the 60-day window); quarantined domains in their last days
 * to restore are repeated daily.
 */

/** What to keep of a domain's renewal watch, and whether its renewal failed while watched. */
export interface RenewalStep {
  /** 'none': no watch; 'before': the remembered one (it passed, the expiry did not move); 'current': the one read now. */
  readonly keep: 'none' | 'before' | 'current';
  readonly failed: boolean;
}

/**
 * One domain's step of the renewal memory: the watch read now against the one remembered, at the
 * scan's time `now`. The state keeps a renewal only once a scan saw it still ahead, so "passed
 * between two scans" is proven, not assumed; it keeps it while it passed and the expiry did not
 * move. Once it is 24 hours past (as the rule without memory allows), the renewal failed.
 */
export function renewalStepOf(
  current: RenewalWatch | undefined,
  before: RenewalWatch | undefined,
  now: number,
): RenewalStep {
  if (!current) return { keep: 'none', failed: false };
  // A stored time may be written any RFC 3339 way: compared as instants, never as text.
  const beforeDue = before?.due ? Date.parse(before.due) : Number.NaN;
  if (current.expiry === before?.expiry && beforeDue <= now)
    return { keep: 'before', failed: now - beforeDue >= RENEWAL_GRACE_MS };
  if (current.due && Date.parse(current.due) > now) return { keep: 'current', failed: false };
  return { keep: 'none', failed: false };
}

/** A renewal that fell due while watched and did not happen: what its finding is made of. */
export interface FailedRenewal {
  readonly due: string;
  readonly expiry: string;
  readonly watched: WatchedFields;
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
    if (miss && isDomainFinding(f)) seen.add(f.domain_name);
    findings.push(miss && isDomainFinding(f) ? (withMiss(f, f.domain_name, miss, now) as DomainFinding) : f);
  }
  for (const [name, miss] of failed)
    if (!seen.has(name)) {
      const f = withMiss(null, name, miss, now);
      if (f) findings.push(f);
    }
  sortFindings(findings);
  return { ...report, findings, summary: summaryOf(findings) };
}

/** The renewal that was missed (24 hours past, expiry unmoved) while watched, if any. */
export function missedRenewal(
  watched: WatchedFields,
  memory: DomainMemory | undefined,
  now: number,
): FailedRenewal | undefined {
  const before = memory?.watched.renewal;
  const step = renewalStepOf(watched.renewal, before, now);
  return step.failed && before?.due
    ? { due: before.due, expiry: watched.renewal?.expiry ?? '', watched }
    : undefined;
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
  const watched = WATCHED.renewal.read(domain);
  const observed: WatchedFields = watched
    ? { registrant_handle: domain.registrant_handle, renewal: watched }
    : { registrant_handle: domain.registrant_handle };
  const miss = missedRenewal(observed, memory, now);
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
 * True when a quarantine finding in its last {@link LAST_DAYS} days to restore (or whose restore
 * deadline is unknown) is due again daily,
 * where its repeat cadence (`criticalRepeatHours`; Infinity once capped, repeat.ts) is longer than
 * a day (the cadence covers the rest).
 */
export function lastDaysRepeatDue(
  f: StatefulFinding,
  prior: (name: string) => DomainMemory | undefined,
  now: number,
  criticalRepeatHours: number,
): boolean {
  if (!isDomainFinding(f) || f.kind !== 'quarantine' || f.change !== 'ongoing') return false;
  const left = f.days_to_restore;
  // Unknown (null): nothing shows it is further than its last days, as quiet hours judge it too.
  if (left !== null && (typeof left !== 'number' || left > LAST_DAYS)) return false;
  const at = prior(f.domain_name)?.alerted?.at;
  const elapsed = at === undefined ? Number.NaN : now - Date.parse(at);
  // A last alert in the future (a clock that ran back) is due, as every stored time (state-time.ts):
  // the cadence says so already unless capped, and the cap never holds these back.
  return (
    Number.isFinite(elapsed) &&
    (elapsed < 0 || elapsed >= LAST_DAYS_REPEAT_HOURS * 3_600_000) &&
    elapsed < criticalRepeatHours * 3_600_000
  );
}

/**
 * True when a domain's finding `f` starts over from the one remembered (`prev`): renewed (a later
 * expiry), or out of quarantine (restored, its expiry maybe unmoved). The old finding is resolved
 * and what stands now is new, not an escalation of it.
 */
export function renewedOrRestored(prev: FindingMemory | undefined, f: DomainFinding): boolean {
  if (prev === undefined) return false;
  if (prev.kind === 'quarantine' && f.kind !== 'quarantine') return true;
  return prev.date_expiry !== undefined && Date.parse(f.date_expiry) > Date.parse(prev.date_expiry);
}
