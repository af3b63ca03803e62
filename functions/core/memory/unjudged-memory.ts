import { isDomainFinding, severityRank } from '../findings/classify';
import type { Report } from '../scan/scan';
import { judgedByDatesOnly } from '../scan/scan-problems';
import { renewedOrRestored } from './renewal-memory';
import type { ScanMemory } from './scan-memory';
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
 * How many records this scan could not read at all (a named domain, not one read by its dates only)
 * whose domain memory knows as critical (expired, in quarantine, a renewal that failed), with no
 * snooze or acknowledgement still holding and not in a group that lets it lapse (`lapsing`). What
 * is remembered of a record that cannot be read stays true until a read says otherwise: such a
 * record is repeated on the critical cadence as one that says quarantine is, so an expired domain
 * whose record broke is not silent after its one "new unreadable record".
 */
export function unreadableCriticalCount(
  problems: Report['problems'],
  memory: ScanMemory,
  nowMs: number,
  lapsing: (group: string | undefined) => boolean,
): number {
  let n = 0;
  for (const p of problems) {
    if (p.resource !== 'domain' || p.key === null || p.severity === 'critical' || judgedByDatesOnly(p))
      continue;
    const was = memory.prior.get(domainKey(p.key));
    if (was?.finding?.severity !== 'critical' || lapsing(was.group)) continue;
    const snooze = was.actions?.snooze;
    if (was.actions?.acknowledged || (snooze && Date.parse(snooze.until) > nowMs)) continue;
    n++;
  }
  return n;
}

/**
 * How many records this scan could not read say the domain is in quarantine (critical), less those
 * of a domain memory knows in a group that lets it lapse (`lapsing`): such a record is repeated on
 * the critical cadence, and a domain let lapse is never repeated (docs/policies.md), so its broken
 * record is said once, as new, and not paged daily after.
 */
export function unreadableQuarantineCount(
  problems: Report['problems'],
  memory: ScanMemory,
  lapsing: (group: string | undefined) => boolean,
): number {
  let n = 0;
  for (const p of problems) {
    if (p.severity !== 'critical') continue;
    const group =
      p.resource === 'domain' && p.key !== null ? memory.prior.get(domainKey(p.key))?.group : undefined;
    if (!lapsing(group)) n++;
  }
  return n;
}
