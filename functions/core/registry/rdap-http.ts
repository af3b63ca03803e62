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
 * A URL as messages, logs and reports show it: its scheme, its host with every label that may be a
 * token written `…`, and its path with every segment that is not a plain short word written `…`;
 * never its userinfo, query or fragment (`?…` marks one left out: a presigned URL's query is a
 * credential). Enough to recognise the server (`https://rdap.example.nl/domain/…`), nothing a key
 * could hide in: RDAP_BOOTSTRAP_URL or a bootstrap's server may carry a token anywhere, and no shape
 * of token is foreseen. What is not a URL shows its scheme only.
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
    .map((segment) => (segment === '' || isPlainWord(segment) ? segment : '…'))
    .join('/');
  return `${shownHost(parsed)}${path}${parsed.search || parsed.hash ? '?…' : ''}`;
}

/** The origin of `url` as messages and reports show it: {@link originOf} with token-like host labels `…`. */
export function shownOrigin(url: string): string {
  try {
    return shownHost(new URL(url));
  } catch {
    return shownUrl(url);
  }
}

/** Scheme, host and port, each host label but the top-level one that may be a token written `…`. */
function shownHost(parsed: URL): string {
  const host =
    isIPv4(parsed.hostname) || parsed.hostname.startsWith('[')
      ? parsed.hostname
      : parsed.hostname
          .split('.')
          .map((label, i, labels) => (i < labels.length - 1 && mayBeTokenLabel(label) ? '…' : label))
          .join('.');
  return `${parsed.protocol}//${host}${parsed.port ? `:${parsed.port}` : ''}`;
}

/**
 * A host label that may be a token (the URL parser has lowered its case): one of 16 characters or
 * more, or of 8 or more mixing letters and digits (a CDN's or a tunnel's id), punycode (`xn--`) aside.
 * Registry names (`verisign`, `identitydigital`, `nic`) are shorter and of letters.
 */
const mayBeTokenLabel = (label: string): boolean =>
  label.length >= 16 ||
  (label.length >= 8 && !label.startsWith('xn--') && /[0-9]/.test(label) && /[a-z]/.test(label));

/**
 * A path segment shown as it is: under 16 characters once a file extension is set aside (a token is
 * rarely shorter, and below that a guessed one is no longer a key), of words joined by `-`, `_` or
 * `.`, each letters of one case (or capitalised) with at most two digits after them (`v1`), or a
 * number of at most four digits (`2026`); one such part at most with letters and digits, and eight
 * digits at most in all (`2026-11-20`). `rdap`, `domain`, `v1`, `dns.json`, `example.com` are shown;
 * anything else (a token of any shape, `k=value`, a percent-encoded or longer name) is `…`.
 */
function isPlainWord(segment: string): boolean {
  const stem = segment.replace(/\.[a-z]{2,4}$/i, '');
  const parts = stem.split(/[-_.]/);
  return (
    stem.length > 0 &&
    stem.length < 16 &&
    parts.every(
      (part) => /^(?:[a-z]+|[A-Z]+|[A-Z][a-z]+)[0-9]{0,2}$/.test(part) || /^[0-9]{1,4}$/.test(part),
    ) &&
    // Each part passing alone is not enough: `k1-p2-q3-r4` or `1234-5678-9012` is a token's shape.
    parts.filter((part) => /[a-z]/i.test(part) && /[0-9]/.test(part)).length <= 1 &&
    stem.replace(/[^0-9]/g, '').length <= 8
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
