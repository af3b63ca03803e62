import {
  AuthenticationError,
  ConfigError,
  NotFoundError,
  RequestRejectedError,
  ResellerApiError,
  SecretError,
  TimeoutError,
} from './errors';
import { domainNameProblem, type SigningKey, verifyRestoreLink } from './links';
import type { Domain } from './schemas';
import { safeText } from './text';

/**
 * The restore decision, pure: method, domain, link token, clock and two ports in; an outcome out.
 * No HTTP, no AWS: functions/adapters/restore-http.ts maps it to API Gateway and `sentinel serve`.
 * GET confirms (mail scanners open every link), HEAD checks the link only, POST restores.
 */

/** What the decision needs from the reseller. */
export interface RestorePort {
  findDomain(name: string): Promise<Domain | null>;
  restoreDomain(name: string): Promise<void>;
}

export interface RestoreInput {
  readonly method: string;
  /** As it arrived in the path, decoded; validated here before anything else. */
  readonly domain: string;
  readonly token: Readonly<Record<string, string | undefined>>;
  /** Epoch ms. */
  readonly now: number;
  /** Loaded lazily: a misconfigured key is an outcome, not a crash. */
  readonly signingKeys: () => Promise<readonly SigningKey[]>;
  /** Built lazily, only once the link is proven valid and the method needs the reseller. */
  readonly reseller: () => Promise<RestorePort>;
}

export type RestoreOutcomeKind =
  | 'method_not_allowed'
  | 'invalid_domain'
  | 'malformed'
  | 'bad_signature'
  | 'link_expired'
  | 'head'
  | 'confirm'
  | 'not_in_account'
  | 'not_in_quarantine'
  | 'restored'
  | 'refused'
  | 'reseller_auth_failed'
  | 'reseller_unexpected'
  | 'reseller_unreachable'
  | 'outcome_unknown'
  | 'misconfigured';

export interface RestoreOutcome {
  readonly kind: RestoreOutcomeKind;
  readonly status: number;
  readonly title: string;
  /** For the person (or program) who followed the link. */
  readonly message: string;
  /** For the log only: what an operator acts on (which parameter failed, what the reseller said). */
  readonly detail?: string;
  /** Present on `confirm`: what the confirmation page shows. */
  readonly confirm?: {
    readonly quarantinedSince: number | null;
    readonly linkExpires: number;
    /** The link's own query, so the form posts to the very same URL. */
    readonly formAction: string;
  };
}

const GENERIC_FAILURE =
  'The restore service is not configured correctly. The operator has been told; please try again later.';
const CHECK_FIRST = 'Check the domain’s status in the reseller’s control panel before trying again.';

/** Decides what a request to a restore link does and answers. Never throws. */
export async function decideRestore(input: RestoreInput): Promise<RestoreOutcome> {
  const method = input.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
    return outcome('method_not_allowed', 405, 'Not allowed', 'Use the link from the alert.');
  }
  const problem = domainNameProblem(input.domain);
  if (problem) {
    return outcome(
      'invalid_domain',
      400,
      'Not a valid domain name',
      `This link is not valid: ${safeText(problem)}.`,
    );
  }
  const domain = input.domain;

  let keys: readonly SigningKey[];
  try {
    keys = await input.signingKeys();
  } catch (error) {
    return misconfigured(error);
  }
  const verdict = verifyRestoreLink({ domain, token: input.token, keys, now: input.now });
  if (!verdict.ok && verdict.reason === 'expired') {
    return outcome(
      'link_expired',
      410,
      'This link has expired',
      `Restore links are valid for a limited time. The next scan sends a fresh link while ${domain} is in quarantine.`,
    );
  }
  if (!verdict.ok) {
    return outcome(
      verdict.reason === 'malformed' ? 'malformed' : 'bad_signature',
      403,
      'This link is not valid',
      'The link was changed or is for another domain. Use the link from the alert exactly as sent.',
    );
  }
  if (method === 'HEAD') return outcome('head', 200, '', '');

  let reseller: RestorePort;
  try {
    reseller = await input.reseller();
  } catch (error) {
    return misconfigured(error);
  }

  // Both GET and POST look first: a replayed POST, or one for a domain restored meanwhile, must not
  // call restore again (the reseller may charge for it, and its answer would be misleading).
  let found: Domain | null;
  try {
    found = await reseller.findDomain(domain);
  } catch (error) {
    return lookupFailure(error, domain);
  }
  if (!found) {
    return outcome('not_in_account', 404, 'Domain not found', `${domain} is not in this reseller account.`);
  }
  const status = found.status.map((s) => safeText(s)).join(', ') || 'unknown';
  if (!found.status.includes('quarantine')) {
    return outcome(
      'not_in_quarantine',
      method === 'POST' ? 409 : 200,
      `${domain} is not in quarantine`,
      `${domain} is not in quarantine (already restored?): its status is ${status}, so there is nothing to restore.`,
    );
  }
  if (method === 'GET') {
    const token = verdictQuery(input.token);
    return {
      ...outcome('confirm', 200, `Restore ${domain}?`, `${domain} is in quarantine and can be restored.`),
      confirm: { quarantinedSince: found.date_deleted, linkExpires: verdict.exp * 1000, formAction: token },
    };
  }

  try {
    await reseller.restoreDomain(found.domain_name); // the account's own spelling of the name
  } catch (error) {
    return restoreFailure(error, domain);
  }
  return outcome('restored', 200, `${domain} restored`, `${domain} has been restored from quarantine.`);
}

function outcome(kind: RestoreOutcomeKind, status: number, title: string, message: string): RestoreOutcome {
  return { kind, status, title, message };
}

function verdictQuery(token: RestoreInput['token']): string {
  return `?${new URLSearchParams({ exp: String(token.exp), kid: String(token.kid), sig: String(token.sig) })}`;
}

/** The caller sees a generic page; the log names what is wrong (a parameter name, never a value). */
function misconfigured(error: unknown): RestoreOutcome {
  const detail =
    error instanceof SecretError || error instanceof ConfigError ? error.message : (error as Error).name;
  return { ...outcome('misconfigured', 500, 'Restore unavailable', GENERIC_FAILURE), detail };
}

/** The reseller could not tell us the domain's status: nothing was restored. */
function lookupFailure(error: unknown, domain: string): RestoreOutcome {
  if (error instanceof AuthenticationError) {
    return {
      ...outcome('reseller_auth_failed', 502, 'Restore unavailable', GENERIC_FAILURE),
      detail: error.message,
    };
  }
  return {
    ...outcome(
      'reseller_unreachable',
      502,
      'The reseller could not be reached',
      `${domain} was NOT restored: the reseller’s API did not answer when its status was checked. Please try again in a few minutes.`,
    ),
    detail: errorDetail(error),
  };
}

/** What the restore call's failure means for the domain: refused, not done, or unknown. */
function restoreFailure(error: unknown, domain: string): RestoreOutcome {
  const detail = errorDetail(error);
  if (error instanceof TimeoutError) {
    return {
      ...outcome(
        'outcome_unknown',
        504,
        `The outcome for ${domain} is unknown`,
        `The reseller did not answer the restore of ${domain} in time, so it may or may not have been restored. ${CHECK_FIRST}`,
      ),
      detail: `outcome unknown: ${detail}`,
    };
  }
  if (error instanceof AuthenticationError) {
    return { ...outcome('reseller_auth_failed', 502, 'Restore unavailable', GENERIC_FAILURE), detail };
  }
  if (error instanceof ResellerApiError && error.status >= 300 && error.status < 400) {
    return unexpected(domain, error.status, detail);
  }
  if (error instanceof RequestRejectedError || error instanceof NotFoundError) {
    const said = error.bodyExcerpt ? ` It said: ${safeText(error.bodyExcerpt).slice(0, 160)}` : '';
    return {
      ...outcome(
        'refused',
        409,
        `${domain} was not restored`,
        `The reseller refused to restore ${domain} (HTTP ${error.status}).${said}`,
      ),
      detail,
    };
  }
  if (error instanceof ResellerApiError && error.status >= 200 && error.status < 300) {
    return unexpected(domain, error.status, detail);
  }
  return {
    ...outcome(
      'reseller_unreachable',
      502,
      `${domain} was not restored`,
      `${domain} was NOT restored: the reseller’s API failed${error instanceof ResellerApiError && error.status ? ` (HTTP ${error.status})` : ''}. Please try again in a few minutes.`,
    ),
    detail,
  };
}

function unexpected(domain: string, status: number, detail: string): RestoreOutcome {
  return {
    ...outcome(
      'reseller_unexpected',
      502,
      `${domain} was not restored`,
      `The reseller answered unexpectedly (HTTP ${status}); the domain was NOT restored. ${CHECK_FIRST}`,
    ),
    detail,
  };
}

function errorDetail(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
