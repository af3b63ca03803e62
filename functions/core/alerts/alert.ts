import { displayDomain, formatAmount, normalizeDomainName, plural, safeText } from '../base/text';
import {
  anyAtOrAbove,
  type ContactFinding,
  type DomainFinding,
  type Finding,
  isDomainFinding,
  type Severity,
  severityRank,
} from '../findings/classify';
import { LAST_DAYS } from '../findings/quarantine-periods';
import type { Problem } from '../reseller/client';
import type { DomainPrice } from '../reseller/schemas';
import type { RenewalCosts, Report } from '../scan/scan';
import { changeMarker, renderChangesSection, renderResolvedSection } from './digest-changes';

/**
 * What a scan says to people and programs: the e-mail digest, the SMS, and the one SNS message
 * (MessageStructure json) that carries them and the JSON report, kept under SNS's size limit.
 */

/** SNS's limit for the whole message, attributes included. */
export const SNS_MAX_BYTES = 262_144;
/** Room kept for message attributes and the SDK's encoding. */
const ATTRIBUTE_RESERVE_BYTES = 2_048;
/** A digest longer than this many detailed items is cut for readability, with an "and N more" line. */
const DIGEST_DETAIL_LIMIT = 300;
const INFO_NAMES_SHOWN = 10;
/** Unreadable records listed in the digest; the rest are counted. */
const DIGEST_PROBLEMS_SHOWN = 20;
/** Unreadable records kept in the JSON variants before the size search cuts further. */
const MESSAGE_PROBLEMS_KEPT = 100;
/** A problem's reason is cut to this many characters in alerts (a hostile record can hold megabytes). */
const REASON_MAX = 300;
/** A name or handle is cut to this many characters in alerts (a valid domain name has at most 253). */
const KEY_MAX = 260;
const SMS_MAX = 160;

/**
 * The alert topic's display name. SNS puts it before every SMS sent from the topic as
 * `<display name>> `, so the SMS budget counts it (see renderSms) and the stack sets it from here.
 */
export const ALERT_TOPIC_DISPLAY_NAME = 'domain-sentinel';
/** What SNS puts before every SMS of the alert topic. */
export const SMS_PREFIX = `${ALERT_TOPIC_DISPLAY_NAME}> `;

export interface RenderOptions {
  /** IANA zone dates are shown in. @default 'UTC' */
  readonly timeZone?: string;
  /** Shown in the subject and the heading, e.g. the reseller account's name. */
  readonly accountLabel?: string;
  /** At most this many critical and warning items in detail. @default 300 */
  readonly detailLimit?: number;
}

const DAY_MS = 86_400_000;

/** Day and time formatters for one zone (made once: Intl formatters are costly to build). */
export function dateFormat(timeZone: string) {
  const day = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone });
  const time = new Intl.DateTimeFormat('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone,
  });
  return {
    day: (iso: string) => day.format(new Date(iso)),
    time: (iso: string) => `${time.format(new Date(iso))} ${timeZone}`,
  };
}

/** The problem with one domain, in words a person acts on. */
export function describeDomainFinding(f: DomainFinding, now: string, day: (iso: string) => string): string {
  const renew =
    f.auto_renew === null
      ? 'auto-renew UNKNOWN (treated as off)'
      : f.auto_renew
        ? 'auto-renew on'
        : 'auto-renew OFF';
  switch (f.kind) {
    case 'quarantine': {
      // The record says when the domain was cancelled only in date_deleted; the expiry date is no
      // stand-in (a domain cancelled early would read "since" a date still to come).
      const deadline = restoreDeadlineText(f, day);
      if (!f.date_deleted)
        return `in quarantine (since when not given; expiry date ${day(f.date_expiry)}); ${deadline}`;
      const since = Date.parse(now) - Date.parse(f.date_deleted);
      if (since < 0)
        return `in quarantine (the record dates it from ${day(f.date_deleted)}, still to come); ${deadline}`;
      const days = Math.floor(since / DAY_MS);
      return `in quarantine since ${day(f.date_deleted)}, ${plural(days, 'day')}; ${deadline}`;
    }
    case 'renewal_failed':
      return `auto-renew is on but the renewal due on ${day(f.date_renewal ?? f.date_expiry)} did not happen: check the account's balance and payment method; expires ${day(f.date_expiry)} ${f.days_left === 0 ? 'within a day' : `in ${plural(f.days_left, 'day')}`}`;
    case 'expired':
      return `expired ${day(f.date_expiry)}, ${f.days_left >= -1 ? 'within the last day' : `${-f.days_left} days ago`}, ${renew}`;
    case 'expiring': {
      const when = f.days_left === 0 ? 'within a day' : `in ${plural(f.days_left, 'day')}`;
      return `expires ${day(f.date_expiry)} ${when}, ${renew}`;
    }
    case 'auto_renew_off':
      return `expires ${day(f.date_expiry)} in ${plural(f.days_left, 'day')}, ${renew}`;
  }
}

/**
 * The restore deadline of a quarantine finding in words: "restore by 2 Dec 2026, 9 days left";
 * "LAST DAYS: …" in the last week; past, critically; unknown, with the reason.
 */
export function restoreDeadlineText(f: DomainFinding, day: (iso: string) => string): string {
  const left = f.days_to_restore;
  if (!f.restore_by || typeof left !== 'number')
    return `restore deadline unknown${f.restore_deadline_unknown ? ` (${safeText(f.restore_deadline_unknown)})` : ''}`;
  if (left < 0)
    return `its restore-by date ${day(f.restore_by)} has PASSED (${plural(-left, 'day')} ago) and it is still listed: the registry may release it at any moment; restore it now or check it in the reseller's control panel`;
  const when = `restore by ${day(f.restore_by)}, ${left === 0 ? 'the last day' : `${plural(left, 'day')} left`}`;
  return left <= LAST_DAYS ? `LAST DAYS: ${when}` : when;
}

/** `premium, EUR 400` or `custom price (amount not stated)`. */
export function priceText(price: DomainPrice): string {
  const kind = price.kind === 'premium' ? 'premium' : 'custom price';
  return price.currency !== undefined && price.amount !== undefined
    ? `${kind}, ${price.currency} ${formatAmount(price.amount)}`
    : `${kind} (amount not stated by the API)`;
}

/** "3 premium renewals due in 30 days: EUR 1 240": the totals line of the digest and the report page. */
export function renewalCostLine(costs: RenewalCosts): string {
  const count = costs.premium + costs.custom;
  const kinds =
    costs.custom === 0
      ? `${plural(costs.premium, 'premium renewal')}`
      : costs.premium === 0
        ? `${plural(costs.custom, 'custom-priced renewal')}`
        : `${costs.premium} premium and ${costs.custom} custom-priced renewals`;
  const sums = costs.totals.map((t) => `${t.currency} ${formatAmount(t.amount)}`).join('; ');
  const unpriced = costs.unpriced ? ` (${costs.unpriced} of ${count} without a stated price)` : '';
  return `${kinds} due in ${costs.window_days} days: ${sums || 'no price stated'}${unpriced}`;
}

/** The digest's section on what renewals will cost: the totals, then each priced renewal due. */
function renewalCostLines(report: Report, day: (iso: string) => string, limit: number): string[] {
  const costs = report.renewal_costs;
  if (!costs) return [];
  const now = Date.parse(report.now);
  const due = report.findings.filter(
    (f): f is DomainFinding =>
      isDomainFinding(f) &&
      f.price !== undefined &&
      (f.kind === 'expiring' || f.kind === 'renewal_failed') &&
      Date.parse(f.date_expiry) > now &&
      Date.parse(f.date_expiry) <= now + costs.window_days * DAY_MS,
  );
  const out = [`RENEWAL COSTS: ${renewalCostLine(costs)}`];
  for (const f of due.slice(0, limit)) {
    out.push(
      `- ${cut(displayDomain(f.domain_name), KEY_MAX)}: ${priceText(f.price as DomainPrice)}, expires ${day(f.date_expiry)}, auto-renew ${f.auto_renew === true ? 'on' : 'OFF'}`,
    );
  }
  if (due.length > limit) out.push(`- and ${due.length - limit} more (see the JSON report)`);
  out.push('');
  return out;
}

/** `Name (Company) <email>`, each part from the API made safe for one line. */
function who(name: string | undefined, company: string | undefined, email: string | undefined): string {
  return [
    name ? cut(safeText(name), 120) : '',
    company ? `(${cut(safeText(company), 120)})` : '',
    email ? `<${cut(safeText(email), 254)}>` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

function registrantLine(f: DomainFinding): string | null {
  const r = f.registrant;
  if (!r) return null;
  return `Registrant: ${who(r.name, r.company_name, r.email) || 'unknown'} [${cut(safeText(r.handle), 64)}]`;
}

function contactLines(f: ContactFinding): string[] {
  return [
    `- ${changeMarker(f)}contact ${cut(safeText(f.handle), 64)}: validation pending; the registry may suspend the domains it holds`,
    `  ${who(f.name, f.company_name, f.email)}`,
  ];
}

function itemLines(f: Finding, now: string, day: (iso: string) => string): string[] {
  if (!isDomainFinding(f)) return contactLines(f);
  const lines = [
    `- ${changeMarker(f)}${cut(displayDomain(f.domain_name), 2 * KEY_MAX)}: ${describeDomainFinding(f, now, day)}`,
  ];
  const registrant = registrantLine(f);
  if (registrant) lines.push(`  ${registrant}`);
  if (f.price) lines.push(`  Renewal price: ${priceText(f.price)}`);
  if (f.restore_url) lines.push(`  Restore: ${f.restore_url}`);
  else if (f.restore_unavailable) lines.push(`  ${safeText(f.restore_unavailable)}`);
  lines.push(...actionLines(f));
  return lines;
}

/** The snooze and acknowledge links of an item (report-links.ts signs them). */
function actionLines(f: DomainFinding): string[] {
  const lines: string[] = [];
  if (f.actions?.snooze) lines.push(`  Snooze 7 days: ${f.actions.snooze}`);
  if (f.actions?.acknowledge) lines.push(`  Acknowledge (we let it go): ${f.actions.acknowledge}`);
  return lines;
}

/** The digest's opening lines about the web: the full report's link, and what snooze/acknowledge or a policy left out. */
function webLines(
  report: Report & { readonly silenced?: number; readonly letting_lapse?: number },
): string[] {
  const lines: string[] = [];
  if (report.report_url) lines.push(`Full report: ${report.report_url}`);
  if (report.silenced)
    lines.push(
      `${plural(report.silenced, 'snoozed or acknowledged domain')} left out (see the full report).`,
    );
  if (report.letting_lapse)
    lines.push(
      `${plural(report.letting_lapse, 'domain')} let lapse by policy left out (see the full report).`,
    );
  return lines.length ? [...lines, ''] : [];
}

/** One unreadable record on one line: its key and reason made safe and cut. */
export function problemLine(p: Problem): string {
  const key = p.key === null ? '(no name)' : cut(safeText(p.key), KEY_MAX);
  return `- ${p.resource} ${key} on page ${p.page}: ${cut(safeText(p.reason), REASON_MAX)}`;
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Counts for the subject and the heading. */
export function headline(report: Report): string {
  const { critical, warning, info } = report.summary;
  const parts = [`${critical + criticalProblems(report).length} critical`, `${warning} warning`];
  if (info) parts.push(`${info} info`);
  if (report.problems.length) parts.push(plural(report.problems.length, 'unreadable record'));
  return parts.join(', ');
}

/**
 * True when the report holds anything at `level` or above: a finding, or an unreadable record
 * (critical when it says quarantine, else a warning: it may hide anything). For `--fail-on`.
 */
export function reportReaches(report: Report, level: Severity): boolean {
  // A domain its policy lets lapse is in the report, never in an alert.
  if (
    anyAtOrAbove(
      report.findings.filter((f) => !(isDomainFinding(f) && f.let_lapse)),
      level,
    )
  )
    return true;
  return report.problems.some(
    (p) => severityRank(p.severity === 'critical' ? 'critical' : 'warning') >= severityRank(level),
  );
}

/** Records that could not be checked but say the domain is in quarantine: critical items too. */
export const criticalProblems = (report: Report): readonly Problem[] =>
  report.problems.filter((p) => p.severity === 'critical');

function criticalProblemLines(p: Problem): string[] {
  const name = p.key === null ? '(no name)' : cut(displayDomain(p.key), 2 * KEY_MAX);
  return [
    `- ${name}: says it is in quarantine, but its record could not be read, so it was not checked`,
    `  ${cut(safeText(p.reason), REASON_MAX)}; check it in the reseller's control panel`,
  ];
}

/**
 * The e-mail digest in plain text: critical first, then warning, each domain with what is wrong in
 * words, the registrant and for quarantine the restore link; info summarised; the footer says when,
 * how much, and how to change thresholds. Nothing is cut silently.
 */
export function renderDigest(report: Report, options: RenderOptions = {}): string {
  const timeZone = options.timeZone ?? 'UTC';
  const { day, time } = dateFormat(timeZone);
  const limit = options.detailLimit ?? DIGEST_DETAIL_LIMIT;
  const label = options.accountLabel ? ` (${safeText(options.accountLabel)})` : '';
  const out: string[] = [`domain-sentinel${label}: ${headline(report)}`, ''];
  out.push(...webLines(report));
  out.push(...renderChangesSection(report));

  let detailBudget = limit;
  const unreadableCritical = criticalProblems(report);
  for (const severity of ['critical', 'warning'] as const) {
    const items = report.findings.filter((f) => f.severity === severity);
    const extra = severity === 'critical' ? unreadableCritical : [];
    if (items.length === 0 && extra.length === 0) continue;
    out.push(`${severity.toUpperCase()} (${items.length + extra.length})`);
    // First: what may be in quarantine but could not be read (never cut: each is a domain at risk).
    for (const p of extra) out.push(...criticalProblemLines(p));
    const detailed = items.slice(0, Math.max(0, detailBudget));
    detailBudget -= detailed.length;
    for (const f of detailed) out.push(...itemLines(f, report.now, day));
    const omitted = items.length - detailed.length;
    if (omitted > 0)
      out.push(`- and ${omitted} more ${severity} (see the JSON report, or run a scan with --json)`);
    out.push('');
  }
  if (report.summary.critical === 0 && report.summary.warning === 0 && unreadableCritical.length === 0) {
    out.push(
      report.problems.length
        ? 'Nothing critical or urgent among the records that could be read; see PROBLEMS for the rest.'
        : 'Nothing critical or urgent.',
      '',
    );
  }

  out.push(...renewalCostLines(report, day, Math.max(0, Math.min(limit, 100))));

  const info = report.findings.filter((f): f is DomainFinding => f.severity === 'info' && isDomainFinding(f));
  if (report.summary.info > 0) {
    const renewing = info.filter((f) => f.kind === 'expiring').length;
    const off = info.filter((f) => f.kind === 'auto_renew_off').length;
    out.push(
      `INFO (${report.summary.info}): ${renewing} expiring within ${report.policy.expiry_days} days with auto-renew on, ${off} with auto-renew off`,
    );
    const names = info.slice(0, INFO_NAMES_SHOWN).map((f) => cut(displayDomain(f.domain_name), KEY_MAX));
    const rest = report.summary.info - names.length;
    if (names.length) out.push(`  ${names.join(', ')}${rest > 0 ? `, and ${rest} more` : ''}`);
    out.push('');
  }

  if (report.problems.length > 0) {
    const one = report.problems.length === 1;
    out.push(
      `PROBLEMS: ${plural(report.problems.length, 'record')} could not be read and ${one ? 'was' : 'were'} not checked:`,
    );
    for (const p of report.problems.slice(0, DIGEST_PROBLEMS_SHOWN)) out.push(problemLine(p));
    if (report.problems.length > DIGEST_PROBLEMS_SHOWN)
      out.push(
        `- and ${report.problems.length - DIGEST_PROBLEMS_SHOWN} more unreadable records (see the JSON report, or run a scan with --json)`,
      );
    out.push('');
  }

  out.push(...renderResolvedSection(report));
  const s = report.stats;
  out.push(
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
    'Change them with EXPIRY_DAYS and CRITICAL_DAYS (or cdk deploy -c expiryDays=N -c criticalDays=N).',
  );
  return out.join('\n');
}

// GSM 03.38 basic character set; the extension set costs two characters each.
const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
const GSM7_EXTENSION = new Set('^{}\\[~]|€');

/** Length of `text` in GSM-7 septets, or Infinity if it holds a character outside GSM-7. */
export function gsm7Length(text: string): number {
  let length = 0;
  for (const ch of text) {
    if (GSM7_BASIC.has(ch)) length += 1;
    else if (GSM7_EXTENSION.has(ch)) length += 2;
    else return Number.POSITIVE_INFINITY;
  }
  return length;
}

/**
 * Replaces anything outside the GSM-7 basic set with '?', and line breaks too: GSM-7 has CR and LF,
 * but an SMS built from API text must stay one line (a name could otherwise forge a second one).
 */
export function toGsm7(text: string): string {
  return [...text].map((ch) => (GSM7_BASIC.has(ch) && ch !== '\n' && ch !== '\r' ? ch : '?')).join('');
}

function smsItem(f: DomainFinding): string {
  // Punycode, and '?' for anything else outside GSM-7 (controls included): an SMS carries no markup.
  const name = toGsm7(normalizeDomainName(f.domain_name)).slice(0, 80);
  if (f.kind === 'quarantine') {
    const left = f.days_to_restore;
    if (typeof left !== 'number') return `${name} quarantine`;
    if (left < 0) return `${name} restore-by PASSED`;
    return left <= LAST_DAYS ? `${name} LAST DAYS ${left}d to restore` : `${name} quarantine ${left}d left`;
  }
  if (f.kind === 'expired') return `${name} expired`;
  if (f.kind === 'renewal_failed') return `${name} renewal failed`;
  return `${name} ${f.days_left}d no renew`;
}

/**
 * The SMS body: critical items only, no links, IDNs in punycode; what does not fit is counted as
 * "+N more". SNS puts {@link SMS_PREFIX} before it, so the body is cut to fit 160 GSM-7 characters
 * together with that prefix: one billed part, see {@link smsAsDelivered}.
 */
export function renderSms(report: Report, options: Pick<RenderOptions, 'accountLabel'> = {}): string {
  const max = SMS_MAX - gsm7Length(SMS_PREFIX);
  const critical = report.findings.filter((f) => f.severity === 'critical');
  const unreadable = criticalProblems(report).map(
    (p) => `${toGsm7(normalizeDomainName(p.key ?? '?')).slice(0, 80)} quarantine?`,
  );
  const label = options.accountLabel ? `${toGsm7(options.accountLabel).slice(0, 20)}: ` : '';
  if (critical.length === 0 && unreadable.length === 0) {
    return `${label}no critical items; ${report.summary.warning} warning. See e-mail.`.slice(0, max);
  }
  const head = `${label}${critical.length + unreadable.length} critical:`;
  const items = [
    ...unreadable,
    ...critical.map((f) => (isDomainFinding(f) ? smsItem(f) : `contact ${toGsm7(f.handle)}`)),
  ];
  let text = head;
  let used = 0;
  for (const [index, item] of items.entries()) {
    const remaining = items.length - index - 1;
    const candidate = `${text}${used ? ';' : ''} ${item}`;
    const tail = remaining > 0 ? ` +${remaining} more` : '';
    if (gsm7Length(candidate + tail) > max) break;
    text = candidate;
    used++;
  }
  if (used < items.length) text += ` +${items.length - used} more`;
  // A header so long that not even the count fits (a very long label) still stays within the limit.
  return gsm7Length(text) <= max ? text : text.slice(0, max);
}

/** The SMS exactly as a phone receives it from the alert topic: SNS's display-name prefix and the body. */
export const smsAsDelivered = (body: string): string => `${SMS_PREFIX}${body}`;

/** The SNS subject: ASCII, one line, at most 100 characters. */
export function renderSubject(report: Report, accountLabel?: string): string {
  const label = accountLabel ? ` [${safeText(accountLabel)}]` : '';
  const subject = `domain-sentinel${label}: ${headline(report)}`;
  return subject
    .replace(/[^\x20-\x7e]/g, '?')
    .slice(0, 100)
    .trim();
}

/** What a cut JSON report left out; the `summary` counts always cover everything. */
export interface Truncation {
  readonly findings_omitted: number;
  readonly problems_omitted: number;
}

/**
 * The JSON report for machines, cut to `findingLimit` findings and `problemLimit` unreadable records
 * (reasons cut to a few hundred characters), with the cut stated in the report itself.
 */
export function truncateReport(
  report: Report,
  findingLimit: number,
  problemLimit = MESSAGE_PROBLEMS_KEPT,
): Report & { truncated?: Truncation } {
  const findingsOmitted = Math.max(0, report.findings.length - findingLimit);
  const problemsOmitted = Math.max(0, report.problems.length - problemLimit);
  const problems = report.problems
    .slice(0, problemLimit)
    .map((p) =>
      p.reason.length > REASON_MAX || (p.key?.length ?? 0) > KEY_MAX
        ? { ...p, key: p.key === null ? null : cut(p.key, KEY_MAX), reason: cut(p.reason, REASON_MAX) }
        : p,
    );
  if (findingsOmitted === 0 && problemsOmitted === 0 && problems.every((p, i) => p === report.problems[i]))
    return report;
  return {
    ...report,
    findings: report.findings.slice(0, findingLimit),
    problems,
    ...(findingsOmitted || problemsOmitted
      ? { truncated: { findings_omitted: findingsOmitted, problems_omitted: problemsOmitted } }
      : {}),
  };
}

export interface AlertMessage {
  readonly subject: string;
  /** The MessageStructure json body. */
  readonly message: string;
  readonly attributes: {
    readonly severity: Severity;
    readonly critical_count: number;
    readonly warning_count: number;
    /** The account's name (`report.source.account`), for subscriptions that filter on it. */
    readonly account?: string;
    /** A group's own message (`report.source.group`): its recipients' subscriptions filter on it. */
    readonly group?: string;
    /**
     * With quiet hours (SMS_QUIET_HOURS): `send` as usual, `held` while SMS waits (SMS subscriptions
     * skip it), `release` for the SMS alone once the window ends (only SMS subscriptions take it).
     */
    readonly sms?: 'send' | 'held' | 'release';
  };
  /** Findings left out of the digest and the JSON variant to stay under the size limit. */
  readonly findingsCut: number;
  /** Unreadable records left out of the JSON variant (the digest lists a few and counts the rest). */
  readonly problemsCut: number;
}

/** The severity the message attributes carry: the highest finding, or warning for unreadable records. */
export function alertSeverity(report: Report): Severity {
  if (report.summary.critical > 0 || criticalProblems(report).length > 0) return 'critical';
  if (report.summary.warning > 0 || report.problems.length > 0) return 'warning';
  return 'info';
}

/**
 * Builds the one SNS message of a scan. If it would pass SNS's 256 KB (measured in bytes of the
 * final JSON), the digest's detail and the JSON report's findings are cut together, each with an
 * "and N more" / `truncated` statement, to the largest size that fits; unreadable records are cut
 * the same way (to 100 at first, fewer only if the findings alone cannot make room).
 */
export function buildAlertMessage(report: Report, options: RenderOptions = {}): AlertMessage {
  const sms = renderSms(report, options);
  const subject = renderSubject(report, options.accountLabel);
  const budget = SNS_MAX_BYTES - ATTRIBUTE_RESERVE_BYTES;
  let problemLimit = Math.min(report.problems.length, MESSAGE_PROBLEMS_KEPT);
  const compose = (limit: number) => {
    const digest = renderDigest(report, {
      ...options,
      detailLimit: Math.min(limit, options.detailLimit ?? DIGEST_DETAIL_LIMIT),
    });
    const json = JSON.stringify(truncateReport(report, limit, problemLimit));
    return JSON.stringify({
      default: digest,
      email: digest,
      sms,
      sqs: json,
      lambda: json,
      http: json,
      https: json,
    });
  };
  const fits = (message: string) => Buffer.byteLength(message, 'utf8') <= budget;

  /** Largest n in [0, max] for which `ok(n)`, given ok is monotone: a binary search. */
  const largest = (max: number, ok: (n: number) => boolean) => {
    let low = 0;
    let high = max;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (ok(mid)) low = mid;
      else high = mid - 1;
    }
    return low;
  };

  // Each finding's JSON is in the message four times (sqs, lambda, http, https): past the first
  // `most` findings, four copies alone outgrow the budget. Searching only up to there keeps each
  // trial message near SNS's size; trying all 145 000 findings of a large account first made a
  // message of some 80 MB (and a binary search through ones half as big) for nothing.
  let most = 0;
  for (let bytes = 0; most < report.findings.length; most++) {
    bytes += 4 * (Buffer.byteLength(JSON.stringify(report.findings[most]), 'utf8') + 1);
    if (bytes > budget) break;
  }
  let findingLimit = report.findings.length;
  let message = most === report.findings.length ? compose(findingLimit) : '';
  if (!message || !fits(message)) {
    // The report is already in priority order: keep the most findings that fit.
    findingLimit = largest(most, (n) => fits(compose(n)));
    if (findingLimit === 0 && !fits(compose(0))) {
      const best = largest(problemLimit, (n) => {
        problemLimit = n;
        return fits(compose(0));
      });
      problemLimit = best;
    }
    message = compose(findingLimit);
  }
  const cut = report.findings.length - findingLimit;
  return {
    subject,
    message,
    attributes: {
      severity: alertSeverity(report),
      critical_count: report.summary.critical + criticalProblems(report).length,
      warning_count: report.summary.warning,
      ...(report.source?.account ? { account: report.source.account } : {}),
      ...(report.source?.group ? { group: report.source.group } : {}),
    },
    findingsCut: cut,
    problemsCut: report.problems.length - problemLimit,
  };
}

/**
 * The notify policy: publish when a finding reaches `minSeverity`, or when records could not be
 * read (an unreadable record may hide a quarantined domain). One small function, so a state-keeping
 * policy (alert only on change) can replace it.
 */
export function shouldNotify(report: Report, minSeverity: Severity): boolean {
  if (report.problems.length > 0) return true;
  return anyAtOrAbove(report.findings, minSeverity);
}
