import * as z from 'zod';
import { displayDomain, normalizeDomainName } from '../base/text';
import {
  type DomainFinding,
  type Finding,
  type FindingActions,
  isDomainFinding,
  SEVERITIES,
} from '../findings/classify';
import type { Problem } from '../reseller/client';
import { parseRfc3339 } from '../reseller/schemas';
import { SignedActions } from '../scan/report-links';
import type { Report } from '../scan/scan';
import {
  type DeadlineOf,
  findingEvents,
  isKeptDeadline,
  type KeptDeadline,
  keptDeadlineEvents,
  keptDeadlineOf,
  quarantineOf,
} from './feed-events';
import type { ReportList, ReportReader } from './report-json';

/**
 * What the report page and the calendar feed take from a stored report, read one element at a
 * time (report-json.ts): the critical and warning findings they can show, and of the rest what the
 * page lists and counts. At 1 000 000 domains a report holds some 120 000 info findings: the web
 * function never holds them, it counts them by kind, keeps the ones a filter asks for, and keeps
 * the few the timeline draws. An account whose every finding is urgent has a million critical and
 * warning ones: the view keeps as many as an answer can show ({@link URGENT_KEPT}) and counts the
 * rest, as the page and the feed count them. Pure.
 */

/** Info findings listed without a filter; the rest are counted by kind, and the filter finds them. */
export const INFO_LISTED = 1_000;
/** Changes since the last scan listed on the page; the rest are counted. */
export const CHANGES_LISTED = 1_000;
/** Unreadable records carried from the first (the page shows their number). */
const PROBLEMS_KEPT = 100;
/**
 * The fewest bytes an item of the page's lists takes as Lambda counts it: a brief item's own
 * markup, `<li class="warning" data-domain=""><strong></strong>: </li>`, its quotes escaped, with
 * an empty name and no words at all. A feed's event takes more (its UID alone is 48 bytes).
 */
export const LEAST_ITEM_BYTES = 63;
/** Domains with a restore deadline the page lists (quarantines, those memory keeps too); the rest are counted. */
export const DEADLINES_LISTED = 20;
/** Unreadable records the page lists, the first the view carries (the report's first, then the soonest
 * kept quarantines: it carries {@link KEPT_CARRIED} for the feed); the rest are counted. */
export const PROBLEMS_LISTED = PROBLEMS_KEPT + DEADLINES_LISTED;
/** Days the timeline looks ahead, and its rows; the rest are counted beneath it. */
export const TIMELINE_DAYS = 90;
export const TIMELINE_ROWS = 60;
const DAY_MS = 86_400_000;

/** What a view is for: the page (with its filter) or the calendar feed. */
export interface ViewSelection {
  readonly purpose: 'page' | 'calendar';
  /** The page's filter, as typed. */
  readonly query?: string;
}

/** One row of the timeline: an expiry, or a quarantined domain's restore-by day. */
export interface TimelineRow {
  readonly finding: DeadlineOf;
  /** Epoch ms the mark stands at. */
  readonly at: number;
  readonly restore: boolean;
}

/**
 * Critical and warning findings a view did not carry (beyond {@link URGENT_KEPT} of each order),
 * counted as the page and the feed count them; with a filter, the matching ones.
 */
export interface UrgentLeft {
  /** Of the page's CRITICAL list (domains a policy lets lapse are listed apart). */
  readonly critical: number;
  /** Of its WARNING list. */
  readonly warning: number;
  /** Of its list of domains a policy lets lapse. */
  readonly lapsing: number;
  /** Of the feed's critical and warning events (a quarantine's restore-by day is one more; a kept quarantine's with no finding, two). */
  readonly events: number;
  /** Domains with a restore deadline (of the whole report, filter or not): quarantine findings, read or kept as remembered, and kept quarantines among the unreadable records. */
  readonly quarantine: number;
  /** Every critical and warning finding not carried, matching or not. */
  readonly total: number;
}

/** What a view left out of `findings`, and what the page needs of the whole report. */
export interface ViewNotes {
  /** Findings not carried, by kind (info beyond what is listed). */
  readonly omitted: Readonly<Record<string, number>>;
  readonly omittedTotal: number;
  /** With a filter: how many findings of the whole report match it. */
  readonly matches?: number;
  /** The timeline's first rows, by date, and how many dates fall in its window in all. */
  readonly timeline?: { readonly rows: readonly TimelineRow[]; readonly total: number };
  /** How many changes the report holds (the first {@link CHANGES_LISTED} are carried). */
  readonly changesTotal?: number;
  /** How many unreadable records the report holds. */
  readonly problemsTotal: number;
  /** Critical and warning findings not carried; absent when every one is. */
  readonly urgentLeft?: UrgentLeft;
}

/** A report as a view carries it: `findings` holds only what was kept, `view` says what was not. */
export type ReportView = Report & { readonly view?: ViewNotes };

/**
 * What a synchronous Lambda may answer is 6 MB, counted on the JSON the runtime sends (the body
 * escaped: every quote, backslash and line break costs a byte more). The page and the feed are
 * made to stay within this, headers and envelope left room.
 */
export const RESPONSE_BUDGET_BYTES = 5 * 1024 * 1024;

/**
 * Critical and warning findings a view carries of each list the page and the feed show them in:
 * more than a {@link RESPONSE_BUDGET_BYTES} answer can hold were every item the least it can be
 * ({@link LEAST_ITEM_BYTES}). The page and the feed keep the first that fit, in their order, so
 * the view keeps the first of each of their orders and counts the rest ({@link UrgentLeft}).
 */
export const URGENT_KEPT = Math.ceil(RESPONSE_BUDGET_BYTES / LEAST_ITEM_BYTES);

/**
 * Kept quarantines (restore deadlines with no finding) a view carries after the first problem
 * records, the soonest by restore-by: the feed writes two events of each, each more than
 * {@link LEAST_ITEM_BYTES}, so no feed holds more (at 20, a domain days from being lost was left
 * out of a feed with room for it). At 100 000 kept quarantines the stored view is some 9 MB.
 */
export const KEPT_CARRIED = Math.ceil(URGENT_KEPT / 2);

/** Bytes `text` takes as a JSON string's content (UTF-8, escapes counted). */
export function responseBytes(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x08 || c === 0x0c)
      n += 2;
    else if (c < 0x20) n += 6;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff)
      n += 6; // a lone surrogate: JSON writes it escaped
    else n += 3;
  }
  return n;
}

/**
 * What fits in `budget` bytes from `size` on, as the page and the feed keep their urgent items:
 * each item brief, in order while they fit, then from the first on each in full while it fits.
 * Only what is kept is made (and the first that does not fit). Returns the texts kept, how many
 * of them (from the first) are in full, and the size reached.
 */
export function briefThenFull<T>(
  items: readonly T[],
  brief: (item: T) => string,
  full: (item: T) => string,
  size: number,
  budget: number,
): { readonly out: string[]; readonly full: number; readonly size: number } {
  const out: string[] = [];
  const briefSizes: number[] = [];
  for (const item of items) {
    const text = brief(item);
    const n = responseBytes(text);
    if (size + n > budget) break;
    out.push(text);
    briefSizes.push(n);
    size += n;
  }
  let whole = 0;
  while (whole < out.length) {
    const text = full(items[whole] as T);
    const extra = responseBytes(text) - (briefSizes[whole] as number);
    if (size + extra > budget) break;
    size += extra;
    out[whole++] = text;
  }
  return { out, full: whole, size };
}

/** The filter's text, normalised as the page normalises it. */
export const filterText = (query: string | undefined): string =>
  (query ?? '')
    .trim()
    .slice(0, 200)
    .replace(/[\uD800-\uDBFF]$/, '');

/** Text a finding is matched against by the filter. */
export function searchable(f: Finding): string {
  if (!isDomainFinding(f))
    return `${f.handle} ${f.name} ${f.company_name} ${f.email} ${f.kind}`.toLowerCase();
  const r = f.registrant;
  return [displayDomain(f.domain_name), f.kind, f.severity, r?.handle, r?.name, r?.company_name, r?.email]
    .filter(Boolean)
    .join(' ')
    .toLowerCase();
}

/**
 * The timeline row of a finding, or null when it has no date in the window: a quarantined domain's
 * restore-by day (today when it passed), any other domain's expiry.
 */
export function timelineRowOf(f: Finding | KeptDeadline, start: number): TimelineRow | null {
  const end = start + TIMELINE_DAYS * DAY_MS;
  const q: DeadlineOf | null = isKeptDeadline(f) ? f : quarantineOf(f as Finding);
  if (q) {
    const by = q.restore_by ? Date.parse(q.restore_by) : Number.NaN;
    return by <= end ? { finding: q, at: Math.max(start, by), restore: true } : null;
  }
  if (isKeptDeadline(f) || !isDomainFinding(f)) return null;
  const expiry = Date.parse(f.date_expiry);
  return expiry >= start && expiry <= end ? { finding: f, at: expiry, restore: false } : null;
}

/** A stored report the page and the feed cannot show: the place in it and what is wrong. */
export class ViewDataError extends Error {
  override readonly name: string = 'ViewDataError';
}

/** A stored date-time: RFC 3339, as the scan writes it. */
export const dateTime = z
  .string()
  .refine((text) => !Number.isNaN(parseRfc3339(text)), 'not an RFC 3339 date-time');
const severity = z.enum(SEVERITIES);
/** A domain's finding as the page, the feed and the report store read it back (one shape for all three). */
export const DomainFindingShape = z.looseObject({
  domain_name: z.string(),
  kind: z.string(),
  severity,
  date_expiry: dateTime,
  days_left: z.number(),
  auto_renew: z.boolean().nullable(),
  date_deleted: dateTime.nullable().optional(),
  registrant: z.looseObject({ handle: z.string() }).nullable().optional(),
  // Links a scan signs as they are read (report-links.ts) stay as they are: checking them would sign them all.
  actions: z
    .custom<FindingActions>(
      (value) =>
        value instanceof SignedActions ||
        (typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          Object.values(value).every((link) => typeof link === 'string')),
      'Invalid input: expected a record of links',
    )
    .optional(),
  snoozed_until: dateTime.optional(),
  // What memory judged it by (docs/memory.md), said by every channel: its restore-by a deadline shown.
  remembered: z
    .looseObject({
      kind: z.string(),
      severity,
      restore_by: dateTime.nullable().optional(),
      days_to_restore: z.number().nullable().optional(),
      date_expiry: dateTime.optional(),
      because: z.enum(['status_undocumented', 'registry_unconfirmed']),
    })
    .optional(),
});
/** A contact's finding as it is read back. */
export const ContactFindingShape = z.looseObject({
  handle: z.string(),
  kind: z.literal('contact_pending_validation'),
  severity,
  name: z.string(),
  company_name: z.string(),
  email: z.string(),
});
/** What the page and the feed rely on in the small fields; the rest is kept as it was written. */
const StoredHead = z.looseObject({
  generated_at: dateTime,
  now: dateTime,
  summary: z.object({ critical: z.number(), warning: z.number(), info: z.number() }),
});
const StoredNotes = z.object({
  omitted: z.record(z.string(), z.number()),
  omittedTotal: z.number(),
  matches: z.number().optional(),
  timeline: z
    .object({
      rows: z.array(z.object({ finding: z.unknown(), at: z.number(), restore: z.boolean() })),
      total: z.number(),
    })
    .optional(),
  changesTotal: z.number().optional(),
  problemsTotal: z.number(),
  urgentLeft: z
    .object({
      critical: z.number(),
      warning: z.number(),
      lapsing: z.number(),
      events: z.number(),
      quarantine: z.number(),
      total: z.number(),
    })
    .optional(),
});
const StoredProblem = z.looseObject({
  resource: z.string(),
  key: z.string().nullable(),
  page: z.number(),
  reason: z.string(),
});

function check<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = [where, ...(issue?.path ?? []).map(String)].filter(Boolean).join('.');
  throw new ViewDataError(`${path || 'root'}: ${issue?.message ?? 'invalid'}`);
}

/** A finding as the page and the feed read it: a contact's by its kind, any other a domain's. */
function checkFinding(value: unknown, index: number): Finding {
  const kind = (value as { kind?: unknown } | null)?.kind;
  return check(
    (kind === 'contact_pending_validation' ? ContactFindingShape : DomainFindingShape) as z.ZodType<Finding>,
    value,
    `findings.${index}`,
  );
}

const KeptDeadlineShape = z.object({
  domain_name: z.string(),
  severity: z.literal('critical'),
  kept_quarantine: z.literal(true),
  restore_by: dateTime.nullable(),
  days_to_restore: z.number().nullable(),
});

/** A stored timeline row's finding: a kept quarantine's deadline, or a domain's finding. */
function checkRowFinding(value: unknown, index: number): DeadlineOf {
  if (typeof value === 'object' && value !== null && isKeptDeadline(value as KeptDeadline))
    return check(KeptDeadlineShape, value, `view.timeline.rows.${index}.finding`);
  return checkFinding(value, index) as DomainFinding;
}

/**
 * Builds a {@link ReportView} from a stored report read one element at a time (a ReportReader),
 * checking what the page and the feed rely on as it goes: a damaged report is refused with the
 * place and the reason (ViewDataError), never shown as what it is not.
 */
export class ReportViewBuilder implements ReportReader {
  private head_: Record<string, unknown> | null = null;
  private readonly findings: Finding[] = [];
  private readonly problems: unknown[] = [];
  private changes: unknown[] | undefined;
  private readonly omitted: Record<string, number> = {};
  private omittedTotal = 0;
  private infoKept = 0;
  private matches = 0;
  private findingCount = 0;
  private problemsTotal = 0;
  /** Kept quarantines past the first problem records, the soonest by restore-by (the scan orders records by page). */
  private keptSoonest: { readonly p: Problem; readonly kept: KeptDeadline; readonly by: number }[] = [];
  private readonly keptCarried: number; // after the first problem records ({@link KEPT_CARRIED})
  private readonly needleName: string; // the filter as a domain name (normalizeDomainName)
  private changesTotal = 0;
  private rows: TimelineRow[] = [];
  private rowsTotal = 0;
  private start = 0;
  private readonly needle: string;
  /** Critical and warning findings seen of each order the page and the feed keep them in. */
  private readonly urgentSeen = { critical: 0, warning: 0, lapsing: 0, events: 0, quarantine: 0, unknown: 0 };
  private readonly left = { critical: 0, warning: 0, lapsing: 0, events: 0, quarantine: 0, total: 0 };
  /** Set when the text is a view kept beside the report: its elements are already the ones to show. */
  private base: ViewNotes | null = null;

  /** @param urgentKept critical and warning findings kept of each order (lower in tests). */
  constructor(
    private readonly selection: ViewSelection,
    private readonly urgentKept = URGENT_KEPT,
  ) {
    this.keptCarried = Math.max(DEADLINES_LISTED, Math.ceil(urgentKept / 2));
    this.needle = filterText(selection.query).toLowerCase();
    this.needleName = this.needle === '' ? '' : normalizeDomainName(this.needle);
  }

  head(value: Record<string, unknown>): void {
    const { view, ...rest } = value;
    this.head_ = check(StoredHead, rest, '') as Record<string, unknown>;
    this.start = Date.parse(String(value.now));
    if (view === undefined) return;
    const notes = check(StoredNotes, view, 'view');
    this.base = {
      ...notes,
      ...(notes.timeline
        ? {
            timeline: {
              rows: notes.timeline.rows.map((row, i) => ({
                ...row,
                finding: checkRowFinding(row.finding, i),
              })),
              total: notes.timeline.total,
            },
          }
        : {}),
    } as ViewNotes;
  }

  open(list: ReportList): void {
    if (list === 'changes') this.changes = [];
  }

  element(list: ReportList, value: unknown): void {
    if (list === 'problems') {
      this.problem(check(StoredProblem, value, `problems.${this.problemsTotal}`) as unknown as Problem);
      return;
    }
    if (list === 'changes') {
      if (this.changesTotal++ < CHANGES_LISTED) this.changes?.push(value);
      return;
    }
    if (list !== 'findings') return;
    const f = checkFinding(value, this.findingCount++);
    if (this.base) {
      if (this.selection.purpose === 'page' || isDomainFinding(f)) this.findings.push(f);
      return;
    }
    if (this.selection.purpose === 'calendar') {
      if (!isDomainFinding(f)) return;
      if (f.severity !== 'info') this.keepUrgent(f, true);
      else if (this.infoKept++ < INFO_LISTED) this.findings.push(f);
      else this.omit(f);
      return;
    }
    const matching = this.needle === '' || searchable(f).includes(this.needle);
    if (this.needle !== '' && matching) this.matches++;
    const row = timelineRowOf(f, this.start);
    if (row) this.addRow(row);
    if (f.severity !== 'info') this.keepUrgent(f, matching);
    else if (matching && this.infoKept < INFO_LISTED) {
      this.infoKept++;
      this.findings.push(f);
    } else this.omit(f);
  }

  /** The view; throws ViewDataError when the text held no report at all. */
  result(): ReportView {
    if (!this.head_) throw new ViewDataError('root: no report');
    const rows = this.sortedRows();
    this.keptSoonest = this.soonestKept();
    const base = this.base;
    const view: ViewNotes = base
      ? {
          omitted: base.omitted,
          omittedTotal: base.omittedTotal,
          ...(this.selection.purpose === 'page' && base.timeline ? { timeline: base.timeline } : {}),
          ...(base.changesTotal !== undefined ? { changesTotal: base.changesTotal } : {}),
          problemsTotal: base.problemsTotal,
          ...(base.urgentLeft ? { urgentLeft: base.urgentLeft } : {}),
        }
      : {
          omitted: this.omitted,
          omittedTotal: this.omittedTotal,
          ...(this.needle !== '' ? { matches: this.matches } : {}),
          ...(this.selection.purpose === 'page' ? { timeline: { rows, total: this.rowsTotal } } : {}),
          ...(this.changes ? { changesTotal: this.changesTotal } : {}),
          problemsTotal: this.problemsTotal,
          // A kept quarantine's event left out (left.events) is a deadline left out (left.quarantine).
          ...(this.left.total > 0 || this.left.quarantine > 0 ? { urgentLeft: { ...this.left } } : {}),
        };
    return {
      ...(this.head_ as unknown as Report),
      findings: this.findings,
      problems: [...this.problems, ...this.keptSoonest.map((k) => k.p)] as Report['problems'],
      ...(this.changes ? { changes: this.changes } : {}),
      view,
    };
  }

  /**
   * Keeps a critical or warning finding when it is among the first {@link urgentKept} of an order
   * it is shown in: the page's list it falls in (CRITICAL, WARNING, or letting lapse, the report's
   * order within each), the feed's events (the report's order), the page's restore deadlines. The
   * page and the feed show a first part of each, never more items than that: what they show is
   * the same as from every finding. The rest are counted as they would have been shown.
   */
  private keepUrgent(f: Finding, matching: boolean): void {
    const seen = this.urgentSeen;
    const domain = isDomainFinding(f);
    const list =
      domain && f.let_lapse === true ? 'lapsing' : f.severity === 'critical' ? 'critical' : 'warning';
    // Counted by the function the feed writes them with: a quarantine kept while its record reads
    // another kind has its restore-by event too.
    const events = domain ? findingEvents(f).length : 0;
    // A quarantine memory keeps while the record reads another kind has its deadline listed too.
    const quarantine = quarantineOf(f);
    // Its restore-by unknown, the feed puts it first (calendar.ts standing), a scan after the known: counted apart.
    const unknown = quarantine !== null && Number.isNaN(Date.parse(quarantine.restore_by ?? ''));
    // The feed's view keeps the feed's order alone.
    const page = this.selection.purpose === 'page';
    // The page's lists come in this order, and it shows fewer than urgentKept items in all: a
    // warning is needed only while fewer critical ones were seen, a lapsing one only while fewer
    // of both (a report puts critical findings first, so most often none is kept for the list).
    const before =
      list === 'critical' ? 0 : list === 'warning' ? seen.critical : seen.critical + seen.warning;
    const inList = page && matching && before + seen[list]++ < this.urgentKept;
    const inFeed =
      matching && events > 0 && (unknown ? seen.unknown++ < this.urgentKept : seen.events < this.urgentKept);
    if (matching) seen.events += events;
    const inDeadlines = page && quarantine !== null && seen.quarantine++ < DEADLINES_LISTED;
    if (inList || inFeed || inDeadlines) {
      this.findings.push(f);
      return;
    }
    const left = this.left;
    left.total++;
    if (quarantine) left.quarantine++;
    if (!matching) return;
    left[list]++;
    left.events += events;
  }

  /**
   * Keeps the first {@link PROBLEMS_KEPT} problem records; of the kept quarantines after them (restore
   * deadlines with no finding), the one the filter names (the finding page looks it up so) and the
   * {@link KEPT_CARRIED} soonest it matches, counting the rest (soonestKept). On the page, a
   * kept quarantine's restore-by is a timeline row.
   */
  private problem(p: Problem): void {
    const index = this.problemsTotal++;
    const kept = keptDeadlineOf(p, this.start);
    // Its name as the filter matches it: normalised (a key however the API spelled it), and shown.
    const name = kept && this.needle !== '' ? normalizeDomainName(kept.domain_name) : '';
    const matching =
      name === '' || `${name} ${displayDomain(name).toLowerCase()} quarantine critical`.includes(this.needle);
    if (index < PROBLEMS_KEPT || (name !== '' && name === this.needleName)) this.problems.push(p);
    else if (kept && matching) this.keepSoonest(p, kept);
    else if (kept) this.left.quarantine++;
    if (!kept || this.base || this.selection.purpose !== 'page') return;
    const row = timelineRowOf(kept, this.start);
    // Stored with a quarantine finding's fields too: the previous version checks a row as a domain finding.
    const compat = { kind: 'quarantine', date_expiry: kept.restore_by, days_left: kept.days_to_restore };
    if (row) this.addRow({ ...row, finding: { ...kept, ...compat, auto_renew: null } as KeptDeadline });
  }

  /** Offers a kept quarantine to the soonest carried (unknown first, as the feed), trimming now and then. */
  private keepSoonest(p: Problem, kept: KeptDeadline): void {
    const by = kept.restore_by === null ? Number.NEGATIVE_INFINITY : Date.parse(kept.restore_by);
    this.keptSoonest.push({ p, kept, by });
    if (this.keptSoonest.length >= this.keptCarried * 2) this.keptSoonest = this.soonestKept();
  }

  /**
   * The {@link keptCarried} soonest kept quarantines offered, by restore-by (unknown first); equal
   * ones in the report's order, as the feed orders them (a stable sort). Those that fall out are
   * counted, with their events as the feed writes them (keptDeadlineEvents; a stored view counted
   * its own).
   */
  private soonestKept(): typeof this.keptSoonest {
    const sorted = this.keptSoonest.sort((a, b) => a.by - b.by);
    for (const out of sorted.slice(this.keptCarried)) {
      this.left.quarantine++;
      if (!this.base) this.left.events += keptDeadlineEvents(out.kept).length;
    }
    return sorted.slice(0, this.keptCarried);
  }

  private omit(f: Finding): void {
    this.omitted[f.kind] = (this.omitted[f.kind] ?? 0) + 1;
    this.omittedTotal++;
  }

  /** Keeps the earliest rows only, sorting now and then: the order of equal dates is the report's. */
  private addRow(row: TimelineRow): void {
    this.rowsTotal++;
    this.rows.push(row);
    if (this.rows.length >= TIMELINE_ROWS * 8) this.rows = this.sortedRows();
  }

  private sortedRows(): TimelineRow[] {
    return this.rows.sort((a, b) => a.at - b.at).slice(0, TIMELINE_ROWS);
  }
}

/** The view of a report held whole (tests, a report just made): the same as reading it back. */
export function viewOf(report: Report, selection: ViewSelection, urgentKept = URGENT_KEPT): ReportView {
  const builder = new ReportViewBuilder(selection, urgentKept);
  const { findings, problems, ...head } = report;
  const changes = (report as { changes?: unknown }).changes;
  builder.head(head as Record<string, unknown>);
  builder.open('findings');
  for (const f of findings) builder.element('findings', f);
  builder.open('problems');
  for (const p of problems) builder.element('problems', p);
  if (Array.isArray(changes)) {
    builder.open('changes');
    for (const c of changes) builder.element('changes', c);
  }
  return builder.result();
}
