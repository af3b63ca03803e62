import type { DomainFinding, Finding } from '../findings/classify';
import { severityRank } from '../findings/classify';
import type {
  DomainChange,
  FindingMemory,
  InGroup,
  Resolution,
  ResolvedReason,
  WatchedFields,
} from './state';

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
