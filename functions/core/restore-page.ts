import { createHash } from 'node:crypto';

/**
 * The restore flow's HTML: small, self-contained pages with one inline stylesheet (allowed by its
 * hash, so the CSP needs no 'unsafe-inline') and no script at all. Every value is escaped.
 */

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.4rem}code{font-size:1.05em;background:#f2f2f2;padding:0 .25em}
.ok{color:#116329}.bad{color:#a40e26}dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}
dt{color:#555}dd{margin:0}button{font:inherit;padding:.6rem 1.4rem;background:#0b5cad;color:#fff;border:0;border-radius:4px;cursor:pointer}
.note{color:#555;font-size:.9rem}`;

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
}

/** GET on a valid link for a quarantined domain: what will happen, and one button. */
export function renderConfirmPage(input: ConfirmPageInput): string {
  const domain = escapeHtml(input.domain);
  const since = input.quarantinedSince
    ? `<dt>In quarantine since</dt><dd>${escapeHtml(dateTime(input.quarantinedSince))}</dd>`
    : '<dt>Status</dt><dd>in quarantine</dd>';
  return renderPage(
    `Restore ${input.domain}?`,
    `<h1>Restore <code>${domain}</code> from quarantine?</h1>
<dl><dt>Domain</dt><dd><code>${domain}</code></dd>${since}<dt>This link expires</dt><dd>${escapeHtml(dateTime(input.linkExpires))}</dd></dl>
<p>Restoring takes the domain out of the registry's redemption period. The reseller may charge a restore fee.</p>
<form method="post" action="${escapeHtml(input.formAction)}"><button type="submit">Restore ${domain}</button></form>
<p class="note">Nothing happens until you press the button: opening this page (as mail scanners do) changes nothing.</p>`,
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
