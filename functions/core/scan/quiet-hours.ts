import * as z from 'zod';
import { type Finding, isDomainFinding } from '../findings/classify';
import type { Problem } from '../reseller/client';

/**
 * Quiet hours for SMS (SMS_QUIET_HOURS, `smsQuietHours`): a window such as `22:00-07:00` in the
 * alert's time zone during which an SMS waits until the window ends, unless a deadline is close
 * (docs/policies.md). Pure: parsing the window, placing an instant in it, and the urgency rule.
 */

/** A deadline at most this far away sends the SMS at once, quiet hours or not. */
export const URGENT_WITHIN_MS = 48 * 3_600_000;

/** A daily window, in minutes after local midnight; `start > end` crosses midnight. */
export interface QuietHours {
  readonly start: number;
  readonly end: number;
  /** As written: `22:00-07:00`. */
  readonly text: string;
}

const WINDOW = /^([01]\d|2[0-3]):([0-5]\d)\s*-\s*([01]\d|2[0-3]):([0-5]\d)$/;

/** Parses `HH:MM-HH:MM` (24-hour clock); null when it is not one, or starts where it ends. */
export function parseQuietHours(text: string): QuietHours | null {
  const m = WINDOW.exec(text.trim());
  if (!m) return null;
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = Number(m[3]) * 60 + Number(m[4]);
  if (start === end) return null;
  return { start, end, text: `${m[1]}:${m[2]}-${m[3]}:${m[4]}` };
}

/** SMS_QUIET_HOURS's schema. */
export const quietHoursSchema = z.string().transform((text, ctx) => {
  const window = parseQuietHours(text);
  if (!window) {
    ctx.addIssue({
      code: 'custom',
      message:
        'must be a window of the 24-hour clock such as 22:00-07:00 (start and end differ; it may cross midnight)',
    });
    return z.NEVER;
  }
  return window;
});

/** Where in its zone an instant falls: the local calendar date and the minutes after midnight. */
function localTime(now: number, zone: string): { y: number; m: number; d: number; minutes: number } {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(now));
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return { y: part('year'), m: part('month'), d: part('day'), minutes: part('hour') * 60 + part('minute') };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** What the wall clock of `zone` shows at instant `t`, as epoch ms of that date and time read as UTC. */
function wallOf(t: number, zone: string): number {
  const l = localTime(t, zone);
  return Date.UTC(l.y, l.m - 1, l.d) + l.minutes * 60_000;
}

/**
 * The instant a local date and time of `zone` happens (`2027-03-28T02:30:00`, whole minutes): the
 * first of the two in the hour the clocks repeat, and the clock change itself for one in the hour
 * they skip, which never happens there (EventBridge Scheduler skips such a time).
 */
export function instantOfLocal(local: string, zone: string): number {
  const wall = Date.parse(`${local}Z`);
  // The offsets either side of any clock change that day (zones change at most once a day).
  const offset = (t: number) => wallOf(t, zone) - t;
  const before = wall - offset(wall - 43_200_000);
  const after = wall - offset(wall + 43_200_000);
  let lo = Math.min(before, after);
  let hi = Math.max(before, after);
  if (wallOf(lo, zone) === wall) return lo;
  if (wallOf(hi, zone) === wall) return hi;
  // Skipped: the first minute whose wall time is at or past it, between the two readings.
  while (hi - lo > 60_000) {
    const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
    if (wallOf(mid, zone) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * When the window `now` falls in ends, as the local date and time of `zone` (`2026-11-23T07:00:00`,
 * what EventBridge Scheduler's `at()` takes with the zone beside it); null outside the window, and
 * in the hour the clocks repeat once the window's end happened the first time.
 */
export function quietUntil(now: number, window: QuietHours, zone: string): string | null {
  const t = localTime(now, zone);
  const crosses = window.start > window.end;
  const inside = crosses
    ? t.minutes >= window.start || t.minutes < window.end
    : t.minutes >= window.start && t.minutes < window.end;
  if (!inside) return null;
  // The window ends tomorrow when it crosses midnight and we are still before midnight.
  const nextDay = crosses && t.minutes >= window.start;
  const day = new Date(Date.UTC(t.y, t.m - 1, t.d + (nextDay ? 1 : 0)));
  const end = `${day.getUTCFullYear()}-${pad(day.getUTCMonth() + 1)}-${pad(day.getUTCDate())}T${pad(Math.floor(window.end / 60))}:${pad(window.end % 60)}:00`;
  // In the hour the clocks repeat, after the end's first time: the window ended once already, and
  // its end's instant (the first, instantOfLocal) is past, a schedule that would never run.
  return instantOfLocal(end, zone) > now ? end : null;
}

/**
 * True when a critical item of the message has a deadline within {@link URGENT_WITHIN_MS}: an
 * expiry in the next 48 hours (the registry's, where it disagrees with the reseller's: the date the
 * domain ends on), a restore-by in the next 48 hours or already past, or a quarantine whose
 * restore-by is unknown (nothing shows it is further), as is the registry's redemption or hold and
 * a record that says quarantine but could not be read (one memory keeps in quarantine, its
 * restore-by remembered, as a quarantine finding). An expiry already past is not one: the
 * domain's next deadline is its restore-by, once it is in quarantine; nor is a record critical as
 * the expired domain memory knew (`remembered_kind`), which stands for that finding.
 */
export function hasUrgentDeadline(
  report: { readonly findings: readonly Finding[]; readonly problems: readonly Problem[] },
  now: number,
): boolean {
  // A quarantine memory keeps (its restore-by remembered) as a quarantine finding; one critical
  // as an expired domain memory knew (remembered_kind) as an expired finding: its expiry has
  // passed; any other critical record, its deadline unknown, as urgent.
  const urgentProblem = (p: Problem) =>
    p.remembered_kind !== 'expired' &&
    (typeof p.restore_by !== 'string' || Date.parse(p.restore_by) - now <= URGENT_WITHIN_MS);
  if (report.problems.some((p) => p.severity === 'critical' && urgentProblem(p))) return true;
  return report.findings.some((f) => {
    if (f.severity !== 'critical' || !isDomainFinding(f)) return false;
    if (f.kind === 'quarantine') return !f.restore_by || Date.parse(f.restore_by) - now <= URGENT_WITHIN_MS;
    if (f.kind === 'registry_redemption' || f.kind === 'registry_hold' || f.kind === 'registry_unknown')
      return true;
    const expiry = (f.kind === 'registry_expiry_mismatch' && f.registry?.date_expiry) || f.date_expiry;
    const left = Date.parse(expiry) - now;
    return left >= 0 && left <= URGENT_WITHIN_MS;
  });
}
