import { createHash } from 'node:crypto';
import { normalizeDomainName, safeText } from '../base/text';
import type { Problem } from '../reseller/paging';

/**
 * What the state keeps of a name or a field from the reseller, bounded by what every store accepts:
 * DynamoDB takes a sort key of at most 1 024 bytes and an item of at most 400 KB, a JSON file has
 * to fit in one string. A name becomes a key as it is only when it is a short, plain run of
 * printable ASCII that cannot be mistaken for anything else; every other name is kept under a hash
 * of it, with a cut of the name to show. Pure.
 */

/** The longest name kept as its own key: no domain name is longer (RFC 1035: 253 characters). */
export const MAX_KEY_LENGTH = 253;
/** The longest watched field (registrant handle, nameserver group, DNSSEC) kept as it is. */
export const MAX_FIELD_LENGTH = 256;
/** The longest cut of a name or field shown beside its hash. */
export const SHOWN_LENGTH = 80;
/**
 * Unreadable-record keys kept between scans, each at most {@link MAX_PROBLEM_KEY_LENGTH} plain
 * characters (one byte each, also in JSON): together at most about 150 KB, well inside the 400 KB
 * DynamoDB item that holds them with the rest of the account-wide state.
 */
export const MAX_PROBLEM_KEYS = 1_000;
export const MAX_PROBLEM_KEY_LENGTH = 150;

/**
 * The unreadable-record keys a state keeps (the first {@link MAX_PROBLEM_KEYS}, sorted), and, when
 * there are more, a digest of them all: the next scan then knows whether the whole set is the same,
 * and says nothing new of an account whose same 5 000 records stay unreadable.
 */
export function boundedProblemKeys(keys: readonly string[]): { kept: string[]; digest?: string } {
  const unique = [...new Set(keys)].sort();
  return unique.length <= MAX_PROBLEM_KEYS
    ? { kept: unique }
    : { kept: unique.slice(0, MAX_PROBLEM_KEYS), digest: sha256(unique.join('\n')) };
}

/**
 * Which of `keys` (every key of this scan, {@link problemKeysOf}) were not unreadable last time;
 * built once, so a scan asks of each key in constant time (compare.ts counts them, keptNews marks
 * them). The same set as the last (by its digest, when there were more than a state keeps): none.
 */
export function isNewProblemKey(
  head: { readonly problem_keys: readonly string[]; readonly problem_keys_digest?: string },
  keys: readonly string[],
): (key: string) => boolean {
  if (head.problem_keys_digest !== undefined && boundedProblemKeys(keys).digest === head.problem_keys_digest)
    return () => false;
  const old = new Set(head.problem_keys);
  return (k) => !old.has(k);
}

/** Printable ASCII that JSON writes as it is (no quote, no backslash). */
const ONE_BYTE_IN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Every hashed key starts with this; a name that starts with `#` is always hashed itself. */
export const HASH_KEY_PREFIX = '#sha256:';
const HASHED_KEY = /^#sha256:[0-9a-f]{64}$/;
const PLAIN = /^[\x21-\x7e]+$/;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * True when `name` can be a key as it is: 1–253 printable ASCII characters, not starting with `#`
 * (the hashed keys' prefix, and DynamoDB's `#meta`), and not a name JavaScript objects answer to
 * by themselves (`__proto__`, `constructor`, `toString`…).
 */
export function isPlainKey(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= MAX_KEY_LENGTH &&
    PLAIN.test(name) &&
    !name.startsWith('#') &&
    !(name in Object.prototype)
  );
}

/** True for a key made by hashing (so stored keys are never hashed twice). */
export const isHashedKey = (key: string): boolean => HASHED_KEY.test(key);

/** The key a name is remembered under: itself when plain, else a hash of it. */
export function keyOf(name: string): string {
  return isPlainKey(name) ? name : `${HASH_KEY_PREFIX}${sha256(name)}`;
}

/**
 * The key of a domain's memory: its normalised name (lower case, no trailing dot, punycode), so a
 * second record of the same normalised name meets the first one's memory instead of making its own.
 */
export const domainKey = (name: string): string => keyOf(normalizeDomainName(name));

/** A cut of text from the reseller to show: made safe for one line, at most {@link SHOWN_LENGTH} characters. */
export function shownCut(text: string): string {
  const safe = safeText(text);
  return safe.length > SHOWN_LENGTH ? `${safe.slice(0, SHOWN_LENGTH - 1)}…` : safe;
}

/**
 * A field value as the state keeps it: itself when at most {@link MAX_FIELD_LENGTH} characters,
 * else a cut with its length and hash, so a change of the value is still seen as one.
 */
export function boundField(value: string): string {
  if (value.length <= MAX_FIELD_LENGTH) return value;
  return `${shownCut(value.slice(0, SHOWN_LENGTH + 1))} (${value.length} characters, sha256 ${sha256(value).slice(0, 32)})`;
}

/** A problem's key as the state keeps it (`domain:<name>`), bounded by hashing a long or unusual one. */
function boundProblemKey(key: string): string {
  if (key.length <= MAX_PROBLEM_KEY_LENGTH && ONE_BYTE_IN_JSON.test(key)) return key;
  const colon = key.indexOf(':');
  const resource = colon > 0 && colon < 20 ? key.slice(0, colon + 1) : '';
  return `${resource}${HASH_KEY_PREFIX}${sha256(key)}`;
}

/**
 * The key an unreadable record is remembered by, bounded: `domain@page<n>` for one not named, else
 * `domain:<name>` or `contact:<handle>` with a digest of what it says (its severity and reason,
 * both read from the record): a record that now says quarantine, or another unknown status, is a
 * new unreadable record, published at once, not one the state already knew. A read cut short
 * (`cut`: the problem that says why the listing could not be read whole) is `domain@cut`: the page
 * it was cut at and the counts it gives move from day to day, and a read cut again is not news.
 */
export function problemKey(p: Problem, cut = false): string {
  if (p.key === null) return boundProblemKey(cut ? `${p.resource}@cut` : `${p.resource}@page${p.page}`);
  // A kept quarantine (memory/kept-quarantine.ts) says critical, snoozed or not: a snooze that ends is no news of the record.
  // One critical by what memory knew (remembered_kind) is keyed by its record's own: none.
  const severity = p.kept_quarantine ? 'critical' : p.remembered_kind ? '' : (p.severity ?? '');
  const says = sha256(`${severity} ${steadyReason(p.reason)}`).slice(0, 12);
  // A domain by its one form (as paging folds twins: case, trailing dot, punycode), so a twin's key is
  // one whichever of its spellings the server listed second.
  const name = p.resource === 'domain' ? normalizeDomainName(p.key) : p.key.toLowerCase();
  return boundProblemKey(`${p.resource}:${name}~${says}`);
}

/**
 * What a problem's reason says, without what moves from scan to scan while the record does not: the
 * values it quotes in the order the server listed them (a case twin's two spellings, which a
 * case-blind sort lists either way round) and the numbers (a contact's count of domains sent as
 * "1,204", which grows with each domain). The words and the quoted text stay: a status the API does
 * not document changing to another is still news.
 */
function steadyReason(reason: string): string {
  // Numbers first, so two quoted values whose numbers moved do not swap places in the sort.
  const text = reason.replace(/\d+/g, '#');
  const quoted: string[] = [];
  let words = '';
  let at = 0;
  for (let open = text.indexOf('"'); open >= 0; open = text.indexOf('"', at)) {
    const close = closingQuote(text, open + 1);
    if (close < 0) break;
    words += `${text.slice(at, open)}""`;
    quoted.push(text.slice(open, close + 1));
    at = close + 1;
  }
  return `${words}${text.slice(at)} ${quoted.sort().join(' ')}`;
}

/**
 * Where the quoted value opened before `from` ends (its closing `"`, a `\` escaping the character
 * after it), or -1: one pass, not a pattern that would scan again from each quote of a value with no end.
 */
function closingQuote(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/**
 * The keys of a report's unreadable records. `incomplete` is the report's `source.incomplete`: the
 * reasons each listing read cut short gave, joined by `; `; an unnamed problem whose reason is one of
 * them is that cut ({@link problemKey}).
 */
export function problemKeysOf(problems: readonly Problem[], incomplete: string | undefined): string[] {
  return problems.map((p) =>
    problemKey(p, p.key === null && incomplete !== undefined && isPart(incomplete, p.reason)),
  );
}

/** True when `part` is one of the `; `-joined parts of `whole` (or a run of them). */
function isPart(whole: string, part: string): boolean {
  if (part.length === 0) return false;
  for (let at = whole.indexOf(part); at >= 0; at = whole.indexOf(part, at + 1)) {
    const end = at + part.length;
    if ((at === 0 || whole.startsWith('; ', at - 2)) && (end === whole.length || whole.startsWith('; ', end)))
      return true;
  }
  return false;
}
