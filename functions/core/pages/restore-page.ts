import { createHash } from 'node:crypto';
import { domainToUnicode } from 'node:url';
import { displayDomain } from '../base/text';
import { LAST_DAYS, type RestoreDeadline } from '../findings/quarantine-periods';

/**
 * The restore flow's HTML: small, self-contained pages with one inline stylesheet (allowed by its
 * hash, so the CSP needs no 'unsafe-inline') and no script at all. Every value is escaped. Text
 * may break anywhere: a domain name is up to 253 characters without a space, and a page that must
 * be read and typed from (and its button pressed) cannot be wider than a phone.
 */

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a;overflow-wrap:anywhere}
h1{font-size:1.4rem}code{font-size:1.05em;background:#f2f2f2;padding:0 .25em}
.ok{color:#116329}.bad{color:#a40e26}dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}
dt{color:#555}dd{margin:0}button{font:inherit;padding:.6rem 1.4rem;background:#0b5cad;color:#fff;border:0;border-radius:4px;cursor:pointer}
.note{color:#555;font-size:.9rem}.paid{border-left:4px solid #b35c00;padding:.2rem .6rem;background:#fff8ec}
form.confirm label{display:block;margin:.8rem 0 .3rem}form.confirm input[type=text]{font:inherit;width:100%;box-sizing:border-box;padding:.4rem}
form.confirm .consent{display:flex;gap:.5rem;align-items:flex-start}form.confirm .consent input{margin-top:.35rem}
form.confirm button{margin-top:1rem}form.confirm:invalid button{opacity:.45;pointer-events:none;cursor:not-allowed}`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');
/** CSP source of one inline stylesheet, by its hash. */
export const styleSource = (css: string) => `'sha256-${createHash('sha256').update(css).digest('base64')}'`;

/** Headers every answer carries: never cached, never indexed, never leaks the signed URL as a referrer. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Robots-Tag': 'noindex, nofollow',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** A page of the web API: the shared stylesheet, `extraStyle` (its hash must be in the CSP) and `body`. */
export function renderPage(title: string, body: string, extraStyle = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex,nofollow"><title>${escapeHtml(title)}</title><style>${STYLE}</style>${extraStyle ? `<style>${extraStyle}</style>` : ''}</head>
<body>${body}</body></html>`;
}

const dateTime = (ms: number) => `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;

export interface ConfirmPageInput {
  readonly domain: string;
  readonly quarantinedSince: number | null;
  readonly linkExpires: number;
  /** The query string of this very link, so the form posts to the same URL. */
  readonly formAction: string;
  /** When it must be restored by, or why that is unknown. @default unknown */
  readonly deadline?: RestoreDeadline;
  /** Ask to confirm the registrant's consent (.nl). @default false */
  readonly consentRequired?: boolean;
  /** A restore of the domain sent recently, in words: said first, and another must be asked for. */
  readonly earlierRestore?: string;
  /** When that restore was sent: the box's value, so a form sent again confirms only the restore it named. @default yes */
  readonly earlierRestoreAt?: string;
}

/**
 * A letter in either case, as the server takes it (it lower-cases what is typed): `[üÜ]`. Only
 * where the upper case is one character that lower-cases back to it (`ß` upper-cases to `SS`).
 */
function eitherCase(ch: string): string {
  const upper = ch.toUpperCase();
  // ß's capital is ẞ, though toUpperCase gives SS (which the server reads as another name).
  const capital = ch === 'ß' ? 'ẞ' : [...upper].length === 1 && upper.toLowerCase() === ch ? upper : ch;
  // Each case as written and decomposed (u and U+0308 for ü, as some keyboards send it): the
  // server normalises both. Letters and marks only: no regex syntax in any of them.
  const forms = [...new Set([ch, capital].flatMap((c) => [c, c.normalize('NFD')]))];
  if (forms.length === 1) return ch;
  return forms.every((f) => [...f].length === 1) ? `[${forms.join('')}]` : `(?:${forms.join('|')})`;
}

/**
 * The Unicode form of an IDN that may be typed instead of its punycode, or '' (an ASCII name). A
 * Unicode form with anything but letters, marks, digits, '-' and '.' is left out: it could hold
 * regex syntax.
 */
function typedUnicode(domain: string): string {
  const unicode = domain.includes('xn--') ? domainToUnicode(domain) : '';
  return unicode && unicode !== domain && /^[\p{L}\p{M}\p{N}.-]+$/u.test(unicode) ? unicode : '';
}

/**
 * The `pattern` of the field the name is typed into: the name in ASCII or in Unicode, any case
 * (`BÜCHER.DE`, `STRAẞE.DE` too), accents composed or not, a trailing dot and spaces allowed (the
 * server normalises the same way). Only letters, marks, digits, `-` and `.` reach here (the gate
 * validated the name), and `.` is escaped: the browser compiles
 * the pattern with the `v` flag, where an unneeded escape would make the whole pattern void.
 */
export function typedNamePattern(domain: string): string {
  const unicode = typedUnicode(domain);
  const forms = [domain, ...(unicode ? [unicode] : [])];
  const literal = (name: string) => [...name].map((ch) => (ch === '.' ? '\\.' : eitherCase(ch))).join('');
  return `\\s*(?:${forms.map(literal).join('|')})\\.?\\s*`;
}

function deadlineRow(deadline: RestoreDeadline | undefined): string {
  if (!deadline?.known)
    return `<dt>Restore by</dt><dd>unknown${deadline ? `: ${escapeHtml(deadline.reason)}` : ''}</dd>`;
  const left = deadline.days_to_restore;
  const when = escapeHtml(dateTime(Date.parse(deadline.restore_by)));
  const text =
    left < 0
      ? `${when}: PASSED; the registry may have released the name already`
      : `${when} (${left === 0 ? 'the last day' : `${left} day${left === 1 ? '' : 's'} left`}${left <= LAST_DAYS ? ', LAST DAYS' : ''})`;
  return `<dt>Restore by</dt><dd>${text}</dd>`;
}

/**
 * GET on a valid link for a quarantined domain: what will happen, what it costs, and a form whose
 * button stays inert until the domain name is typed (and, for .nl, the registrant's consent is
 * confirmed). The server refuses a POST without them too: the page has no script to trust.
 */
export function renderConfirmPage(input: ConfirmPageInput): string {
  // An IDN as the alert names it, punycode first and its Unicode form beside it.
  const shown = displayDomain(input.domain);
  const domain = escapeHtml(shown);
  const unicode = typedUnicode(input.domain);
  const typed = `<code>${escapeHtml(input.domain)}</code>${unicode ? ` or <code>${escapeHtml(unicode)}</code>` : ''}`;
  const since = input.quarantinedSince
    ? `<dt>In quarantine since</dt><dd>${escapeHtml(dateTime(input.quarantinedSince))}</dd>`
    : '<dt>Status</dt><dd>in quarantine</dd>';
  const consent = input.consentRequired
    ? `<label class="consent"><input type="checkbox" name="registrant_consent" value="yes" required><span>The registrant (the holder when it was cancelled) asked for or agreed to this restore. The registry restores it only with the registrant's consent.</span></label>`
    : '';
  // The server refuses another restore without the box ticked too (restore_again).
  const earlier = input.earlierRestore
    ? {
        said: `<p class="paid"><strong>${escapeHtml(input.earlierRestore)}</strong></p>`,
        again: `<label class="consent"><input type="checkbox" name="restore_again" value="${escapeHtml(input.earlierRestoreAt ?? 'yes')}" required><span>I checked the domain in the reseller's control panel: send another restore, which may be charged again.</span></label>`,
      }
    : { said: '', again: '' };
  return renderPage(
    `Restore ${shown}?`,
    `<h1>Restore <code>${domain}</code> from quarantine?</h1>${earlier.said}
<dl><dt>Domain</dt><dd><code>${domain}</code></dd>${since}${deadlineRow(input.deadline)}<dt>This link expires</dt><dd>${escapeHtml(dateTime(input.linkExpires))}</dd></dl>
<p class="paid">A restore is a paid action: the reseller charges for it, and its API does not state the price. Check the price with the reseller if in doubt.</p>
<form class="confirm" method="post" action="${escapeHtml(input.formAction)}"><label for="confirm_domain">Type ${typed} to confirm</label><input type="text" id="confirm_domain" name="confirm_domain" required pattern="${escapeHtml(typedNamePattern(input.domain))}" autocomplete="off" autocapitalize="none" spellcheck="false">${consent}${earlier.again}<button type="submit">Restore ${domain}</button></form>
<p class="note">Nothing happens until the name is typed and the button pressed: opening this page (as mail scanners do) changes nothing.</p>`,
  );
}

/** A page that states an outcome: restored, not in quarantine, refused, link invalid, … */
export function renderMessagePage(input: {
  readonly title: string;
  readonly message: string;
  readonly ok: boolean;
}): string {
  return renderPage(
    input.title,
    `<h1 class="${input.ok ? 'ok' : 'bad'}">${escapeHtml(input.title)}</h1><p>${escapeHtml(input.message)}</p>`,
  );
}
