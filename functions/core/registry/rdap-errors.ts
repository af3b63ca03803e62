import { SentinelError } from '../base/errors';
import { shownUrl } from './rdap-http';

/**
 * Failures of the registry check. None of them ever fails a scan: the check turns each into a line
 * of the report's registry problems (info) and counts the domains it could not check. They carry
 * the status (0 when no answer came) and the URL asked as {@link shownUrl} shows it: RDAP needs no
 * key, yet a bootstrap's server may carry a token in its path, and a presigned bootstrap URL in its
 * query.
 */

/** What an RDAP server answered, for errors built from a response. */
export interface RdapFacts {
  readonly status: number;
  readonly url: string;
}

/** Base of every failure talking to an RDAP server or reading the bootstrap. */
export class RdapError extends SentinelError {
  override readonly name: string = 'RdapError';
  readonly status: number;
  readonly url: string;

  constructor(message: string, facts: RdapFacts, options?: { cause?: unknown }) {
    super(message, options);
    this.status = facts.status;
    this.url = /^[a-z][a-z0-9+.-]{0,30}:\/\//i.test(facts.url) ? shownUrl(facts.url) : facts.url;
  }

  /** The subclass that fits a non-success answer that outlived its retries. */
  static fromResponse(facts: RdapFacts, what: string): RdapError {
    if (facts.status === 429)
      return new RdapRateLimitError(`the RDAP server kept answering 429 (rate limited) to ${what}`, facts);
    if (facts.status === 400)
      return new RdapQueryError(
        `the RDAP server could not read the query (HTTP 400 Bad Request) of ${what}`,
        facts,
      );
    if (facts.status === 403)
      return new RdapServerError(
        `the RDAP server refused ${what} (HTTP 403 Forbidden: an access or rate policy)`,
        facts,
      );
    if (facts.status >= 500)
      return new RdapServerError(`the RDAP server failed (HTTP ${facts.status}) on ${what}`, facts);
    return new RdapResponseError(`the RDAP server answered ${what} with HTTP ${facts.status}`, facts);
  }
}

/**
 * An answer about the one name asked, not about the server (RFC 7480 §5): 400, it could not read
 * the query for that name (a name its software does not take). Neither the server's failure nor a
 * finding: the domain is left unchecked and named in an info line. (A 410 is taken as a 404.)
 */
export class RdapQueryError extends RdapError {
  override readonly name: string = 'RdapQueryError';
}

/** 5xx that outlived every retry, or a refusal (403): the server's, whatever the name. */
export class RdapServerError extends RdapError {
  override readonly name: string = 'RdapServerError';
}

/** 429 that outlived every retry, or a Retry-After longer than the check may wait. */
export class RdapRateLimitError extends RdapError {
  override readonly name: string = 'RdapRateLimitError';
  /** The server's Retry-After (ms) when it asked for a longer wait than the check makes. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, facts: RdapFacts, options?: { cause?: unknown; retryAfterMs?: number }) {
    super(message, facts, options?.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** No answer within the timeout, after retries. */
export class RdapTimeoutError extends RdapError {
  override readonly name: string = 'RdapTimeoutError';
}

/** The server could not be reached (DNS, refused, reset after retries). */
export class RdapConnectionError extends RdapError {
  override readonly name: string = 'RdapConnectionError';
}

/**
 * An answer that is not what RFC 9083 describes: not JSON, not a domain object, an object for
 * another name, too large, or a redirect that leaves https or goes round.
 */
export class RdapResponseError extends RdapError {
  override readonly name: string = 'RdapResponseError';
}

/** The bootstrap file (RFC 9224) could not be read or is not one. */
export class RdapBootstrapError extends RdapError {
  override readonly name: string = 'RdapBootstrapError';
}
