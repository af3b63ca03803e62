import {
  asRemembered,
  type DomainFinding,
  daysLeft,
  type Finding,
  isDomainFinding,
} from '../findings/classify';
import type { Problem } from '../reseller/client';

/**
 * The events the calendar feed writes of a domain finding, and what each is named by: one function
 * the feed writes them with (pages/calendar.ts) and the report view counts them with
 * (report-view.ts), so the view's count of the events it left out is the feed's; and the restore
 * deadlines the feed, the report page and its view share (quarantineOf, keptDeadlineOf). Pure.
 */

/** One event of a finding: its own (on its day), or its quarantine's last day to restore. */
export interface FindingEvent {
  /** A quarantined domain's restore-by event, rather than its own. */
  readonly restoreBy: boolean;
  /** What the event is named by (its UID is the hash of domain, this and `date`'s UTC day). */
  readonly kind: string;
  /** What the event is named by, ISO 8601 (not always the day it falls on: {@link nameDate}). */
  readonly date: string;
}

/** The day a finding's own event falls on (ISO 8601). */
export function eventDate(finding: DomainFinding): string {
  if (finding.kind === 'registry_expiry_mismatch' && finding.registry?.date_expiry)
    return finding.registry.date_expiry; // the registry's date is the one the domain ends on
  return finding.kind === 'quarantine' ? (finding.date_deleted ?? finding.date_expiry) : finding.date_expiry;
}

/**
 * The date a finding's own event is named by: the day it falls on ({@link eventDate}), but a
 * registry expiry mismatch's by the reseller's date, which it has read or kept: the registry's date
 * is on it only when the registry was checked this scan (memory keeps none), so named by that one
 * its UID changed each time the finding flipped between read and kept as remembered.
 */
function nameDate(f: DomainFinding): string {
  return f.kind === 'registry_expiry_mismatch' ? f.date_expiry : eventDate(f);
}

/**
 * The finding a restore-by event is of: a quarantine memory keeps as remembered with a known
 * restore-by as that one (the deadline memory judges by, whatever the record reads: expired, or a
 * quarantine with a later deadline), else the finding as read when it has a restore-by; else none.
 */
export function deadlineFinding(f: DomainFinding): DomainFinding | null {
  const r = f.remembered;
  if (r?.kind === 'quarantine' && r.restore_by) return asRemembered(f);
  return f.restore_by ? f : null;
}

/**
 * The events of `f`: its own, named by the finding memory judges it by (`remembered`, the one read
 * when there is none), a quarantine with a known restore-by by that deadline; and, with a known
 * restore-by, the last day to restore, named by that deadline alone. So the own event keeps its UID
 * while the record flips between read and kept as remembered (another kind, another date, or
 * none: RFC 5545 names an event by its UID alone, and a new UID is a deleted event and a new one,
 * the user's reminders lost); a quarantine's deadline, like an expiry, is a new event only when it
 * moves.
 */
export function findingEvents(f: DomainFinding): readonly FindingEvent[] {
  const judged = asRemembered(f);
  const deadline = deadlineFinding(f)?.restore_by;
  const own: FindingEvent =
    deadline && judged.kind === 'quarantine'
      ? { restoreBy: false, kind: 'quarantine', date: deadline }
      : { restoreBy: false, kind: judged.kind, date: nameDate(judged) };
  return deadline ? [own, { restoreBy: true, kind: 'restore_by', date: deadline }] : [own];
}

/**
 * The events of a quarantine memory keeps while its record gives no finding (a problem record
 * marked `kept_quarantine`, report-view.ts keptDeadlineOf), with a known restore-by: its own and
 * its last day to restore, each named as {@link findingEvents} named it while its record read
 * quarantine (the own event by kind `quarantine` and that deadline, the restore-by event by the
 * deadline alone), so the flip from read to kept (and back) keeps both events and the user's
 * reminders on them. With the deadline not known, its own event alone, named by no date (one UID
 * while it stays unknown; the feed puts it on the scan's day): it may be days from being lost.
 * Snoozed or not, as a snoozed finding's events stay. The feed writes these and the report view
 * counts them: one list for both.
 */
export function keptDeadlineEvents(
  kept: { readonly restore_by: string | null } | null,
): readonly FindingEvent[] {
  if (!kept) return [];
  if (!kept.restore_by) return [{ restoreBy: false, kind: 'quarantine', date: '' }];
  return [
    { restoreBy: false, kind: 'quarantine', date: kept.restore_by },
    { restoreBy: true, kind: 'restore_by', date: kept.restore_by },
  ];
}

/**
 * A restore deadline memory keeps with no finding, by its remembered restore-by (null: not known): a
 * problem record marked `kept_quarantine`, or one published critical as a quarantine memory knew
 * (`remembered_kind`, kept-quarantine.ts keptCritical) whose record could not be read (`unread`).
 */
export interface KeptDeadline {
  readonly domain_name: string;
  readonly severity: 'critical';
  readonly kept_quarantine: true;
  readonly restore_by: string | null;
  readonly days_to_restore: number | null;
  /** Its record could not be read at all (rather than read as nothing to report). */
  readonly unread?: true;
}

/** A kept quarantine's deadline, rather than a finding. */
export const isKeptDeadline = (f: Finding | KeptDeadline): f is KeptDeadline =>
  (f as { kept_quarantine?: unknown }).kept_quarantine === true;

/**
 * The kept deadline of a problem record with a domain name marked `kept_quarantine`, or marked
 * with the quarantine memory knew (`remembered_kind`, snoozed or not): a record that breaks must not take its
 * domain's restore-by events (and the reminders on them) out of the feed. Else null.
 */
export function keptDeadlineOf(p: Problem, nowMs: number): KeptDeadline | null {
  if ((p.kept_quarantine !== true && p.remembered_kind !== 'quarantine') || p.key === null) return null;
  const by = p.restore_by ? Date.parse(p.restore_by) : Number.NaN;
  const known = !Number.isNaN(by);
  return {
    domain_name: p.key,
    severity: 'critical',
    kept_quarantine: true,
    restore_by: known ? new Date(by).toISOString() : null,
    days_to_restore: known ? daysLeft(by, nowMs) : null,
    ...(p.kept_quarantine !== true && p.dates_only !== true ? { unread: true as const } : {}),
  };
}

/** What a restore deadline is told by: a quarantine finding, read or kept as remembered ({@link deadlineFinding}), or a {@link KeptDeadline}. */
export type DeadlineOf = DomainFinding | KeptDeadline;

/** A finding's restore deadline as memory judges it: its quarantine (read, or kept as remembered), else null. */
export function quarantineOf(f: Finding): DomainFinding | null {
  if (!isDomainFinding(f)) return null;
  if (f.remembered?.kind === 'quarantine') return deadlineFinding(f) ?? asRemembered(f);
  return f.kind === 'quarantine' ? f : null;
}
