import { ConfigError, failedForNow, SecretError } from '../base/errors';
import { safeText } from '../base/text';
import {
  domainNameProblem,
  type LinkAction,
  type LinkFinding,
  type LinkToken,
  type SigningKey,
  verifyLink,
} from './links';

/**
 * What every acting link (restore, snooze, acknowledge) checks first, in this order, before it
 * touches anything: the method, the domain name, the keys, then the signature and its expiry.
 * Pure; the decisions in restore.ts and action-decision.ts continue from a passed gate.
 */

export type GateRefusalKind =
  | 'method_not_allowed'
  | 'invalid_domain'
  | 'malformed'
  | 'bad_signature'
  | 'unknown_key'
  | 'link_expired'
  /** The signing key could not be read for now (a timeout, throttling, the service, the network): 503. */
  | 'secret_unavailable'
  | 'misconfigured';

export const UNKNOWN_KEY_TITLE = 'This link was signed with another key';

/**
 * A link whose key id this side does not know was most likely made by another setup (a `sentinel
 * link` or scan with another LINK_SIGNING_KEY, a key rotated out): say so, rather than call it changed.
 * Key ids are derived from the keys by a hash and already travel in every link, so naming them
 * reveals nothing about a key.
 */
export function unknownKeyMessage(kid: string, held: readonly string[]): string {
  return `This link was signed with key id ${kid}; this server holds ${held.join(', ') || 'no key'}: are both sides using the same LINK_SIGNING_KEY?`;
}

/** A refusal in the shape both decisions answer with. */
export interface GateRefusal {
  readonly kind: GateRefusalKind;
  readonly status: number;
  readonly title: string;
  readonly message: string;
  /** For the log only: which setting or parameter failed. */
  readonly detail?: string;
}

export interface GateInput {
  readonly action: LinkAction;
  readonly method: string;
  readonly domain: string;
  readonly token: LinkToken;
  /** Epoch ms. */
  readonly now: number;
  readonly signingKeys: () => Promise<readonly SigningKey[]>;
  /** What an expired link's page says (the action's own advice). */
  readonly expiredMessage: string;
  /** What a changed or misused link's page says. */
  readonly invalidMessage: string;
  /** The page a misconfigured function shows (the log gets the detail). */
  readonly unavailableMessage: string;
}

export type GateResult =
  | {
      readonly ok: true;
      readonly method: 'GET' | 'HEAD' | 'POST';
      readonly exp: number;
      /** Snooze and acknowledge: the finding the link was sent for (signed). */
      readonly finding?: LinkFinding;
    }
  | { readonly ok: false; readonly refusal: GateRefusal };

const refuse = (
  kind: GateRefusalKind,
  status: number,
  title: string,
  message: string,
  detail?: string,
): GateResult => ({
  ok: false,
  refusal: { kind, status, title, message, ...(detail === undefined ? {} : { detail }) },
});

/** What a page says when the signing key could not be read for now. */
export const SECRET_UNAVAILABLE_MESSAGE =
  'This service could not read its keys just now. Please try again in a few minutes.';

/**
 * The answer to a signing key that could not be read, wherever it is read (the gate, an action's
 * fresh links, the report view, the finding page): a failure for now (failedForNow) is a 503 to try
 * again; any other (access denied, no such parameter, none configured, not a key) a 500 showing
 * `unavailableMessage`, the operator's to fix. The log's detail names a parameter, never a value.
 */
export function keyReadRefusal(
  error: unknown,
  unavailableMessage: string,
): GateRefusal & { readonly kind: 'secret_unavailable' | 'misconfigured' } {
  const detail =
    error instanceof SecretError || error instanceof ConfigError ? error.message : (error as Error).name;
  return failedForNow(error)
    ? {
        kind: 'secret_unavailable',
        status: 503,
        title: 'Unavailable',
        message: SECRET_UNAVAILABLE_MESSAGE,
        detail,
      }
    : { kind: 'misconfigured', status: 500, title: 'Unavailable', message: unavailableMessage, detail };
}

/** Checks an acting link's request up to a valid signature; never throws. */
export async function checkActingLink(input: GateInput): Promise<GateResult> {
  const method = input.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
    return refuse('method_not_allowed', 405, 'Not allowed', 'Use the link from the alert.');
  }
  const problem = domainNameProblem(input.domain);
  if (problem) {
    return refuse(
      'invalid_domain',
      400,
      'Not a valid domain name',
      `This link is not valid: ${safeText(problem)}.`,
    );
  }
  let keys: readonly SigningKey[];
  try {
    keys = await input.signingKeys();
  } catch (error) {
    // The caller sees a generic page; the log names what is wrong (a parameter name, never a value).
    return { ok: false, refusal: keyReadRefusal(error, input.unavailableMessage) };
  }
  const verdict = verifyLink({
    action: input.action,
    subject: input.domain,
    token: input.token,
    keys,
    now: input.now,
  });
  if (!verdict.ok && verdict.reason === 'expired') {
    return refuse('link_expired', 410, 'This link has expired', input.expiredMessage);
  }
  if (!verdict.ok && verdict.reason === 'outdated') {
    return refuse(
      'link_expired',
      410,
      'This link is out of date',
      `This link was made before links named the problem they were sent for, so it can no longer say what it would ${input.action}. Use the link in the latest alert about ${input.domain}.`,
    );
  }
  if (!verdict.ok && verdict.reason === 'unknown_key') {
    return refuse('unknown_key', 403, UNKNOWN_KEY_TITLE, unknownKeyMessage(verdict.kid, verdict.held));
  }
  if (!verdict.ok) {
    return refuse(
      verdict.reason === 'malformed' ? 'malformed' : 'bad_signature',
      403,
      'This link is not valid',
      input.invalidMessage,
    );
  }
  return verdict.finding
    ? { ok: true, method, exp: verdict.exp, finding: verdict.finding }
    : { ok: true, method, exp: verdict.exp };
}
