/**
 * The API key at the edge of HTTP: whether a key can be sent as a header at all, and scrubbing it
 * out of any text a server sent back. Apart from the transport that uses both because the
 * configuration layer (functions/core/links/secrets.ts) checks a key before any transport exists.
 */

/** Shortest API key accepted (see {@link apiKeyProblem}). */
export const MIN_KEY_LENGTH = 8;

const CHAR_NAMES: Record<number, string> = {
  0: 'a NUL character',
  9: 'a tab',
  10: 'a line feed (LF)',
  13: 'a carriage return (CR)',
  32: 'a space',
  127: 'a DEL character',
};

/**
 * Why `key` cannot be sent as `Authorization: Bearer <key>`, or null when it can. Names the
 * offending character and its position, never the key. The configuration layer calls this to name
 * its variable; the client calls it too, as a last check.
 */
export function apiKeyProblem(key: string): string | null {
  if (key.length === 0) return 'is empty';
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    // RFC 9110 field-value: visible ASCII, SP, HTAB and obs-text; fetch refuses the rest.
    if (code < 0x20 || code === 0x7f) {
      const what =
        CHAR_NAMES[code] ?? `a control character (U+${code.toString(16).toUpperCase().padStart(4, '0')})`;
      if (code !== 0x09) return `holds ${what} at position ${i + 1}; an HTTP header cannot carry it`;
    }
    if (code > 0xff) {
      return `holds a non-Latin-1 character at position ${i + 1}; an HTTP header cannot carry it`;
    }
  }
  const first = key.charCodeAt(0);
  const last = key.charCodeAt(key.length - 1);
  if (first === 0x20 || first === 0x09 || last === 0x20 || last === 0x09) {
    // fetch strips them silently, so the server would see another key than the one configured.
    return 'starts or ends with whitespace; remove it';
  }
  if (key.length < MIN_KEY_LENGTH) {
    // Scrubbing replaces every occurrence: a 3-letter key would redact ordinary words in every error.
    return `is shorter than ${MIN_KEY_LENGTH} characters; a real reseller key is longer, check that the whole key was copied`;
  }
  return null;
}

/**
 * Text that could carry the key, with the key and any Authorization/Bearer value replaced. A server
 * may echo the key in another form: URL-encoded (as a path or query), base64 or base64url (as in a
 * Basic credential or a token), or in another letter case; each of these forms goes too.
 */
export function scrubSecrets(text: string, secret: string): string {
  let out = text;
  if (secret) {
    for (const form of secretForms(secret)) {
      out = out.replace(new RegExp(escapeRegExp(form), 'gi'), '[redacted]');
    }
    // A key with a CR or LF in it reaches messages in pieces; hide every piece long enough to matter.
    for (const piece of splitOnControls(secret)) {
      if (piece.length >= 6 && piece !== secret) {
        for (const form of secretForms(piece)) {
          out = out.replace(new RegExp(escapeRegExp(form), 'gi'), '[redacted]');
        }
      }
    }
  }
  return out
    .replace(/\b(bearer)(\s+)(?!\[redacted\])[^\s"'`,;)\]}]+/gi, '$1$2[redacted]')
    .replace(
      /\b(authorization)(["']?\s*[:=]\s*["']?)(?!bearer\b|\[redacted\])[^\s"'`,;)\]}]+/gi,
      '$1$2[redacted]',
    );
}

/**
 * Whether a text holds `secret` in any form {@link scrubSecrets} takes out: one case-insensitive
 * search, some 10 µs over a 150 KB page (its parse takes 0.3 ms), so every answer can be tested
 * and only one that holds it pays for the scrub.
 */
export function secretTest(secret: string): (text: string) => boolean {
  const pattern = new RegExp(secretForms(secret).map(escapeRegExp).join('|'), 'i');
  return (text) => pattern.test(text);
}

/** The forms a server may echo `secret` in, longest first so a shorter one does not split a longer. */
function secretForms(secret: string): string[] {
  const forms = new Set([
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ k: secret }).toString().slice(2), // form encoding: a space as `+`
  ]);
  // The header carries Latin-1 bytes; a server re-encoding it may have read them as UTF-8 or not.
  for (const encoding of ['utf8', 'latin1'] as const) {
    const bytes = Buffer.from(secret, encoding);
    const base64 = bytes.toString('base64');
    forms.add(base64);
    forms.add(base64.replace(/=+$/, ''));
    forms.add(bytes.toString('base64url'));
  }
  // Quoted in JSON (an error body echoing it): a quote, a backslash or a control character escaped,
  // and a slash too where the server escapes it (PHP's json_encode, so a base64 form's `/`).
  for (const form of [...forms]) {
    const quoted = JSON.stringify(form).slice(1, -1);
    forms.add(quoted);
    forms.add(quoted.replaceAll('/', '\\/'));
  }
  return [...forms].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** The runs of `text` between control characters. */
function splitOnControls(text: string): string[] {
  const pieces: string[] = [];
  let current = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (code < 0x20 || code === 0x7f) {
      if (current) pieces.push(current);
      current = '';
    } else current += ch;
  }
  if (current) pieces.push(current);
  return pieces;
}
