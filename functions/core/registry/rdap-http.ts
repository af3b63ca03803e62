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
