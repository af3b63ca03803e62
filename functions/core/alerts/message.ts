import { cutText } from '../base/text';
import type { Severity } from '../findings/classify';
import { jsonElement } from '../memory/report-json';
import { responseBytes } from '../memory/report-view';
import type { Report } from '../scan/scan';
import { KEY_MAX, unreadIn } from '../scan/scan-problems';
import {
  alertSeverity,
  criticalCount,
  criticalIn,
  type RenderOptions,
  renderSms,
  renderSubject,
  SNS_MAX_BYTES,
} from './alert';
import { composeDigest, DIGEST_MAX_BYTES, type DigestCounts } from './digest';

/**
 * The one SNS message of a scan (MessageStructure json): `email` the digest, `sms` the SMS, and
 * `default` the JSON report, once. SNS gives `default` to every protocol without its own key
 * (sqs, lambda, http, https, email-json, firehose), so one copy serves every program.
 *
 * The whole publish stays within SNS's 256 KB as SNS counts it: the message, the subject and every
 * message attribute's name, type and value. The e-mail comes first: when the report and the digest
 * do not both fit whole, the JSON is the claim check of the report the scan keeps (its summary, the
 * findings that fit in priority order, `truncated: true`, what was left out, and `report_json_url`
 * to fetch the whole), and the digest gets what it needs to name every critical and warning item.
 */

/** What the message carries, as a publish sends it. */
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
    /**
     * `true` when the message escalates a critical finding nobody acted on (docs/policies.md): the
     * escalation recipients' subscriptions take only these.
     */
    readonly escalation?: 'true';
  };
  /** Findings the JSON in the message leaves out (the whole report is behind its link). */
  readonly findingsCut: number;
  /** Unreadable records the JSON in the message leaves out. */
  readonly problemsCut: number;
  /** `whole`: the report in full; `linked`: cut, with `report_json_url`; `cut`: cut, and no link base to point to the whole. */
  readonly json: 'whole' | 'linked' | 'cut';
  /** What the digest named and left out, per severity. */
  readonly digest: DigestCounts;
}

/**
 * The longest value of the `sms` attribute, which quiet hours add after the message is built
 * (publish-alert.ts): every size is measured with it, so the publish fits with any disposition.
 */
const SMS_DISPOSITION_RESERVED: NonNullable<AlertMessage['attributes']['sms']> = 'release';
/** A publish's bytes as SNS counts them, with the longest SMS disposition quiet hours may yet add. */
const measuredWith =
  (subject: string, attributes: AlertMessage['attributes']) =>
  (message: string): number =>
    snsPublishBytes({ subject, message, attributes: { ...attributes, sms: SMS_DISPOSITION_RESERVED } });
/** Room the JSON keeps for findings when the digest would take everything (a program reads the first ones). */
const JSON_FINDINGS_RESERVE = 24 * 1024;
/** A problem's reason is cut to this many characters in the message. */
const REASON_MAX = 300;
const PROBLEMS_KEPT = 100;
/**
 * The most the unreadable records take in the JSON before the digest is given its room: a key or
 * reason of quotes or control characters is escaped twice in the message (a control character
 * seven bytes), and a hundred of them would leave the e-mail no room to name anything.
 */
const PROBLEMS_MAX_BYTES = 48 * 1024;

/**
 * The bytes SNS counts for a publish: the message, the subject, and each attribute's name, data
 * type and value (UTF-8). This is what must stay within {@link SNS_MAX_BYTES}.
 */
export function snsPublishBytes(alert: Pick<AlertMessage, 'subject' | 'message' | 'attributes'>): number {
  let n = Buffer.byteLength(alert.message, 'utf8') + Buffer.byteLength(alert.subject, 'utf8');
  for (const [name, value] of Object.entries(alert.attributes)) {
    if (value === undefined) continue;
    const type = typeof value === 'number' ? 'Number' : 'String';
    n += Buffer.byteLength(name, 'utf8') + type.length + Buffer.byteLength(String(value), 'utf8');
  }
  return n;
}

/**
 * The most the changes and resolved entries of a report with memory take in the message (as SNS
 * counts them): they are capped at 100 each (capForMessage), but a watched field of control
 * characters is written seven bytes a character, and a hundred of those would leave no room for the
 * digest, or none for the message at all.
 */
const CHANGES_MAX_BYTES = 48 * 1024;

type WithChanges = Report & {
  readonly changes?: readonly { readonly severity: Severity }[];
  readonly resolved?: readonly unknown[];
  readonly changes_truncated?: {
    readonly changes_omitted: number;
    readonly resolved_omitted: number;
    readonly critical_changes_omitted: number;
  };
};

/**
 * The report with fewer changes and resolved entries when they take more than
 * {@link CHANGES_MAX_BYTES}: critical changes kept (a domain that left the account), then as many
 * of the others and of the resolved as fit, in their order; what was left out is added to
 * `changes_truncated`, so every form still counts it. The whole report behind the link has them all.
 */
function boundedChanges(report: Report): Report {
  const { changes, resolved, changes_truncated: cut } = report as WithChanges;
  if (!Array.isArray(changes) || !Array.isArray(resolved)) return report;
  const sized = (list: readonly unknown[]) =>
    list.reduce<number>((n, e) => n + responseBytes(JSON.stringify(e)) + 1, 0);
  const keptWith = (others: number) => {
    let n = 0;
    return changes.filter((c) => c.severity === 'critical' || n++ < others);
  };
  let others = Math.max(changes.length, resolved.length);
  const within = (k: number) =>
    sized(keptWith(k).map((c) => jsonElement('changes', c))) + sized(resolved.slice(0, k)) <=
    CHANGES_MAX_BYTES;
  if (within(others)) return report;
  while (others > 0 && !within(others)) others = Math.floor(others / 2);
  const kept = keptWith(others);
  return {
    ...report,
    changes: kept,
    resolved: resolved.slice(0, others),
    changes_truncated: {
      changes_omitted: (cut?.changes_omitted ?? 0) + changes.length - kept.length,
      resolved_omitted: (cut?.resolved_omitted ?? 0) + Math.max(0, resolved.length - others),
      critical_changes_omitted: cut?.critical_changes_omitted ?? 0,
    },
  } as Report;
}

/** An unreadable record as the message carries it: key and reason cut (a hostile record can hold megabytes). */
const messageProblem = (p: Report['problems'][number]) =>
  p.reason.length > REASON_MAX || (p.key?.length ?? 0) > KEY_MAX
    ? { ...p, key: p.key === null ? null : cutText(p.key, KEY_MAX), reason: cutText(p.reason, REASON_MAX) }
    : p;

/**
 * What a cut JSON's `omitted` says of the problem records past the first `kept`: how many, how many
 * of them could not be read, and how many critical items the cut takes away (chat and webhooks read
 * this JSON: the kept and the left out together count what the whole did, alert.ts criticalCount).
 * A kept record of a domain whose critical finding the cut left out (past the first `findingsKept`)
 * is counted from the JSON in its finding's stead, so the cut takes that one away here (which can
 * leave `critical_problems` below zero).
 */
const problemsLeftOut = (report: Report, findingsKept: number, kept: number) => ({
  problems: Math.max(0, report.problems.length - kept),
  unread_problems: unreadIn(report.problems.slice(kept)),
  critical_problems:
    criticalIn(report.problems, report.findings) -
    criticalIn(report.problems.slice(0, kept), report.findings.slice(0, findingsKept)),
});

/**
 * The report cut to `findingLimit` findings and the first `problemLimit` problem records (names and
 * reasons cut as in the message), the cut stated in it as in the message's JSON (`truncated: true`,
 * `omitted`): for the log.
 */
export function truncateReport(
  report: Report,
  findingLimit: number,
  problemLimit = PROBLEMS_KEPT,
): Report & { truncated?: true; omitted?: { findings: number } & ReturnType<typeof problemsLeftOut> } {
  const kept = report.problems.slice(0, problemLimit).map(messageProblem);
  const whole = report.findings.length <= findingLimit && report.problems.length <= problemLimit;
  if (whole && kept.every((p, i) => p === report.problems[i])) return report;
  return {
    ...report,
    findings: report.findings.slice(0, findingLimit),
    problems: kept,
    ...(whole
      ? {}
      : {
          truncated: true as const,
          omitted: {
            findings: Math.max(0, report.findings.length - findingLimit),
            ...problemsLeftOut(report, findingLimit, problemLimit),
          },
        }),
  };
}

/** How many of the first unreadable records the JSON keeps: at most {@link PROBLEMS_KEPT}, within {@link PROBLEMS_MAX_BYTES}. */
function problemsKept(problems: Report['problems']): number {
  let used = 0;
  let n = 0;
  for (const p of problems.slice(0, PROBLEMS_KEPT)) {
    // Escaped as the content of the `default` string, with its comma.
    used += responseBytes(JSON.stringify(messageProblem(p))) + 1;
    if (used > PROBLEMS_MAX_BYTES) break;
    n++;
  }
  return n;
}

/** The names from the API a finding carries, each of which a hostile record can make megabytes long. */
const FINDING_NAMES = ['domain_name', 'handle', 'name', 'company_name', 'email'] as const;

/** `value` with its API names cut to KEY_MAX; the same object when none is longer. */
function cutNames(value: object): object {
  const fields = value as Record<string, unknown>;
  const long = FINDING_NAMES.filter((k) => {
    const text = fields[k];
    return typeof text === 'string' && text.length > KEY_MAX;
  });
  if (long.length === 0) return value;
  const out = { ...fields };
  for (const k of long) out[k] = cutText(out[k] as string, KEY_MAX);
  return out;
}

/**
 * A finding as the message carries it: names and the registrant's details cut, so one record with
 * a name of megabytes cannot push every other finding out of the JSON (and out of chat and the
 * webhooks, which read it). The whole report behind its link keeps them as they came.
 */
function messageFinding(element: object): { readonly value: object; readonly cut: boolean } {
  const registrant = (element as { registrant?: object | null }).registrant;
  const shortRegistrant = registrant ? cutNames(registrant) : registrant;
  const short = cutNames(element);
  if (short === element && shortRegistrant === registrant) return { value: element, cut: false };
  return { value: { ...short, ...(registrant ? { registrant: shortRegistrant } : {}) }, cut: true };
}

/** The report's JSON in parts: the small fields, each finding's text and each problem's, sized as SNS counts them. */
class JsonParts {
  readonly findings: string[] = [];
  readonly findingBytes: number[] = [];
  /** Findings whose names were cut to fit (messageFinding): the JSON is then not the whole report. */
  namesCut = 0;
  constructor(readonly report: Report) {}

  /** The text of finding `i` (with its next step, worked out from the names as they came), made once. */
  finding(i: number): string {
    let text = this.findings[i];
    if (text === undefined) {
      const shown = messageFinding(jsonElement('findings', this.report.findings[i]) as object);
      if (shown.cut) this.namesCut++;
      text = JSON.stringify(shown.value);
      this.findings[i] = text;
      // Escaped as the content of the `default` string, with its comma.
      this.findingBytes[i] = responseBytes(text) + 1;
    }
    return text;
  }

  /** The number of findings whose bytes together stay within `budget` (in order). */
  fitting(budget: number): number {
    let used = 0;
    let n = 0;
    for (; n < this.report.findings.length; n++) {
      this.finding(n);
      used += this.findingBytes[n] as number;
      if (used > budget) break;
    }
    return n;
  }

  /** The JSON text with the first `findings` findings and `problems` problems; cut means stated so. */
  text(findings: number, problems: number): string {
    const r = this.report;
    const whole = findings >= r.findings.length && problems >= r.problems.length;
    const small: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(r))
      if (key !== 'findings' && key !== 'problems')
        small[key] =
          key === 'changes' && Array.isArray(value) ? value.map((c) => jsonElement('changes', c)) : value;
    Object.assign(small, {
      ...(whole
        ? {}
        : {
            truncated: true,
            omitted: {
              findings: r.findings.length - findings,
              ...problemsLeftOut(r, findings, problems),
            },
          }),
    });
    const list = Array.from({ length: Math.min(findings, r.findings.length) }, (_, i) => this.finding(i));
    const kept = r.problems.slice(0, problems).map(messageProblem);
    const head = JSON.stringify(small).slice(0, -1);
    return `${head}${head === '{' ? '' : ','}"findings":[${list.join(',')}],"problems":${JSON.stringify(kept)}}`;
  }
}

/** Whether the report escalates something nobody acted on: a finding, or a kept quarantine's problem record (memory/kept-quarantine.ts). */
const escalates = (report: Report): boolean =>
  report.findings.some(
    (f) => (f as { readonly escalated_after_hours?: number }).escalated_after_hours !== undefined,
  ) || report.problems.some((p) => p.escalated_after_hours !== undefined);

/**
 * Builds the one SNS message of a scan within SNS's 256 KB (see the module comment): the JSON whole
 * when it and the full digest fit, else linked, with the digest naming what matters first.
 */
export function buildAlertMessage(whole: Report, options: RenderOptions = {}): AlertMessage {
  const report = boundedChanges(whole);
  const sms = renderSms(report, options);
  const subject = renderSubject(report, options.accountLabel);
  const attributes = {
    severity: alertSeverity(report),
    critical_count: criticalCount(report),
    warning_count: report.summary.warning,
    ...(report.source?.account ? { account: report.source.account } : {}),
    ...(report.source?.group ? { group: report.source.group } : {}),
    ...(escalates(report) ? { escalation: 'true' as const } : {}),
  };
  const envelope = (json: string, digest: string) => JSON.stringify({ default: json, email: digest, sms });
  const bytesOf = measuredWith(subject, attributes);
  const parts = new JsonParts(report);
  const problems = Math.min(report.problems.length, PROBLEMS_KEPT);
  const frameWith = (kept: number) => bytesOf(envelope(parts.text(0, kept), '')) + 64;

  // Whole: the report in full and the digest naming every item in full, if both fit.
  const findingsBudget = SNS_MAX_BYTES - frameWith(problems);
  const problemsWhole =
    problems === report.problems.length && report.problems.every((p) => messageProblem(p) === p);
  if (problemsWhole && parts.fitting(findingsBudget) === report.findings.length && parts.namesCut === 0) {
    const json = parts.text(report.findings.length, problems);
    const room = SNS_MAX_BYTES - bytesOf(envelope(json, ''));
    const digest = composeDigest(report, { ...options, budgetBytes: Math.max(0, room) });
    const message = envelope(json, digest.text);
    if (bytesOf(message) <= SNS_MAX_BYTES && digest.allFull) return done(message, 'whole', 0, 0, digest);
  }

  // Linked: the digest first (up to what leaves the JSON room for its first findings and the
  // unreadable records within PROBLEMS_MAX_BYTES), then the JSON.
  let kept = problemsKept(report.problems);
  let digest = composeDigest(report, {
    ...options,
    budgetBytes: Math.min(DIGEST_MAX_BYTES, SNS_MAX_BYTES - frameWith(kept) - JSON_FINDINGS_RESERVE),
  });
  let fit = parts.fitting(SNS_MAX_BYTES - bytesOf(envelope(parts.text(0, kept), digest.text)) - 64);
  let message = envelope(parts.text(fit, kept), digest.text);
  // The estimate holds in practice; this settles any byte it missed, then unreadable records give way.
  while (bytesOf(message) > SNS_MAX_BYTES && (fit > 0 || kept > 0)) {
    if (fit > 0) fit--;
    else kept--;
    message = envelope(parts.text(fit, kept), digest.text);
  }
  if (bytesOf(message) > SNS_MAX_BYTES) {
    // The small fields or the digest's fixed parts alone pass the limit (fit and kept are 0 here):
    // SNS would refuse the publish, and no one hear of any finding. The lean form links the report.
    ({ message, digest } = leanForm(report, options, envelope, bytesOf));
  }
  return done(
    message,
    report.report_json_url ? 'linked' : 'cut',
    report.findings.length - fit,
    report.problems.length - kept,
    digest,
  );

  function done(
    text: string,
    json: AlertMessage['json'],
    findingsCut: number,
    problemsCut: number,
    counts: DigestCounts,
  ): AlertMessage {
    return {
      subject,
      message: text,
      attributes,
      findingsCut,
      problemsCut,
      json,
      digest: { named: counts.named, leftOut: counts.leftOut },
    };
  }
}

/** The fields the lean form of the JSON keeps ({@link leanMessage}): what says what the report is and where. */
const LEAN_FIELDS = [
  'generated_at',
  'now',
  'summary',
  'stats',
  'report_url',
  'report_json_url',
  'calendar_url',
];
const LEAN_SOURCE_FIELDS = [
  'base_url',
  'account',
  'account_label',
  'time_zone',
  'group',
  'mode',
  'read',
  'incomplete',
];
/** Characters a kept field of the lean form holds at most (a link is far shorter). */
const LEAN_FIELD_MAX = 2048;

/**
 * The message in its lean form ({@link leanJson}), with a digest composed anew for the room the lean
 * JSON leaves, cut where its own fixed lines pass it ({@link digestWithin}).
 */
function leanForm(
  report: Report,
  options: RenderOptions,
  envelope: (json: string, digest: string) => string,
  bytesOf: (message: string) => number,
) {
  const json = leanJson(report);
  const room = SNS_MAX_BYTES - bytesOf(envelope(json, '')) - 64;
  const digest = composeDigest(report, { ...options, budgetBytes: Math.min(DIGEST_MAX_BYTES, room) });
  const text = digestWithin(report, digest.text, (t) => bytesOf(envelope(json, t)));
  return { message: envelope(json, text), digest };
}

/**
 * The JSON when the report's small fields alone would pass SNS's 256 KB (each is bounded where it
 * is made; this is the net under a bound missed): the summary, counts and links alone, with
 * `truncated`, what it left out (`omitted`) and the fields it dropped or cut (`omitted_fields`).
 */
function leanJson(report: Report): string {
  const short = (value: unknown) =>
    typeof value === 'string'
      ? cutText(value, LEAN_FIELD_MAX)
      : JSON.stringify(value).length > LEAN_FIELD_MAX
        ? null
        : value;
  const pick = (from: Record<string, unknown>, keys: readonly string[]) =>
    Object.fromEntries(keys.filter((k) => from[k] !== undefined).map((k) => [k, short(from[k])]));
  const fields = report as unknown as Record<string, unknown>;
  return JSON.stringify({
    ...pick(fields, LEAN_FIELDS),
    source: pick(report.source as Record<string, unknown>, LEAN_SOURCE_FIELDS),
    policy: pick(report.policy as Record<string, unknown>, ['expiry_days', 'critical_days']),
    truncated: true,
    omitted: { findings: report.findings.length, ...problemsLeftOut(report, 0, 0) },
    omitted_fields: Object.keys(fields).filter(
      (k) => !LEAN_FIELDS.includes(k) && !['source', 'findings', 'problems'].includes(k),
    ),
    findings: [],
    problems: [],
  });
}

/**
 * The digest's text, cut where the room ends when its own fixed lines pass it, saying so and where
 * the whole report is. `measure` gives the publish's bytes with a digest text.
 */
function digestWithin(report: Report, digest: string, measure: (text: string) => number): string {
  if (measure(digest) <= SNS_MAX_BYTES) return digest;
  const where = report.report_url ? `: ${cutText(report.report_url, LEAN_FIELD_MAX)}` : '';
  const mark = `\n\n[The rest of this e-mail was cut: it was longer than an alert may be. The whole report${where}]`;
  // Room for the text beside the rest and the mark, less the few bytes of the cut's `…`.
  const room = SNS_MAX_BYTES - measure(mark) - 8;
  const bytesOf = (length: number) => measure(digest.slice(0, length)) - measure('');
  let length = digest.length;
  // Each pass cuts in proportion to the overflow; the bytes of a character vary, so it may take a few.
  while (length > 0 && bytesOf(length) > room) length = Math.floor((length * room) / bytesOf(length)) - 1;
  return `${cutText(digest, Math.max(1, length))}${mark}`;
}

/** The JSON report of an alert message: the `default` variant. */
export const reportJsonOf = (alert: Pick<AlertMessage, 'message'>): string =>
  (JSON.parse(alert.message) as { default: string }).default;
