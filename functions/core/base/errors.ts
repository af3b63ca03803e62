/**
 * Typed failures of domain-sentinel. Every error a user can meet says what failed and what to do;
 * none carries a secret (the reseller client redacts its key from response excerpts).
 */

/** An error as a log line or a message's reason says it: its name and message, never its stack. */
export const errorLine = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/** Base of every error this project raises on purpose. */
export class SentinelError extends Error {
  override readonly name: string = 'SentinelError';
}

/** Configuration is missing or invalid; the message names the variable, flag or context key. */
export class ConfigError extends SentinelError {
  override readonly name: string = 'ConfigError';
}

/** What the reseller API answered, for errors built from a response. */
export interface ResponseFacts {
  readonly status: number;
  readonly url: string;
  readonly requestId?: string | undefined;
  readonly bodyExcerpt?: string | undefined;
  /** The `Location` header of a redirect, already scrubbed of secrets. */
  readonly location?: string | undefined;
}

/** The origin a redirect pointed at (never its path or query, which could carry anything). */
function locationOrigin(facts: ResponseFacts): string {
  if (!facts.location) return 'no Location';
  try {
    return new URL(facts.location, facts.url).origin;
  } catch {
    return 'an unreadable Location';
  }
}

/**
 * Base class for every failure talking to the reseller API. Carries the HTTP status (0 when no
 * answer came), the request URL (never the key: it travels in a header) and a short body excerpt.
 */
export class ResellerApiError extends SentinelError {
  override readonly name: string = 'ResellerApiError';
  readonly status: number;
  readonly url: string;
  readonly requestId: string | undefined;
  readonly bodyExcerpt: string | undefined;

  constructor(message: string, facts: ResponseFacts, options?: { cause?: unknown }) {
    super(message, options);
    this.status = facts.status;
    this.url = facts.url;
    this.requestId = facts.requestId;
    this.bodyExcerpt = facts.bodyExcerpt;
  }

  /** Picks the subclass that fits a non-success answer. */
  static fromResponse(facts: ResponseFacts, what: string): ResellerApiError {
    const detail = facts.bodyExcerpt ? `: ${facts.bodyExcerpt}` : '';
    const where = `${what} (${facts.url})`;
    if (facts.status === 401) return refusedKey(facts, where, 'RESELLER_API_KEY');
    if (facts.status === 403) {
      return new AccessDeniedError(
        `the reseller API accepted the API key but it lacks access to ${where} (HTTP 403); give the key access to this resource in the reseller's control panel`,
        facts,
      );
    }
    if (facts.status >= 300 && facts.status < 400) {
      return new UnexpectedResponseError(
        `the reseller API answered ${what} with a redirect (HTTP ${facts.status}) to ${locationOrigin(facts)}; redirects are never followed, so the key is not sent elsewhere: check the base URL (RESELLER_BASE_URL, or the account's resellerBaseUrl)`,
        facts,
      );
    }
    if (facts.status < 300) {
      return new UnexpectedResponseError(
        `the reseller API answered ${where} unexpectedly (HTTP ${facts.status})${detail}`,
        facts,
      );
    }
    if (facts.status === 404) return new NotFoundError(`not found (HTTP 404): ${where}${detail}`, facts);
    if (facts.status === 429) {
      return new RateLimitError(`rate limited by the reseller API (HTTP 429) after retries: ${where}`, facts);
    }
    if (facts.status >= 500) {
      return new ServerError(
        `the reseller API failed (HTTP ${facts.status}) after retries: ${where}${detail}`,
        facts,
      );
    }
    return new RequestRejectedError(
      `the reseller API rejected ${where} (HTTP ${facts.status})${detail}`,
      facts,
    );
  }
}

/** 401 (and, as its subclass, 403): the key is wrong, revoked, for the other environment, or lacks access. */
export class AuthenticationError extends ResellerApiError {
  override readonly name: string = 'AuthenticationError';
}

/** What each refused key's error was asked for, so {@link withKeySource} can say it again with the key's real source. */
const refusedFor = new WeakMap<Error, string>();

/** A refused key (HTTP 401) for `where`, telling to check `keySource`, where the key was read from. */
function refusedKey(
  facts: ResponseFacts,
  where: string,
  keySource: string,
  cause?: unknown,
): AuthenticationError {
  const error = new AuthenticationError(
    `the reseller API refused the API key (HTTP 401) for ${where}; check ${keySource} and that it belongs to this environment's base URL`,
    facts,
    cause === undefined ? undefined : { cause },
  );
  refusedFor.set(error, where);
  return error;
}

/**
 * The error of a scan whose key was not RESELLER_API_KEY (an account's apiKeyEnv, an SSM
 * parameter): a refused key names `keySource`, so the user checks the key that was sent; any other
 * error is returned as it is.
 */
export function withKeySource(error: unknown, keySource: string): unknown {
  const where = error instanceof AuthenticationError ? refusedFor.get(error) : undefined;
  if (where === undefined) return error;
  const { status, url, requestId, bodyExcerpt } = error as AuthenticationError;
  return refusedKey({ status, url, requestId, bodyExcerpt }, where, keySource, error);
}

/** 403: the key was accepted but may not use this resource. */
export class AccessDeniedError extends AuthenticationError {
  override readonly name: string = 'AccessDeniedError';
}

/**
 * An answer outside the documented ones: any redirect (never followed), a 2xx other than the one
 * documented for the call, or a success body that cannot be what it claims to be.
 */
export class UnexpectedResponseError extends ResellerApiError {
  override readonly name: string = 'UnexpectedResponseError';
}

/** A response larger than the client's `maxResponseBytes`; reading stopped as soon as that was known. */
export class ResponseTooLargeError extends ResellerApiError {
  override readonly name: string = 'ResponseTooLargeError';
}

/** 404. */
export class NotFoundError extends ResellerApiError {
  override readonly name: string = 'NotFoundError';
}

/** 429 that outlived every retry. */
export class RateLimitError extends ResellerApiError {
  override readonly name: string = 'RateLimitError';
}

/** 5xx that outlived every retry. */
export class ServerError extends ResellerApiError {
  override readonly name: string = 'ServerError';
}

/** Any other 4xx: the API understood the request and refused it (restore of a domain not in quarantine, …). */
export class RequestRejectedError extends ResellerApiError {
  override readonly name: string = 'RequestRejectedError';
}

/** No answer within the per-request timeout, after retries. */
export class TimeoutError extends ResellerApiError {
  override readonly name: string = 'TimeoutError';
}

/** The base URL could not be reached at all (DNS, refused, reset after retries). */
export class ConnectionError extends ResellerApiError {
  override readonly name: string = 'ConnectionError';
  /** The socket-level code (ECONNREFUSED, ECONNRESET, ENOTFOUND, …), when Node gave one. */
  readonly code: string | undefined;
  constructor(
    message: string,
    facts: ResponseFacts & { readonly code?: string | undefined },
    options?: { cause?: unknown },
  ) {
    super(message, facts, options);
    this.code = facts.code;
  }
}

/** A response that is not the documented envelope (not JSON, no pagination, …). Records that do not parse are problems, not this. */
export class SchemaValidationError extends ResellerApiError {
  override readonly name: string = 'SchemaValidationError';
}

/** The listing could not be read whole (the account changed under the scan, a runaway page count, …). */
export class IncompleteListingError extends SentinelError {
  override readonly name: string = 'IncompleteListingError';
  /** True when reading again may succeed (the account changed under the scan); false for a runaway page count. */
  readonly retryable: boolean;
  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable;
  }
}

/** The scan's time budget ran out before the account was read. */
export class DeadlineError extends SentinelError {
  override readonly name: string = 'DeadlineError';
}

/**
 * A request stopped by the command's signal (Ctrl-C) before its answer came. `sent` says whether it
 * had gone out: a restore that went out may be carried out (and billed) all the same.
 */
export class StoppedError extends SentinelError {
  override readonly name: string = 'StoppedError';
  constructor(
    message: string,
    readonly sent: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Publishing the alert failed after the SDK's retries. */
export class PublishError extends SentinelError {
  override readonly name: string = 'PublishError';
}

/** A secret could not be read from its store; the message names the parameter, never a value. */
export class SecretError extends SentinelError {
  override readonly name: string = 'SecretError';
}

/** What an AWS SDK error says about itself (its shape, so the core needs no SDK). */
interface SdkErrorShape {
  readonly name?: unknown;
  readonly code?: unknown;
  readonly $fault?: unknown;
  readonly $retryable?: { readonly throttling?: unknown };
  readonly $metadata?: { readonly httpStatusCode?: unknown };
  readonly cause?: unknown;
}

/** The names the AWS SDK gives throttling, as its own retry strategy knows them. */
const THROTTLING_NAMES: ReadonlySet<string> = new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'SlowDown',
]);

/**
 * The codes Node and its HTTP client give a call the network failed: no answer, or none in time.
 * Not the machine's own (ENOENT, EACCES): trying again in a while changes nothing for those.
 */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'EPROTO',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** Causes followed at most: a chain of wrappers is a few deep (ours, Powertools', the SDK's). */
const CAUSES_FOLLOWED = 8;

/**
 * Whether a call to an AWS service failed for now, so that trying again in a while may do: the
 * service's own fault (5xx), throttling, a call that timed out (the clients' bound), or the network
 * (a network code of Node's, such as ECONNRESET, or EAI_AGAIN: DNS did not answer), in `error` or any of its causes. A refusal (access
 * denied, no such parameter or object) or what was read being wrong is not: it waits for the
 * operator.
 */
export function failedForNow(error: unknown): boolean {
  let at = error;
  for (let depth = 0; depth < CAUSES_FOLLOWED && at && typeof at === 'object'; depth++) {
    const { name, code, $fault, $retryable, $metadata, cause } = at as SdkErrorShape;
    const status = $metadata?.httpStatusCode;
    if (
      $fault === 'server' ||
      (typeof status === 'number' && (status === 429 || status >= 500)) ||
      $retryable?.throttling === true ||
      name === 'TimeoutError' ||
      (typeof name === 'string' && THROTTLING_NAMES.has(name)) ||
      (typeof code === 'string' && NETWORK_CODES.has(code))
    )
      return true;
    at = cause;
  }
  return false;
}

/**
 * Client faults that are another writer, not a refusal: a condition that did not hold (a scan's
 * lease: the state store's StateConflictError carries it as its cause), an item in a transaction,
 * a write of another region. Each passes; and any error the SDK marks retryable (`$retryable`).
 */
const CONFLICT_NAMES: ReadonlySet<string> = new Set([
  'ConditionalCheckFailedException',
  'TransactionConflictException',
  'TransactionCanceledException',
  'TransactionInProgressException',
  'ReplicatedWriteConflictException',
]);

/**
 * Whether an AWS service refused the call for good: a client fault (access denied, what was sent
 * refused as invalid, no such table) in `error` or any of its causes, and nothing that fails for
 * now ({@link failedForNow}) or is a conflict with another writer ({@link CONFLICT_NAMES}). Trying
 * again will not help until the operator mends it. An error of no AWS shape (a file, a fake) is neither.
 */
export function refusedForGood(error: unknown): boolean {
  if (failedForNow(error)) return false;
  let refused = false;
  let at = error;
  for (let depth = 0; depth < CAUSES_FOLLOWED && at && typeof at === 'object'; depth++) {
    const { name, $fault, $retryable, cause } = at as SdkErrorShape;
    if ($retryable !== undefined || (typeof name === 'string' && CONFLICT_NAMES.has(name))) return false;
    if ($fault === 'client') refused = true;
    at = cause;
  }
  return refused;
}
