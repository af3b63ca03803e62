import type { DomainFinding, Finding } from '../findings/classify';
import { isDomainFinding, severityRank } from '../findings/classify';
import type { Report } from '../scan/scan';
import type {
  ContactMemory,
  DomainChange,
  FindingMemory,
  InGroup,
  Resolution,
  ResolvedReason,
  WatchedFields,
} from './state';
import { isPlainKey, keyOf } from './state-bounds';

/** The resolved entries of a comparison (compare.ts): what each says, and the order they are listed in. Pure. */

/** A finding remembered as `was` resolved (or fallen to `now`) for `reason`. */
export const resolution = (
  of: ({ domain_name: string } & InGroup) | { handle: string },
  was: FindingMemory,
  reason: ResolvedReason,
  now: Finding | null = null,
): Resolution => ({
  ...of,
  kind: was.kind,
  severity: was.severity,
  reason,
  now: now && { kind: now.kind, severity: now.severity },
});

/** Why `before` went away: left quarantine, a later expiry, auto-renew turned on, else no longer flagged. */
export function resolvedReason(
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

/** Changes and resolved entries most severe first, then by name. */
export function sortEntries(changes: DomainChange[], resolved: Resolution[]): void {
  const order = (a: { domain_name?: string; handle?: string }, b: typeof a) =>
    (a.domain_name ?? a.handle ?? '').localeCompare(b.domain_name ?? b.handle ?? '');
  changes.sort(
    (a, b) =>
      severityRank(b.severity) - severityRank(a.severity) || order(a, b) || a.kind.localeCompare(b.kind),
  );
  resolved.sort((a, b) => severityRank(b.severity) - severityRank(a.severity) || order(a, b));
}

/**
 * Step six of the comparison: contacts no longer pending are resolved (pushed to `resolved`); one
 * whose record could not be read is carried over as it was, and every one when a contact that could
 * not be read is not named (the list failed): nothing was learnt of them, and "no longer pending"
 * would tell the reader to stop chasing a validation. Returns the contacts carried over.
 */
export function resolveContacts(
  prior: ReadonlyMap<string, ContactMemory>,
  report: Pick<Report, 'findings' | 'problems'>,
  resolved: Resolution[],
): Record<string, ContactMemory> {
  const unread = report.problems.filter((p) => p.resource === 'contact');
  const listUnread = unread.some((p) => p.key === null);
  const unreadable = new Set(
    unread.flatMap((p) => (p.key === null ? [] : [keyOf(p.key.toLowerCase()), keyOf(p.key)])),
  );
  const flagged = new Set(report.findings.flatMap((f) => (isDomainFinding(f) ? [] : [keyOf(f.handle)])));
  const carried: Record<string, ContactMemory> = {};
  for (const [key, remembered] of prior) {
    if (flagged.has(key)) continue;
    if (listUnread || unreadable.has(key) || (isPlainKey(key) && unreadable.has(keyOf(key.toLowerCase()))))
      carried[key] = remembered;
    else
      resolved.push(
        resolution({ handle: remembered.handle ?? key }, remembered.finding, 'no_longer_pending'),
      );
  }
  return carried;
}
