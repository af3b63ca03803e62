import { isDomainFinding, type RegistryFindingKind, type Severity, severityRank } from '../findings/classify';
import { isRegistryKind } from '../findings/registry-rules';
import type { RegistryRecheck } from '../scan/registry-scan';
import type { Report } from '../scan/scan';
import type { ScanMemory } from './scan-memory';
import { domainKey } from './state-bounds';

/**
 * What memory does for the registry check (docs/registry.md), and nothing else: a registry finding
 * is news once, escalates and resolves like any other finding through the comparison (compare.ts).
 * Two things only memory can do: it names the domains it remembers a registry finding for, so the
 * scan checks them until the sources agree (every scan while they fit in half the query budget,
 * else each in its turn: sample.ts's recheckRanks), not only when the rotating sample comes round
 * every REGISTRY_CHECK_DAYS days (a finding missing in between would look resolved); and when
 * such a check could not be done this time (the RDAP server failed, the budget or the time ran
 * out), or the registry said nothing of the domain (a 404: purged, perhaps), it keeps what it knew
 * instead of calling the finding resolved.
 */

const rememberedRegistryKind = (memory: ScanMemory, key: string): RegistryFindingKind | undefined => {
  const kind = memory.prior.get(key)?.finding?.kind;
  return kind !== undefined && isRegistryKind(kind) ? kind : undefined;
};

const remembersRegistryFinding = (memory: ScanMemory, key: string): boolean =>
  rememberedRegistryKind(memory, key) !== undefined;

/**
 * Memory's side of the scan's registry check: the names to re-check, asked once `read` (the state's
 * read) is done, and where the check tells memory which of them it could not confirm. That whole
 * list stays in the process, on `memory`: the report, which is published (SNS, logs, the stored
 * report), lists only 100, and an account with more must still resolve the ones confirmed.
 */
export function registryRecheck(memory: ScanMemory, read: Promise<unknown>): RegistryRecheck {
  return {
    // The domains (names as this scan read them) memory remembers a registry finding for, with its kind.
    names: async () => {
      await read;
      const names = new Map<string, RegistryFindingKind>();
      const asked = new Set<string>();
      for (const [key, seen] of memory.seen) {
        const kind = rememberedRegistryKind(memory, key);
        if (kind) {
          names.set(seen.name, kind);
          asked.add(key);
        }
      }
      memory.registryAsked = asked;
      return names;
    },
    unconfirmed: (names) => {
      const keys = new Set<string>();
      for (const name of names) keys.add(domainKey(name));
      memory.registryUnconfirmed = keys;
    },
  };
}

/**
 * The memory keys of remembered registry findings this scan could not check again (as the check
 * told memory, else the report's `registry.unconfirmed`): the comparison keeps their memory as it
 * was, and resolves nothing. Only the registry's side is unknown: a finding of the reseller's at
 * least as severe as the one remembered is compared as any other (escalated, announced), so a
 * registry that is down never hides what the reseller says meanwhile.
 */
export function unconfirmedRegistryKeys(report: Report, memory: ScanMemory): Set<string> {
  const keys = new Set<string>();
  const current = new Map<string, Severity>();
  for (const f of report.findings) if (isDomainFinding(f)) current.set(domainKey(f.domain_name), f.severity);
  const keep = (key: string): void => {
    const was = memory.prior.get(key)?.finding;
    const now = current.get(key);
    if (was && (now === undefined || severityRank(now) < severityRank(was.severity))) keys.add(key);
  };
  if (memory.registryUnconfirmed) {
    for (const key of memory.registryUnconfirmed) if (remembersRegistryFinding(memory, key)) keep(key);
    // Read again after another scan saved (a conflict): a finding it remembered that this scan's
    // check was never asked about is unknown to this scan, not resolved.
    const asked = memory.registryAsked;
    if (asked)
      for (const key of memory.seen.keys())
        if (!asked.has(key) && remembersRegistryFinding(memory, key)) keep(key);
    return keys;
  }
  if (report.registry?.unconfirmed_omitted) {
    // A report alone, listing fewer than were unconfirmed: which were confirmed cannot be told, so
    // none is resolved this scan.
    const now = new Set<string>();
    for (const f of report.findings)
      if ('domain_name' in f && isRegistryKind(f.kind)) now.add(domainKey(f.domain_name));
    for (const key of memory.prior.keys())
      if (remembersRegistryFinding(memory, key) && !now.has(key)) keep(key);
    return keys;
  }
  for (const name of report.registry?.unconfirmed ?? []) {
    const key = domainKey(name);
    if (remembersRegistryFinding(memory, key)) keep(key);
  }
  return keys;
}
