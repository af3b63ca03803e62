import {
  type DomainFinding,
  type Finding,
  isDomainFinding,
  type Severity,
  severityRank,
  summaryOf,
} from '../findings/classify';
import { isNews, newsLevel } from '../memory/group-news';
import type { PolicySet } from '../scan/policies';
import { hasUrgentDeadline, type QuietHours, quietUntil } from '../scan/quiet-hours';
import type { Report } from '../scan/scan';
import { alertSeverity } from './alert';

/**
 * Which messages one scan sends (docs/policies.md). The account's message goes to the deployment's
 * (and the account's) recipients with every domain but those a policy lets lapse; each policy with
 * recipients of its own gets a message of its group's domains alone, with the message attribute
 * `group` its subscriptions filter on. One message per group rather than one message with a group
 * attribute per domain: an SNS filter policy chooses whether a subscriber gets a message, never
 * which part of it, so an e-mail subscriber gets a digest of only its group's domains only if that
 * digest is a message of its own (and each then has SNS's 256 KB to itself). Pure.
 */

/** A message to send: its report, and the group it is for (absent: the account's message). */
export interface PlannedAlert<R extends Report> {
  readonly report: R & { readonly letting_lapse?: number };
  readonly group?: string;
}

export interface AlertPlanOptions {
  /** The deployment's MIN_SEVERITY: the level of every domain no policy sets one for. */
  readonly minSeverity: Severity;
  readonly policies?: PolicySet;
  /**
   * The memory between scans decided to publish (a change, a repeat, a summary): the account's
   * message goes out whatever the levels say. @default false: it goes out when a finding reaches its level
   */
  readonly decided?: boolean;
}

const CRITICAL = { severity: 'critical' } as const;

const isLapsing = (f: Finding): boolean => isDomainFinding(f) && f.let_lapse === true;

/** The severity from which a finding is worth an alert: its policy's minSeverity, else the deployment's. */
function levelOf(f: Finding, options: AlertPlanOptions): Severity {
  if (!isDomainFinding(f)) return options.minSeverity;
  return options.policies?.byName(f.policy)?.minSeverity ?? options.minSeverity;
}

const reaches = (f: { readonly severity: Severity }, level: Severity) =>
  severityRank(f.severity) >= severityRank(level);

function counted<R extends Report>(report: R, findings: Finding[]): R {
  return { ...report, findings, summary: summaryOf(findings) };
}

/** A change or resolution of a report with memory: the group it names (memory/state.ts InGroup). */
type Entry = {
  readonly kind?: string;
  readonly policy?: string;
  readonly let_lapse?: true;
  readonly severity: Severity;
};

/**
 * A stateful report's `changes` and `resolved` kept where `keep` says: the account's message drops
 * what its policy lets lapse, a group's keeps its own domains' (a departed one too, by the group
 * memory remembered it in). Undefined for a report without memory.
 */
function entriesWhere<R extends Report>(
  report: R,
  keep: (entry: Entry) => boolean,
): { report: R; entries: Entry[] } | undefined {
  const out = { ...report } as Record<string, unknown>;
  const entries: Entry[] = [];
  for (const list of ['changes', 'resolved'] as const) {
    const items = (report as { [k in typeof list]?: unknown })[list];
    if (!Array.isArray(items)) return undefined;
    const kept = (items as Entry[]).filter(keep);
    out[list] = kept;
    // One at a time: a spread of a bulk change's 200 000 entries overflows the call stack.
    for (const entry of kept) entries.push(entry);
  }
  return { report: out as R, entries };
}

/**
 * The messages of one scan, the account's first: none when nothing reaches its level (and no
 * unreadable record, which may hide anything) and the memory did not decide to publish. A group's
 * message goes out when news of its own (isNews, or a change or resolution of its domains) reaches
 * the group's level; it carries no unreadable records (they belong to no group: the account's
 * message lists them), but for a kept quarantine of the group the account's message announces or
 * repeats now (`news`), which it carries as the account's does.
 */
export function planAlerts<R extends Report>(report: R, options: AlertPlanOptions): PlannedAlert<R>[] {
  const lapsing = report.findings.filter(isLapsing).length;
  const kept = lapsing ? report.findings.filter((f) => !isLapsing(f)) : [...report.findings];
  const whole = counted(report, kept);
  const account = {
    ...(entriesWhere(whole, (e) => !e.let_lapse)?.report ?? whole),
    ...(lapsing ? { letting_lapse: lapsing } : {}),
  };
  const notify =
    options.decided === true ||
    report.problems.length > 0 ||
    kept.some((f) => reaches(f, levelOf(f, options)));
  if (!notify) return [];
  const plan: PlannedAlert<R>[] = [{ report: account }];
  for (const group of options.policies?.resolved ?? []) {
    const { policy } = group;
    const hasRecipients =
      policy.alertEmails?.length || policy.alertSmsNumbers?.length || policy.webhooks?.length;
    if (policy.letLapse || !hasRecipients) continue;
    const mine = kept.filter((f): f is DomainFinding => isDomainFinding(f) && f.policy === policy.name);
    const counts = counted(report, mine);
    const ofGroup = entriesWhere(counts, (e) => e.policy === policy.name);
    const own = ofGroup?.report ?? counts;
    // Its domain that left the account, or lost its transfer lock, is news to the group too.
    // Its kept quarantine the account's message announces or repeats now (kept-quarantine.ts keptNews).
    const ownKept = report.problems.filter((p) => p.news === true && p.policy === policy.name);
    const news = [...mine.filter(isNews), ...(ofGroup?.entries ?? []), ...ownKept.map(() => CRITICAL)];
    if (!news.some((f) => reaches({ severity: newsLevel(f) }, group.minSeverity))) continue;
    plan.push({
      group: policy.name,
      report: {
        ...own,
        problems: ownKept,
        source: { ...own.source, group: policy.name },
        policy: {
          ...own.policy,
          expiry_days: group.classify.expiryDays,
          critical_days: group.classify.criticalDays,
        },
      },
    });
  }
  return plan;
}

/** The label of a group's message in its subject, digest and SMS: `Brand A, group vip`. */
export const groupLabel = (
  accountLabel: string | undefined,
  group: string | undefined,
): string | undefined =>
  group === undefined ? accountLabel : accountLabel ? `${accountLabel}, group ${group}` : `group ${group}`;

/** What happens to a message's SMS: sent with it, or held until a local time of the alert's zone. */
export type SmsDisposition = { readonly sms: 'send' } | { readonly sms: 'held'; readonly until: string };

/**
 * Whether the SMS of a message waits for the end of the quiet hours: only when the message would
 * reach SMS at all (critical), it is sent in the window, and no critical item has a deadline within
 * 48 hours (quiet-hours.ts). Undefined without quiet hours: the message then carries no `sms` attribute.
 */
export function smsDisposition(
  report: Report,
  quiet: { readonly hours?: QuietHours; readonly timeZone: string; readonly now: number },
): SmsDisposition | undefined {
  if (!quiet.hours) return undefined;
  if (alertSeverity(report) !== 'critical') return { sms: 'send' };
  const until = quietUntil(quiet.now, quiet.hours, quiet.timeZone);
  if (until === null || hasUrgentDeadline(report, quiet.now)) return { sms: 'send' };
  return { sms: 'held', until };
}

/** Whom one subscription of the alert topic serves. */
export interface RecipientScope {
  /** Only these accounts' messages (a recipient of accounts in an accounts file). @default every account */
  readonly accounts?: readonly string[];
  /** Only these groups' own messages; absent: the account's messages. */
  readonly groups?: readonly string[];
  /** An SMS subscription: critical messages only. */
  readonly sms: boolean;
}

/** What the deployment publishes besides the account's one message. */
export interface TopicFeatures {
  /** Some policy has recipients of its own: groups' messages (attribute `group`) are published too. */
  readonly groups: boolean;
  /** SMS_QUIET_HOURS is set: every message carries `sms`, and a held SMS is released alone later. */
  readonly quietHours: boolean;
}

/** One condition of an SNS filter policy: a value, `{"exists": false}`, or `{"anything-but": value}`. */
export type FilterCondition = string | { readonly exists: boolean } | { readonly 'anything-but': string };

/** An SNS filter policy on message attributes: each key's allowed values. */
export type FilterPolicy = Readonly<Record<string, ReadonlyArray<FilterCondition>>>;

/**
 * The filter policy of one subscription of the alert topic (lib/alerts.ts makes the stack's with
 * it; undefined: none). A recipient of the account's messages does not take a group's message
 * (`group` must be absent) once there are groups; a group's recipient takes its group's alone. With
 * quiet hours an SMS takes `sms` = `send` or `release` (the SMS alone, once the window ends) and
 * any other subscription `send` or `held`, so the release reaches phones only. Each says so with
 * one `anything-but` rather than two values: every message then carries `sms` (`send` or `held`
 * from alertMessageOf, `release` from the held SMS's schedule), so it is as exact, and it keeps the
 * filter's combinations of values, which SNS caps at 150, from doubling.
 */
export function filterPolicyOf(scope: RecipientScope, features: TopicFeatures): FilterPolicy | undefined {
  const policy: Record<string, ReadonlyArray<FilterCondition>> = {};
  if (scope.accounts) policy.account = [...scope.accounts];
  if (scope.groups) policy.group = [...scope.groups];
  else if (features.groups) policy.group = [{ exists: false }];
  if (scope.sms) policy.severity = ['critical'];
  if (features.quietHours) policy.sms = [{ 'anything-but': scope.sms ? 'held' : 'release' }];
  return Object.keys(policy).length ? policy : undefined;
}
