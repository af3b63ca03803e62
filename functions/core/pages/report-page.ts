import { domainToUnicode } from 'node:url';
import {
  dateFormat,
  describeDomainFinding,
  headline,
  problemLine,
  renewalCostLine,
  restoreDeadlineText,
} from '../alerts/alert';
import { displayDomain, plural, safeText } from '../base/text';
import {
  type DomainFinding,
  type Finding,
  isDomainFinding,
  SEVERITIES,
  type Severity,
} from '../findings/classify';
import { changeNextStep, keptQuarantineStep, nextStep } from '../findings/next-step';
import { type AuditEntry, auditLine } from '../memory/audit';
import { type DeadlineOf, isKeptDeadline, keptDeadlineOf, quarantineOf } from '../memory/feed-events';
import {
  briefThenFull,
  DEADLINES_LISTED,
  filterText,
  PROBLEMS_LISTED,
  RESPONSE_BUDGET_BYTES,
  type ReportView,
  responseBytes,
  searchable,
  TIMELINE_DAYS,
  TIMELINE_ROWS,
  type TimelineRow,
  timelineRowOf,
} from '../memory/report-view';
import type { Report } from '../scan/scan';
import { unreadable } from '../scan/scan-problems';
import { escapeHtml, renderPage, SECURITY_HEADERS, styleSource } from './restore-page';

/**
 * The report page: the latest full report, server-rendered. Findings grouped by severity in the
 * digest's words, the restore deadlines and renewal costs, the changes since the last scan, the
 * restore attempts of the audit trail, a filter (a GET form: no script at all), and a timeline of
 * the expiries and restore deadlines of the next 90 days as inline SVG. Every value from the report
 * is escaped; the only styles are two inline sheets allowed by their hashes.
 *
 * It always fits one Lambda answer ({@link RESPONSE_BUDGET_BYTES}): every critical and warning
 * finding is on it, the most urgent first with registrant and links, and where the whole list would
 * not fit the rest briefly (the filter shows any of them in full). Info findings beyond the first
 * thousand are counted by kind, and the filter finds them (report-view.ts reads them so).
 */

const STYLE = `body{max-width:60rem;margin:1rem auto}
.sum{display:flex;flex-wrap:wrap;gap:.5rem;padding:0;list-style:none;margin:.5rem 0}.sum li{padding:.1rem .5rem;border-radius:3px;background:#eee}
.critical{border-left:4px solid #a40e26}.warning{border-left:4px solid #b35c00}.info{border-left:4px solid #5a6b7b}
ul.items{list-style:none;padding:0}ul.items li{margin:.5rem 0;padding:.4rem .6rem;background:#fafafa;overflow-wrap:anywhere}
.who{color:#555;font-size:.9rem}.tag{font-size:.8rem;background:#e8eef5;padding:0 .3rem;border-radius:3px;margin-left:.3rem}
.next{font-size:.9rem}.links a{margin-right:.8rem;font-size:.9rem}form.filter{display:flex;gap:.5rem;margin:1rem 0}
.first{margin:.6rem 0;padding:.5rem .7rem;background:#fff4f4;overflow-wrap:anywhere}.first .act{display:inline-block;margin-top:.4rem;padding:.45rem 1rem;border-radius:4px;background:#0b5cad;color:#fff;text-decoration:none}
.toplinks a{margin-right:1rem;font-size:.9rem}
form.filter input[type=search]{flex:1;min-width:0;font:inherit;padding:.4rem}svg.timeline{width:100%;max-width:40rem;height:auto;display:block}
svg text{font:10px system-ui,sans-serif}.tl-critical{fill:#a40e26}.tl-warning{fill:#b35c00}.tl-info{fill:#5a6b7b}
.axis{stroke:#bbb}.tick{fill:#555}.deadlines li{margin:.2rem 0}.note{color:#555;font-size:.9rem}
.legend{display:flex;flex-wrap:wrap;gap:.3rem 1rem;font-size:.9rem;color:#333;padding:0;list-style:none}.legend svg{width:.8em;height:.8em;vertical-align:-.05em;margin-right:.3em}
@media (max-width:40rem){body{margin:.5rem auto;font-size:15px}h1{font-size:1.2rem}h2{font-size:1.1rem}}`;

/** Headers of the report page: the restore pages' own, with this page's stylesheet allowed as well. */
export const REPORT_PAGE_HEADERS: Readonly<Record<string, string>> = {
  ...SECURITY_HEADERS,
  'Content-Security-Policy': (SECURITY_HEADERS['Content-Security-Policy'] ?? '').replace(
    /style-src ([^;]+);/,
    `style-src $1 ${styleSource(STYLE)};`,
  ),
};

export { TIMELINE_DAYS };

const DAY_MS = 86_400_000;
const WORDS: Record<Severity, string> = { critical: 'CRITICAL', warning: 'WARNING', info: 'INFO' };

const dayFormat = dateFormat('UTC').day;

export interface ReportPageInput {
  /** The report, or a view of the stored one (report-view.ts). */
  readonly report: ReportView;
  /** The filter's text, as typed. */
  readonly query?: string;
  /** The link's own token, so the filter form keeps the page's signature. */
  readonly token: Readonly<Record<string, string>>;
  readonly accountLabel?: string;
  /**
   * The restore attempts of the audit trail, newest first; null when it could not be read; absent
   * when no state store keeps one.
   */
  readonly audit?: readonly AuditEntry[] | null;
  /** The most the page may take, as the Lambda counts it. @default RESPONSE_BUDGET_BYTES */
  readonly budgetBytes?: number;
}

/** Restore deadlines and restore attempts listed on the page; the rest are counted. */
const LIST_SHOWN = 20;

function itemHtml(f: Finding, now: string): string {
  if (!isDomainFinding(f)) {
    return `<li class="${f.severity}"><strong>contact ${escapeHtml(safeText(f.handle))}</strong>: validation pending; the registry may suspend the domains it holds<div class="who">${escapeHtml(safeText([f.name, f.company_name, f.email].filter(Boolean).join(' · ')))}</div></li>`;
  }
  const tags = [
    f.snoozed_until ? `<span class="tag">snoozed until ${escapeHtml(dayFormat(f.snoozed_until))}</span>` : '',
    f.acknowledged ? '<span class="tag">acknowledged</span>' : '',
  ].join('');
  const r = f.registrant;
  const who = r
    ? `<div class="who">Registrant: ${escapeHtml(safeText([r.name, r.company_name ? `(${r.company_name})` : '', r.email ? `<${r.email}>` : ''].filter(Boolean).join(' ') || 'unknown'))} [${escapeHtml(safeText(r.handle))}]</div>`
    : '';
  const links = actLinks(f);
  const name = escapeHtml(displayDomain(f.domain_name));
  // Joined, not templated: a page keeps tens of thousands of items until it is written, and a
  // string made of pieces is a tree of them, several times its length in memory.
  return [
    `<li class="${f.severity}" data-domain="${name}"><strong>${name}</strong>`,
    tags,
    ': ',
    escapeHtml(describeDomainFinding(f, now, dayFormat)),
    who,
    `<div class="next">Next: ${escapeHtml(nextStep(f, dayFormat))}</div>`,
    links,
    '</li>',
  ].join('');
}

/**
 * A finding's one link: its page, which offers restore, snooze and acknowledge; the three links
 * themselves for a report kept before findings had a page.
 */
function actLinks(f: DomainFinding): string {
  const actions = f.actions;
  if (!actions) return '';
  if (actions.page)
    return `<div class="links"><a href="${escapeHtml(actions.page)}" rel="noreferrer">Act on it</a></div>`;
  return `<div class="links">${(['restore', 'snooze', 'acknowledge'] as const)
    .filter((a) => actions[a])
    .map(
      (a) =>
        `<a href="${escapeHtml(actions[a] ?? '')}" rel="noreferrer">${a === 'snooze' ? 'Snooze' : a === 'restore' ? 'Restore' : 'Acknowledge'}</a>`,
    )
    .join('')}</div>`;
}

/**
 * The most urgent finding, first on the page (a phone shows it on its first screen): what is wrong,
 * the next step, and its link. Empty without a critical or warning finding.
 */
function firstActionHtml(findings: readonly Finding[], now: string): string {
  const f = findings.find((x) => x.severity !== 'info');
  if (!f) return '';
  const name = isDomainFinding(f) ? displayDomain(f.domain_name) : `contact ${safeText(f.handle)}`;
  const what = isDomainFinding(f) ? describeDomainFinding(f, now, dayFormat) : 'validation pending';
  const link = isDomainFinding(f) ? (f.actions?.page ?? f.actions?.restore ?? f.restore_url) : undefined;
  return `<div class="first ${f.severity}"><strong>Most urgent: ${escapeHtml(name)}</strong>: ${escapeHtml(what)}<div class="next">Next: ${escapeHtml(nextStep(f, dayFormat))}</div>${link ? `<a class="act" href="${escapeHtml(link)}" rel="noreferrer">Act on ${escapeHtml(name)}</a>` : ''}</div>`;
}

/** An item in brief: the name and what is wrong, without registrant and links. */
function briefHtml(f: Finding, now: string): string {
  if (!isDomainFinding(f))
    return `<li class="${f.severity}"><strong>contact ${escapeHtml(safeText(f.handle))}</strong>: validation pending</li>`;
  const name = escapeHtml(displayDomain(f.domain_name));
  return [
    `<li class="${f.severity}" data-domain="${name}"><strong>${name}</strong>: `,
    escapeHtml(describeDomainFinding(f, now, dayFormat)),
    '</li>',
  ].join('');
}

/**
 * The timeline of the next {@link TIMELINE_DAYS} days: one row per domain, a dot on its expiry
 * date or a square on its restore-by day (quarantine, one memory keeps among them), coloured by
 * severity; weekly ticks. A restore-by day already past stands at today. Pure SVG, scaled to the screen.
 */
export function renderTimeline(report: ReportView): string {
  const start = Date.parse(report.now);
  const end = start + TIMELINE_DAYS * DAY_MS;
  let rows: readonly TimelineRow[];
  let total: number;
  if (report.view?.timeline) {
    rows = report.view.timeline.rows;
    total = report.view.timeline.total;
  } else {
    const due: TimelineRow[] = [];
    const kept = report.problems.map((p) => keptDeadlineOf(p, start)).filter((k) => k !== null);
    for (const f of [...report.findings, ...kept]) {
      const row = timelineRowOf(f, start);
      if (row) due.push(row);
    }
    due.sort((a, b) => a.at - b.at);
    rows = due.slice(0, TIMELINE_ROWS);
    total = due.length;
  }
  // Narrow enough that 10-unit text stays readable when a phone scales the chart to its width; at
  // most 40rem wide (the stylesheet), so on a wide screen its labels are no larger than the text.
  const left = 170;
  const width = 420;
  const rowHeight = 14;
  const top = 18;
  const height = top + Math.max(1, rows.length) * rowHeight + 6;
  const x = (ms: number) => left + ((ms - start) / (end - start)) * (width - left - 10);
  const ticks: string[] = [];
  for (let d = 0; d <= TIMELINE_DAYS; d += 14) {
    const at = x(start + d * DAY_MS).toFixed(1);
    ticks.push(
      `<line class="axis" x1="${at}" y1="${top - 4}" x2="${at}" y2="${height}"/><text class="tick" x="${at}" y="10" text-anchor="middle">${escapeHtml(d === 0 ? 'today' : `+${d}d`)}</text>`,
    );
  }
  const marks = rows.map(({ finding: f, at, restore }, i) => {
    const y = top + i * rowHeight + rowHeight / 2;
    const cx = x(at);
    const name = displayDomain(f.domain_name);
    // The name as people write it (an IDN in Unicode, whole); the punycode form is in its title.
    const label = timelineLabel(f.domain_name);
    const what =
      restore || isKeptDeadline(f)
        ? restoreDeadlineText(f, dayFormat)
        : `expires ${dayFormat(f.date_expiry)}`;
    const mark = restore
      ? `<rect x="${(cx - 4).toFixed(1)}" y="${y - 4}" width="8" height="8"/>`
      : `<circle cx="${cx.toFixed(1)}" cy="${y}" r="4"/>`;
    return `<g class="tl-${f.severity}${restore ? ' tl-restore' : ''}"><title>${escapeHtml(`${name}: ${what} (${f.severity})`)}</title><text x="${left - 6}" y="${y + 3}" text-anchor="end">${escapeHtml(label)}</text>${mark}</g>`;
  });
  const empty =
    rows.length === 0
      ? `<text x="${left}" y="${top + 10}">Nothing due in the next ${TIMELINE_DAYS} days.</text>`
      : '';
  const more =
    total > rows.length
      ? `<p class="note">and ${total - rows.length} more dates in the next ${TIMELINE_DAYS} days (see the list below)</p>`
      : '';
  return `<svg class="timeline" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="tl-title"><title id="tl-title">Expiries (dots) and restore deadlines (squares) in the next ${TIMELINE_DAYS} days</title>${ticks.join('')}${marks.join('')}${empty}</svg>${TIMELINE_LEGEND}${more}`;
}

/** What the timeline's marks mean. */
const TIMELINE_LEGEND = `<ul class="legend" aria-label="Legend"><li><svg viewBox="0 0 10 10" aria-hidden="true"><circle cx="5" cy="5" r="4" class="tl-info"/></svg>expiry date</li><li><svg viewBox="0 0 10 10" aria-hidden="true"><rect x="1" y="1" width="8" height="8" class="tl-info"/></svg>restore-by day (quarantine)</li><li><svg viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" class="tl-critical"/></svg>critical</li><li><svg viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" class="tl-warning"/></svg>warning</li><li><svg viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" class="tl-info"/></svg>info</li></ul>`;

/** Characters a timeline label holds (the label column is 170 units of 10-unit text). */
const LABEL_MAX = 32;

/** A timeline label: the Unicode form of the name; only a name longer than the column is cut. */
function timelineLabel(name: string): string {
  const unicode = safeText(domainToUnicode(name) || name);
  return unicode.length > LABEL_MAX ? `${unicode.slice(0, LABEL_MAX - 1)}…` : unicode;
}

/**
 * Every domain with a restore deadline, soonest first (unknown last), each with its deadline and
 * next step: a quarantine read as such, one memory keeps while its record reads another kind (the
 * finding's `remembered`), and one memory keeps while the record gives no finding (a problem record
 * marked `kept_quarantine`); as the calendar feed has their restore-by events.
 */
function deadlinesHtml(report: ReportView): string {
  const now = Date.parse(report.now);
  const deadlines: { readonly of: DeadlineOf; readonly step: string }[] = [];
  for (const f of report.findings) {
    const q = quarantineOf(f);
    if (q) deadlines.push({ of: q, step: nextStep(f, dayFormat) });
  }
  let kept = false;
  for (const p of report.problems) {
    const of = keptDeadlineOf(p, now);
    if (of) deadlines.push({ of, step: keptQuarantineStep(of, dayFormat) });
    kept ||= of !== null;
  }
  // A view carries the first of them and counts the rest (report-view.ts).
  const count = deadlines.length + (report.view?.urgentLeft?.quarantine ?? 0);
  if (count === 0) return '';
  // By the deadline itself, not its whole days left: on the last day one ending in an hour comes
  // before twenty ending tonight; unknown first (nothing shows it is further): the feed and the view
  // order them so, and the view carries an unknown one before the known.
  const by = (d: DeadlineOf) => (d.restore_by ? Date.parse(d.restore_by) : Number.NaN);
  const left = (d: DeadlineOf) => (Number.isNaN(by(d)) ? Number.NEGATIVE_INFINITY : by(d));
  const items = deadlines
    .sort((a, b) => left(a.of) - left(b.of) || 0)
    .slice(0, DEADLINES_LISTED)
    .map(
      ({ of, step }) =>
        `<li class="critical"><strong>${escapeHtml(displayDomain(of.domain_name))}</strong>: ${escapeHtml(restoreDeadlineText(of, dayFormat))}<div class="next">Next: ${escapeHtml(step)}</div></li>`,
    );
  const rest = count - items.length;
  return `<h2>Restore deadlines (${count})</h2><ul class="items deadlines">${items.join('')}</ul>${rest > 0 ? `<p class="note">and ${rest} more (in CRITICAL below${kept ? ' or Unreadable records' : ''}, or filter the page to find one)</p>` : ''}`;
}

/** A read that is not the whole account (`source.incomplete`): said before anything else is listed. */
const incompleteHtml = (report: Report): string =>
  report.source.incomplete
    ? `<p class="note"><strong>Incomplete:</strong> the scan could not read the whole account. The findings are those of the domains read; others may be missing (see Unreadable records), and no domain is judged to have left.</p>`
    : '';

/** What the renewals due in the window cost, and why failed renewals were not checked (when so). */
function renewalHtml(report: Report): string {
  const costs = report.renewal_costs
    ? `<p class="costs"><strong>Renewal costs:</strong> ${escapeHtml(renewalCostLine(report.renewal_costs))}</p>`
    : '';
  const off = report.renewal_rule_off
    ? `<p class="note">Failed renewals were not checked: ${escapeHtml(safeText(report.renewal_rule_off))}.</p>`
    : '';
  return costs + off;
}

/** The restore attempts of the audit trail, newest first. */
function auditHtml(audit: readonly AuditEntry[] | null | undefined): string {
  if (audit === undefined) return '';
  if (audit === null)
    return '<h2>Restore attempts</h2><p class="note">The audit trail could not be read; `sentinel audit` shows it.</p>';
  const items = audit
    .slice(0, LIST_SHOWN)
    .map((e) => `<li>${escapeHtml(auditLine(e, { shortAddress: true }))}</li>`);
  const rest = audit.length - items.length;
  return `<h2>Restore attempts (${audit.length})</h2>${items.length ? `<ul class="items">${items.join('')}</ul>` : '<p>None.</p>'}${rest > 0 ? `<p class="note">and ${rest} older (sentinel audit lists them all)</p>` : ''}`;
}

interface ChangeLike {
  readonly domain_name?: unknown;
  readonly kind?: unknown;
  readonly before?: unknown;
  readonly after?: unknown;
}

function changesHtml(report: ReportView): string {
  const changes = (report as { changes?: unknown }).changes;
  if (!Array.isArray(changes)) return '';
  const total = report.view?.changesTotal ?? changes.length;
  const items = (changes as ChangeLike[]).map((c) => {
    const name = typeof c.domain_name === 'string' ? displayDomain(c.domain_name) : '?';
    const kind = typeof c.kind === 'string' ? c.kind.replace(/_/g, ' ') : 'changed';
    const detail =
      c.before !== undefined || c.after !== undefined
        ? ` (${safeText(JSON.stringify(c.before) ?? '')} → ${safeText(JSON.stringify(c.after) ?? '')})`
        : '';
    const next =
      typeof c.kind === 'string' && typeof c.domain_name === 'string'
        ? `<div class="next">Next: ${escapeHtml(changeNextStep({ domain_name: c.domain_name, kind: c.kind }))}</div>`
        : '';
    return `<li><strong>${escapeHtml(name)}</strong>: ${escapeHtml(kind + detail)}${next}</li>`;
  });
  const rest = total - items.length;
  return `<h2>Changes since the last scan (${total})</h2>${items.length ? `<ul class="items">${items.join('')}</ul>` : '<p>None.</p>'}${rest > 0 ? `<p class="note">and ${rest} more (the JSON report lists them all)</p>` : ''}`;
}

/** What info findings a view counted instead of carrying, in words: `60 211 expiring, 55 000 auto_renew off`. */
function omittedWords(omitted: Readonly<Record<string, number>>): string {
  return Object.entries(omitted)
    .sort(([, a], [, b]) => b - a)
    .map(([kind, n]) => `${n} ${kind.replace(/_/g, ' ')}`)
    .join(', ');
}

/**
 * A finding's item, written only when asked: a page of 100 000 urgent findings has room for some
 * 38 000, and writing the others, in full and in brief, took most of its time.
 */
export interface ListItem {
  /** With registrant, next step and links. */
  readonly full: () => string;
  /** The name and what is wrong only. */
  readonly brief: () => string;
}

/** One finding list: its heading, its items in order, and what follows them. */
export interface ListSection {
  readonly heading: string;
  readonly items: readonly ListItem[];
  readonly after: string;
  /** Items of the list after `items` that the view did not carry (report-view.ts counts them). */
  readonly left?: number;
}

/** How many of `count` items the page shows in full: "The first 5 of 1000 items", or none at all. */
export function fullNote(full: number, count: number): string {
  return full === 0
    ? `None of the ${plural(count, 'item')} show registrant and links`
    : `The first ${full} of ${plural(count, 'item')} show registrant and links`;
}

/**
 * The finding lists within `budget` bytes: every item brief, the most urgent first while they fit,
 * then from the most urgent on each in full while it fits; the least urgent that do not fit even
 * brief are left out, said so. Only the items kept are written (and the first that did not fit).
 */
export function listsHtml(sections: readonly ListSection[], budget: number): string {
  const all = sections.flatMap((section) => section.items);
  // The two notes below and the lists' own tags, whatever the numbers in them.
  let size = 1_024;
  for (const section of sections) size += responseBytes(section.heading) + responseBytes(section.after) + 32;
  const { out, full } = briefThenFull(
    all,
    (item) => item.brief(),
    (item) => item.full(),
    size,
    budget,
  );
  const kept = out.length;
  const count = all.length + sections.reduce((n, section) => n + (section.left ?? 0), 0);
  const notes: string[] = [];
  if (full < kept)
    notes.push(
      `<p class="note">${fullNote(full, count)}; the rest are listed briefly so the page stays within what the web function can answer. Filter to see any of them in full.</p>`,
    );
  if (kept < count)
    notes.push(
      `<p class="note">${count - kept} more items did not fit on this page: filter to find them, or see the JSON report.</p>`,
    );
  let index = 0;
  const html = sections
    .map((section) => {
      const start = index;
      index += section.items.length;
      // `out` holds the kept items only: a slice past its end is empty.
      const items = out.slice(start, index).join('');
      return `${section.heading}${items ? `<ul class="items">${items}</ul>` : ''}${section.after}`;
    })
    .join('');
  return notes.join('') + html;
}

/**
 * What the alert left out, when the page was opened from its link (`of` the report, `from=<c>.<w>`
 * the critical and warning findings it named): only those findings, or null to show the whole page
 * (no such link, or a newer scan replaced that report, said in `note`). `note` is text; `linkWhole`
 * asks the page to add its link to the whole report after it.
 */
function leftOutOf(
  report: ReportView,
  token: Readonly<Record<string, string>>,
): { findings: readonly Finding[]; note: string; linkWhole?: boolean } | null {
  const from = /^(\d{1,7})\.(\d{1,7})$/.exec(token.from ?? '');
  if (!from || token.of === undefined) return null;
  if (token.of !== report.generated_at) {
    // `of` is not signed: named only when it is a scan's time, and the note is escaped where written.
    const of = /^\d{4}-\d\d-\d\dT[\d:.]{1,18}Z$/.test(token.of) ? ` (${token.of})` : '';
    return {
      findings: report.findings,
      note: `A newer scan replaced the report the alert was made from${of}: this is the latest report, whole.`,
    };
  }
  // The alert leaves snoozed and acknowledged domains, and those a policy lets lapse, out before it
  // names any; a group's own message (`group`) speaks of its group's domains alone.
  const group = token.group;
  const alerted = report.findings.filter((f) =>
    isDomainFinding(f)
      ? !(f.snoozed_until !== undefined || f.acknowledged === true || f.let_lapse === true) &&
        (group === undefined || f.policy === group)
      : group === undefined,
  );
  const skip = { critical: Number(from[1]), warning: Number(from[2]), info: Number.POSITIVE_INFINITY };
  const seen = { critical: 0, warning: 0, info: 0 };
  const findings = alerted.filter((f) => seen[f.severity]++ >= skip[f.severity]);
  // Beyond what a page can show, a view counts critical and warning findings (report-view.ts).
  const uncarried = report.view?.urgentLeft?.total ?? 0;
  return {
    findings,
    note: `The ${plural(findings.length, 'finding')} the alert had no room to name (${findings.filter((f) => f.severity === 'critical').length} critical, ${findings.filter((f) => f.severity === 'warning').length} warning)${uncarried ? `; ${uncarried} more critical or warning findings of the report are beyond what this page can hold, and the JSON report lists them` : ''}.`,
    linkWhole: true,
  };
}

/** `exp=…&kid=…&sig=…`: the link's own signature, for the page's links to itself and its JSON. */
const tokenQuery = (token: Readonly<Record<string, string>>) =>
  new URLSearchParams(Object.entries(token).filter(([k]) => ['exp', 'kid', 'sig'].includes(k))).toString();

/**
 * Whether every problem record could not be read (scan-problems.ts unreadable, as the digest counts
 * them): known only when the page has them all, so a view that carries some says "problem records".
 */
const allUnread = (report: ReportView): boolean =>
  (report.view?.problemsTotal ?? report.problems.length) === report.problems.length &&
  report.problems.every(unreadable);

/** The title of the page's problem records: unreadable when none of them was read. */
const problemsTitle = (report: ReportView): string =>
  allUnread(report) ? 'Unreadable records' : 'Problem records';

/**
 * The first problem records the view carries ({@link PROBLEMS_LISTED}: it carries more kept quarantines,
 * for the feed), each on a line, how many more the JSON lists, and where to look: the reseller's
 * control panel, or for a damaged item of our own state its reason (scan-memory.ts).
 */
function problemsHtml(report: ReportView): string {
  const total = report.view?.problemsTotal ?? report.problems.length;
  if (!total) return '';
  const listed = report.problems.slice(0, PROBLEMS_LISTED);
  const items = listed.map((p) => `<li>${escapeHtml(problemLine(p).slice(2))}</li>`).join('');
  const rest = total - listed.length;
  const ours = listed.filter((p) => p.resource === 'state').length;
  const read =
    'Records the scan could not read and did not check, or read and found something to look at (each says which)';
  const said = allUnread(report)
    ? "They could not be read and were not checked: check them in the reseller's control panel"
    : ours === 0
      ? `${read}: check them in the reseller's control panel`
      : ours === listed.length
        ? "Items of this monitor's own stored state that could not be read, not the reseller's records: each says what mends it"
        : `${read}: check the reseller's records in its control panel; a state item is of this monitor's own stored state and says what mends it`;
  return `<h2 id="unreadable">${problemsTitle(report)} (${total})</h2><p>${said}.</p><ul class="items">${items}</ul>${rest > 0 ? `<p class="note">and ${rest} more in the JSON report</p>` : ''}`;
}

const listItem = (f: Finding, now: string): ListItem => ({
  full: () => itemHtml(f, now),
  brief: () => briefHtml(f, now),
});

/** The finding lists by severity (with a filter, the matches). */
function sectionsOf(report: ReportView, shown: readonly Finding[], needle: string): ListSection[] {
  const view = report.view;
  const urgentLeft = view?.urgentLeft;
  // Matching critical and warning findings the view counted instead of carrying are no info ones.
  const matches =
    (view?.matches ?? shown.length) -
    (urgentLeft ? urgentLeft.critical + urgentLeft.warning + urgentLeft.lapsing : 0);
  // Domains a policy lets lapse are listed apart, under their own heading: no alert speaks of them.
  const lapsing = (f: Finding) => isDomainFinding(f) && f.let_lapse === true;
  const sections = [...SEVERITIES]
    .reverse()
    .map((severity) => {
      const items = shown.filter((f) => f.severity === severity && !lapsing(f));
      const left = severity === 'info' ? (needle ? matches - shown.length : (view?.omittedTotal ?? 0)) : 0;
      const uncarried = severity === 'info' ? 0 : (urgentLeft?.[severity] ?? 0);
      if (items.length === 0 && left <= 0 && uncarried === 0) return null;
      const after =
        left > 0
          ? needle
            ? `<p class="note">and ${left} more matching info findings: make the filter narrower to list them.</p>`
            : `<p class="note">and ${left} more info findings (${escapeHtml(omittedWords(view?.omitted ?? {}))}): type a name, registrant or kind in the filter to list them, or see the JSON report.</p>`
          : '';
      return {
        heading: `<h2>${WORDS[severity]} (${items.length + Math.max(0, left) + uncarried})</h2>`,
        items: items.map((f) => listItem(f, report.now)),
        after,
        ...(uncarried ? { left: uncarried } : {}),
      };
    })
    .filter((section) => section !== null);
  const letLapse = shown.filter(lapsing);
  const lapsingLeft = urgentLeft?.lapsing ?? 0;
  if (letLapse.length || lapsingLeft)
    sections.push({
      heading: `<h2>Letting lapse (${letLapse.length + lapsingLeft})</h2>`,
      items: letLapse.map((f) => listItem(f, report.now)),
      after: '<p class="note">A policy lets these domains lapse: they are left out of every alert.</p>',
      ...(lapsingLeft ? { left: lapsingLeft } : {}),
    });
  return sections;
}

/**
 * The whole page, action first: the counts, the most urgent finding with its link, the links to
 * the JSON and the unreadable records, then the lists, the deadlines and the timeline.
 */
export function renderReportPage(input: ReportPageInput): string {
  const { report } = input;
  const query = filterText(input.query);
  const needle = query.toLowerCase();
  const leftOut = needle ? null : leftOutOf(report, input.token);
  const shown = leftOut
    ? leftOut.findings
    : needle
      ? report.findings.filter((f) => searchable(f).includes(needle))
      : report.findings;
  const label = input.accountLabel ? ` (${safeText(input.accountLabel)})` : '';
  const self = tokenQuery(input.token);
  const hidden = [...new URLSearchParams(self)]
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
  const total =
    report.findings.length + (report.view?.omittedTotal ?? 0) + (report.view?.urgentLeft?.total ?? 0);
  const sections = leftOut
    ? sectionsOf({ ...report, view: undefined } as ReportView, shown, 'left-out')
    : sectionsOf(report, shown, needle);
  const filtered = needle
    ? `<p>${report.view?.matches ?? shown.length} of ${total} findings match “${escapeHtml(safeText(query))}”.</p>`
    : leftOut
      ? `<p class="note">${escapeHtml(leftOut.note)}${leftOut.linkWhole ? ` The whole report is one link away: <a href="?${escapeHtml(self)}">full report</a>.` : ''}</p>`
      : '';
  const problemCount = report.view?.problemsTotal ?? report.problems.length;
  const links = [
    `<a href="report.json?${escapeHtml(self)}">JSON</a>`,
    problemCount ? `<a href="#unreadable">${problemsTitle(report)} (${problemCount})</a>` : '',
  ].join('');
  // What comes before and after the lists, made once: the page is measured without the lists first.
  const before = `<h1>domain-sentinel${escapeHtml(label)}</h1>
<ul class="sum"><li class="critical">${report.summary.critical} critical</li><li class="warning">${report.summary.warning} warning</li><li class="info">${report.summary.info} info</li></ul>
<p class="note">${escapeHtml(headline(report))}. Scanned ${escapeHtml(dayFormat(report.now))} (${escapeHtml(report.now.replace('T', ' ').slice(0, 16))} UTC).</p>
${incompleteHtml(report)}${firstActionHtml(shown, report.now)}<p class="toplinks">${links}</p>
${deadlinesHtml(report)}${renewalHtml(report)}
<form class="filter" method="get" action="">${hidden}<input type="search" name="q" value="${escapeHtml(query)}" placeholder="Filter: domain, registrant, kind" aria-label="Filter findings"><button type="submit">Filter</button></form>
${filtered}`;
  const after = `
<h2>Expiries and restore deadlines in the next ${TIMELINE_DAYS} days</h2>${renderTimeline(report)}
${changesHtml(report)}${problemsHtml(report)}${auditHtml(input.audit)}`;
  const render = (lists: string) =>
    renderPage(`domain-sentinel report${label}`, before + (lists || '<p>No findings.</p>') + after, STYLE);
  const skeleton = responseBytes(render(''));
  const budget = (input.budgetBytes ?? RESPONSE_BUDGET_BYTES) - skeleton;
  return render(sections.length ? listsHtml(sections, budget) : '');
}
