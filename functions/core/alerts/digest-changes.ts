import { cutText, formatAmount, inertText, plainDomain, safeText } from '../base/text';
import type { Finding } from '../findings/classify';
import { CHANGE_NEXT_STEPS, changeNextStep } from '../findings/next-step';
import { responseBytes } from '../memory/report-view';
import type { ChangeKind, DomainChange, Resolution, ResolvedReason, StatefulFinding } from '../memory/state';
import type { Report } from '../scan/scan';

/**
 * The digest's parts that only a scan with memory has: the changes it opens with, the NEW /
 * ESCALATED / ongoing marker on each item, and "Resolved since the last alert" at the end.
 * A report without memory renders none of them, so the stateless digest stays as it was.
 */

/** At most this many changes and resolved items in detail; the rest are counted. */
const SECTION_LIMIT = 100;

/**
 * How many of the first `lines` (at most `limit`) fit within `maxBytes` as the digest counts them
 * (each as the content of a JSON string, with its line break): a section bounded so cuts the rest
 * and counts it, so the items the digest exists for keep their room (digest.ts composeDigest).
 */
export function linesWithin(lines: readonly string[], maxBytes: number, limit = lines.length): number {
  let used = 0;
  let n = 0;
  for (; n < Math.min(limit, lines.length); n++) {
    used += responseBytes(lines[n] as string) + 2;
    if (used > maxBytes) break;
  }
  return n;
}

/** What each change is, in words (the digest's and chat's line for it). */
export const CHANGE_WORDS: Readonly<Record<ChangeKind, string>> = {
  left_account: 'LEFT THE ACCOUNT: no longer listed (transferred out or deleted?)',
  returned: 'back in the account (it had left it)',
  transfer_lock_off: 'transfer lock turned OFF',
  auth_code_issued: 'auth code issued (a transfer can start)',
  registrant_changed: 'registrant changed',
  nameservers_changed: 'nameservers changed',
  auto_renew_turned_off: 'auto-renew turned OFF',
  dnssec_unsigned: 'DNSSEC turned off (now unsigned)',
  premium_price_changed: 'premium renewal price changed',
};

// Every change kind has its next step: a kind added to memory without one does not compile.
CHANGE_NEXT_STEPS satisfies Record<ChangeKind, unknown>;

const REASON_WORDS: Record<ResolvedReason, string> = {
  renewed: 'renewed',
  auto_renew_on: 'auto-renew turned on',
  restored: 'restored from quarantine',
  left_account: 'left the account',
  no_longer_pending: 'contact no longer pending validation',
  no_longer_flagged: 'no longer flagged',
};

/**
 * Text from the API on one digest line: line breaks and controls as spaces, bidi and invisible
 * characters escaped (safeText: they could make one value read as another), bounded length.
 */
function plain(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const flat = safeText((text ?? 'null').replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' '));
  // A value from the API (a registrant handle, a nameserver group) is no link in an e-mail.
  return inertText(cutText(flat, 80));
}

/** A domain's name on one line: a real name as it is, anything else made safe and inert. */
const nameOf = (name: string) => cutText(plainDomain(name), 80);

type WithMemory = Report & {
  readonly changes: readonly DomainChange[];
  readonly resolved: readonly Resolution[];
  /** Set when a message carries only the first of many (see capForMessage). */
  readonly changes_truncated?: {
    readonly changes_omitted: number;
    readonly resolved_omitted: number;
    readonly critical_changes_omitted: number;
  };
};

function hasMemory(report: Report): report is WithMemory {
  return 'changes' in report && 'resolved' in report;
}

/**
 * `NEW `, `ESCALATED `, `REPEATED ` (ongoing, published again by its repeat cadence: on a quiet day
 * it is why the message came, a group's own one too), `ongoing ` before an item; nothing without memory.
 */
export function changeMarker(finding: Finding): string {
  const marked = finding as Partial<StatefulFinding> & { readonly repeated?: boolean };
  const change = marked.change;
  if (change === 'new') return 'NEW ';
  if (change === 'escalated') return 'ESCALATED ';
  if (change === 'ongoing' && marked.repeated === true) return 'REPEATED ';
  if (change === 'ongoing') return 'ongoing ';
  return '';
}

function changeLine(c: DomainChange): string {
  const detail =
    c.kind === 'left_account' ||
    c.kind === 'returned' ||
    c.kind === 'transfer_lock_off' ||
    c.kind === 'auth_code_issued'
      ? ''
      : c.kind === 'nameservers_changed'
        ? ` (${nameservers(c.before)} → ${nameservers(c.after)})`
        : c.kind === 'premium_price_changed'
          ? ` (${price(c.before)} → ${price(c.after)})`
          : ` (${plain(c.before)} → ${plain(c.after)})`;
  return `- ${nameOf(c.domain_name)}: ${CHANGE_WORDS[c.kind]}${detail} [${c.severity}]\n  Next: ${changeNextStep(c)}`;
}

/** Where a reader finds what a section had no room for. */
const elsewhere = (report: Report) =>
  report.report_url ? `on the full report: ${report.report_url}` : '(run a scan with --json for all of them)';

function price(value: unknown): string {
  const v = (value ?? {}) as { currency?: unknown; amount?: unknown };
  return typeof v.amount === 'number' ? `${plain(v.currency)} ${formatAmount(v.amount)}` : plain(value);
}

function nameservers(value: unknown): string {
  const v = (value ?? {}) as { nsgroup?: unknown; dns_hosted?: unknown };
  if (v.dns_hosted === true && (v.nsgroup === null || v.nsgroup === undefined)) return 'hosted DNS';
  return `nsgroup ${plain(v.nsgroup ?? 'none')}${v.dns_hosted === true ? ', hosted DNS' : ''}`;
}

/**
 * The lines the digest opens with: what changed since the last scan. Empty without memory or changes.
 * The changes named take at most `maxBytes`; the rest are counted.
 */
export function renderChangesSection(report: Report, maxBytes = Number.POSITIVE_INFINITY): string[] {
  if (!hasMemory(report)) return [];
  const findings = report.findings as readonly Partial<StatefulFinding>[];
  const fresh = findings.filter((f) => f.change === 'new').length;
  const escalated = findings.filter((f) => f.change === 'escalated').length;
  const repeated = findings.filter((f) => changeMarker(f as Finding) === 'REPEATED ').length;
  const changesTotal = report.changes.length + (report.changes_truncated?.changes_omitted ?? 0);
  const resolvedTotal = report.resolved.length + (report.changes_truncated?.resolved_omitted ?? 0);
  const counts = [
    changesTotal ? `${changesTotal} changed` : '',
    fresh ? `${fresh} new` : '',
    escalated ? `${escalated} escalated` : '',
    resolvedTotal ? `${resolvedTotal} resolved` : '',
  ].filter(Boolean);
  const again = repeated ? `${counts.length ? ', ' : '; '}${repeated} repeated as a reminder` : '';
  const out = [`Since the last scan: ${counts.length ? counts.join(', ') : 'nothing changed'}${again}.`, ''];
  if (changesTotal === 0) return out;
  out.push(`CHANGES (${changesTotal})`);
  const lines = report.changes.slice(0, SECTION_LIMIT).map(changeLine);
  const shown = lines.slice(0, linesWithin(lines, maxBytes));
  out.push(...shown);
  if (changesTotal > shown.length) {
    // Critical first (compare.ts sortEntries), so those not named are counted: a bulk change must not hide a departure.
    let critical = report.changes_truncated?.critical_changes_omitted ?? 0;
    for (let i = shown.length; i < report.changes.length; i++)
      if (report.changes[i]?.severity === 'critical') critical++;
    const ofThem = critical ? `, ${critical} of them critical` : '';
    out.push(`- and ${changesTotal - shown.length} more changes${ofThem} ${elsewhere(report)}`);
  }
  out.push('');
  return out;
}

/**
 * The digest's last section: "Resolved since the last alert". Empty without memory or resolutions.
 * The resolutions named take at most `maxBytes`; the rest are counted.
 */
export function renderResolvedSection(report: Report, maxBytes = Number.POSITIVE_INFINITY): string[] {
  if (!hasMemory(report) || report.resolved.length === 0) return [];
  const total = report.resolved.length + (report.changes_truncated?.resolved_omitted ?? 0);
  const lines = report.resolved.slice(0, SECTION_LIMIT).map((r) => {
    const who = r.domain_name ? nameOf(r.domain_name) : plain(`contact ${r.handle ?? '?'}`);
    const left = r.now ? `; now ${r.now.severity} (${r.now.kind.replace(/_/g, ' ')})` : '';
    return `- ${who}: ${r.kind.replace(/_/g, ' ')} [${r.severity}]: ${REASON_WORDS[r.reason]}${left}`;
  });
  const shown = lines.slice(0, linesWithin(lines, maxBytes));
  const out = [`Resolved since the last alert (${total})`, ...shown];
  if (total > shown.length) out.push(`- and ${total - shown.length} more ${elsewhere(report)}`);
  out.push('');
  return out;
}
