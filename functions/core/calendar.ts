import { createHash } from 'node:crypto';
import ical, { ICalAlarmType } from 'ical-generator';
import { dateFormat, describeDomainFinding, restoreDeadlineText } from './alert';
import { type DomainFinding, isDomainFinding } from './classify';
import { LAST_DAYS } from './quarantine-periods';
import type { Report } from './scan';
import { displayDomain, normalizeDomainName } from './text';

/**
 * The calendar feed (RFC 5545, written by ical-generator): one all-day event per domain finding,
 * on its expiry date (or, in quarantine, the day quarantine began), with an alarm CRITICAL_DAYS
 * before an expiry; a quarantined domain with a known restore deadline has a second event on the
 * last day a restore is still possible. All-day events float (they have no zone), so each is dated
 * as the day reads in the alert's time zone (ALERT_TIME_ZONE): dated in UTC, a deadline of 18:00
 * in Los Angeles would show on the next day there, after it passed. UIDs are a hash of domain,
 * kind and the UTC date, so a calendar app that fetches the feed again updates its events instead
 * of adding copies, and a renewal (a new date) is a new event.
 */

export const CALENDAR_CONTENT_TYPE = 'text/calendar; charset=utf-8';
const DAY_MS = 86_400_000;

/** The day an event of `finding` falls on (ISO 8601). */
export function eventDate(finding: DomainFinding): string {
  return finding.kind === 'quarantine' ? (finding.date_deleted ?? finding.date_expiry) : finding.date_expiry;
}

/** The stable UID of a finding's event; `repeat` tells apart records that would share one. */
export function eventUid(finding: DomainFinding, repeat = ''): string {
  return uidOf(finding.domain_name, finding.kind, eventDate(finding), repeat);
}

/** The stable UID of a quarantined domain's restore-by event: its own kind, so never the quarantine event's. */
export function restoreByUid(finding: DomainFinding, repeat = ''): string | null {
  return finding.restore_by ? uidOf(finding.domain_name, 'restore_by', finding.restore_by, repeat) : null;
}

function uidOf(domainName: string, kind: string, date: string, repeat: string): string {
  const hash = createHash('sha256')
    .update(`${normalizeDomainName(domainName)}\n${kind}\n${date.slice(0, 10)}${repeat}`)
    .digest('hex')
    .slice(0, 32);
  return `${hash}@domain-sentinel`;
}

/** The calendar date (YYYY-MM-DD) `ms` falls on in `timeZone`, as the midnight UTC an all-day event is given. */
function dayIn(ms: number, timeZone: string): Date {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(new Date(ms));
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return new Date(Date.UTC(part('year'), part('month') - 1, part('day')));
}

function summaryOf(f: DomainFinding, name: string): string {
  if (f.kind === 'quarantine') return `Quarantine: ${name}`;
  if (f.kind === 'expired') return `Expired: ${name}`;
  if (f.kind === 'renewal_failed') return `Renewal failed: ${name} (expires)`;
  return `Expires: ${name}${f.auto_renew === true ? '' : ' (auto-renew off)'}`;
}

export interface CalendarOptions {
  readonly accountLabel?: string;
  /** The zone whose days the events fall on (ALERT_TIME_ZONE). @default 'UTC' */
  readonly timeZone?: string;
}

/** The feed of `report`'s domain findings. */
export function renderCalendar(report: Report, options: CalendarOptions = {}): string {
  const timeZone = options.timeZone ?? 'UTC';
  const format = dateFormat(timeZone);
  const dayFormat = format.day;
  const name = `domain-sentinel${options.accountLabel ? ` (${options.accountLabel})` : ''}`;
  const calendar = ical({
    name,
    prodId: { company: 'domain-sentinel', product: 'expiry-feed', language: 'EN' },
    // Calendar apps poll on their own schedule; this asks for twice a day, as often as scans run.
    ttl: 12 * 3600,
  });
  const criticalDays = report.policy?.critical_days ?? 7;
  const uids = new Set<string>();
  for (const f of report.findings) {
    if (!isDomainFinding(f)) continue;
    // Two records whose names normalise the same (a reseller's duplicate) must not share an event.
    let id = eventUid(f);
    for (let n = 2; uids.has(id); n++) id = eventUid(f, `\n${f.domain_name}\n${n}`);
    uids.add(id);
    const shown = displayDomain(f.domain_name);
    const date = eventDate(f);
    const isExpiry = f.kind !== 'quarantine';
    const future = Date.parse(date) > Date.parse(report.now);
    const day = dayIn(Date.parse(date), timeZone).getTime();
    calendar.createEvent({
      id,
      start: new Date(day),
      end: new Date(day + DAY_MS),
      allDay: true,
      stamp: new Date(report.generated_at),
      summary: summaryOf(f, shown),
      description: `${shown}: ${describeDomainFinding(f, report.now, dayFormat)} (${f.severity}).`,
      ...(isExpiry && future
        ? { alarms: [{ type: ICalAlarmType.display, triggerBefore: criticalDays * 86_400 }] }
        : {}),
    });
    let restoreUid = restoreByUid(f);
    for (let n = 2; restoreUid && uids.has(restoreUid); n++)
      restoreUid = restoreByUid(f, `\n${f.domain_name}\n${n}`);
    if (restoreUid && f.restore_by) {
      uids.add(restoreUid);
      // The last day a restore is still possible: the day the deadline falls on (a deadline at
      // midnight sharp leaves none of that day), never a day that begins after it.
      const deadline = Date.parse(f.restore_by);
      const last = dayIn(deadline - 1, timeZone).getTime();
      calendar.createEvent({
        id: restoreUid,
        start: new Date(last),
        end: new Date(last + DAY_MS),
        allDay: true,
        stamp: new Date(report.generated_at),
        summary: `Restore by: ${shown} (last day to restore)`,
        description: `${shown}: ${restoreDeadlineText(f, dayFormat)}; the deadline is ${format.time(f.restore_by)}. After it, the domain can no longer be restored.`,
        ...(Date.parse(f.restore_by) > Date.parse(report.now)
          ? { alarms: [{ type: ICalAlarmType.display, triggerBefore: LAST_DAYS * 86_400 }] }
          : {}),
      });
    }
  }
  return calendar.toString();
}
