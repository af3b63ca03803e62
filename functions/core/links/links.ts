import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { ConfigError } from '../base/errors';
import { SEVERITIES, type Severity } from '../findings/classify';

/**
 * Signed links: HMAC-SHA256 over action, subject (a domain, or the account), expiry and key id. The signing key
 * setting holds one or more keys separated by commas: the first signs, every one verifies, so a
 * rotated key keeps the links already in people's mailboxes working until they expire.
 */

const MIN_KEY_LENGTH = 32;
/** A key id as {@link parseSigningKeys} derives it: 8 hex digits. */
const KEY_ID = /^[0-9a-f]{8}$/;
export const DEFAULT_LINK_TTL_SECONDS = 7 * 24 * 3600;

export interface SigningKey {
  /** Derived from the key itself, so nobody has to name keys; reveals nothing about it. */
  readonly id: string;
  readonly secret: Buffer;
}

/** Parses `LINK_SIGNING_KEY`: one or more keys, comma-separated, the first the current one. */
export function parseSigningKeys(value: string, source = 'LINK_SIGNING_KEY'): SigningKey[] {
  const parts = value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0)
    throw new ConfigError(
      `${source} is empty; set it to a random string of at least ${MIN_KEY_LENGTH} characters`,
    );
  return parts.map((secret, index) => {
    if (secret.length < MIN_KEY_LENGTH) {
      throw new ConfigError(
        `${source}: key ${index + 1} is shorter than ${MIN_KEY_LENGTH} characters; generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('hex'))"`,
      );
    }
    const id = createHash('sha256').update(`domain-sentinel key id\n${secret}`).digest('hex').slice(0, 8);
    return { id, secret: Buffer.from(secret, 'utf8') };
  });
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Checks a domain name before anything else touches it: lower case ASCII (IDNs in punycode), at
 * most 253 characters, 2+ labels of 1–63 letters, digits or hyphens, no leading or trailing
 * hyphen, and a punycode label that decodes. Returns the reason it is not valid, or null.
 */
export function domainNameProblem(name: string): string | null {
  if (name.length === 0) return 'empty domain name';
  if (name.length > 253) return 'domain name longer than 253 characters';
  if (name !== name.toLowerCase()) return 'domain name must be lower case';
  const labels = name.split('.');
  if (labels.length < 2) return 'domain name needs at least two labels';
  for (const label of labels) {
    if (!LABEL.test(label)) return `invalid label ${JSON.stringify(label.slice(0, 70))}`;
    if (label.slice(2, 4) === '--' && !label.startsWith('xn--'))
      return `invalid label ${JSON.stringify(label)}`;
  }
  if (labels.some((l) => l.startsWith('xn--')) && domainToASCII(name) !== name)
    return 'invalid punycode label';
  return null;
}

/** Links that change something: GET confirms, only POST acts. */
export const ACTING_ACTIONS = ['restore', 'snooze', 'acknowledge'] as const;
/** Links that only show something, for the account as a whole. */
export const READ_ONLY_ACTIONS = ['report', 'calendar'] as const;
/**
 * The one link an alert gives each finding: a read-only page for that domain that says what to do
 * and offers the acting links (restore, snooze, acknowledge), each still asking to confirm.
 */
export const FINDING_PAGE_ACTION = 'finding';
export const LINK_ACTIONS = [...ACTING_ACTIONS, ...READ_ONLY_ACTIONS, FINDING_PAGE_ACTION] as const;
export type ActingAction = (typeof ACTING_ACTIONS)[number];
export type ReadOnlyAction = (typeof READ_ONLY_ACTIONS)[number];
export type LinkAction = (typeof LINK_ACTIONS)[number];

/**
 * The subject of a read-only link. Not a valid domain name (one label), so an account link's
 * signature can never be taken for a domain's, whatever the action.
 */
export const ACCOUNT_SUBJECT = 'account';

/** Path of a link under the base URL, without the token. */
export function linkPath(action: LinkAction, subject: string): string {
  if (action === 'report') return 'report';
  if (action === 'calendar') return 'calendar.ics';
  return `${action}/${subject}`;
}

const DOMAIN_PATH = /^\/(restore|snooze|acknowledge|finding)\/([^/]+)$/;

/**
 * The action and subject a link's path names (relative to the link base URL), or null when it
 * names none. The subject is percent-decoded as API Gateway decodes path parameters; whether it is
 * a valid domain is for the decision to say.
 */
export function parseLinkPath(path: string): { action: LinkAction; subject: string } | null {
  if (path === '/report') return { action: 'report', subject: ACCOUNT_SUBJECT };
  if (path === '/calendar.ics') return { action: 'calendar', subject: ACCOUNT_SUBJECT };
  const match = DOMAIN_PATH.exec(path);
  if (!match?.[1] || !match[2]) return null;
  let subject = match[2];
  try {
    subject = decodeURIComponent(subject);
  } catch {
    // Kept as it came: the domain check refuses it.
  }
  return { action: match[1] as ActingAction | typeof FINDING_PAGE_ACTION, subject };
}

export const isActing = (action: LinkAction): action is ActingAction =>
  (ACTING_ACTIONS as readonly string[]).includes(action);

/** Links about one domain (acting ones and its finding page): their subject is the domain's name. */
export const isAboutDomain = (action: LinkAction): boolean =>
  isActing(action) || action === FINDING_PAGE_ACTION;

/**
 * The finding a snooze or acknowledge link was sent for, signed into it: an old link must not act
 * on a finding that has since become another kind or more severe (a warning's acknowledge link
 * must never acknowledge the quarantine that followed).
 */
export interface LinkFinding {
  readonly kind: string;
  readonly severity: Severity;
}

/** Actions whose links carry the finding they were sent for (restore is always about quarantine). */
export const isFindingBound = (action: LinkAction): action is 'snooze' | 'acknowledge' =>
  action === 'snooze' || action === 'acknowledge';

const FINDING_KIND = /^[a-z][a-z_]{0,39}$/;

function mac(
  key: SigningKey,
  action: LinkAction,
  subject: string,
  exp: number,
  finding?: LinkFinding,
): Buffer {
  // The restore links already in mailboxes were signed over exactly this text: keep it.
  const base = `${action}\n${subject}\n${exp}\n${key.id}`;
  const text = finding ? `${base}\n${finding.kind}\n${finding.severity}` : base;
  return createHmac('sha256', key.secret).update(text).digest();
}

export interface SignLinkOptions {
  readonly action: LinkAction;
  /** @default ACCOUNT_SUBJECT for read-only actions; required for acting ones */
  readonly subject?: string;
  /** Required for snooze and acknowledge links (see {@link LinkFinding}); refused for the others. */
  readonly finding?: LinkFinding;
  readonly keys: readonly SigningKey[];
  readonly now: number;
  readonly ttlSeconds?: number;
}

/**
 * The query of a signed link (`kind=…&sev=…&exp=…&kid=…&sig=…`, the finding only on snooze and
 * acknowledge links), for a page that links to a sibling of its own URL.
 */
export function signLinkQuery(options: SignLinkOptions): string {
  const key = options.keys[0];
  if (!key) throw new ConfigError('no link signing key configured');
  const subject = subjectOf(options.action, options.subject);
  const finding = findingOf(options.action, options.finding);
  const exp = Math.floor(options.now / 1000) + (options.ttlSeconds ?? DEFAULT_LINK_TTL_SECONDS);
  const sig = mac(key, options.action, subject, exp, finding).toString('base64url');
  const bound = finding ? `kind=${finding.kind}&sev=${finding.severity}&` : '';
  return `${bound}exp=${exp}&kid=${key.id}&sig=${sig}`;
}

/**
 * Signs a link for `action` on `subject` (a domain for acting links, {@link ACCOUNT_SUBJECT} for
 * read-only ones), valid until `now + ttlSeconds`.
 */
export function signLink(options: SignLinkOptions & { readonly baseUrl: string }): string {
  const query = signLinkQuery(options);
  const subject = subjectOf(options.action, options.subject);
  const base = options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`;
  return `${base}${linkPath(options.action, subject)}?${query}`;
}

function findingOf(action: LinkAction, finding: LinkFinding | undefined): LinkFinding | undefined {
  if (!isFindingBound(action)) {
    if (finding) throw new ConfigError(`a ${action} link carries no finding`);
    return undefined;
  }
  if (!finding || !FINDING_KIND.test(finding.kind) || !SEVERITIES.includes(finding.severity))
    throw new ConfigError(`a ${action} link needs the kind and severity of the finding it is sent for`);
  return { kind: finding.kind, severity: finding.severity };
}

function subjectOf(action: LinkAction, subject: string | undefined): string {
  if (!isAboutDomain(action)) {
    if (subject !== undefined && subject !== ACCOUNT_SUBJECT)
      throw new ConfigError(`a ${action} link is for the whole account, not for ${JSON.stringify(subject)}`);
    return ACCOUNT_SUBJECT;
  }
  const problem = subject === undefined ? 'no domain given' : domainNameProblem(subject);
  if (problem)
    throw new ConfigError(`cannot sign a ${action} link for ${JSON.stringify(subject ?? '')}: ${problem}`);
  return subject as string;
}

/** Signs a restore link for `domain`, valid until `now + ttlSeconds`. */
export function signRestoreLink(options: {
  readonly baseUrl: string;
  readonly domain: string;
  readonly keys: readonly SigningKey[];
  readonly now: number;
  readonly ttlSeconds?: number;
}): string {
  const { domain, ...rest } = options;
  return signLink({ ...rest, action: 'restore', subject: domain });
}

export type LinkVerdict =
  | {
      readonly ok: true;
      readonly exp: number;
      /** On snooze and acknowledge links: the finding the link was sent for. */
      readonly finding?: LinkFinding;
    }
  | {
      readonly ok: false;
      /** `outdated`: a snooze or acknowledge link signed before links carried their finding. */
      readonly reason: 'malformed' | 'bad_signature' | 'expired' | 'outdated';
      readonly exp?: number;
    }
  | {
      /** Signed with a key this side does not hold: two setups with different keys, not a changed link. */
      readonly ok: false;
      readonly reason: 'unknown_key';
      readonly kid: string;
      /** The ids of the keys this side holds (ids reveal nothing about the keys). */
      readonly held: readonly string[];
    };

/** The query parameters of a link. */
export type LinkToken = Partial<Record<'exp' | 'kid' | 'sig' | 'kind' | 'sev', string | undefined>>;

/**
 * Verifies a link's token for `action` on `subject` in constant time. The signature binds both
 * (and on snooze and acknowledge links the finding's kind and severity), so a snooze link never
 * restores, and a link for one domain never acts on another. Expiry is checked after the
 * signature, so an attacker cannot learn anything from a forged expiry.
 */
export function verifyLink(options: {
  readonly action: LinkAction;
  readonly subject: string;
  readonly token: LinkToken;
  readonly keys: readonly SigningKey[];
  readonly now: number;
}): LinkVerdict {
  const { exp: expText, kid, sig, kind, sev } = options.token;
  // No leading zeros: one expiry has one spelling, so no changed link can carry the same signature.
  if (
    !expText ||
    !kid ||
    !sig ||
    !/^[1-9]\d{0,11}$/.test(expText) ||
    !KEY_ID.test(kid) ||
    !/^[A-Za-z0-9_-]{43}$/.test(sig)
  ) {
    return { ok: false, reason: 'malformed' };
  }
  let finding: LinkFinding | undefined;
  const bound = isFindingBound(options.action);
  if (bound && (kind !== undefined || sev !== undefined)) {
    if (!kind || !FINDING_KIND.test(kind) || !sev || !(SEVERITIES as readonly string[]).includes(sev))
      return { ok: false, reason: 'malformed' };
    finding = { kind, severity: sev as Severity };
  }
  const exp = Number(expText);
  const key = options.keys.find((k) => k.id === kid);
  if (!key) return { ok: false, reason: 'unknown_key', kid, held: options.keys.map((k) => k.id) };
  const expected = mac(key, options.action, options.subject, exp, finding);
  const given = Buffer.from(sig, 'base64url');
  // base64url decoding is lenient: re-encode so that a changed trailing character cannot verify.
  if (
    given.length !== expected.length ||
    given.toString('base64url') !== sig ||
    !timingSafeEqual(given, expected)
  ) {
    return { ok: false, reason: 'bad_signature' };
  }
  if (Math.floor(options.now / 1000) >= exp) return { ok: false, reason: 'expired', exp };
  // Genuine, but from before links named their finding: it cannot say what it was sent for.
  if (bound && !finding) return { ok: false, reason: 'outdated', exp };
  return finding ? { ok: true, exp, finding } : { ok: true, exp };
}
