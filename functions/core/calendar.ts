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
 * before an expiry; a quarantined domain with a known restore deadline has a second event on its
 * restore-by day. UIDs are a hash of domain, kind and date, so a calendar app that fetches the
 * feed again updates its events instead of adding copies, and a renewal (a new date) is a new event.
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

const dayFormat = dateFormat('UTC').day;

function summaryOf(f: DomainFinding, name: string): string {
  if (f.kind === 'quarantine') return `Quarantine: ${name}`;
  if (f.kind === 'expired') return `Expired: ${name}`;
  if (f.kind === 'renewal_failed') return `Renewal failed: ${name} (expires)`;
  return `Expires: ${name}${f.auto_renew === true ? '' : ' (auto-renew off)'}`;
}

/** The feed of `report`'s domain findings. */
export function renderCalendar(report: Report, options: { readonly accountLabel?: string } = {}): string {
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
    calendar.createEvent({
      id,
      start: new Date(Date.parse(date.slice(0, 10))),
      end: new Date(Date.parse(date.slice(0, 10)) + DAY_MS),
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
      const day = Date.parse(f.restore_by.slice(0, 10));
      calendar.createEvent({
        id: restoreUid,
        start: new Date(day),
        end: new Date(day + DAY_MS),
        allDay: true,
        stamp: new Date(report.generated_at),
        summary: `Restore by: ${shown} (last day to restore)`,
        description: `${shown}: ${restoreDeadlineText(f, dayFormat)}. After it, the domain can no longer be restored.`,
        ...(Date.parse(f.restore_by) > Date.parse(report.now)
          ? { alarms: [{ type: ICalAlarmType.display, triggerBefore: LAST_DAYS * 86_400 }] }
          : {}),
      });
    }
  }
  return calendar.toString();
}
