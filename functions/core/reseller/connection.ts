/**
 * Why a request got no answer at all, in words a person can act on. fetch throws one
 * `TypeError: fetch failed` for every such failure; what happened is in its `cause` (Node's socket,
 * DNS or TLS error, with a `code`), sometimes a level or two down.
 */

/** The error's code (`ECONNREFUSED`, `ENOTFOUND`, `ERR_SSL_…`), from it or its causes. */
export function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The innermost message of the cause chain: the socket's own words rather than "fetch failed". */
function innermostMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  let current = (error as { cause?: unknown } | undefined)?.cause;
  for (let depth = 0; current && depth < 4; depth++) {
    const text = (current as { message?: unknown }).message;
    if (typeof text === 'string' && text) message = text;
    current = (current as { cause?: unknown }).cause;
  }
  return message;
}

const CERTIFICATE_WORDS: Readonly<Record<string, string>> = {
  CERT_HAS_EXPIRED: 'its certificate has expired',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its certificate is for another host name',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its certificate chain ends in a self-signed certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its certificate cannot be verified (an incomplete chain?)',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its certificate is issued by an authority this machine does not trust',
};

/**
 * What went wrong reaching `url`, its code first: `ECONNREFUSED: nothing listens on 127.0.0.1:1234`,
 * `ENOTFOUND: DNS has no address for api.example`, `ERR_SSL_…: TLS failed, …`, `ETIMEDOUT: timeout, …`.
 */
export function connectionCause(error: unknown, url: string): string {
  const code = errorCode(error);
  const { host, hostname, port } = new URL(url);
  const words = code && causeWords(code, host, hostname);
  if (words) return `${code}: ${words}`;
  const message = innermostMessage(error);
  // fetch refuses ports that browsers block (1, 9, 25, …) before it connects.
  if (message === 'bad port') return `bad port: fetch refuses port ${port}, a port browsers block`;
  return code ? `${code}: ${message}` : message;
}

function causeWords(code: string, host: string, hostname: string): string | undefined {
  if (code === 'ECONNREFUSED') return `nothing listens on ${host}`;
  if (code === 'ENOTFOUND') return `DNS has no address for ${hostname}`;
  if (code === 'EAI_AGAIN') return `DNS did not answer for ${hostname}; try again`;
  if (code === 'ECONNRESET') return `${host} closed the connection`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `no route to ${host}`;
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')
    return `timeout, no connection to ${host} in time`;
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER')
    return `TLS failed, ${host} does not speak TLS there; is the base URL an http:// one?`;
  if (CERTIFICATE_WORDS[code]) return `TLS failed, ${CERTIFICATE_WORDS[code]}`;
  if (/^(ERR_SSL_|ERR_TLS_|CERT_)/.test(code)) return 'TLS failed';
  return undefined;
}

/**
 * `sleep` that ends at once, throwing the signal's reason, when `signal` aborts: a wait between
 * retries (up to a minute of Retry-After) must not outlast a Ctrl-C.
 */
export function abortable(
  sleep: (ms: number) => Promise<void>,
  signal: AbortSignal | undefined,
): (ms: number) => Promise<void> {
  if (!signal) return sleep;
  return (ms) => {
    signal.throwIfAborted();
    let stop = () => {};
    const aborted = new Promise<never>((_, reject) => {
      stop = () => reject(signal.reason);
      signal.addEventListener('abort', stop, { once: true });
    });
    return Promise.race([sleep(ms), aborted]).finally(() => signal.removeEventListener('abort', stop));
  };
}
