import {
  type DomainFinding,
  daysLeft,
  type Finding,
  isDomainFinding,
  type RememberedFinding,
  severityRank,
  sortFindings,
  summaryOf,
} from '../findings/classify';
import { DATE_DELETED_LEEWAY_MS, MAX_QUARANTINE_DAYS } from '../findings/quarantine-periods';
import { isRegistryKind } from '../findings/registry-rules';
import { type Domain, parseRfc3339 } from '../reseller/schemas';
import type { Report } from '../scan/scan';
import { criticalRecords, judgedByDatesOnly, undocumentedStatusProblem } from '../scan/scan-problems';
import { renewedOrRestored } from './renewal-memory';
import type { ScanMemory } from './scan-memory';
import type { DomainMemory, FindingMemory } from './state';
import { domainKey } from './state-bounds';

/**
 * The memory keys of domains whose record this scan read but says it could not judge (a status the
 * API does not document: checked by its dates only, scan-problems.ts) and whose remembered finding
 * this scan would resolve: gone, fallen in severity, or renewed (an expiry that moved forward may be
 * a transfer out, not a renewal). The comparison keeps their memory as it was and resolves nothing,
 * as for a registry finding it could not confirm (registry-memory.ts), until a record it can judge
 * does. A finding at least as severe, not renewed, is compared as any other. Pure.
 */
export function unjudgedKeys(report: Report, memory: ScanMemory): Set<string> {
  const keys = new Set<string>();
  const current = new Map<string, Report['findings'][number]>();
  for (const f of report.findings) if (isDomainFinding(f)) current.set(domainKey(f.domain_name), f);
  for (const p of report.problems) {
    if (p.key === null || !judgedByDatesOnly(p)) continue;
    const key = domainKey(p.key);
    const was = memory.prior.get(key)?.finding;
    if (!was) continue;
    const now = current.get(key);
    if (
      now === undefined ||
      !isDomainFinding(now) ||
      severityRank(now.severity) < severityRank(was.severity) ||
      renewedOrRestored(was, now)
    )
      keys.add(key);
  }
  return keys;
}

/**
 * How many domains whose record this scan could not read say quarantine and are critical items of
 * their own (criticalRecords, as the alerts count them: a domain listed under two spellings once,
 * none whose domain a critical finding of `findings` already names), less the records
 * published critical by what memory knew (a kept quarantine, `remembered_kind`: each due by its own
 * last alert, kept-quarantine.ts criticalRepeats) and those of a domain memory knows in a group that
 * lets it lapse (`lapsing`): such a record is repeated on the critical cadence, and a domain let
 * lapse is never repeated (docs/policies.md), so its broken record is said once, as new, and not
 * paged daily after. A record beside its domain's critical finding is repeated with that finding
 * (compare.ts saidWith): on its own once that finding is capped or silenced, unless it is a quarantine.
 */
export function unreadableQuarantineCount(
  problems: Report['problems'],
  findings: Report['findings'],
  memory: ScanMemory,
  lapsing: (group: string | undefined) => boolean,
): number {
  return criticalRecords(problems, findings).filter((p) => {
    if (p.kept_quarantine || p.remembered_kind) return false;
    const key = p.resource === 'domain' && p.key !== null ? domainKey(p.key) : undefined;
    return !lapsing(key === undefined ? undefined : memory.prior.get(key)?.group);
  }).length;
}

/** A domain finding as memory judges it, on its rung. */
export type JudgedFinding = DomainFinding & { readonly stage: number | null };

const DAY_MS = 86_400_000;

/**
 * A remembered restore-by as a deadline to judge by (ISO 8601), or null (unknown) when it cannot be
 * true: one that does not parse as a time (a leap second the state accepts and Date.parse refuses is
 * the next second), or one further from `nowMs` than the longest restore period allows (a hand
 * edit): trusted, it would read as far from its last days and let the repeat cap hold it silent.
 */
export function believableRestoreBy(stored: string | undefined, nowMs: number): string | null {
  const at = stored === undefined ? Number.NaN : parseRfc3339(stored);
  if (Number.isNaN(at) || at - nowMs > MAX_QUARANTINE_DAYS * DAY_MS + DATE_DELETED_LEEWAY_MS) return null;
  return new Date(at).toISOString();
}

/** The sooner of a remembered restore-by and the one read, if any (ISO 8601); unknown (null) stays unknown. */
function sooner(remembered: string | null, read: string | null | undefined): string | null {
  if (remembered === null || !read) return remembered;
  return Date.parse(read) < Date.parse(remembered) ? read : remembered;
}

/**
 * The finding memory judges for a domain: `f` as read on its rung (`stage`), unless its finding is
 * kept as remembered (`kept`: a record not judged or confirmed this scan) at least as severe, then
 * `f` with the kind (an `expiring` one `expired` once its remembered expiry passed, as kept-quarantine.ts
 * keptFindingOf says it), severity and expiry remembered, on the rung remembered, and in quarantine the
 * restore-by remembered (null, unknown, in a state saved before it was kept or when it cannot be
 * true: maybe its last days), or the read one when the record says a sooner one.
 * So the repeat cadence and its cap, the last days to restore and escalation judge the finding
 * remembered as they judge one read.
 */
export function judgedAs(
  f: DomainFinding,
  kept: FindingMemory | null | undefined,
  nowMs: number,
  stage: number | null,
): JudgedFinding {
  if (
    !kept ||
    kept.kind === 'contact_pending_validation' ||
    severityRank(kept.severity) < severityRank(f.severity)
  )
    return { ...f, stage };
  const { restore_by: read, days_to_restore: _left, ...rest } = f;
  const stored = kept.date_expiry === undefined ? Number.NaN : parseRfc3339(kept.date_expiry);
  const expiry = Number.isNaN(stored) ? f.date_expiry : new Date(stored).toISOString();
  const remembered = believableRestoreBy(kept.restore_by, nowMs);
  const by = sooner(remembered, f.kind === 'quarantine' ? read : null);
  const quarantine = {
    restore_by: by,
    days_to_restore: by === null ? null : daysLeft(Date.parse(by), nowMs),
  };
  // Its remembered expiry passed, an expiring finding is expired, critical, as classify reads a record
  // then: one remembered as a warning is not said expired at a warning's severity, out of the SMS.
  const passed = kept.kind === 'expiring' && Date.parse(expiry) <= nowMs;
  return {
    ...rest,
    kind: passed ? 'expired' : kept.kind,
    severity: passed ? 'critical' : kept.severity,
    date_expiry: expiry,
    days_left: daysLeft(Date.parse(expiry), nowMs),
    ...(kept.kind === 'quarantine' ? quarantine : {}),
    stage: kept.stage,
  };
}

/**
 * `f` as published when memory judges it as a kept finding (`j`, judgedAs) of another kind, of a
 * higher severity (an expiring domain remembered critical whose record reads auto-renew on, info),
 * or a quarantine with another restore-by (the remembered one): marked `remembered`, so each
 * channel says what memory judges it by, not only what the record reads (an expired record of a
 * domain last read in quarantine, 3 days to restore). Else `f` as it is. Pure.
 */
export function withRemembered(f: Finding, j: JudgedFinding, why?: RememberedFinding['because']): Finding {
  const quarantine = j.kind === 'quarantine';
  const higher = severityRank(j.severity) > severityRank(f.severity);
  if (!isDomainFinding(f) || (j.kind === f.kind && !higher && (!quarantine || j.restore_by === f.restore_by)))
    return f;
  const by = quarantine
    ? { restore_by: j.restore_by ?? null, days_to_restore: j.days_to_restore ?? null }
    : {};
  // Why it is kept, when the caller knows (a registry finding kept for the record's status, its
  // registry checked, is not one the registry could not confirm); else told by its kind.
  const because = why ?? (isRegistryKind(j.kind) ? 'registry_unconfirmed' : 'status_undocumented');
  // Published at the severity memory judges it by when that is higher: read as info (auto-renew
  // off) it sat in the digest's INFO count, out of the SMS, under "nothing critical", while repeated.
  const severity = higher ? j.severity : f.severity;
  // Expired by the expiry memory last read (judgedAs), not as read: that expiry, for the words.
  const inferred =
    j.kind === 'expired' && j.date_expiry !== f.date_expiry ? { date_expiry: j.date_expiry } : {};
  return { ...f, severity, remembered: { kind: j.kind, severity: j.severity, ...by, ...inferred, because } };
}

/**
 * The finding a link acts on, as the scan's memory judged it (action-handler.ts): `found` as its
 * record reads, marked `remembered` when that record has a status the API does not document and
 * memory keeps the finding it would otherwise resolve (as unjudgedKeys does), so the link's page
 * offers a snooze no longer than the remembered quarantine's last days allow; and when memory keeps
 * a registry finding more severe than the one read (a link checks no registry: as a scan that did
 * not check it again, unconfirmedRegistryKeys). Pure.
 */
export function keptForLink(
  found: DomainFinding | null,
  domain: Domain,
  memory: DomainMemory | undefined,
  nowMs: number,
): DomainFinding | null {
  const was = memory?.finding;
  if (!found || !was) return found;
  if (undocumentedStatusProblem(domain, 1) === null) {
    if (!isRegistryKind(was.kind) || severityRank(found.severity) >= severityRank(was.severity)) return found;
    return withRemembered(found, judgedAs(found, was, nowMs, null), 'registry_unconfirmed') as DomainFinding;
  }
  if (severityRank(found.severity) >= severityRank(was.severity) && !renewedOrRestored(was, found))
    return found;
  return withRemembered(found, judgedAs(found, was, nowMs, null), 'status_undocumented') as DomainFinding;
}

/**
 * The report with `findings` (the comparison's, some maybe marked `remembered`): once some are, in
 * report order (ordered as what memory keeps) and the summary counted again (one may be published
 * at a higher severity); else as they are.
 */
export function inReportOrder<R extends Pick<Report, 'summary'>, F extends Finding>(
  report: R,
  findings: F[],
): Omit<R, 'findings'> & { findings: F[] } {
  if (!findings.some((f) => isDomainFinding(f) && f.remembered)) return { ...report, findings };
  return { ...report, findings: sortFindings(findings), summary: summaryOf(findings) };
}
