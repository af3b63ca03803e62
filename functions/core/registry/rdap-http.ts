import { isIPv4, isIPv6 } from 'node:net';

/**
 * Where the registry check may send a request: https, or plain http to this machine only (the
 * simulator's registry side in tests and try-outs). RDAP answers travel unauthenticated, so https is
 * what keeps a network in between from inventing a registry's dates.
 */

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Why `url` may not be asked, or null when it may. */
export function rdapUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.username || parsed.password) return 'carries credentials';
  if (parsed.protocol === 'https:') return null;
  if (parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname)) return null;
  return 'is not https (plain http is accepted only to 127.0.0.1, localhost or [::1])';
}

/**
 * Why a redirect from `from` (a URL already asked) to `to` may not be followed, or null when it may.
 * Beyond {@link rdapUrlProblem}: plain http only from plain http (the simulator redirecting within
 * this machine), and nothing on this machine or a private network from a server outside it. A
 * registry on the internet must not steer the scan to the Lambda Runtime API (http on 127.0.0.1)
 * or the instance metadata (169.254.169.254) and have their answer read as the registry's word.
 * Only addresses written out are recognised: a name that resolves to one is not (no DNS here).
 */
export function rdapRedirectProblem(from: string, to: string): string | null {
  const problem = rdapUrlProblem(to);
  if (problem) return problem;
  const source = new URL(from);
  const target = new URL(to);
  if (target.protocol === 'http:' && source.protocol !== 'http:')
    return 'is not https (a redirect from https)';
  if (isLocalAddress(target.hostname) && !isLocalAddress(source.hostname))
    return 'is on this machine or a private network (a redirect from a server outside it)';
  return null;
}

/** A hostname that is this machine or a private (RFC 1918, link-local, unique local) address. */
function isLocalAddress(hostname: string): boolean {
  // `localhost.` is `localhost` with the root's dot written out: the same machine.
  const host = hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIPv4(host)) {
    const [a, b] = host.split('.').map(Number) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  // ::ffff: maps an IPv4 address (the URL parser writes it in hex): refused whichever it maps; so are
  // NAT64's prefixes (64:ff9b::/96, 64:ff9b:1::/48: a gateway reaches the VPC's own addresses) and
  // the deprecated IPv4-compatible ::a.b.c.d (written ::7f00:1).
  return (
    isIPv6(host) &&
    (host === '::' ||
      host === '::1' ||
      /^(f[cd]|fe[89ab]|::ffff:|64:ff9b:|::[0-9a-f]{1,4}:[0-9a-f]{1,4}$)/.test(host))
  );
}

/**
 * A URL as messages, logs and reports show it: without its userinfo, its query and fragment (`?…`
 * marks one left out: a presigned URL's query is a credential), and with every path segment that
 * may be a key written `…` (RDAP_BOOTSTRAP_URL or a bootstrap's server may carry a token in its
 * path, `https://cdn.example/<token>/dns.json`). What is not a URL shows its scheme only.
 */
export function shownUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const scheme = /^[a-z][a-z0-9+.-]{0,30}:\/\//i.exec(url);
    return scheme ? `${scheme[0]}…` : '…';
  }
  const path = parsed.pathname
    .split('/')
    .map((segment) => (mayBeKey(segment) ? '…' : segment))
    .join('/');
  return `${parsed.protocol}//${parsed.host}${path}${parsed.search || parsed.hash ? '?…' : ''}`;
}

/**
 * A path segment that may be a secret: a `name=value` or `;` parameter, a percent-encoded one, one
 * of 16 characters or more with a digit or with both cases (a token, a hex or base64 key: one of
 * letters and digits has no digit once in twenty at 16 characters), or one over 40 characters.
 * Words, dates and file names (`rdap`, `v1`, `dns.json`, `2026-11-20`) are kept.
 */
function mayBeKey(segment: string): boolean {
  return (
    /[=;:@%]/.test(segment) ||
    segment.length > 40 ||
    (segment.length >= 16 && (/[0-9]/.test(segment) || (/[a-z]/.test(segment) && /[A-Z]/.test(segment))))
  );
}

/** The origin of `url` (scheme, host, port): one RDAP server, whose pace the check keeps. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * The body as text, read chunk by chunk and cancelled as soon as it passes `limit` bytes, so a
 * server that sends without end cannot fill the scan's memory. Null when it passed the limit.
 */
export async function readBodyLimited(res: Response, limit: number): Promise<string | null> {
  const declared = res.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > limit) {
    await res.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
}
