import { cutText, displayDomain, plural, safeText } from '../base/text';
import { type DomainFinding, daysLeft, type Finding, isDomainFinding } from '../findings/classify';
import {
  changeNextStep,
  inferredExpiry,
  nextStep,
  rememberedWords,
  restoreKeptStep,
} from '../findings/next-step';
import type { ChangeKind, DomainChange } from '../memory/state';
import type { Problem } from '../reseller/client';
import { ACCOUNT_NAME } from '../scan/accounts';
import type { Report } from '../scan/scan';
import {
  criticalCount,
  criticalEntries,
  dateFormat,
  describeDomainFinding,
  headline,
  problemCount,
  unreadableCount,
  unreadableSays,
} from './alert';
import { CHANGE_WORDS } from './digest-changes';
import { type AlertMessage, reportJsonOf } from './message';

/**
 * What a scan says in a team's chat. Three formats share one reading of the report (the items
 * below): the custom notification Amazon Q Developer in chat applications (AWS Chatbot) delivers
 * to Slack and Teams channels, and the Slack and Teams webhook bodies (webhook-formats.ts).
 *
 * Text from the reseller API is data. Chat clients render markdown, mentions (`<!channel>`,
 * `@here`, `<at>`), links and emoji codes, so a name is shown in a form none of them can read as
 * markup: every character that is not a letter, digit, mark, dot, hyphen, parenthesis or space
 * is written as a visible `\uXXXX` escape (a real domain name has none, so it reads as it is),
 * and in markdown formats it sits in a code span besides, which no client links or formats.
 */

/**
 * The documented limits of a custom notification (Amazon Q Developer in chat applications, "Custom
 * notifications", parameter details). Characters, not bytes.
 */
export const CUSTOM_NOTIFICATION_LIMITS = {
  title: 250,
  description: 8_000,
  nextStep: 350,
  keyword: 75,
} as const;

/** Items listed in detail in a chat message at most; the rest are counted ("and N more"). */
export const CHAT_DETAIL_LIMIT = 40;

/** One thing the chat says about a domain (or a contact, or an unreadable record). */
export interface ChatItem {
  readonly severity: 'critical' | 'warning';
  /** The name, already in its chat-safe form ({@link chatName}). */
  readonly name: string;
  /** What is wrong, in words, chat-safe ({@link chatPlain}). */
  readonly what: string;
  /** What to do about it and by when, chat-safe (findings/next-step.ts). */
  readonly next: string;
  /** Its one link: the finding's page (restore, snooze, acknowledge), or the restore link of a report without pages. */
  readonly link?: string;
}

/** A character shown as a visible escape: `\u003c`. */
const escapeChar = (ch: string): string =>
  [...ch].map((c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`).join('');

/**
 * A name as chat shows it: the alert's display form (punycode first, then the Unicode form; control
 * and bidi characters already escaped), with every character other than letters, digits, marks,
 * `.`, `-`, `(`, `)`, space, `…` (a cut) and the backslash of an escape written as `\uXXXX`. `<!channel>`,
 * `@here`, `*bold*`, `[x](https://…)` and `:emoji:` cannot survive it as markup.
 */
export function chatName(name: string): string {
  // Cut as the digest cuts it: one record with a name of megabytes must not fill a chat body and push out the others.
  return cutText(displayDomain(name), CHAT_NAME_MAX).replace(CHAT_NAME_UNSAFE, escapeChar);
}

/** What chatName writes as `\uXXXX`. */
const CHAT_NAME_UNSAFE = /[^\p{L}\p{N}\p{M}.() \\…-]/gu;
/** A name's display form is cut to this many characters in chat, as in the digest (digest.ts). */
const CHAT_NAME_MAX = 520;

/**
 * Running text of our own that may carry a value from the API (a TLD, a reason): safeText, then
 * anything outside plain prose punctuation written as `\uXXXX`, so no markup character from the API
 * survives. Our own sentences read unchanged: an underscore inside a word (`QUARANTINE_DAYS`,
 * `date_deleted`) is kept, as no chat markdown reads one there as emphasis.
 */
export function chatPlain(text: string): string {
  return safeText(text).replace(/[^\p{L}\p{N}\p{M}\p{Zs}.,:;()'/%+=\\-]/gu, (ch, at: number, all: string) =>
    ch === '_' && WORD.test(all[at - 1] ?? '') && WORD.test(all[at + 1] ?? '') ? ch : escapeChar(ch),
  );
}

const WORD = /^[\p{L}\p{N}]$/u;

/**
 * A link of ours as chat markdown shows it bare (clients link it themselves): every character that
 * markdown or a mention could read (`* _ ~ ( ) ! ' @ < > |` and the like, which a domain name in the
 * path may bring) percent-encoded, which means the same to the server.
 */
export const chatUrl = (url: string): string =>
  url.replace(/[^A-Za-z0-9\-.:/?&=%#+,;$]/g, (ch) =>
    [...new TextEncoder().encode(ch)]
      .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
      .join(''),
  );

/** `name` as inline code in markdown: the chat-safe form holds no backtick, so it cannot close the span. */
export const codeSpan = (name: string): string => `\`${name}\``;

function domainItem(f: DomainFinding, now: string, day: (iso: string) => string): ChatItem {
  return {
    severity: f.severity === 'critical' ? 'critical' : 'warning',
    name: chatName(f.domain_name),
    what: chatPlain(describeDomainFinding(f, now, day)),
    next: chatPlain(nextStep(f, day)),
    ...(f.actions?.page || f.restore_url ? { link: f.actions?.page ?? f.restore_url } : {}),
  };
}

/**
 * A critical problem record; a kept quarantine's next step names the restore-by memory knows
 * (`day`), and that it has passed once it has, as a kept quarantine finding's does.
 */
const unreadableItem = (p: Problem, now: string, day: (iso: string) => string): ChatItem => ({
  severity: 'critical',
  name: chatName(p.key ?? '(no name)'),
  what: unreadableSays(p, day),
  next:
    p.kept_quarantine || p.remembered_kind === 'quarantine'
      ? chatPlain(
          `Check it in the reseller's control panel now. ${restoreKeptStep({ restore_by: p.restore_by ?? null, days_to_restore: p.restore_by ? daysLeft(Date.parse(p.restore_by), Date.parse(now)) : null }, day)}`,
        )
      : p.remembered_expiry
        ? chatPlain(
            `Check it in the reseller's control panel now: ${inferredExpiry(p.remembered_expiry, day)}; renew or restore it there if it has not been renewed.`,
          )
        : p.remembered_kind
          ? chatPlain(
              `Check it in the reseller's control panel now: it was last read ${rememberedWords(p.remembered_kind)}; renew or restore it there if it still is.`,
            )
          : "Check it in the reseller's control panel now: restore it there if it is in quarantine.",
});

/**
 * A critical change (a domain that left the account) in our own words, which need no escaping (they
 * hold a `?`, which chatPlain would write as an escape); a kind this version does not know is API
 * text, escaped.
 */
const changeItem = (c: DomainChange): ChatItem => ({
  severity: 'critical',
  name: chatName(c.domain_name),
  what: Object.hasOwn(CHANGE_WORDS, c.kind)
    ? CHANGE_WORDS[c.kind as ChangeKind]
    : chatPlain(c.kind.replace(/_/g, ' ')),
  next: chatPlain(changeNextStep(c)),
});

/**
 * The report's critical and warning items in the order people act on them: the critical ones as
 * the SMS names them (criticalEntries: a quarantine on its last day to restore, critical changes,
 * quarantines by restore-by, unreadable records that say quarantine, the other critical findings),
 * then the warnings as the report orders them. Info is left to the report.
 */
export function chatItems(report: Report, timeZone = 'UTC'): ChatItem[] {
  const { day } = dateFormat(timeZone);
  const findingItem = (f: Finding): ChatItem =>
    isDomainFinding(f)
      ? domainItem(f, report.now, day)
      : {
          severity: 'warning',
          name: chatName(f.handle),
          what: 'contact validation pending: the registry may suspend the domains it holds',
          next: chatPlain(nextStep(f)),
        };
  return [
    ...criticalEntries(report).map((e) =>
      'change' in e
        ? changeItem(e.change)
        : 'problem' in e
          ? unreadableItem(e.problem, report.now, day)
          : findingItem(e.finding),
    ),
    ...(report.findings as readonly Finding[]).filter((f) => f.severity === 'warning').map(findingItem),
  ];
}

/**
 * How many critical and warning items the whole account has: the report's `summary` (which covers
 * every finding even when SNS's size cut the list) plus unreadable records that say quarantine and
 * critical changes (alert.ts criticalCount). "and N more" is counted from these, so nothing a cut
 * left out goes uncounted.
 */
export function chatCounts(report: Report): {
  readonly critical: number;
  readonly warning: number;
  readonly total: number;
} {
  const critical = criticalCount(report);
  const warning = report.summary.warning;
  return { critical, warning, total: critical + warning };
}

/**
 * `… and 12 more (2 critical, 10 warning): see the full report`: what a chat body left out, per
 * severity, after showing the first `shown` of `items` (which list critical first). Empty when nothing was.
 */
export function leftOutLine(report: Report, items: readonly ChatItem[], shown: number): string {
  const counts = chatCounts(report);
  const shownCritical = Math.min(shown, items.filter((i) => i.severity === 'critical').length);
  const critical = Math.max(0, counts.critical - shownCritical);
  const warning = Math.max(0, counts.warning - (shown - shownCritical));
  if (critical + warning === 0) return '';
  return `… and ${critical + warning} more (${critical} critical, ${warning} warning): ${report.report_url ? 'see the full report' : 'run a scan with --json for all of them'}`;
}

/** What chat messages are told besides the report: the zone of dates and the account's name. */
export interface ChatOptions {
  /** IANA zone dates are shown in. @default 'UTC' */
  readonly timeZone?: string;
  /** The account's name (ACCOUNT_LABEL, or the `account` a message carries). @default - none */
  readonly accountLabel?: string;
  /** Items in detail at most. @default CHAT_DETAIL_LIMIT */
  readonly detailLimit?: number;
}

/**
 * `domain-sentinel (Acme): 3 critical, 2 warning`, chat-safe. Past `max` characters the counts are
 * said in fewer words (headline's terse), so a cut to `max` takes no count's end.
 */
export function chatTitle(report: Report, accountLabel?: string, max = Number.POSITIVE_INFINITY): string {
  const label = accountLabel ? ` (${chatPlain(accountLabel)})` : '';
  const title = `domain-sentinel${label}: ${headline(report)}`;
  return title.length <= max ? title : `domain-sentinel${label}: ${headline(report, true)}`;
}

/** The custom-notification event (version 1.0) as Amazon Q Developer in chat applications reads it from SNS. */
export interface ChatNotification {
  readonly version: '1.0';
  readonly source: 'custom';
  readonly id: string;
  readonly content: {
    readonly textType: 'client-markdown';
    readonly title: string;
    readonly description: string;
    readonly nextSteps?: readonly string[];
    readonly keywords?: readonly string[];
  };
  readonly metadata: {
    readonly threadId: string;
    readonly summary: string;
    readonly eventType: string;
    readonly additionalContext: Readonly<Record<string, string>>;
  };
}

/** `2026-11-22` in `timeZone`: the day a scan belongs to, so one day's alerts share a thread. */
function dayKey(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    timeZone,
  }).format(new Date(iso));
}

/** `acme-reseller`: a label as an id part (threadId and id are ids, not text to read). */
const slug = (label: string | undefined): string =>
  (label ?? '')
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);

/** One item in the description: `- \`name\`: what`, its next step, and its link. */
function itemLine(item: ChatItem): string {
  const link = item.link ? `\n  Act: ${chatUrl(item.link)}` : '';
  return `- ${codeSpan(item.name)}: ${item.what}\n  Next: ${item.next}${link}`;
}

/**
 * The scan's message for Slack and Teams channels through Amazon Q Developer in chat applications:
 * a title with the counts, a description that lists critical items first (restore-by dates and
 * restore links), next steps, keywords, and a thread per day. What does not fit the description's
 * 8 000 characters is counted ("and N more", with the report's link), never left out silently.
 */
export function buildChatNotification(report: Report, options: ChatOptions = {}): ChatNotification {
  const timeZone = options.timeZone ?? 'UTC';
  const limits = CUSTOM_NOTIFICATION_LIMITS;
  const title = cutText(chatTitle(report, options.accountLabel, limits.title), limits.title);
  const items = chatItems(report, timeZone);
  const reportUrl = report.report_url ? chatUrl(report.report_url) : undefined;
  const counts = chatCounts(report);
  const description = chatDescription(report, items, {
    timeZone,
    reportUrl,
    detailLimit: options.detailLimit ?? CHAT_DETAIL_LIMIT,
  });
  const nextSteps = chatNextSteps(report, items, reportUrl);
  const label = options.accountLabel ? chatPlain(options.accountLabel) : undefined;
  const keywords = ['domain-sentinel', `${counts.critical} critical`, ...(label ? [label] : [])].map((k) =>
    cutText(k, limits.keyword),
  );
  const day = dayKey(report.now, timeZone);
  // An account of several is threaded by its name, unique in the deployment: two labels may slug alike.
  const account = report.source?.account;
  const threadKey = account && ACCOUNT_NAME.test(account) ? account : slug(options.accountLabel);
  const threadId = ['domain-sentinel', threadKey, day].filter(Boolean).join('-');
  return {
    version: '1.0',
    source: 'custom',
    id: `${threadId}-${Date.parse(report.generated_at) || 0}`,
    content: {
      textType: 'client-markdown',
      title,
      description,
      ...(nextSteps.length ? { nextSteps: nextSteps.map((s) => cutText(s, limits.nextStep)) } : {}),
      keywords,
    },
    metadata: {
      threadId,
      summary: cutText(title, limits.title),
      eventType: 'domain-sentinel-alert',
      additionalContext: {
        critical: String(counts.critical),
        warning: String(report.summary.warning),
        domainsScanned: String(report.stats.domains_scanned),
        unreadableRecords: String(unreadableCount(report)),
      },
    },
  };
}

/**
 * The notification's description: the report link, the items by severity as many as fit the
 * description's limit (at most `detailLimit`), a line for what was left out, and the footer.
 */
function chatDescription(
  report: Report,
  items: readonly ChatItem[],
  options: {
    readonly timeZone: string;
    readonly reportUrl: string | undefined;
    readonly detailLimit: number;
  },
): string {
  const { time } = dateFormat(options.timeZone);
  const limit = CUSTOM_NOTIFICATION_LIMITS.description;
  const footer = `Scanned ${plural(report.stats.domains_scanned, 'domain')} at ${time(report.now)}.`;
  const head = options.reportUrl ? [`Full report: ${options.reportUrl}`, ''] : [];
  const lines: string[] = [];
  let shown = 0;
  let section: ChatItem['severity'] | undefined;
  const counts = chatCounts(report);
  const tail = (count: number) => {
    const line = leftOutLine(report, items, count);
    return line ? ['', line] : [];
  };
  const compose = (body: readonly string[], count: number) =>
    [...head, ...body, ...tail(count), '', footer].join('\n');
  for (const item of items) {
    if (shown >= options.detailLimit) break;
    const heading =
      item.severity !== section
        ? [...(section ? [''] : []), `${item.severity.toUpperCase()} (${counts[item.severity]})`]
        : [];
    const candidate = [...lines, ...heading, itemLine(item)];
    if (compose(candidate, shown + 1).length > limit) break;
    lines.push(...heading, itemLine(item));
    section = item.severity;
    shown++;
  }
  if (items.length === 0)
    lines.push(
      unreadableCount(report)
        ? 'Nothing critical or urgent among the records that could be read.'
        : 'Nothing critical or urgent.',
    );
  // Only a report link longer than the whole budget could still pass it: cut it rather than fail.
  return cutText(compose(lines, shown), limit);
}

/** What to do next, as the notification's own list: one line per kind of work the items need. */
function chatNextSteps(report: Report, items: readonly ChatItem[], reportUrl: string | undefined): string[] {
  const nextSteps: string[] = [];
  if (items.some((i) => i.link))
    nextSteps.push(
      "Open each item's link: its page says what to do by when, and offers restore, snooze and acknowledge (each asks to confirm).",
    );
  if (items.some((i) => /expires|expired|renewal/.test(i.what)))
    nextSteps.push("Renew the expiring domains, or turn auto-renew on, in the reseller's control panel.");
  const unread = unreadableCount(report);
  if (unread)
    nextSteps.push(
      `${plural(unread, 'record')} could not be read: check ${unread === 1 ? 'it' : 'them'} in the reseller's control panel.`,
    );
  const read = problemCount(report) - unread;
  if (read > 0)
    nextSteps.push(
      `${plural(read, 'record')} ${read === 1 ? 'says' : 'say'} something to look at: see each one's reason.`,
    );
  if (reportUrl && reportUrl.length + 13 <= CUSTOM_NOTIFICATION_LIMITS.nextStep)
    nextSteps.push(`Full report: ${reportUrl}`);
  return nextSteps;
}

/**
 * The custom notification of the alert SNS is about to carry: built from the message's own JSON
 * variant (the report as cut to fit SNS), so chat, webhooks and the JSON subscribers read one report.
 */
export function chatNotificationOf(alert: AlertMessage, options: ChatOptions = {}): ChatNotification {
  return buildChatNotification(JSON.parse(reportJsonOf(alert)) as Report, options);
}
