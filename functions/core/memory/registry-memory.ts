import { isRegistryKind } from '../findings/registry-rules';
import type { Report } from '../scan/scan';
import type { ScanMemory } from './state';
import { domainKey } from './state-bounds';
import type { MemoryTable } from './state-table';

/**
 * What memory does for the registry check (docs/registry.md), and nothing else: a registry finding
 * is news once, escalates and resolves like any other finding through the comparison in state.ts.
 * Two things only memory can do: it names the domains it remembers a registry finding for, so the
 * scan checks them every time until the sources agree (the rotating sample would come round only
 * every REGISTRY_CHECK_DAYS days, and a finding missing in between would look resolved); and when
 * such a check could not be done this time (the RDAP server failed, the budget or the time ran
 * out), it keeps what it knew instead of calling the finding resolved.
 */

/** The domains (names as this scan read them) memory remembers a registry finding for; call once both reads are done. */
export function registryRechecks(memory: ScanMemory): string[] {
  const table = memory.table;
  const names: string[] = [];
  for (let id = 0; id < table.size; id++) {
    if (!table.hasPrior(id) || !table.isSeen(id)) continue;
    const kind = table.priorFinding(id)?.kind;
    if (kind && isRegistryKind(kind)) names.push(table.seenName(id));
  }
  return names;
}

/**
 * The memory ids of remembered registry findings this scan could not check again (the report's
 * `registry.unconfirmed`): the comparison keeps their memory as it was, and resolves nothing.
 */
export function unconfirmedRegistryIds(report: Report, table: MemoryTable): Set<number> {
  const ids = new Set<number>();
  if (report.registry?.unconfirmed_omitted) {
    // More than the report lists: which were confirmed cannot be told, so none is resolved this scan.
    const now = new Set<string>();
    for (const f of report.findings)
      if ('domain_name' in f && isRegistryKind(f.kind)) now.add(domainKey(f.domain_name));
    for (let id = 0; id < table.size; id++) {
      const kind = table.hasPrior(id) ? table.priorFinding(id)?.kind : undefined;
      if (kind && isRegistryKind(kind) && !now.has(table.keyOf(id))) ids.add(id);
    }
    return ids;
  }
  for (const name of report.registry?.unconfirmed ?? []) {
    const id = table.find(domainKey(name));
    const kind = id < 0 ? undefined : table.priorFinding(id)?.kind;
    if (kind && isRegistryKind(kind)) ids.add(id);
  }
  return ids;
}
