import { createHash } from 'node:crypto';
import { dateFormat, describeDomainFinding, restoreDeadlineText } from '../alerts/alert';
import { displayDomain, normalizeDomainName } from '../base/text';
import { type DomainFinding, isDomainFinding } from '../findings/classify';
import { LAST_DAYS } from '../findings/quarantine-periods';
import { RESPONSE_BUDGET_BYTES, type ReportView, responseBytes } from '../memory/report-view';
import type { Report } from '../scan/scan';

/**
 * The calendar feed (RFC 5545): one all-day event per domain finding, on its expiry date (or, in
 * quarantine, the day quarantine began), with an alarm CRITICAL_DAYS before an expiry; a
 * quarantined domain with a known restore deadline has a second event on the last day a restore is
 * still possible. All-day events float (they have no zone), so each is dated as the day reads in
 * the alert's time zone (ALERT_TIME_ZONE): dated in UTC, a deadline of 18:00 in Los Angeles would
 * show on the next day there, after it passed. UIDs are a hash of domain, kind and the UTC date, so
 * a calendar app that fetches the feed again updates its events instead of adding copies, and a
 * renewal (a new date) is a new event.
 *
 * A calendar app subscribes to one URL and cannot page, and some fetch it without compression:
 * the feed always fits one Lambda answer ({@link RESPONSE_BUDGET_BYTES}). Every critical and
 * warning event is in it; at a size where full events would not fit, the least urgent are written
 * short (the same UID and day and summary, without description and alarm), info events beyond
 * what fits are left out, and the calendar's description says so.
 */

export const CALENDAR_CONTENT_TYPE = 'text/calendar; charset=utf-8';
const DAY_MS = 86_400_000;

/** The day an event of `finding` falls on (ISO 8601). */
export function eventDate(finding: DomainFinding): string {
  if (finding.kind === 'registry_expiry_mismatch' && finding.registry?.date_expiry)
    return finding.registry.date_expiry; // the registry's date is the one the domain ends on
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

/**
 * The calendar date `ms` falls on in `timeZone`, as the midnight UTC an all-day event is given
 * (epoch ms). One formatter for the whole feed: making one per event cost more than the event.
 */
function dayIn(timeZone: string): (ms: number) => number {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  });
  return (ms) => {
    const parts = format.formatToParts(new Date(ms));
    const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
    return Date.UTC(part('year'), part('month') - 1, part('day'));
  };
}

function summaryOf(f: DomainFinding, name: string): string {
  if (f.kind === 'quarantine') return `Quarantine: ${name}`;
  if (f.kind === 'expired') return `Expired: ${name}`;
  if (f.kind === 'renewal_failed') return `Renewal failed: ${name} (expires)`;
  if (f.kind === 'registry_expiry_mismatch') return `Registry ends: ${name}`;
  if (f.kind === 'registry_hold') return `On hold at the registry: ${name}`;
  if (f.kind === 'registry_redemption') return `Redemption at the registry: ${name}`;
  return `Expires: ${name}${f.auto_renew === true ? '' : ' (auto-renew off)'}`;
}

/** RFC 5545 TEXT: backslash, semicolon, comma and line breaks escaped. */
const text = (value: string) => value.replace(/[\\;,]/g, (c) => `\\${c}`).replace(/\r\n|\r|\n/g, '\\n');

/** One content line, folded at 75 octets (RFC 5545 3.1) without splitting a character. */
function contentLine(line: string): string {
  if (line.length <= 75 && !/[^ -~]/.test(line)) return `${line}\r\n`;
  let out = '';
  let octets = 0;
  let limit = 75;
  for (const ch of line) {
    const code = ch.codePointAt(0) ?? 0;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (octets + size > limit) {
      out += '\r\n ';
      octets = 0;
      limit = 74;
    }
    out += ch;
    octets += size;
  }
  return `${out}\r\n`;
}

/** 20261122T060003Z */
const stamp = (iso: string) => `${iso.slice(0, 19).replace(/[-:]/g, '')}Z`;
/** 20261122 */
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10).replace(/-/g, '');

interface EventText {
  readonly full: string;
  readonly short: string;
  readonly info: boolean;
}

function eventText(input: {
  uid: string;
  stamp: string;
  start: number;
  summary: string;
  description: string;
  alarmDays: number | null;
}): { full: string; short: string } {
  const begin = contentLine('BEGIN:VEVENT');
  const uid = contentLine(`UID:${input.uid}`);
  const stamp = contentLine(`DTSTAMP:${input.stamp}`);
  const start = contentLine(`DTSTART;VALUE=DATE:${day(input.start)}`);
  const summary = contentLine(`SUMMARY:${text(input.summary)}`);
  const end = contentLine('END:VEVENT');
  // Joined, not added: a string made with + is a tree of its pieces, several times its length in
  // memory, and a feed holds tens of thousands of these until it is written.
  const full = [
    begin,
    uid,
    contentLine('SEQUENCE:0'),
    stamp,
    start,
    contentLine(`DTEND;VALUE=DATE:${day(input.start + DAY_MS)}`),
    contentLine('X-MICROSOFT-CDO-ALLDAYEVENT:TRUE'),
    contentLine('X-MICROSOFT-MSNCALENDAR-ALLDAYEVENT:TRUE'),
    summary,
    contentLine(`DESCRIPTION:${text(input.description)}`),
    ...(input.alarmDays !== null
      ? [
          contentLine('BEGIN:VALARM'),
          contentLine('ACTION:DISPLAY'),
          contentLine(`TRIGGER:-P${input.alarmDays}D`),
          contentLine(`DESCRIPTION:${text(input.summary)}`),
          contentLine('END:VALARM'),
        ]
      : []),
    end,
  ].join('');
  return { full, short: [begin, uid, stamp, start, summary, end].join('') };
}

/** The events of `report`'s domain findings, most urgent first (the report's order). */
function eventsOf(report: Report, timeZone: string): EventText[] {
  const format = dateFormat(timeZone);
  const dayFormat = format.day;
  const dayOf = dayIn(timeZone);
  const criticalDays = report.policy?.critical_days ?? 7;
  const uids = new Set<string>();
  const dtstamp = stamp(report.generated_at);
  const now = Date.parse(report.now);
  const events: EventText[] = [];
  for (const f of report.findings) {
    if (!isDomainFinding(f)) continue;
    // Two records whose names normalise the same (a reseller's duplicate) must not share an event.
    let id = eventUid(f);
    for (let n = 2; uids.has(id); n++) id = eventUid(f, `\n${f.domain_name}\n${n}`);
    uids.add(id);
    const shown = displayDomain(f.domain_name);
    const date = eventDate(f);
    const isExpiry = f.kind !== 'quarantine';
    const future = Date.parse(date) > now;
    const info = f.severity === 'info';
    events.push({
      ...eventText({
        uid: id,
        stamp: dtstamp,
        start: dayOf(Date.parse(date)),
        summary: summaryOf(f, shown),
        description: `${shown}: ${describeDomainFinding(f, report.now, dayFormat)} (${f.severity}).`,
        alarmDays: isExpiry && future ? criticalDays : null,
      }),
      info,
    });
    let restoreUid = restoreByUid(f);
    for (let n = 2; restoreUid && uids.has(restoreUid); n++)
      restoreUid = restoreByUid(f, `\n${f.domain_name}\n${n}`);
    if (restoreUid && f.restore_by) {
      uids.add(restoreUid);
      // The last day a restore is still possible: the day the deadline falls on (a deadline at
      // midnight sharp leaves none of that day), never a day that begins after it.
      const deadline = Date.parse(f.restore_by);
      events.push({
        ...eventText({
          uid: restoreUid,
          stamp: dtstamp,
          start: dayOf(deadline - 1),
          summary: `Restore by: ${shown} (last day to restore)`,
          description: `${shown}: ${restoreDeadlineText(f, dayFormat)}; the deadline is ${format.time(f.restore_by)}. After it, the domain can no longer be restored.`,
          alarmDays: deadline > now ? LAST_DAYS : null,
        }),
        info,
      });
    }
  }
  return events;
}

export interface CalendarOptions {
  readonly accountLabel?: string;
  /** The zone whose days the events fall on (ALERT_TIME_ZONE). @default 'UTC' */
  readonly timeZone?: string;
  /** The most the answer may take, as the Lambda counts it. @default RESPONSE_BUDGET_BYTES */
  readonly budgetBytes?: number;
}

/** The feed of `report`'s domain findings (a view of a stored report, or a whole report). */
export function renderCalendar(report: ReportView, options: CalendarOptions = {}): string {
  const budget = options.budgetBytes ?? RESPONSE_BUDGET_BYTES;
  const name = `domain-sentinel${options.accountLabel ? ` (${options.accountLabel})` : ''}`;
  const events = eventsOf(report, options.timeZone ?? 'UTC');
  const omittedInfo = report.view?.omittedTotal ?? 0;

  const head = (note: string) =>
    contentLine('BEGIN:VCALENDAR') +
    contentLine('VERSION:2.0') +
    contentLine('PRODID:-//domain-sentinel//expiry-feed//EN') +
    contentLine(`NAME:${text(name)}`) +
    contentLine(`X-WR-CALNAME:${text(name)}`) +
    (note ? contentLine(`X-WR-CALDESC:${text(note)}`) : '') +
    // Calendar apps poll on their own schedule; this asks for twice a day, as often as scans run.
    contentLine('REFRESH-INTERVAL;VALUE=DURATION:PT12H') +
    contentLine('X-PUBLISHED-TTL:PT12H');
  let size = responseBytes(head('x'.repeat(300))) + responseBytes(contentLine('END:VCALENDAR'));
  // Critical and warning events first, each short; then, most urgent first, whole while it fits;
  // then the info events, whole or short, while they fit.
  const urgent = events.filter((e) => !e.info);
  const info = events.filter((e) => e.info);
  const shortSizes = urgent.map((e) => responseBytes(e.short));
  for (const n of shortSizes) size += n;
  let kept = urgent.length;
  while (kept > 0 && size > budget) size -= shortSizes[--kept] as number;
  const whole = new Uint8Array(kept);
  for (let i = 0; i < kept; i++) {
    const extra = responseBytes((urgent[i] as EventText).full) - (shortSizes[i] as number);
    if (size + extra > budget) break;
    size += extra;
    whole[i] = 1;
  }
  const infoOut: string[] = [];
  for (const e of info) {
    const full = responseBytes(e.full);
    if (size + full <= budget) {
      infoOut.push(e.full);
      size += full;
      continue;
    }
    const short = responseBytes(e.short);
    if (size + short > budget) break;
    infoOut.push(e.short);
    size += short;
  }
  const notes: string[] = [];
  const infoLeft = omittedInfo + info.length - infoOut.length;
  if (infoLeft > 0)
    notes.push(
      `${infoLeft} info findings are not in this feed: the report page counts them, and its filter finds them.`,
    );
  if (kept < urgent.length)
    notes.push(
      `${urgent.length - kept} critical or warning events did not fit: the report page lists every one.`,
    );
  const out = [head(notes.join(' '))];
  for (let i = 0; i < kept; i++) {
    const e = urgent[i] as EventText;
    out.push(whole[i] ? e.full : e.short);
  }
  for (const e of infoOut) out.push(e);
  out.push(contentLine('END:VCALENDAR'));
  return out.join('');
}
