import { createHash } from 'node:crypto';
import { dateFormat, describeDomainFinding, restoreDeadlineText } from '../alerts/alert';
import { normalizeDomainName, plainDomain } from '../base/text';
import { type DomainFinding, isDomainFinding, type Severity, severityRank } from '../findings/classify';
import { keptQuarantineStep } from '../findings/next-step';
import { LAST_DAYS } from '../findings/quarantine-periods';
import {
  deadlineFinding,
  eventDate,
  type FindingEvent,
  findingEvents,
  isKeptDeadline,
  type KeptDeadline,
  keptDeadlineEvents,
  keptDeadlineOf,
  quarantineOf,
} from '../memory/feed-events';
import { briefThenFull, RESPONSE_BUDGET_BYTES, type ReportView, responseBytes } from '../memory/report-view';
import type { Report } from '../scan/scan';

/**
 * The calendar feed (RFC 5545): one all-day event per domain finding, on its expiry date (or, in
 * quarantine, the day quarantine began), with an alarm CRITICAL_DAYS before an expiry; a
 * quarantined domain with a known restore deadline has a second event on the last day a restore is
 * still possible, and so has one memory keeps as a quarantine while its record reads another kind
 * (`remembered`, docs/memory.md), on the remembered deadline: the UID it had while read in
 * quarantine, as urgent as that quarantine. So has one memory keeps while its record gives no
 * finding at all (a problem record marked `kept_quarantine`), snoozed or not: critical, among the
 * critical findings' events by its deadline, under that UID too, with its own event under the UID it had while read
 * ({@link keptDeadlineEvents}). All-day events float (they have no zone), so each is
 * dated as the day reads in the alert's time zone (ALERT_TIME_ZONE): dated in UTC, a deadline of
 * 18:00 in Los Angeles would show on the next day there, after it passed. UIDs are a hash of domain, kind and the UTC date (of the
 * finding memory judges by: {@link findingEvents}), so a calendar app that fetches the feed again
 * updates its events instead of adding copies, and a renewal (a new date) is a new event.
 *
 * A calendar app subscribes to one URL and cannot page, and some fetch it without compression:
 * the feed always fits one Lambda answer ({@link RESPONSE_BUDGET_BYTES}). Critical and warning
 * events come first; at a size where full events would not fit, the least urgent are written
 * short (the same UID and day and summary, without description and alarm), and those that do not
 * fit even so are left out, as are info events beyond what fits; the calendar's description says
 * how many.
 */

export const CALENDAR_CONTENT_TYPE = 'text/calendar; charset=utf-8';
const DAY_MS = 86_400_000;

/**
 * How urgent a finding's events are: the higher of its severity and the one memory keeps
 * (`remembered`); a kept quarantine's with no finding, as a quarantine's (critical), snoozed or not.
 */
function urgencyOf(f: DomainFinding | KeptDeadline): Severity {
  if (isKeptDeadline(f)) return 'critical';
  const kept = f.remembered?.severity;
  return kept !== undefined && severityRank(kept) > severityRank(f.severity) ? kept : f.severity;
}

/**
 * The stable UID of a finding's own event ({@link findingEvents}); `repeat` tells apart records that
 * would share one. A restore-by event's names its deadline alone.
 */
export function eventUid(finding: DomainFinding, repeat = ''): string {
  const { kind, date } = findingEvents(finding)[0] as FindingEvent;
  return uidOf(uidKey(finding.domain_name, kind, date, repeat));
}

/** What a UID is the hash of: two events share a UID exactly when they share this. */
const uidKey = (domainName: string, kind: string, date: string, repeat: string): string =>
  `${normalizeDomainName(domainName)}\n${kind}\n${date.slice(0, 10)}${repeat}`;

const uidOf = (key: string): string =>
  `${createHash('sha256').update(key).digest('hex').slice(0, 32)}@domain-sentinel`;

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
    // setUTCFullYear, not Date.UTC: that reads a year 0–99 as 1900–1999.
    return new Date(0).setUTCFullYear(part('year'), part('month') - 1, part('day'));
  };
}

function summaryOf(f: DomainFinding, name: string): string {
  if (f.kind === 'quarantine') return `Quarantine: ${name}`;
  if (f.kind === 'expired') return `Expired: ${name}`;
  if (f.kind === 'renewal_failed') return `Renewal failed: ${name} (expires)`;
  if (f.kind === 'registry_expiry_mismatch') return `Registry ends: ${name}`;
  if (f.kind === 'registry_hold') return `On hold at the registry: ${name}`;
  if (f.kind === 'registry_redemption') return `Redemption at the registry: ${name}`;
  if (f.kind === 'registry_unknown') return `Unknown to the registry: ${name}`;
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

/**
 * An event of the feed as it is kept until written: its finding, which of the finding's events it
 * is, and what its UID is the hash of. Written only when asked (a feed of 100 000 urgent events has
 * room for some 22 000, and writing the others, their descriptions most of all, took most of its
 * time), and kept this small: a closure or two per event held 50 MB more than the view at 100 000,
 * beyond the 256 MB the function had then.
 */
interface FeedEvent {
  /** Its finding, or the kept quarantine (with no finding) whose event it is. */
  readonly finding: DomainFinding | KeptDeadline;
  /** A quarantined domain's restore-by event, rather than its own. */
  readonly restoreBy: boolean;
  /** What its UID is the hash of ({@link uidKey}). */
  readonly key: string;
  /** Where it stands in the feed ({@link standing}). */
  readonly standing: Standing;
}

interface EventInput {
  readonly uid: string;
  readonly stamp: string;
  readonly start: number;
  readonly summary: string;
  readonly description: () => string;
  readonly alarmDays: number | null;
}

/** What every event of one feed is written with. */
interface FeedContext {
  readonly dtstamp: string;
  readonly now: number;
  readonly reportNow: string;
  readonly criticalDays: number;
  readonly format: ReturnType<typeof dateFormat>;
  readonly dayOf: (ms: number) => number;
}

/** What an event says: its UID, day, summary, description and alarm. */
function eventInput(e: FeedEvent, c: FeedContext): EventInput {
  const f = e.finding;
  if (isKeptDeadline(f)) return keptInput(f, e, c);
  const shown = plainDomain(f.domain_name);
  const dayFormat = c.format.day;
  if (!e.restoreBy) {
    const date = eventDate(f);
    return {
      uid: uidOf(e.key),
      stamp: c.dtstamp,
      start: c.dayOf(Date.parse(date)),
      summary: summaryOf(f, shown),
      description: () => `${shown}: ${describeDomainFinding(f, c.reportNow, dayFormat)} (${f.severity}).`,
      alarmDays: f.kind !== 'quarantine' && Date.parse(date) > c.now ? c.criticalDays : null,
    };
  }
  const q = deadlineFinding(f) ?? f;
  const restoreBy = q.restore_by ?? '';
  // The last day a restore is still possible: the day the deadline falls on (a deadline at
  // midnight sharp leaves none of that day), never a day that begins after it.
  const deadline = Date.parse(restoreBy);
  return {
    uid: uidOf(e.key),
    stamp: c.dtstamp,
    start: c.dayOf(deadline - 1),
    summary: `Restore by: ${shown} (last day to restore)`,
    description: () =>
      `${shown}: ${restoreDeadlineText(q, dayFormat)} (the deadline's day and time). After it, the domain can no longer be restored.`,
    alarmDays: deadline > c.now ? LAST_DAYS : null,
  };
}

/**
 * An event of a quarantine memory keeps while its record gives no finding ({@link keptDeadlineEvents}):
 * its own and its restore-by, both on the remembered deadline's day (the day its quarantine began
 * is not in what memory publishes), the restore-by with the alarm a quarantine's restore-by has and
 * the own without one, as a read quarantine's; their words say memory keeps it, and the next step
 * (as the report page lists it).
 */
function keptInput(kept: KeptDeadline, e: FeedEvent, c: FeedContext): EventInput {
  const shown = plainDomain(kept.domain_name);
  const deadline = Date.parse(kept.restore_by ?? '');
  const step = keptQuarantineStep(kept, c.format.day);
  // Its deadline not known: on the scan's day, each scan (keptDeadlineEvents), no alarm as a read quarantine's.
  if (Number.isNaN(deadline))
    return {
      uid: uidOf(e.key),
      stamp: c.dtstamp,
      start: c.dayOf(c.now),
      summary: `Quarantine: ${shown} (last read in quarantine, restore deadline unknown)`,
      description: () =>
        `${shown}: last read in quarantine, ${restoreDeadlineText(kept, c.format.day)}. ${step}`,
      alarmDays: null,
    };
  const words = `${restoreDeadlineText(kept, c.format.day)} (the deadline's day and time, as memory keeps it). ${step}`;
  if (!e.restoreBy)
    return {
      uid: uidOf(e.key),
      stamp: c.dtstamp,
      start: c.dayOf(deadline - 1),
      summary: `Quarantine: ${shown} (last read in quarantine)`,
      description: () => `${shown}: last read in quarantine, shown on its last day to restore. ${words}`,
      alarmDays: null,
    };
  return {
    uid: uidOf(e.key),
    stamp: c.dtstamp,
    start: c.dayOf(deadline - 1),
    summary: `Restore by: ${shown} (last day to restore, last read in quarantine)`,
    description: () => `${shown}: ${words}`,
    alarmDays: deadline > c.now ? LAST_DAYS : null,
  };
}

function eventText(input: EventInput, full: boolean): string {
  const begin = contentLine('BEGIN:VEVENT');
  const uid = contentLine(`UID:${input.uid}`);
  const stamp = contentLine(`DTSTAMP:${input.stamp}`);
  const start = contentLine(`DTSTART;VALUE=DATE:${day(input.start)}`);
  const summary = contentLine(`SUMMARY:${text(input.summary)}`);
  const end = contentLine('END:VEVENT');
  // SEQUENCE stays 0 (a brief event leaves it out: 0 is its default): the feed keeps no past, so a
  // revision it raised while a record reads kept would fall back when it reads as before, and RFC
  // 5546 takes the lower one for a stale copy. At one SEQUENCE, the later DTSTAMP is the newer
  // event: the time the feed is served (CalendarOptions.servedAt), later at each fetch whatever
  // the clock of the scan that made the report did.
  if (!full) return [begin, uid, stamp, start, summary, end].join('');
  // Joined, not added: a string made with + is a tree of its pieces, several times its length in
  // memory, and a feed holds tens of thousands of these until it is written.
  return [
    begin,
    uid,
    contentLine('SEQUENCE:0'),
    stamp,
    start,
    contentLine(`DTEND;VALUE=DATE:${day(input.start + DAY_MS)}`),
    contentLine('X-MICROSOFT-CDO-ALLDAYEVENT:TRUE'),
    contentLine('X-MICROSOFT-MSNCALENDAR-ALLDAYEVENT:TRUE'),
    summary,
    contentLine(`DESCRIPTION:${text(input.description())}`),
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
}

/** Where a finding's events stand in the feed: its urgency's rank, and its restore-by (epoch ms). */
interface Standing {
  readonly rank: number;
  readonly deadline: number;
}

/**
 * Where a finding's events stand in the feed: the more urgent first ({@link urgencyOf}); among
 * equals, a restore deadline (a quarantine's, read, kept as remembered or kept with no finding)
 * before the rest, the soonest first, as the report orders its quarantines; else in the order given.
 */
function standing(f: DomainFinding | KeptDeadline): Standing {
  const q = isKeptDeadline(f) ? f : quarantineOf(f);
  const by = q?.restore_by ? Date.parse(q.restore_by) : Number.NaN;
  // A quarantine whose restore-by is not known may end any day: first, as quiet hours take it.
  const unknown = q ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  return { rank: severityRank(urgencyOf(f)), deadline: Number.isNaN(by) ? unknown : by };
}

/**
 * The events of `report`'s domain findings and of the quarantines memory keeps with no finding,
 * the most urgent first whatever they come from ({@link standing}): a feed too large for its
 * budget keeps the first, so a kept quarantine (a domain days from being lost) is not left out
 * for a warning. UIDs are given in the report's order (findings, then problem records, as the
 * report view counts them), so a duplicate's is the same whichever events the feed then writes.
 */
function eventsOf(report: Report): FeedEvent[] {
  // UIDs are told apart by what they hash (hashed only for the events written).
  const uids = new Set<string>();
  const unique = (f: { readonly domain_name: string }, kind: string, date: string): string => {
    let key = uidKey(f.domain_name, kind, date, '');
    // Two records whose names normalise the same (a reseller's duplicate) must not share an event.
    for (let n = 2; uids.has(key); n++) key = uidKey(f.domain_name, kind, date, `\n${f.domain_name}\n${n}`);
    uids.add(key);
    return key;
  };
  const events: FeedEvent[] = [];
  for (const f of report.findings) {
    if (!isDomainFinding(f)) continue;
    const at = standing(f);
    for (const e of findingEvents(f))
      events.push({ finding: f, restoreBy: e.restoreBy, key: unique(f, e.kind, e.date), standing: at });
  }
  const now = Date.parse(report.now);
  for (const p of report.problems) {
    const kept = keptDeadlineOf(p, now);
    if (!kept) continue;
    const at = standing(kept);
    // Counted by the same function in the view (report-view.ts), so its count of those it left out is the feed's.
    for (const e of keptDeadlineEvents(kept))
      events.push({ finding: kept, restoreBy: e.restoreBy, key: unique(kept, e.kind, e.date), standing: at });
  }
  // A stable sort: a finding's events stay together, and equals stay in the report's order.
  return events.sort(
    (a, b) => b.standing.rank - a.standing.rank || a.standing.deadline - b.standing.deadline,
  );
}

export interface CalendarOptions {
  readonly accountLabel?: string;
  /** The zone whose days the events fall on (ALERT_TIME_ZONE). @default 'UTC' */
  readonly timeZone?: string;
  /** The most the answer may take, as the Lambda counts it. @default RESPONSE_BUDGET_BYTES */
  readonly budgetBytes?: number;
  /**
   * When the feed is served (epoch ms): every event's DTSTAMP. The serving clock's, not the scan's:
   * a report made by a scan whose clock ran back reads as made before the last, and its events, at
   * one SEQUENCE, as older copies (RFC 5546). @default the report's generated_at
   */
  readonly servedAt?: number;
}

/** The feed of `report`'s domain findings (a view of a stored report, or a whole report). */
export function renderCalendar(report: ReportView, options: CalendarOptions = {}): string {
  const budget = options.budgetBytes ?? RESPONSE_BUDGET_BYTES;
  const name = `domain-sentinel${options.accountLabel ? ` (${options.accountLabel})` : ''}`;
  const events = eventsOf(report);
  const timeZone = options.timeZone ?? 'UTC';
  const context: FeedContext = {
    dtstamp: stamp(
      options.servedAt === undefined ? report.generated_at : new Date(options.servedAt).toISOString(),
    ),
    now: Date.parse(report.now),
    reportNow: report.now,
    criticalDays: report.policy?.critical_days ?? 7,
    format: dateFormat(timeZone),
    dayOf: dayIn(timeZone),
  };
  const short = (e: FeedEvent) => eventText(eventInput(e, context), false);
  const full = (e: FeedEvent) => eventText(eventInput(e, context), true);
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
  // Critical and warning events first, each short, the most urgent first while they fit; then,
  // most urgent first, whole while it fits; then the info events, whole or short, while they fit.
  // Only what is written is made.
  // A finding memory keeps as remembered is as urgent as that one (a kept quarantine read as info).
  const urgent = events.filter((e) => urgencyOf(e.finding) !== 'info');
  const info = events.filter((e) => urgencyOf(e.finding) === 'info');
  const fitted = briefThenFull(urgent, short, full, size, budget);
  const urgentOut = fitted.out;
  const kept = urgentOut.length;
  size = fitted.size;
  const infoOut: string[] = [];
  for (const e of info) {
    const whole = full(e);
    const wholeSize = responseBytes(whole);
    if (size + wholeSize <= budget) {
      infoOut.push(whole);
      size += wholeSize;
      continue;
    }
    const brief = short(e);
    const briefSize = responseBytes(brief);
    if (size + briefSize > budget) break;
    infoOut.push(brief);
    size += briefSize;
  }
  const notes: string[] = [];
  const infoLeft = omittedInfo + info.length - infoOut.length;
  // A view carries only the urgent events a feed can hold, and counts the rest (report-view.ts).
  const urgentLeft = urgent.length - kept + (report.view?.urgentLeft?.events ?? 0);
  if (infoLeft > 0)
    notes.push(
      `${infoLeft} info findings are not in this feed: the report page counts them, and its filter finds them.`,
    );
  if (urgentLeft > 0)
    notes.push(
      `${urgentLeft} critical or warning events did not fit: the report page's filter finds any of them, and the JSON report lists every one.`,
    );
  const out = [head(notes.join(' ')), ...urgentOut, ...infoOut];
  out.push(contentLine('END:VCALENDAR'));
  return out.join('');
}
