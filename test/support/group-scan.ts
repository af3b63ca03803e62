import { planAlerts } from '../../functions/core/alerts/groups';
import { classify, type DomainFinding, type Severity } from '../../functions/core/findings/classify';
import { alertView } from '../../functions/core/memory/actions';
import { compareMemory } from '../../functions/core/memory/compare';
import { ScanMemory } from '../../functions/core/memory/scan-memory';
import type { StatePolicy } from '../../functions/core/memory/state';
import { loadStatePolicy } from '../../functions/core/memory/state-config';
import type { Domain } from '../../functions/core/reseller/schemas';
import { markFinding, parsePolicies, resolvePolicies } from '../../functions/core/scan/policies';
import type { Report } from '../../functions/core/scan/scan';
import { scanOf } from './state-scan';
import type { ScanState } from './whole-state';

/** What a scan under policy groups is told beside the domains it reads. */
export interface GroupScanOptions {
  problems?: Report['problems'];
  /** The least severity the deployment hears of. */
  minSeverity?: Severity;
  /** Escalation in place of the policies file's. */
  escalation?: StatePolicy['escalation'];
  /** Why the read was cut short, if it was. */
  incomplete?: string;
}

/**
 * Scans under the policies file `file` (memory-groups.property.test.ts and the tests of what it
 * found): each domain classified and marked by its group, compared with memory, and the messages
 * alerts/groups.ts plans from that, `sent` naming each message's group (`account` for the account's).
 */
export function groupScanner(file: unknown) {
  const policies = parsePolicies(file, 'policies file p.json');
  const set = resolvePolicies(policies, {
    classify: { expiryDays: 30, criticalDays: 7 },
    minSeverity: 'warning',
  });
  const scan = (read: readonly Domain[], now: number, state: ScanState, options: GroupScanOptions = {}) => {
    const { problems = [], minSeverity = 'warning', escalation, incomplete } = options;
    const { report } = scanOf(read, now, { problems });
    const findings: DomainFinding[] = [];
    const memory = new ScanMemory();
    for (const [key, value] of Object.entries(state.domains)) memory.remember(key, value);
    for (const d of read) {
      const g = set.policyFor(d);
      const f = classify(d, now, g?.classify);
      if (f) findings.push(markFinding(f, g));
      memory.observe(d, 1, g?.policy.name);
    }
    const source = incomplete === undefined ? report.source : { ...report.source, incomplete };
    const { domains: _d, ...head } = state;
    const result = compareMemory({
      report: { ...report, source, findings },
      memory,
      head,
      policy: { ...loadStatePolicy({}, minSeverity, policies), ...(escalation ? { escalation } : {}) },
    });
    const next: ScanState = { ...result.next.head, domains: Object.fromEntries(result.next.domains) };
    const plan = result.publish
      ? planAlerts(alertView(result.report, result.silenced), { minSeverity, policies: set, decided: true })
      : [];
    return { result, next, plan, sent: plan.map((p) => p.group ?? 'account') };
  };
  return { policies, set, scan };
}
