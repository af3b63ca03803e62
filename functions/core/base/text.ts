import { domainToASCII, domainToUnicode } from 'node:url';
import { ConfigError } from './errors';

/**
 * Text from the reseller API is data, never layout: a domain name holding CR/LF could forge whole
 * lines in the digest ("Restore: http://phish.example/…"), and bidi or zero-width characters could
 * make one name read as another. Every string from the API passes through here before it reaches
 * the digest, the SMS, a subject, a page or a log line.
 */

/**
 * Controls (Cc: C0, DEL, C1) and the invisible or bidi format characters that reorder or hide text:
 * zero-width space/joiners and marks (U+200B–U+200F), line/paragraph separators (U+2028, U+2029),
 * bidi embeddings and overrides (U+202A–U+202E), word joiner and invisible operators (U+2060–U+2064),
 * bidi isolates (U+2066–U+2069), the BOM (U+FEFF): all of them format characters (Cf) but the two
 * separators, which are listed on their own.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/** One unsafe character, shown as a visible escape: `\u000a`, `\u202e`. */
const escapeChar = (ch: string): string => `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`;

/**
 * A string from the API made safe to show on one line: unsafe characters shown escaped (so the
 * reader sees that something odd was there), everything else as it was.
 */
export function safeText(value: string): string {
  return value.replace(UNSAFE, escapeChar);
}

/**
 * Free text from the API (a registrant's name or company) made inert for a plain-text e-mail: mail
 * clients turn `https://…`, `www.…` and bare host names into links, and whoever registers a domain
 * writes its registrant's name, so "renew at pay-renewal.example" would be a link inside our own
 * trusted alert. A scheme's `://` becomes `[:]//` and a dot before a host's last label `[.]`
 * (`pay-renewal[.]example`), as security teams defang indicators; the text still reads.
 */
export function inertText(value: string): string {
  // Bounded quantifiers (a scheme, a DNS label): a name of megabytes costs linear time, not quadratic.
  return value
    .replace(/\b([a-z][a-z0-9+.-]{0,31}):\/\//gi, '$1[:]//')
    .replace(/([a-z0-9-])\.(?=[a-z][a-z0-9-]{0,61}[a-z0-9](?![a-z0-9-]))/gi, '$1[.]');
}

/**
 * {@link displayDomain} for text a mail or calendar client reads as plain text: a name that is not
 * a host name (letters, digits, hyphens and dots once in ASCII), such as a URL in a hostile record,
 * is shown inert too. A real name stays as it is: a link to it is the customer's own domain.
 */
export function plainDomain(name: string): string {
  const shown = displayDomain(name);
  const ascii = hasUnsafeText(name) || name.length > IDN_MAX_CHARS ? '' : domainToASCII(name);
  return ascii && /^[a-z0-9.-]+$/i.test(ascii) ? shown : inertText(shown);
}

/**
 * The longest name (UTF-16 units) converted between Unicode and punycode. A DNS name is at most 253
 * characters in its ASCII form, and each character of the Unicode form takes at least one there
 * (two units for one outside the BMP): no name past this is a real one, in either form. Punycode
 * costs time quadratic in a label's length (a megabyte name some 30 s), and the schema bounds no
 * name: one hostile record held a scan past its time.
 */
const IDN_MAX_CHARS = 1_024;

/** True when `value` holds a character {@link safeText} would escape. */
export function hasUnsafeText(value: string): boolean {
  UNSAFE.lastIndex = 0;
  const found = UNSAFE.test(value);
  UNSAFE.lastIndex = 0;
  return found;
}

/**
 * A domain name as people should read it in an alert: the registry's ASCII form first (IDNs as
 * punycode), with the Unicode form beside it, so `pаypal.com` with a Cyrillic `а` shows as
 * `xn--pypal-4ve.com (pаypal.com)` and cannot pass for the real name. Anything that is not a
 * clean name is shown escaped.
 */
export function displayDomain(name: string): string {
  if (hasUnsafeText(name)) return safeText(name);
  const ascii = /^[\x21-\x7e]*$/.test(name) ? name : name.length > IDN_MAX_CHARS ? '' : domainToASCII(name);
  if (!ascii) return safeText(name); // not convertible: show it as it came, escaped
  const unicode = ascii.includes('xn--') && ascii.length <= IDN_MAX_CHARS ? domainToUnicode(ascii) : '';
  return unicode && unicode !== ascii ? `${ascii} (${safeText(unicode)})` : ascii;
}

/**
 * A name in the form links, state and the reseller's search use: lower case, one trailing dot
 * dropped, Unicode converted to punycode. Returns the input unchanged when it cannot be converted;
 * {@link domainNameProblem} then says why.
 */
export function normalizeDomainName(name: string): string {
  const lower = name.trim().toLowerCase().replace(/\.$/, '');
  if (/^[\x21-\x7e]*$/.test(lower)) return lower;
  if (hasUnsafeText(lower) || lower.length > IDN_MAX_CHARS) return lower;
  const ascii = domainToASCII(lower);
  return ascii || lower;
}

/**
 * `text` cut to at most `max` UTF-16 units, `…` ending what was cut, never between the two halves
 * of a character (an emoji): a lone half is no text, so JSON readers refuse it and mail shows `?`.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max - 1).replace(/[\ud800-\udbff]$/, '')}…`;
}

/** `1 page`, `3 pages`. */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `1 240`, `1 240.50`: an amount as people read it, in ASCII (it also goes into the SMS). */
export function formatAmount(amount: number): string {
  const [whole = '0', cents] = amount.toFixed(2).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
  return cents === '00' ? grouped : `${grouped}.${cents}`;
}

/**
 * A secret URL as stored (SSM, a setting), trimmed. One with a space, tab or line break inside (two
 * URLs, or one wrapped when pasted) is refused: URL parsing would drop or encode it and reach
 * another URL. The message never shows the value.
 */
export function secretUrlText(text: string, source: string): string {
  const trimmed = text.trim();
  if (/[\s\p{Cc}]/u.test(trimmed))
    throw new ConfigError(
      `${source} must be one URL, without a space or line break inside (the value is not shown: it is a secret)`,
    );
  return trimmed;
}
