import {
  cutText,
  formatAmount,
  inertText,
  normalizeDomainName,
  plainDomain,
  plural,
  safeText,
} from '../base/text';
import {
  anyAtOrAbove,
  asRemembered,
  type DomainFinding,
  daysLeft,
  type Finding,
  isDomainFinding,
  type Severity,
  severityRank,
} from '../findings/classify';
import {
  type DayFormat,
  dayFormatIn,
  deadlineText,
  inferredExpiry,
  rememberedWords,
  utcDay,
} from '../findings/next-step';
import { LAST_DAYS } from '../findings/quarantine-periods';
import { isRegistryKind } from '../findings/registry-rules';
import type { DomainChange } from '../memory/state';
import type { Problem } from '../reseller/client';
import type { DomainPrice } from '../reseller/schemas';
import type { RenewalCosts } from '../scan/renewal-costs';
import type { Report } from '../scan/scan';
import { criticalRecords, KEY_MAX, unreadIn } from '../scan/scan-problems';
import * as registry from './registry-words';

/**
 * What a scan says to people and programs: the e-mail digest, the SMS, and the one SNS message
 * (MessageStructure json) that carries them and the JSON report, kept under SNS's size limit.
 */

/** SNS's limit for the whole message, attributes included. */
export const SNS_MAX_BYTES = 262_144;
/** A problem's reason is cut to this many characters in alerts (a hostile record can hold megabytes). */
const REASON_MAX = 300;
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
}

const DAY_MS = 86_400_000;

/** Day and time formatters for one zone (made once: Intl formatters are costly to build). */
export function dateFormat(timeZone: string) {
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
    day: dayFormatIn(timeZone),
    time: (iso: string) => `${time.format(new Date(iso))} ${timeZone}`,
  };
}

/** The problem with one domain in words a person acts on; both sides when the registry differs (docs/registry.md). */
export function describeDomainFinding(f: DomainFinding, now: string, day: DayFormat): string {
  const read = registry.bothSides(f, (g) => describeResellerFinding(g, now, day));
  const r = f.remembered;
  if (!r) return read;
  // Kept as remembered (docs/memory.md): what memory judges it by first, then what the record says.
  const deadline = r.kind === 'quarantine' ? `, ${restoreDeadlineText(asRemembered(f), day)}` : '';
  const last = r.date_expiry
    ? `probably expired: ${inferredExpiry(r.date_expiry, day)}`
    : `last read ${rememberedWords(r.kind)}`;
  return `${last}${deadline}; its record now says ${read}${r.because === 'registry_unconfirmed' ? ', and the registry could not be checked this scan' : ', with a status the API does not document'}`;
}

function describeResellerFinding(f: registry.ResellerSideFinding, now: string, day: registry.Day): string {
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
export function restoreDeadlineText(
  f: Pick<DomainFinding, 'restore_by' | 'days_to_restore' | 'restore_deadline_unknown'>,
  day: DayFormat,
): string {
  const left = f.days_to_restore;
  if (!f.restore_by || typeof left !== 'number')
    return `restore deadline unknown${f.restore_deadline_unknown ? ` (${safeText(f.restore_deadline_unknown)})` : ''}`;
  if (left < 0)
    return `its restore-by date ${deadlineText(day, f.restore_by)} has PASSED (${plural(-left, 'day')} ago) and it is still listed: the registry may release it at any moment; restore it now or check it in the reseller's control panel`;
  const when = `restore by ${deadlineText(day, f.restore_by)}, ${left === 0 ? 'the last day' : `${plural(left, 'day')} left`}`;
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
  const other = costs.other_currencies;
  const sums = [
    ...costs.totals.map((t) => `${t.currency} ${formatAmount(t.amount)}`),
    ...(other
      ? [
          `and ${plural(other.count, 'renewal')} in ${other.currencies} other currencies (each finding states its price)`,
        ]
      : []),
  ].join('; ');
  const unpriced = costs.unpriced ? ` (${costs.unpriced} of ${count} without a stated price)` : '';
  return `${kinds} due in ${costs.window_days} days: ${sums || 'no price stated'}${unpriced}`;
}

/** One unreadable record on one line: its key and reason made safe and cut, a URL in its key inert. */
export function problemLine(p: Problem): string {
  const key =
    p.key === null
      ? '(no name)'
      : cutText(p.resource === 'contact' ? inertText(safeText(p.key)) : plainDomain(p.key), KEY_MAX);
  // A stored memory has no page: the state is not the reseller's listing.
  const where = p.resource === 'state' ? `state item ${key}` : `${p.resource} ${key} on page ${p.page}`;
  return `- ${where}: ${cutText(safeText(p.reason), REASON_MAX)}`;
}

/**
 * Counts for the subject and the heading. `terse`: the same in fewer words (`INCOMPLETE`,
 * `N unreadable`, or `N records` when some were read), for a title whose room would otherwise cut a count.
 */
export function headline(report: Report, terse = false): string {
  const { warning, info } = report.summary;
  const parts = [`${criticalCount(report)} critical`, `${warning} warning`];
  // A read that was not the whole account (source.incomplete): its counts are not the account's.
  if (report.source.incomplete) parts.unshift(terse ? 'INCOMPLETE' : 'INCOMPLETE read');
  if (info) parts.push(`${info} info`);
  const unreadable = unreadableCount(report);
  const read = problemCount(report) - unreadable;
  // Terse, the records read and those not as one count: the body says which is which.
  if (terse && read) parts.push(plural(unreadable + read, 'record'));
  else {
    if (unreadable) parts.push(terse ? `${unreadable} unreadable` : plural(unreadable, 'unreadable record'));
    if (read) parts.push(`${plural(read, 'record')} to look at`);
  }
  return parts.join(', ');
}

/** What a message's JSON left out of the report to fit SNS (message.ts): chat and webhooks read that JSON. */
const omittedOf = (report: Report) =>
  (
    report as {
      readonly omitted?: {
        readonly problems?: number;
        readonly unread_problems?: number;
        readonly critical_problems?: number;
      };
    }
  ).omitted;

/** Problem records, read or not, those a message's cut left out included. */
export const problemCount = (report: Report): number =>
  report.problems.length + (omittedOf(report)?.problems ?? 0);

/**
 * Records that could not be read (scan-problems.ts unreadable), those a message's cut left out included
 * (a cut that does not say how many of those could not be read counts them all).
 */
export const unreadableCount = (report: Report): number => {
  const omitted = omittedOf(report);
  return unreadIn(report.problems) + (omitted?.unread_problems ?? omitted?.problems ?? 0);
};

/** The changes since the last scan a report with memory carries; none without memory. */
const changesOf = (report: Report): readonly DomainChange[] =>
  (report as { readonly changes?: readonly DomainChange[] }).changes ?? [];

/**
 * True when the report holds anything at `level` or above: a finding, an unreadable record
 * (critical when it says quarantine, else a warning: it may hide anything), or with memory a
 * change (a domain that left the account is critical). For `--fail-on`.
 */
export function reportReaches(report: Report, level: Severity): boolean {
  if (changesOf(report).some((c) => !c.let_lapse && severityRank(c.severity) >= severityRank(level)))
    return true;
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

/**
 * Problem records published critical: one that says quarantine but could not be read, a kept
 * quarantine, or one critical by what memory last knew of its domain (`remembered_kind`); a domain
 * by its first record (two spellings are one domain, as memory keys it), and none of a domain a
 * critical finding names: as {@link criticalIn} counts them (the others stay among the records to look at).
 */
export const criticalProblems = (report: Report): readonly Problem[] =>
  criticalRecords(report.problems, report.findings);

/**
 * How many critical items `problems` hold ({@link criticalProblems}) beside the critical `findings`:
 * a domain's records once, by its normalised name (memory's key), and not at all when a critical
 * finding counts the domain; a record without a domain name once each.
 */
export const criticalIn = (problems: readonly Problem[], findings: readonly Finding[]): number =>
  criticalRecords(problems, findings).length;

/** Changes since the last scan that memory calls critical (`left_account`: a domain transferred out or deleted). */
export const criticalChanges = (report: Report): readonly DomainChange[] =>
  changesOf(report).filter((c) => c.severity === 'critical');

/** Critical changes, with those a message's cut left out (capForMessage says how many). */
export function criticalChangeCount(report: Report): number {
  const cut = (report as { readonly changes_truncated?: { readonly critical_changes_omitted?: number } })
    .changes_truncated;
  return criticalChanges(report).length + (cut?.critical_changes_omitted ?? 0);
}

/**
 * What an alert counts as critical: critical findings, critical problem records ({@link criticalProblems}),
 * and critical changes. One count for the subject, the SMS, the digest, chat and the `severity`
 * attribute the SMS subscriptions filter on, so a domain that left the account reaches the phone.
 */
export const criticalCount = (report: Report): number =>
  report.summary.critical +
  criticalIn(report.problems, report.findings) +
  (omittedOf(report)?.critical_problems ?? 0) +
  criticalChangeCount(report);

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

/** Characters a name keeps in the SMS, so one long name leaves room for the others. */
const SMS_NAME_MAX = 80;
/** What shows that a name in the SMS was cut: GSM-7 has no '…'. */
const SMS_CUT_MARK = '...';

/**
 * A name as the SMS writes it: GSM-7, '?' for anything else (controls included), at most `max`
 * characters, a cut shown by `...`. After toGsm7 every character is one septet, so length counts them.
 */
function smsName(name: string, max = SMS_NAME_MAX): string {
  const text = toGsm7(name);
  return text.length <= max ? text : `${text.slice(0, max - SMS_CUT_MARK.length)}${SMS_CUT_MARK}`;
}

/**
 * One critical item of the SMS: the name it is about and what it says given that name as written,
 * so the first item can give its name less room when it would not fit otherwise (renderSms).
 */
interface SmsItem {
  readonly name: string;
  readonly says: (name: string) => string;
}

/** `x.nl LEFT ACCOUNT`: a change in the SMS, in capitals as the digest writes it. */
const smsChange = (c: DomainChange): SmsItem => ({
  name: normalizeDomainName(c.domain_name),
  says: (name) => `${name} ${c.kind.replace(/_/g, ' ').toUpperCase()}`,
});

// Punycode, and '?' for anything else outside GSM-7: an SMS carries no markup.
function smsItem(f: DomainFinding): SmsItem {
  // Kept as remembered: said as that one (its last days), `?` as the record does not say so now.
  const says = f.remembered
    ? (name: string) => `${smsFindingText(asRemembered(f), name)}?`
    : (name: string) => smsFindingText(f, name);
  return { name: normalizeDomainName(f.domain_name), says };
}

/** A quarantine in the SMS by its days left to restore (not a number: not known). */
function smsQuarantineText(left: number | null | undefined, name: string): string {
  if (typeof left !== 'number') return `${name} quarantine`;
  if (left < 0) return `${name} restore-by PASSED`;
  return left <= LAST_DAYS ? `${name} LAST DAYS ${left}d to restore` : `${name} quarantine ${left}d left`;
}

/**
 * What a critical problem record says of its domain in the digest and chat: one that says
 * quarantine but could not be read; a kept quarantine (memory/kept-quarantine.ts, told by its
 * mark), whose record was read, by its dates only: it is last read in quarantine, not unreadable;
 * or one critical by what memory last knew of its domain (`remembered_kind`: expired), its record
 * not read, or read by its dates only with nothing to report. One memory knew as expiring whose
 * expiry (`remembered_expiry`, on `day`) has passed since is said expired by that date, as what
 * memory infers, not what was read.
 */
export function unreadableSays(p: Problem, day: (iso: string) => string = utcDay): string {
  if (p.kept_quarantine)
    return 'last read in quarantine; its record now reads as nothing to report, with a status the API does not document';
  if (p.remembered_kind === undefined)
    return 'says it is in quarantine, but its record could not be read, so it was not checked';
  const was =
    p.remembered_expiry === undefined
      ? `was ${rememberedWords(p.remembered_kind)} at the last scan`
      : `probably expired: ${inferredExpiry(p.remembered_expiry, day)}`;
  return p.dates_only
    ? `${was}; its record now reads as nothing to report, with a status the API does not document`
    : `${was}; its record could not be read now, so it was not checked`;
}

/**
 * An unreadable record that says quarantine in the SMS: `name quarantine?`; one memory publishes
 * as a kept quarantine (memory/kept-quarantine.ts) by its remembered restore-by, as a quarantine
 * finding kept as remembered is (`name LAST DAYS 3d to restore?`), `?` as its record does not say so.
 */
function smsProblem(p: Problem, now: string): SmsItem {
  const by = p.restore_by;
  const left = by ? daysLeft(Date.parse(by), Date.parse(now)) : null;
  const kind = p.remembered_kind ?? 'quarantine';
  const says = kind === 'quarantine' ? (name: string) => smsQuarantineText(left, name) : smsKindText(kind);
  return { name: normalizeDomainName(p.key ?? '?'), says: (name) => `${says(name)}?` };
}

/** A critical kind memory knew, as the SMS says a finding of it (`name expired`), by its kind alone. */
const smsKindText =
  (kind: string) =>
  (name: string): string => {
    if (kind === 'expired' || kind === 'renewal_failed') return `${name} ${kind.replace('_', ' ')}`;
    if (isRegistryKind(kind)) return registry.registrySmsItem(name, { kind, date_expiry: null });
    return `${name} ${toGsm7(kind.replace(/_/g, ' '))}`;
  };

function smsFindingText(f: DomainFinding, name: string): string {
  if (f.kind === 'quarantine') return smsQuarantineText(f.days_to_restore, name);
  if (f.kind === 'expired') return `${name} expired`;
  if (f.kind === 'renewal_failed') return `${name} renewal failed`;
  // A registry finding kept as remembered (not checked this scan) has no view: said by its kind.
  if (isRegistryKind(f.kind))
    return registry.registrySmsItem(
      name,
      f.registry?.kind === f.kind ? f.registry : { kind: f.kind, date_expiry: null },
    );
  return `${name} ${f.days_left}d no renew`;
}

/** A quarantine (or one memory keeps, `remembered`) whose restore-by is known. */
export const knownRestoreBy = (f: DomainFinding): boolean => {
  const q = f.remembered?.kind === 'quarantine' ? asRemembered(f) : f;
  return q.kind === 'quarantine' && typeof q.days_to_restore === 'number';
};

/** A quarantine whose last day to restore is today or tomorrow. */
const isRestoreDue = (f: DomainFinding): boolean => {
  const left = asRemembered(f).days_to_restore;
  return typeof left === 'number' && left >= 0 && left <= 1;
};

/** One critical item of a short message: a finding, a critical change, or an unreadable quarantine record. */
export type CriticalEntry =
  | { readonly finding: Finding }
  | { readonly change: DomainChange }
  | { readonly problem: Problem };

/**
 * The critical items in the order the short messages (the SMS, chat) name them, as the digest
 * orders them: quarantines whose restore-by date is known (soonest first), unreadable records that
 * say quarantine, then the other critical findings; the critical changes (a domain that left the
 * account) before them all, save that a quarantine whose restore-by falls today or tomorrow comes
 * first: a bulk transfer out (dozens of departures, gone already) must not push out of a message
 * that names a few the domain that can still be saved today.
 */
export function criticalEntries(report: Report): CriticalEntry[] {
  const critical = report.findings.filter((f) => f.severity === 'critical');
  let known = 0;
  for (const f of critical) {
    if (!(isDomainFinding(f) && knownRestoreBy(f))) break;
    known++;
  }
  const restoreBy = critical.slice(0, known) as DomainFinding[];
  const urgent = restoreBy.filter(isRestoreDue);
  const finding = (f: Finding): CriticalEntry => ({ finding: f });
  return [
    ...urgent.map(finding),
    ...criticalChanges(report).map((change) => ({ change })),
    ...restoreBy.filter((f) => !isRestoreDue(f)).map(finding),
    ...criticalProblems(report).map((problem) => ({ problem })),
    ...critical.slice(known).map(finding),
  ];
}

/** The critical items of the SMS ({@link criticalEntries}). */
function smsItems(report: Report): SmsItem[] {
  return criticalEntries(report).map((e) => {
    if ('change' in e) return smsChange(e.change);
    if ('problem' in e) return smsProblem(e.problem, report.now);
    const f = e.finding;
    return isDomainFinding(f) ? smsItem(f) : { name: f.handle, says: (name: string) => `contact ${name}` };
  });
}

/**
 * The SMS body: critical items only, in the digest's order (critical changes such as a domain that
 * left the account, unreadable quarantine records, then the findings), no links, IDNs in punycode;
 * what it leaves out is said at its end: "+N more" critical (changes a message's cut left out
 * included) and the number of warnings, which only the e-mail lists. SNS puts {@link SMS_PREFIX} before it, so
 * the body is cut to fit 160 GSM-7 characters together with that prefix: one billed part, see
 * {@link smsAsDelivered}. The SMS is the channel for critical items, so it always names the first:
 * a name too long for the room left is cut to fit, with `...`.
 */
export function renderSms(report: Report, options: Pick<RenderOptions, 'accountLabel'> = {}): string {
  const max = SMS_MAX - gsm7Length(SMS_PREFIX);
  // A read that was not the whole account (source.incomplete) says so first: its counts are not the account's.
  const label = `${options.accountLabel ? `${toGsm7(options.accountLabel).slice(0, 20)}: ` : ''}${report.source.incomplete ? 'INCOMPLETE read; ' : ''}`;
  const changesCut = criticalChangeCount(report) - criticalChanges(report).length;
  const warning = report.summary.warning;
  const items = smsItems(report);
  if (items.length + changesCut === 0) {
    return `${label}no critical items; ${warning} warning. See e-mail.`.slice(0, max);
  }
  const head = `${label}${items.length + changesCut} critical:`;
  const tail = (remaining: number) => {
    const parts = [remaining > 0 ? `+${remaining} more` : '', warning > 0 ? `${warning} warning` : ''];
    const said = parts.filter(Boolean).join(', ');
    return said ? ` ${said}` : '';
  };
  let text = head;
  let used = 0;
  for (const [index, item] of items.entries()) {
    const rest = tail(items.length - index - 1 + changesCut);
    const candidate = `${text}${used ? ';' : ''} ${item.says(smsName(item.name))}`;
    if (gsm7Length(candidate + rest) <= max) {
      text = candidate;
      used++;
      continue;
    }
    if (index === 0) {
      // The room the name has once all else is said; the label is cut to 20 and the counts are
      // short, so it holds far more than the mark in any report.
      const room = max - gsm7Length(`${text} ${item.says('')}${rest}`);
      if (room > SMS_CUT_MARK.length) {
        text = `${text} ${item.says(smsName(item.name, room))}`;
        used++;
      }
    }
    break;
  }
  text += tail(items.length - used + changesCut);
  // A header so long that not even the count fits (a very long label) still stays within the limit.
  return gsm7Length(text) <= max ? text : text.slice(0, max);
}

/** The SMS exactly as a phone receives it from the alert topic: SNS's display-name prefix and the body. */
export const smsAsDelivered = (body: string): string => `${SMS_PREFIX}${body}`;

/** SNS refuses a subject of 100 characters or more ("less than 100 characters long", Publish). */
const SUBJECT_MAX = 99;
/** The characters of a label the subject keeps before it says its counts in fewer words. */
const SUBJECT_LABEL_KEPT = 20;

/**
 * The SNS subject: printable ASCII, one line, under 100 characters. The counts are what it is for,
 * so a label too long for the rest gives way to them (cut, with `...`); a read that was not the
 * whole account says `INCOMPLETE read` before them. Counts that would leave a label fewer than 20
 * characters say `INCOMPLETE` and `N unreadable` instead, so the account is still named.
 */
export function renderSubject(report: Report, accountLabel?: string): string {
  const label = accountLabel
    ? safeText(accountLabel)
        .replace(/[^\x20-\x7e]/g, '?')
        .trim()
    : '';
  // The room a label keeps before the counts say the same in fewer words: its first 20 characters
  // (as the SMS), so an incomplete read of a large account still says which account it is.
  const wanted = Math.min(label.length, SUBJECT_LABEL_KEPT);
  const roomBeside = (counts: string) =>
    SUBJECT_MAX - (label ? 'domain-sentinel []' : 'domain-sentinel').length - counts.length;
  const full = `: ${headline(report)}`;
  const counts = roomBeside(full) >= wanted ? full : `: ${headline(report, true)}`;
  const room = roomBeside(counts);
  const shown = label.length <= room ? label : room > 3 ? `${label.slice(0, room - 3).trimEnd()}...` : '';
  return `domain-sentinel${shown ? ` [${shown}]` : ''}${counts}`.slice(0, SUBJECT_MAX).trim();
}

/**
 * The severity the message attributes carry, the highest in the message: critical with any
 * critical item ({@link criticalCount}), else warning for a warning finding, an unreadable record
 * or a warning change (a transfer lock turned off), else info.
 */
export function alertSeverity(report: Report): Severity {
  if (criticalCount(report) > 0) return 'critical';
  if (report.summary.warning > 0 || problemCount(report) > 0 || changesOf(report).length > 0)
    return 'warning';
  return 'info';
}
