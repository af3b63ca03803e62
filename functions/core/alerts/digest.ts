import { cutText, inertText, plainDomain, plural, safeText } from '../base/text';
import { type ContactFinding, type DomainFinding, type Finding, isDomainFinding } from '../findings/classify';
import { nextStep, shownEmail } from '../findings/next-step';
import { responseBytes } from '../memory/report-view';
import type { Problem } from '../reseller/client';
import type { DomainPrice } from '../reseller/schemas';
import { leftOutUrl } from '../scan/report-links';
import type { Report } from '../scan/scan';
import { DATES_ONLY, KEY_MAX, unreadable, unreadIn } from '../scan/scan-problems';
import {
  criticalCount,
  criticalProblems,
  dateFormat,
  describeDomainFinding,
  headline,
  knownRestoreBy,
  priceText,
  problemLine,
  type RenderOptions,
  renewalCostLine,
  unreadableSays,
} from './alert';
import { changeMarker, linesWithin, renderChangesSection, renderResolvedSection } from './digest-changes';
import { registryDigestLines } from './registry-words';

/**
 * The e-mail digest: what a person reads first, so it names what matters at any account size.
 * Critical items first, then warning; each as far as the budget allows in full (what is wrong,
 * the registrant, the next step and its one link: the finding's page, which offers restore,
 * snooze and acknowledge), else briefly (what is wrong and the link), else named (one line).
 * Whatever cannot even be named is counted per severity, with a link to a page listing exactly
 * those. The budget is the bytes the digest may take in the SNS message (alert.ts).
 */

/** What the digest named and left out, per severity (critical counts unreadable quarantine records too). */
export interface DigestCounts {
  readonly named: { readonly critical: number; readonly warning: number };
  readonly leftOut: { readonly critical: number; readonly warning: number };
}

export interface Digest extends DigestCounts {
  readonly text: string;
  /** Every critical and warning item named in full (with its next step and link). */
  readonly allFull: boolean;
}

export interface DigestOptions extends RenderOptions {
  /**
   * Bytes the digest may take as the content of a JSON string (escapes counted), as SNS counts it
   * inside the message. @default DIGEST_MAX_BYTES
   */
  readonly budgetBytes?: number;
}

/** The most a digest takes when the JSON report beside it is linked rather than carried (alert.ts). */
export const DIGEST_MAX_BYTES = 200 * 1024;
const INFO_NAMES_SHOWN = 10;
/** Unreadable records listed in the digest; the rest are counted. */
const DIGEST_PROBLEMS_SHOWN = 20;
const REASON_MAX = 300;
/** Items from the first that keep their full form when not all can be named, within a share of the budget. */
const FULL_FIRST = 10;
const FULL_FIRST_SHARE = 0.1;
/** Room kept for the lines that count what was left out (their numbers are not known before). */
const COUNT_LINES_RESERVE = 1_024;
/**
 * The most of the budget each variable section around the items takes when not every item can be
 * named (the rest of it counted, with where to see it): together well under half, so these lines,
 * which a hostile record or a large account can make as long as the whole room, never leave the
 * critical items unnamed.
 */
const SECTION_SHARES = { changes: 0.15, renewals: 0.1, problems: 0.08, resolved: 0.05 } as const;
type SectionRoom = Record<keyof typeof SECTION_SHARES, number>;
const UNBOUNDED: SectionRoom = {
  changes: Number.POSITIVE_INFINITY,
  renewals: Number.POSITIVE_INFINITY,
  problems: Number.POSITIVE_INFINITY,
  resolved: Number.POSITIVE_INFINITY,
};
const roomOf = (budget: number): SectionRoom => ({
  changes: Math.floor(budget * SECTION_SHARES.changes),
  renewals: Math.floor(budget * SECTION_SHARES.renewals),
  problems: Math.floor(budget * SECTION_SHARES.problems),
  resolved: Math.floor(budget * SECTION_SHARES.resolved),
});

const bytes = (lines: readonly string[]) => lines.reduce((n, line) => n + responseBytes(line) + 2, 0);

/** A quarantine finding whose restore-by date is known (passed or not). */
const hasKnownDeadline = (f: Finding): boolean => isDomainFinding(f) && knownRestoreBy(f);

/** One item at its three lengths, each a list of lines. */
interface Item {
  readonly severity: 'critical' | 'warning';
  readonly full: readonly string[];
  readonly brief: readonly string[];
  readonly named: readonly string[];
}

type Level = 'full' | 'brief' | 'named' | 'left';

/** `Name (Company) <email>`, each part from the API made safe for one line, name and company inert (no link). */
function who(name: string | undefined, company: string | undefined, email: string | undefined): string {
  return [
    name ? inertText(cutText(safeText(name), 120)) : '',
    company ? `(${inertText(cutText(safeText(company), 120))})` : '',
    email ? `<${shownEmail(email)}>` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** A contact handle from the API (any text) on one line, cut, and inert: no mail client links it. */
const handleText = (handle: string): string => inertText(cutText(safeText(handle), 64));

function domainItem(f: DomainFinding, now: string, day: (iso: string) => string): Item {
  const first = `- ${changeMarker(f)}${cutText(plainDomain(f.domain_name), 2 * KEY_MAX)}: ${describeDomainFinding(f, now, day)}`;
  const link = f.actions?.page ?? f.restore_url;
  // Published again because nobody acted on it (functions/core/memory/escalation.ts).
  const hours = (f as { readonly escalated_after_hours?: number }).escalated_after_hours;
  const escalated = hours === undefined ? [] : [`  escalated: not acted on for ${plural(hours, 'hour')}`];
  const act = link
    ? [`  Act: ${link}`]
    : f.restore_unavailable
      ? [`  ${safeText(f.restore_unavailable)}`]
      : [];
  const r = f.registrant;
  const full = [
    first,
    ...escalated,
    ...(r
      ? [`  Registrant: ${who(r.name, r.company_name, r.email) || 'unknown'} [${handleText(r.handle)}]`]
      : []),
    ...(f.price ? [`  Renewal price: ${priceText(f.price as DomainPrice)}`] : []),
    `  Next: ${nextStep(f, day)}`,
    ...act,
  ];
  return {
    severity: f.severity === 'critical' ? 'critical' : 'warning',
    full,
    brief: [first, ...escalated, ...act],
    named: [first],
  };
}

function contactItem(f: ContactFinding): Item {
  const first = `- ${changeMarker(f)}contact ${handleText(f.handle)}: validation pending; the registry may suspend the domains it holds`;
  return {
    severity: 'warning',
    full: [first, `  ${who(f.name, f.company_name, f.email)}`, `  Next: ${nextStep(f)}`],
    brief: [first, `  ${who(f.name, f.company_name, f.email)}`],
    named: [first],
  };
}

function unreadableItem(p: Problem, day: (iso: string) => string): Item {
  const name = p.key === null ? '(no name)' : cutText(plainDomain(p.key), 2 * KEY_MAX);
  const first = `- ${name}: ${unreadableSays(p, day)}`;
  // A record read by its dates only says where to look already (scan-problems.ts DATES_ONLY): once is enough.
  const reason = cutText(safeText(p.reason), REASON_MAX);
  const detail = `  ${reason}${reason.includes(DATES_ONLY) ? '' : "; check it in the reseller's control panel"}`;
  // A kept quarantine nobody acted on is published again as a finding is (memory/kept-quarantine.ts).
  const hours = p.escalated_after_hours;
  const escalated = hours === undefined ? [] : [`  escalated: not acted on for ${plural(hours, 'hour')}`];
  const lines = [first, ...escalated, detail];
  return { severity: 'critical', full: lines, brief: lines, named: [first] };
}

/**
 * The critical and warning items in the order they are read (the quarantines whose restore-by date is
 * known, then the unreadable quarantine records, then the other findings), each made only when it is
 * first asked for: an account of 100 000 findings names a few thousand, and the rest are only counted.
 * A known deadline comes before the records that may hide one: a few thousand of those must not keep
 * a domain on its last day to restore out of the e-mail.
 */
class Items {
  readonly #sources: ReadonlyArray<Problem | Finding>;
  readonly #made: Item[] = [];
  readonly severities: ReadonlyArray<'critical' | 'warning'>;
  constructor(
    private readonly report: Report,
    private readonly day: (iso: string) => string,
  ) {
    const problems = criticalProblems(report);
    const critical = report.findings.filter((f) => f.severity === 'critical');
    const warning = report.findings.filter((f) => f.severity === 'warning');
    // Report order puts them first among the critical findings (classify.ts compareFindings).
    let known = 0;
    while (known < critical.length && hasKnownDeadline(critical[known] as Finding)) known++;
    this.#sources = [...critical.slice(0, known), ...problems, ...critical.slice(known), ...warning];
    this.severities = this.#sources.map((_, i) =>
      i < problems.length + critical.length ? 'critical' : 'warning',
    );
  }

  /** Whether item `i` is a finding (the report page lists those; unreadable records are not among them). */
  isFinding(i: number): boolean {
    return !('resource' in (this.#sources[i] as Problem | Finding));
  }

  get length(): number {
    return this.#sources.length;
  }

  at(i: number): Item {
    let item = this.#made[i];
    if (!item) {
      const source = this.#sources[i] as Problem | Finding;
      item =
        'resource' in source
          ? unreadableItem(source, this.day)
          : isDomainFinding(source)
            ? domainItem(source, this.report.now, this.day)
            : contactItem(source);
      this.#made[i] = item;
    }
    return item;
  }
}

/**
 * Each item's level within `budget`: as many named as fit (in order; when not all fit, room is kept
 * for the first {@link FULL_FIRST} in full), then from the first on as many in full as fit, then as
 * many briefly; the rest stay named, and what was never named is left.
 */
function levelsWithin(items: Items, fixed: number, budget: number): Level[] {
  const sizes: Array<{ full: number; brief: number; named: number }> = [];
  const size = (i: number) => {
    let known = sizes[i];
    if (!known) {
      const item = items.at(i);
      known = { full: bytes(item.full), brief: bytes(item.brief), named: bytes(item.named) };
      sizes[i] = known;
    }
    return known;
  };
  const nameWithin = (room: number) => {
    let n = 0;
    let total = fixed;
    while (n < items.length && total + size(n).named <= room) total += size(n++).named;
    return { n, total };
  };
  let { n: named, total: used } = nameWithin(budget);
  if (named < items.length) {
    // More than the budget can name: the most urgent keep their next step and link (a few names
    // fewer, counted and linked), else an account where everything expires at once gets neither.
    let reserve = 0;
    for (let i = 0; i < Math.min(FULL_FIRST, named); i++) {
      const extra = size(i).full - size(i).named;
      if (reserve + extra > (budget - fixed) * FULL_FIRST_SHARE) break;
      reserve += extra;
    }
    ({ n: named, total: used } = nameWithin(budget - reserve));
  }
  const levels: Level[] = Array.from({ length: items.length }, (_, i) => (i < named ? 'named' : 'left'));
  for (const level of ['full', 'brief'] as const) {
    for (let i = 0; i < named; i++) {
      if (levels[i] !== 'named') continue;
      const extra = size(i)[level] - size(i).named;
      if (used + extra > budget) break;
      used += extra;
      levels[i] = level;
    }
  }
  return levels;
}

/** "on the full report: <url>", or how to see them without one. */
const whereAll = (report: Report) =>
  report.report_url ? `on the full report: ${report.report_url}` : 'run a scan with --json for all of them';

/** The sections of the critical and warning items, at their levels, with what was left out counted and linked. */
function itemSections(report: Report, items: Items, levels: readonly Level[]): string[] {
  const out: string[] = [];
  const counts = digestCounts(items, levels);
  for (const severity of ['critical', 'warning'] as const) {
    const mine = levels.map((level, i) => ({ i, level })).filter(({ i }) => items.severities[i] === severity);
    if (mine.length === 0) continue;
    out.push(`${severity.toUpperCase()} (${mine.length})`);
    let namedOnly = 0;
    for (const { i, level } of mine) {
      if (level === 'left') continue;
      if (level === 'named') namedOnly++;
      out.push(...items.at(i)[level]);
    }
    if (namedOnly > 0)
      out.push(`  (${plural(namedOnly, 'item')} above named only: next steps and links ${whereAll(report)})`);
    const left = counts.leftOut[severity];
    if (left > 0)
      out.push(`- and ${left} more ${severity}, not named here: ${leftOutWhere(report, items, levels)}`);
    out.push('');
  }
  return out;
}

function digestCounts(items: Items, levels: readonly Level[]): DigestCounts {
  const named = { critical: 0, warning: 0 };
  const leftOut = { critical: 0, warning: 0 };
  levels.forEach((level, i) => {
    const severity = items.severities[i] as 'critical' | 'warning';
    if (level === 'left') leftOut[severity]++;
    else named[severity]++;
  });
  return { named, leftOut };
}

/** The page that lists exactly what was left out, or how to see it without links. */
function leftOutWhere(report: Report, items: Items, levels: readonly Level[]): string {
  // The page counts findings in report order; the unreadable records the digest names are not among them.
  const named = { critical: 0, warning: 0 };
  levels.forEach((level, i) => {
    if (level !== 'left' && items.isFinding(i)) named[items.severities[i] as 'critical' | 'warning']++;
  });
  return report.report_url
    ? leftOutUrl(
        report.report_url,
        report.generated_at,
        named,
        // A group's message names its group's findings alone: the page counts among those.
        report.source.group,
      )
    : 'run a scan with --json for all of them';
}

/** The lines around the items: heading and web links first, everything after the items last. */
function frame(
  report: Report & { readonly silenced?: number; readonly letting_lapse?: number },
  options: RenderOptions,
  room: SectionRoom,
) {
  const timeZone = options.timeZone ?? 'UTC';
  const { day, time } = dateFormat(timeZone);
  const label = options.accountLabel ? ` (${safeText(options.accountLabel)})` : '';
  const head = [`domain-sentinel${label}: ${headline(report)}`, ''];
  // A read that is not the whole account (source.incomplete): said first, for its findings are not the whole account.
  if (report.source.incomplete)
    head.push(
      'INCOMPLETE: the scan could not read the whole account. The findings below are those of the domains read; others may be missing (see PROBLEMS), and no domain is judged to have left. The scan is reported as failed.',
      '',
    );
  const web: string[] = [];
  if (report.report_url) web.push(`Full report: ${report.report_url}`);
  if (report.silenced)
    web.push(`${plural(report.silenced, 'snoozed or acknowledged domain')} left out (see the full report).`);
  if (report.letting_lapse)
    web.push(`${plural(report.letting_lapse, 'domain')} let lapse by policy left out (see the full report).`);
  const top = [...head, ...(web.length ? [...web, ''] : []), ...renderChangesSection(report, room.changes)];
  const nothing =
    criticalCount(report) === 0 && report.summary.warning === 0
      ? [
          report.problems.length
            ? 'Nothing critical or urgent among the records that could be read; see PROBLEMS for the rest.'
            : 'Nothing critical or urgent.',
          '',
        ]
      : [];
  const bottom = [
    ...nothing,
    ...renewalCostLines(report, day, room.renewals),
    ...infoLines(report),
    ...problemLines(report, room.problems),
    ...registryDigestLines(report),
    ...renderResolvedSection(report, room.resolved),
    ...footer(report, timeZone, time),
  ];
  return { top, bottom, day };
}

/**
 * The digest within its budget, and what it named and left out. When its items cannot all be named,
 * or the digest would pass its room, the sections around them are bounded ({@link SECTION_SHARES})
 * and the items placed again: a changes section or renewal totals as long as the room must not leave
 * a quarantine unnamed, nor push the unreadable records and the footer past the lean form's cut.
 */
export function composeDigest(
  report: Report & { readonly silenced?: number; readonly letting_lapse?: number },
  options: DigestOptions = {},
): Digest {
  const budget = options.budgetBytes ?? DIGEST_MAX_BYTES;
  const whole = digestIn(report, options, UNBOUNDED);
  // With no item to leave out, sections longer than the room would be cut by the lean form instead.
  if (whole.leftOut.critical + whole.leftOut.warning === 0 && responseBytes(whole.text) <= budget)
    return whole;
  return digestIn(report, options, roomOf(budget));
}

function digestIn(
  report: Report & { readonly silenced?: number; readonly letting_lapse?: number },
  options: DigestOptions,
  room: SectionRoom,
): Digest {
  const { top, bottom, day } = frame(report, options, room);
  const items = new Items(report, day);
  const fixed = bytes(top) + bytes(bottom) + 2 * bytes(['CRITICAL (000000)', '']) + COUNT_LINES_RESERVE;
  let budget = options.budgetBytes ?? DIGEST_MAX_BYTES;
  for (;;) {
    const levels = levelsWithin(items, fixed, budget);
    const counts = digestCounts(items, levels);
    const left = counts.leftOut.critical + counts.leftOut.warning;
    const notice = left
      ? [
          `Not named in this e-mail: ${counts.leftOut.critical} critical, ${counts.leftOut.warning} warning: ${leftOutWhere(report, items, levels)}`,
          '',
        ]
      : [];
    const lines = [...top, ...notice, ...itemSections(report, items, levels), ...bottom];
    const text = lines.join('\n');
    const over = responseBytes(text) - (options.budgetBytes ?? DIGEST_MAX_BYTES);
    // The reserve for the count lines holds them in practice; a longer link base than any real one
    // is the case this loop exists for: take the overflow off and place the items again.
    if (over <= 0 || items.length === 0 || budget <= fixed)
      return { text, ...counts, allFull: levels.every((level) => level === 'full') };
    budget -= over;
  }
}

/**
 * The e-mail digest in plain text, as the message carries it (within {@link DIGEST_MAX_BYTES}
 * unless told otherwise). Nothing is cut silently.
 */
export function renderDigest(report: Report, options: DigestOptions = {}): string {
  return composeDigest(report, options).text;
}

/**
 * The totals line within `maxBytes`: the currencies with the most renewals first, the others
 * counted as renewal_costs counts those past its ten (a report from before that bound, or a bound
 * missed, can hold thousands).
 */
function totalsWithin(costs: NonNullable<Report['renewal_costs']>, maxBytes: number): string {
  const line = (n: number) => {
    const rest = costs.totals.slice(n);
    if (rest.length === 0) return `RENEWAL COSTS: ${renewalCostLine(costs)}`;
    const other = costs.other_currencies;
    return `RENEWAL COSTS: ${renewalCostLine({
      ...costs,
      totals: costs.totals.slice(0, n),
      other_currencies: {
        currencies: (other?.currencies ?? 0) + rest.length,
        count: (other?.count ?? 0) + rest.reduce((sum, t) => sum + t.count, 0),
      },
    })}`;
  };
  let n = costs.totals.length;
  let text = line(n);
  while (n > 0 && responseBytes(text) > maxBytes) {
    n = Math.floor(n / 2);
    text = line(n);
  }
  return text;
}

/** The digest's section on what renewals will cost: the totals, then each priced renewal due, within `maxBytes`. */
function renewalCostLines(report: Report, day: (iso: string) => string, maxBytes: number): string[] {
  const costs = report.renewal_costs;
  if (!costs) return [];
  const now = Date.parse(report.now);
  const due = report.findings.filter(
    (f): f is DomainFinding =>
      isDomainFinding(f) &&
      f.price !== undefined &&
      (f.kind === 'expiring' || f.kind === 'renewal_failed') &&
      Date.parse(f.date_expiry) > now &&
      Date.parse(f.date_expiry) <= now + costs.window_days * 86_400_000,
  );
  const totals = totalsWithin(costs, maxBytes / 2);
  const lines = due
    .slice(0, 100)
    .map(
      (f) =>
        `- ${cutText(plainDomain(f.domain_name), KEY_MAX)}: ${priceText(f.price as DomainPrice)}, expires ${day(f.date_expiry)}, auto-renew ${f.auto_renew === true ? 'on' : 'OFF'}`,
    );
  const shown = linesWithin(lines, maxBytes - responseBytes(totals));
  const out = [totals, ...lines.slice(0, shown)];
  if (due.length > shown) out.push(`- and ${due.length - shown} more ${whereAll(report)}`);
  out.push('');
  return out;
}

function infoLines(report: Report): string[] {
  if (report.summary.info === 0) return [];
  const info = report.findings.filter((f): f is DomainFinding => f.severity === 'info' && isDomainFinding(f));
  const renewing = info.filter((f) => f.kind === 'expiring').length;
  const off = info.filter((f) => f.kind === 'auto_renew_off').length;
  const out = [
    `INFO (${report.summary.info}): ${renewing} expiring within ${report.policy.expiry_days} days with auto-renew on, ${off} with auto-renew off`,
  ];
  const names = info.slice(0, INFO_NAMES_SHOWN).map((f) => cutText(plainDomain(f.domain_name), KEY_MAX));
  const rest = report.summary.info - names.length;
  if (names.length) out.push(`  ${names.join(', ')}${rest > 0 ? `, and ${rest} more` : ''}`);
  out.push('');
  return out;
}

/**
 * The PROBLEMS header: how many records could not be read (scan-problems.ts unreadable, as the subject
 * and chat count them) and how many say something to look at (read by their dates only, or with a
 * registrant given twice; a damaged item of our own state).
 */
function problemsHeader(report: Report): string {
  const all = report.problems.length;
  const unread = unreadIn(report.problems);
  const was = (n: number) => (n === 1 ? 'was' : 'were');
  const notRead = `could not be read and ${was(unread)} not checked`;
  const read = `say${all - unread === 1 ? 's' : ''} something to look at`;
  if (unread === all) return `PROBLEMS: ${plural(all, 'record')} ${notRead}:`;
  if (unread === 0) return `PROBLEMS: ${plural(all, 'record')} ${read}:`;
  return `PROBLEMS: ${plural(all, 'record')}: ${unread} ${notRead}; ${all - unread} ${read}:`;
}

/** The problem records, the first of them within `maxBytes`, the rest counted. */
function problemLines(report: Report, maxBytes: number): string[] {
  if (report.problems.length === 0) return [];
  const lines = report.problems.slice(0, DIGEST_PROBLEMS_SHOWN).map(problemLine);
  const shown = linesWithin(lines, maxBytes);
  const out = [problemsHeader(report), ...lines.slice(0, shown)];
  const more = report.problems.length - shown;
  if (more > 0)
    out.push(
      `- and ${more} more ${report.problems.every(unreadable) ? 'unreadable records' : 'records'} ${report.report_url ? `on the full report: ${report.report_url}#unreadable` : '(run a scan with --json for all of them)'}`,
    );
  out.push('');
  return out;
}

function footer(report: Report, timeZone: string, time: (iso: string) => string): string[] {
  const s = report.stats;
  return [
    '--',
    `Scanned ${plural(s.domains_scanned, 'domain')} and ${plural(s.contacts_scanned, 'contact')} at ${time(report.now)} (${s.requests} requests, ${(s.duration_ms / 1000).toFixed(1)} s, ${report.source.mode} mode).`,
    ...(report.source.read === 'filtered' && report.source.coverage
      ? [
          `The account holds ${plural(report.source.coverage.all, 'domain')}; search counts proved which could need attention, and only those were read.`,
        ]
      : []),
    ...(report.source.fallback_reason
      ? [`The account was read in full: ${report.source.fallback_reason}.`]
      : []),
    ...(report.renewal_rule_off
      ? [`Failed renewals were not checked: ${safeText(report.renewal_rule_off)}.`]
      : []),
    `Dates are shown in ${timeZone}. Thresholds: expiring within ${report.policy.expiry_days} days, critical within ${report.policy.critical_days} days without auto-renew.`,
    report.source.group === undefined
      ? 'Change them with EXPIRY_DAYS and CRITICAL_DAYS (or cdk deploy -c expiryDays=N -c criticalDays=N).'
      : `Change them with the expiryDays and criticalDays of policy ${safeText(report.source.group)}.`,
  ];
}
