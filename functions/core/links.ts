import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { ConfigError } from './errors';

/**
 * Signed restore links: HMAC-SHA256 over action, domain, expiry and key id. The signing key
 * setting holds one or more keys separated by commas: the first signs, every one verifies, so a
 * rotated key keeps the links already in people's mailboxes working until they expire.
 */

export const RESTORE_ACTION = 'restore';
const MIN_KEY_LENGTH = 32;
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

export interface RestoreLinkToken {
  /** Expiry, epoch seconds. */
  readonly exp: number;
  readonly kid: string;
  readonly sig: string;
}

function mac(key: SigningKey, domain: string, exp: number): Buffer {
  return createHmac('sha256', key.secret).update(`${RESTORE_ACTION}\n${domain}\n${exp}\n${key.id}`).digest();
}

/** Signs a restore link for `domain`, valid until `now + ttlSeconds`. */
export function signRestoreLink(options: {
  readonly baseUrl: string;
  readonly domain: string;
  readonly keys: readonly SigningKey[];
  readonly now: number;
  readonly ttlSeconds?: number;
}): string {
  const key = options.keys[0];
  if (!key) throw new ConfigError('no link signing key configured');
  const problem = domainNameProblem(options.domain);
  if (problem)
    throw new ConfigError(`cannot sign a restore link for ${JSON.stringify(options.domain)}: ${problem}`);
  const exp = Math.floor(options.now / 1000) + (options.ttlSeconds ?? DEFAULT_LINK_TTL_SECONDS);
  const sig = mac(key, options.domain, exp).toString('base64url');
  const base = options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`;
  return `${base}restore/${options.domain}?exp=${exp}&kid=${key.id}&sig=${sig}`;
}

export type LinkVerdict =
  | { readonly ok: true; readonly exp: number }
  | { readonly ok: false; readonly reason: 'malformed' | 'bad_signature' | 'expired'; readonly exp?: number };

/**
 * Verifies a restore link's token for `domain` in constant time. The signature binds the domain,
 * so a link for one domain never restores another. Expiry is checked after the signature, so an
 * attacker cannot learn anything from a forged expiry.
 */
export function verifyRestoreLink(options: {
  readonly domain: string;
  readonly token: Partial<Record<'exp' | 'kid' | 'sig', string | undefined>>;
  readonly keys: readonly SigningKey[];
  readonly now: number;
}): LinkVerdict {
  const { exp: expText, kid, sig } = options.token;
  if (!expText || !kid || !sig || !/^\d{1,12}$/.test(expText) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) {
    return { ok: false, reason: 'malformed' };
  }
  const exp = Number(expText);
  const key = options.keys.find((k) => k.id === kid);
  if (!key) return { ok: false, reason: 'bad_signature' };
  const expected = mac(key, options.domain, exp);
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
  return { ok: true, exp };
}
