import { ConfigError } from '../core/base/errors';
import { secretUrlText } from '../core/base/text';
import { rdapRedirectProblem } from '../core/registry/rdap-http';
import { connectionCause, errorCode } from '../core/reseller/connection';
import { isLoopbackUrl } from '../core/scan/config';

/**
 * The heartbeat outside AWS (HEARTBEAT_URL, `scan --heartbeat-url`; on AWS the SecureString
 * HEARTBEAT_URL_PARAMETER names): a GET to the URL after every complete scan and to `URL/fail` after
 * a failed one, the convention of Healthchecks.io and Cronitor, so a scan that stopped running or
 * broke is seen even when what broke is the AWS account's own alarms. The URL is a secret (whoever
 * has it can report the scan healthy): no message ever carries more of it than its host. A
 * heartbeat that fails is said, never thrown: the scan's own result stands either way.
 */

/** How long a ping may take before it is given up. */
export const HEARTBEAT_TIMEOUT_MS = 10_000;
/** Redirects a ping follows, as fetch's own limit is 20: a loop fails in a few requests. */
const MAX_REDIRECTS = 5;

/** What a scan reports: it completed, or it failed. */
export type ScanOutcome = 'complete' | 'failed';

/** The outcome of one ping, in words that name only the host. */
export type PingResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Sends the pings of a scan; never throws. */
export interface Heartbeat {
  /** The host pinged: what messages may name. */
  readonly host: string;
  /**
   * @param timeoutMs how long the ping may take, redirects included: less than
   *   {@link HEARTBEAT_TIMEOUT_MS} when the run has less time left (a Lambda stopped by its timeout
   *   fails a scan that completed). @default HEARTBEAT_TIMEOUT_MS
   */
  ping(outcome: ScanOutcome, timeoutMs?: number): Promise<PingResult>;
}

/**
 * Checks a heartbeat URL: https, or http to this machine only (it is a secret, sent in clear over
 * http). `source` names where it came from; the message never repeats the URL.
 */
export function checkHeartbeatUrl(text: string, source: string): URL {
  const trimmed = secretUrlText(text, source);
  const url = URL.canParse(trimmed) ? new URL(trimmed) : undefined;
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password)
    throw new ConfigError(
      `${source} must be an http(s) URL such as https://hc-ping.com/<uuid> (the value is not shown: it is a secret)`,
    );
  if (!mayPing(url))
    throw new ConfigError(
      `${source} must be an https URL (http only to 127.0.0.1, [::1] or localhost): whoever reads it can report the scan healthy`,
    );
  return url;
}

/** A URL a ping may go to, redirects included: https, or http to this machine only, no user or password. */
const mayPing = (url: URL): boolean =>
  !url.username &&
  !url.password &&
  (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackUrl(url)));

/** `URL/fail` (and `URL/<account>/fail`): the path extended, any query kept where it was. */
export function pingUrl(base: URL, outcome: ScanOutcome, account?: string): URL {
  const url = new URL(base.href);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = `${path}${account ? `/${encodeURIComponent(account)}` : ''}${outcome === 'failed' ? '/fail' : ''}`;
  return url;
}

/**
 * What went wrong with a ping, without the URL's path (the secret): a timeout, the network error's
 * code, or, when it has none, why fetch refused (`bad port: …`), said of the URL's origin alone.
 */
function pingFailure(error: unknown, timeoutMs: number | null, url: URL): string {
  if (timeoutMs !== null) return `no answer within ${Math.round(timeoutMs / 100) / 10} s`;
  const code = errorCode(error);
  if (code) return `the request failed (${code})`;
  // Another error's own words may quote the whole URL: only fetch's refusal of a port is said.
  const cause = connectionCause(error, url.origin);
  return `the request failed (${cause.startsWith('bad port:') ? cause : (error as Error).name})`;
}

/**
 * The heartbeat of one URL; with `account`, the account's own check under it (`URL/<account>`,
 * Healthchecks.io's slug under a ping key), so one account's failure is not hidden by another's
 * success.
 */
export function heartbeatOf(
  base: URL,
  options: { readonly account?: string; readonly fetch?: typeof fetch } = {},
): Heartbeat {
  const send = options.fetch ?? globalThis.fetch;
  return {
    host: base.host,
    async ping(outcome, timeoutMs = HEARTBEAT_TIMEOUT_MS) {
      const url = pingUrl(base, outcome, options.account);
      const wait = Math.min(timeoutMs, HEARTBEAT_TIMEOUT_MS);
      // A run at its end: a ping begun now is cut off with it (or aborted half sent), so none is.
      if (!(wait > 0)) return { ok: false, reason: 'no time left before the run ends: not sent' };
      const abort = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        abort.abort();
      }, wait);
      try {
        return await pingFollowing(send, url, abort.signal);
      } catch (error) {
        return { ok: false, reason: pingFailure(error, timedOut ? wait : null, url) };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * One ping, following only the redirects {@link mayPing} allows: fetch's own `follow` would take an
 * https ping to plain http elsewhere (the fetch standard allows it), and send the URL in clear. Nor
 * from a service outside to this machine or a private network (the rule of the RDAP lookups): on
 * Lambda, http://127.0.0.1:9001 is the Runtime API, and a ping service must not steer a GET there.
 */
async function pingFollowing(send: typeof fetch, url: URL, signal: AbortSignal): Promise<PingResult> {
  let target = url;
  for (let redirects = 0; ; redirects++) {
    const answer = await send(target, { method: 'GET', signal, redirect: 'manual' });
    await answer.body?.cancel().catch(() => undefined);
    const location = answer.status >= 300 && answer.status < 400 ? answer.headers.get('location') : null;
    if (location === null)
      return answer.ok ? { ok: true } : { ok: false, reason: `it answered HTTP ${answer.status}` };
    const next = URL.canParse(location, target) ? new URL(location, target) : undefined;
    if (!next || !mayPing(next) || rdapRedirectProblem(target.href, next.href) !== null)
      return {
        ok: false,
        reason: `it answered HTTP ${answer.status}, a redirect to a URL it may not use (https only, or http to this machine; nothing on this machine or a private network from a service outside it)`,
      };
    if (redirects === MAX_REDIRECTS)
      return {
        ok: false,
        reason: `it answered HTTP ${answer.status}, more than ${MAX_REDIRECTS} redirects in a row`,
      };
    target = next;
  }
}

/** The line that says a ping failed: the host and why, and that the scan's own result stands. */
export const heartbeatFailureLine = (heartbeat: Heartbeat, outcome: ScanOutcome, reason: string): string =>
  `the heartbeat ${outcome === 'failed' ? '/fail ping' : 'ping'} to ${heartbeat.host} failed: ${reason}; the scan's own result stands`;
