import * as z from 'zod';
import { normalizeDomainName, safeText } from '../base/text';

/**
 * The audit trail of restores, pure: what one attempt records, how it is bounded, and the port the
 * state stores implement (functions/local and functions/aws: the file store and DynamoDB keep it beside the
 * state). A restore is a paid action: who pressed it, when, from where and with what outcome is
 * kept where the report page and `sentinel audit` show it. Never the link's signature.
 */

/**
 * Attempts that reached the reseller (a restore call went out: paid, or maybe paid) kept per
 * account; the oldest of them go first, and only for newer ones of their own kind.
 */
export const AUDIT_MAX_ENTRIES = 200;
/**
 * Attempts that reached no reseller (a wrong typed name, a domain not in quarantine, a claim held)
 * kept per account, apart from the others: anyone holding one link can make them, so they can
 * push out only each other, never an attempt that reached the reseller.
 */
export const AUDIT_MAX_REFUSALS = 100;
/** Refusals kept per link and hour; beyond them an attempt is counted on the last one kept (`repeats`), not stored. */
export const REFUSALS_PER_LINK_HOUR = 5;
const HOUR_MS = 3_600_000;

/** Longest text kept per field: no request header can make an entry (or the trail) large. */
const FIELD_MAX = { domain: 253, outcome: 40, keyId: 64, client: 64, userAgent: 120 } as const;

/**
 * The outcome an entry holds from just before its restore is sent until its outcome replaces it
 * (write-ahead): a function that dies between the two (timeout, out of memory) leaves this, so a
 * restore that was sent, and maybe paid, is never missing from the trail.
 */
export const RESTORE_SENDING = 'restore_sending';

/**
 * The outcome of an entry kept that does not read (a hand edit, a damaged item), in its place: it
 * may have been a restore sent, and maybe paid, so it is listed and named before another is sent.
 */
export const AUDIT_UNREADABLE = 'unreadable';

/** One restore attempt and its outcome. */
export interface AuditEntry {
  readonly action: 'restore';
  /** ISO 8601: when the attempt was decided. */
  readonly at: string;
  readonly domain: string;
  /** The decision's outcome: `restored`, `refused`, `confirmation_missing`, `outcome_unknown`, … */
  readonly outcome: string;
  /** The HTTP status answered (0 from the command line). */
  readonly status: number;
  /** Where it came from: a signed link (`web`) or `sentinel restore` (`cli`). */
  readonly via: 'web' | 'cli';
  /** The id of the key that signed the link; null from the command line. */
  readonly key_id: string | null;
  /** The client address as the web function sees it (API Gateway's source IP). */
  readonly client_ip: string | null;
  readonly user_agent: string | null;
  /** True when the restore call went out to the reseller (the outcome may have cost money). */
  readonly sent: boolean;
  /** When the link expires (ISO 8601): with the domain and key id, which link it was. Null from the command line. */
  readonly link_expires: string | null;
  /** Further refusals of the same link within the hour, counted here rather than stored. */
  readonly repeats: number;
  /** The file store's handle on an entry written ahead, until its outcome replaces it. */
  readonly id?: string;
}

/**
 * How long a restore's claim on its domain holds: the restore call and its re-checks take seconds,
 * but a reseller may show the domain out of quarantine only later (a queued 202), and a claim kept
 * after `restored` or `outcome_unknown` is what stops a second click paying again meanwhile.
 */
export const RESTORE_CLAIM_MS = 15 * 60_000;

/**
 * How long a restore that went out and may have been carried out is named before another of the
 * same domain is sent: the reseller documents no processing time (nor even a queued 202), and a
 * queued restore outlives the claim ({@link RESTORE_CLAIM_MS}). Seven days, the default life of a
 * restore link: whoever opens the link from an alert after a restore was sent through it (or
 * through another) reads that it was. A restore named by mistake costs one more checkbox; one not
 * named may be paid twice.
 */
export const RESENT_WINDOW_MS = 7 * 24 * 3_600_000;

/**
 * The outcomes of a restore that went out and may have been carried out: written ahead and never
 * completed, `restored` (yet the domain still shows quarantine), `outcome_unknown` (a 202 still
 * queued, a 5xx but 501 and 503, a broken connection, no answer). The outcomes a claim is kept after, and the one written ahead.
 */
export const MAY_HAVE_RESTORED: ReadonlySet<string> = new Set([
  RESTORE_SENDING,
  'restored',
  'outcome_unknown',
]);

/**
 * The newest entry (`entries` newest first, as a trail lists them) of a restore of `domain` that
 * went out within {@link RESENT_WINDOW_MS} before `now` (or at a time that does not read) and may have been carried out; undefined
 * when none did. Names are compared normalised (the link's and the command line's spellings).
 */
export function earlierRestoreOf(
  entries: readonly AuditEntry[],
  domain: string,
  now: number,
): AuditEntry | undefined {
  const name = normalizeDomainName(domain);
  return entries.find((entry) => {
    const at = Date.parse(entry.at);
    // An entry that does not read, with no domain that does, may have been a restore of any.
    const unreadable = entry.outcome === AUDIT_UNREADABLE;
    return (
      entry.sent &&
      (unreadable || MAY_HAVE_RESTORED.has(entry.outcome)) &&
      // A time that does not read (a hand edit) may be recent: named, as a restore named by mistake costs a checkbox.
      !(now - at >= RESENT_WINDOW_MS) &&
      ((unreadable && entry.domain === '') || normalizeDomainName(entry.domain) === name)
    );
  });
}

/** What the restore link's page and `sentinel restore` say of an earlier restore before sending another. */
export function earlierRestoreLine(entry: AuditEntry, domain: string): string {
  const when = `${entry.at.replace('T', ' ').slice(0, 16)} UTC`;
  if (entry.outcome === AUDIT_UNREADABLE)
    return `An entry of the audit trail that could not be read may be a restore of ${domain} sent ${Number.isNaN(Date.parse(entry.at)) ? 'at an unknown time' : `at ${when}`}; a second restore may be charged again. Check the domain in the reseller’s control panel first.`;
  const how = entry.via === 'cli' ? 'by sentinel restore' : 'through a restore link';
  const outcome =
    entry.outcome === RESTORE_SENDING
      ? 'unknown, none was recorded after it went out'
      : entry.outcome === 'restored'
        ? 'reported restored, yet the domain still shows quarantine'
        : 'unknown, it may still be queued at the reseller';
  return `A restore of ${domain} was sent at ${when} ${how} (outcome: ${outcome}); a second restore may be charged again. Check the domain in the reseller’s control panel first.`;
}

/** One restore's claim on its domain: who took it, until when (epoch ms). */
export interface RestoreClaim {
  readonly owner: string;
  readonly until: number;
}

/**
 * What a try at a restore's claim came to: `taken`, with `until` the claim's own lapse; or not, as
 * another's live claim holds the domain, with `until` when that one lapses (absent when the store
 * did not say): the 409 page and `sentinel restore` name it as the time to try again after.
 */
export interface ClaimAnswer {
  readonly taken: boolean;
  readonly until?: number;
}

/**
 * Where the trail is kept, and the claims that let one restore of a domain through at a time: the
 * state store (the file, or the DynamoDB table), in the account's own part of it.
 */
export interface AuditTrail {
  /** For messages: the file path or `dynamodb:TABLE`. */
  readonly location: string;
  /** Adds one entry, dropping the oldest beyond {@link AUDIT_MAX_ENTRIES}. */
  recordAudit(entry: AuditEntry): Promise<void>;
  /**
   * Keeps `entry` ({@link RESTORE_SENDING}, sent) before its restore is sent, as
   * {@link AuditTrail.recordAudit} keeps an attempt that reached the reseller; resolves with the
   * handle {@link AuditTrail.completeAudit} replaces it by. A throw means nothing may be sent.
   */
  beginAudit(entry: AuditEntry): Promise<string>;
  /** Replaces the entry {@link AuditTrail.beginAudit} kept under `ref` by the attempt's outcome, in its place. */
  completeAudit(ref: string, entry: AuditEntry): Promise<void>;
  /** The entries kept, newest first. */
  listAudit(): Promise<AuditEntry[]>;
  /**
   * Takes the claim on restoring `domain` (normalised name), conditionally: taken when no live
   * claim of another owner held it at `now`; not taken (nothing written) when one did, with its until.
   */
  claimRestore(domain: string, claim: RestoreClaim, now: number): Promise<ClaimAnswer>;
  /** Gives `owner`'s claim on `domain` up (its restore certainly did not happen); nothing when it is not theirs. */
  releaseRestore(domain: string, owner: string): Promise<void>;
}

/**
 * How much further ahead than {@link RESTORE_CLAIM_MS} a claim may be and still hold: the clock
 * that took it (a laptop running `sentinel restore`, another function's host) may run ahead of the
 * reader's by seconds or minutes, and with no slack at all a claim taken a moment ago by a clock
 * one second ahead read as a clock's error and was taken over: two restores paid for.
 */
export const CLAIM_CLOCK_SLACK_MS = RESTORE_CLAIM_MS;

/**
 * True while `claim` holds at `now`; one further ahead than any is taken for (with the clocks'
 * slack) was written by a clock that ran far ahead, and holds nothing.
 */
export const claimHolds = (claim: RestoreClaim, now: number): boolean =>
  claim.until > now && claim.until - now <= RESTORE_CLAIM_MS + CLAIM_CLOCK_SLACK_MS;

/**
 * Claims kept in one process, for a restore link served without a state store (`sentinel serve`
 * with no state): one process is then the only place a restore starts from.
 */
export class MemoryRestoreClaims implements Pick<AuditTrail, 'claimRestore' | 'releaseRestore'> {
  private readonly claims: Map<string, RestoreClaim>;

  /** @param held claims kept elsewhere (the state file's), taken up to be tried and written back by {@link held}. */
  constructor(held: Readonly<Record<string, RestoreClaim>> = {}) {
    this.claims = new Map(Object.entries(held));
  }

  /** The claims kept, by domain, as the state file stores them. */
  held(): Record<string, RestoreClaim> {
    return Object.fromEntries(this.claims);
  }

  async claimRestore(domain: string, claim: RestoreClaim, now: number): Promise<ClaimAnswer> {
    for (const [name, held] of this.claims) if (!claimHolds(held, now)) this.claims.delete(name);
    const held = this.claims.get(domain);
    if (held && held.owner !== claim.owner) return { taken: false, until: held.until };
    this.claims.set(domain, claim);
    return { taken: true, until: claim.until };
  }

  async releaseRestore(domain: string, owner: string): Promise<void> {
    if (this.claims.get(domain)?.owner === owner) this.claims.delete(domain);
  }
}

const cut = (value: string | null | undefined, max: number): string | null =>
  value === null || value === undefined ? null : safeText(value.slice(0, max));

/** An entry with every field made safe and cut to its bound, whatever the request carried. */
export function auditEntry(input: {
  readonly at: number;
  readonly domain: string;
  readonly outcome: string;
  readonly status: number;
  readonly via: AuditEntry['via'];
  readonly keyId?: string | null | undefined;
  readonly clientIp?: string | null | undefined;
  readonly userAgent?: string | null | undefined;
  /** @default false */
  readonly sent?: boolean;
  /** The link's `exp` (epoch seconds). */
  readonly linkExpires?: number | null | undefined;
}): AuditEntry {
  const expires = input.linkExpires;
  return {
    action: 'restore',
    at: new Date(input.at).toISOString(),
    domain: cut(input.domain, FIELD_MAX.domain) ?? '',
    outcome: cut(input.outcome, FIELD_MAX.outcome) ?? '',
    status: Number.isInteger(input.status) ? input.status : 0,
    via: input.via,
    key_id: cut(input.keyId, FIELD_MAX.keyId),
    client_ip: cut(input.clientIp, FIELD_MAX.client),
    user_agent: cut(input.userAgent, FIELD_MAX.userAgent),
    sent: input.sent === true,
    link_expires:
      typeof expires === 'number' && Number.isFinite(expires) && Math.abs(expires) < 1e11
        ? new Date(expires * 1000).toISOString()
        : null,
    repeats: 0,
  };
}

/** An entry as a store keeps it; one that does not parse is read as {@link parseAuditEntry} reads it. */
export const AuditEntrySchema = z.object({
  action: z.literal('restore'),
  at: z.string().max(40),
  domain: z.string().max(FIELD_MAX.domain * 6),
  outcome: z.string().max(FIELD_MAX.outcome * 6),
  status: z.number().int(),
  via: z.enum(['web', 'cli']),
  key_id: z
    .string()
    .max(FIELD_MAX.keyId * 6)
    .nullable(),
  client_ip: z
    .string()
    .max(FIELD_MAX.client * 6)
    .nullable(),
  user_agent: z
    .string()
    .max(FIELD_MAX.userAgent * 6)
    .nullable(),
  sent: z.boolean(),
  link_expires: z.string().max(40).nullable(),
  repeats: z.number().int().min(0),
  id: z.string().max(64).optional(),
});

/** True when `a` and `b` came through the same link (domain, key and expiry). */
const sameLink = (a: AuditEntry, b: AuditEntry): boolean =>
  a.domain === b.domain && a.key_id === b.key_id && a.link_expires === b.link_expires;

/**
 * Where a refusal goes, given the refusals kept (newest first): stored (null), or counted on the
 * kept entry at the index returned, when its link already has {@link REFUSALS_PER_LINK_HOUR}
 * refusals kept within the hour before it.
 */
export function refusalCountedOn(refusals: readonly AuditEntry[], entry: AuditEntry): number | null {
  const at = Date.parse(entry.at);
  let seen = 0;
  let newest: number | null = null;
  refusals.forEach((kept, index) => {
    if (kept.sent || !sameLink(kept, entry) || !(Math.abs(at - Date.parse(kept.at)) < HOUR_MS)) return;
    seen++;
    newest ??= index;
  });
  return seen >= REFUSALS_PER_LINK_HOUR ? newest : null;
}

/**
 * The trail with `entry` added, newest first and trimmed: a refusal beyond its link's hourly share
 * is counted on the last one kept (a refusal never pushes out an attempt that reached the reseller).
 */
export function auditWith(audit: readonly AuditEntry[], entry: AuditEntry): AuditEntry[] {
  const countOn = entry.sent ? null : refusalCountedOn(audit, entry);
  const counted = countOn === null ? undefined : audit[countOn];
  return trimAudit(
    counted && countOn !== null
      ? audit.with(countOn, { ...counted, repeats: counted.repeats + 1 })
      : [entry, ...audit],
  );
}

/** The trail with the entry written ahead under `ref` replaced by its outcome, in its place; one gone meanwhile is added as the newest. */
export function auditCompleted(audit: readonly AuditEntry[], ref: string, entry: AuditEntry): AuditEntry[] {
  const at = audit.findIndex((kept) => kept.id === ref);
  return trimAudit(at < 0 ? [entry, ...audit] : audit.with(at, entry));
}

/**
 * A trail as kept, in its order: the newest {@link AUDIT_MAX_ENTRIES} attempts that reached the
 * reseller and the newest {@link AUDIT_MAX_REFUSALS} that did not, each kind trimmed on its own.
 */
export function trimAudit(entries: readonly AuditEntry[]): AuditEntry[] {
  let sent = 0;
  let refused = 0;
  return entries.filter((e) => (e.sent ? ++sent <= AUDIT_MAX_ENTRIES : ++refused <= AUDIT_MAX_REFUSALS));
}

/**
 * A stored entry, or one that does not parse as an {@link AUDIT_UNREADABLE} entry in its place,
 * with what of its time and domain still reads: left out, a restore written ahead (and maybe paid)
 * was named before the next one no more, and a second restore went out without asking.
 *
 * @param sent whether an entry that does not parse counts as one that reached the reseller (where
 *   the store keeps the two kinds apart, it knows; the file does not: it may have been).
 */
export function parseAuditEntry(value: unknown, sent = true): AuditEntry {
  const parsed = AuditEntrySchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const raw: Record<string, unknown> = typeof value === 'object' && value !== null ? { ...value } : {};
  const text = (field: unknown, max: number) =>
    typeof field === 'string' && field.trim() !== '' ? cut(field, max) : null;
  return {
    action: 'restore',
    at: text(raw.at, 40) ?? 'unknown',
    domain: text(raw.domain, FIELD_MAX.domain) ?? '',
    outcome: AUDIT_UNREADABLE,
    status: 0,
    via: raw.via === 'cli' ? 'cli' : 'web',
    key_id: null,
    client_ip: null,
    user_agent: null,
    sent,
    link_expires: null,
    repeats: 0,
  };
}

/**
 * The stored entries (one that does not parse as {@link parseAuditEntry} keeps it), in the order
 * the store keeps them (newest first by arrival), trimmed as {@link trimAudit} trims. Never
 * re-sorted by their times: a time is the recording function's clock, which can step back, and an
 * attempt sorted by it as the oldest was the next one trimmed.
 */
export function parseAuditEntries(values: readonly unknown[]): AuditEntry[] {
  return trimAudit(values.map((value) => parseAuditEntry(value)));
}

/**
 * One entry on one line, for `sentinel audit` and the report page. The page is shown to anyone
 * holding a report link (every alert's recipients): `shortAddress` shows only the network of the
 * client address there (IPv4 /24, IPv6 /48), enough to tell an office from elsewhere; the whole
 * address stays in the store, for `sentinel audit`.
 */
export function auditLine(entry: AuditEntry, options: { readonly shortAddress?: boolean } = {}): string {
  const when = `${entry.at.replace('T', ' ').slice(0, 19)} UTC`;
  const status = entry.status ? ` (HTTP ${entry.status})` : '';
  const address = entry.client_ip && options.shortAddress ? networkOf(entry.client_ip) : entry.client_ip;
  const from =
    entry.via === 'cli'
      ? 'sentinel restore'
      : `link key ${entry.key_id ?? '?'}, ${address ?? 'unknown address'}, ${entry.user_agent ? JSON.stringify(entry.user_agent) : 'no user agent'}`;
  const repeats =
    entry.repeats > 0 ? `; and ${entry.repeats} more like it within the hour, counted, not kept` : '';
  // Written ahead and never completed: the function stopped after sending (or just before).
  if (entry.outcome === AUDIT_UNREADABLE)
    return `${when}  ${entry.domain || '?'}: an entry that could not be read${entry.sent ? '; it may be a restore sent to the reseller' : ''}`;
  const what =
    entry.outcome === RESTORE_SENDING
      ? 'sent, outcome unknown (no outcome was recorded after the restore went out) — check the domain’s status before trying again'
      : `${entry.outcome}${status}${entry.sent ? ', sent to the reseller' : ''}`;
  return `${when}  ${entry.domain}: ${what}; ${from}${repeats}`;
}

/** The network of an address: `203.0.113.x`, `2001:db8:85a3:…`; anything else as `(hidden)`. */
export function networkOf(address: string): string {
  const v4 = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.\d{1,3}$/.exec(address);
  if (v4) return `${v4[1]}.x`;
  if (/^[0-9a-f:]+$/i.test(address) && address.includes(':')) {
    const groups = address.split('::')[0]?.split(':').slice(0, 3) ?? [];
    return `${groups.join(':')}:…`;
  }
  return '(hidden)';
}
