import {
  AuthenticationError,
  ConfigError,
  ConnectionError,
  DeadlineError,
  NotFoundError,
  ResellerApiError,
  SecretError,
  StoppedError,
  TimeoutError,
} from '../base/errors';
import { normalizeDomainName, safeText } from '../base/text';
import { type QuarantineOverrides, restoreDeadline, tldOf } from '../findings/quarantine-periods';
import { checkActingLink } from '../links/link-gate';
import type { SigningKey } from '../links/links';
import { type AuditEntry, type ClaimAnswer, earlierRestoreLine, RESTORE_CLAIM_MS } from '../memory/audit';
import { shownCut } from '../memory/state-bounds';
import { mayHaveArrived, type ResellerClient, type RestoreAnswer } from '../reseller/client';
import type { Domain } from '../reseller/schemas';
import { AGAIN_FIELD, againConfirmed, readEarlierRestore, resendUnconfirmed } from './restore-again';
import { type ClaimPort, claimHeldLine, settleClaim } from './restore-claim';
import { type RestoreOutcome, type RestoreOutcomeKind, storeFailedThen } from './restore-outcome';

export type { RestoreOutcome, RestoreOutcomeKind } from './restore-outcome';

/**
 * The restore decision, pure: method, domain, link token, clock and two ports in; an outcome out.
 * No HTTP, no AWS: functions/handlers/restore-handler.ts maps it to API Gateway and `sentinel serve`.
 * GET confirms (mail scanners open every link), HEAD checks the link only, POST restores.
 */

/** What the decision needs from the reseller. */
export interface RestorePort {
  findDomain(name: string): Promise<Domain | null>;
  /**
   * Sends the restore once. Resolves with any 2xx answer; throws for the rest, as
   * {@link ResellerClient.restoreDomain} does (a TimeoutError or ConnectionError once the request
   * went out, a DeadlineError before it did, a StoppedError saying which).
   */
  restoreDomain(name: string): Promise<RestoreAnswer>;
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
  /**
   * The POST's form: `confirm_domain` (the name as typed) and, for TLDs whose registry restores only
   * with the registrant's consent (.nl), `registrant_consent`. Without them nothing is called.
   */
  readonly form?: Readonly<Record<string, string | undefined>>;
  /** QUARANTINE_DAYS, for the restore-by date the confirmation page shows. */
  readonly quarantineDays?: QuarantineOverrides;
  /** This request's claim on the domain's restore, taken before the reseller is called (a confirmed POST only). */
  readonly claim?: ClaimPort;
  /** Records in the audit trail that the restore is about to be sent; a throw sends nothing. */
  readonly writeAhead?: () => Promise<void>;
  /** The audit trail's entries, newest first; null without one. A throw refuses (functions/core/decisions/restore-again.ts). */
  readonly earlierRestores?: () => Promise<readonly AuditEntry[] | null>;
}

/** The form field holding the domain name as the person typed it. */
export const CONFIRM_FIELD = 'confirm_domain';
/** The form field confirming the registrant's consent. */
export const CONSENT_FIELD = 'registrant_consent';
/**
 * TLDs whose registry lets a registrar restore only with the registrant's consent. SIDN: "only the
 * last registrant … can get a quarantined .nl domain name reinstated by a registrar"
 * (https://www.sidn.nl/a/nl-domain-name/undoing-the-cancellation-of-a-domain-name?language_id=2).
 */
export const CONSENT_TLDS: readonly string[] = ['nl'];

/** True when restoring `domain` needs the registrant's consent confirmed first. */
export const needsConsent = (domain: string): boolean => CONSENT_TLDS.includes(tldOf(domain));

/** True when `typed` is `domain` (case, a trailing dot and the Unicode form aside). */
export function typedNameMatches(typed: string | undefined, domain: string): boolean {
  if (typed === undefined || typed.length > 1_000) return false;
  const name = typed.trim();
  return name !== '' && normalizeDomainName(name) === normalizeDomainName(domain);
}

/** True for the values a checkbox or a program sends for "yes". */
export const consentGiven = (value: string | undefined): boolean =>
  value !== undefined && /^(?:yes|on|true|1)$/i.test(value.trim());

const GENERIC_FAILURE =
  'The restore service is not configured correctly. The operator has been told; please try again later.';
const CHECK_FIRST = 'Check the domain’s status in the reseller’s control panel before trying again.';

/**
 * What a person reads when the look-up before a restore was answered 404 (the restore link and
 * `sentinel restore` alike): the API leaves unsaid whether that is no hit or a wrong route.
 */
export const notRestoredFor404 = (domain: string): string =>
  `${domain} was NOT restored: the reseller’s search answered 404 (not found) for ${domain}: it may have left the account. ${CHECK_FIRST}`;

/** Decides what a request to a restore link does and answers. Never throws. */
export async function decideRestore(input: RestoreInput): Promise<RestoreOutcome> {
  const gate = await checkActingLink({
    action: 'restore',
    method: input.method,
    domain: input.domain,
    token: input.token,
    now: input.now,
    signingKeys: input.signingKeys,
    expiredMessage: `Restore links are valid for a limited time. The next scan sends a fresh link while ${input.domain} is in quarantine.`,
    invalidMessage:
      'The link was changed or is for another domain. Use the link from the alert exactly as sent.',
    unavailableMessage: GENERIC_FAILURE,
  });
  if (!gate.ok) return gate.refusal;
  const decided = await decideSigned(input, gate.method, gate.exp);
  // Every POST on a valid link is an attempt at a paid action: the audit trail keeps it, whatever
  // came of it. Refusals before the signature was proven are anyone's noise and are only logged.
  return gate.method === 'POST' ? { ...decided, attempt: true } : decided;
}

/** The decision once the link is proven valid. */
async function decideSigned(
  input: RestoreInput,
  method: 'GET' | 'HEAD' | 'POST',
  exp: number,
): Promise<RestoreOutcome> {
  const domain = input.domain;
  if (method === 'HEAD') return outcome('head', 200, '', '');
  // A restore is paid: a robot that POSTs the form as it found it, or a program that sends no
  // name, reaches nothing, not even a look-up.
  if (method === 'POST' && !typedNameMatches(input.form?.[CONFIRM_FIELD], domain)) {
    return outcome(
      'confirmation_missing',
      422,
      `${domain} was not restored`,
      `Type the domain name (${domain}) into the confirmation field to restore it; nothing was restored.`,
    );
  }
  if (method === 'POST' && needsConsent(domain) && !consentGiven(input.form?.[CONSENT_FIELD])) {
    return outcome(
      'consent_missing',
      422,
      `${domain} was not restored`,
      `Confirm that the registrant agreed to the restore: the registry restores a .${tldOf(domain)} name only with the registrant's consent. Nothing was restored.`,
    );
  }

  if (method === 'POST' && input.claim) return claimedRestore(input, input.claim, exp);
  return lookUpAndRestore(input, method, exp);
}

/**
 * A confirmed POST under its claim on the domain: two clicks at once (a double submit, two people
 * in one channel) must not both look the domain up in quarantine and both pay for its restore.
 * The second finds the claim taken and calls nothing.
 */
async function claimedRestore(input: RestoreInput, claim: ClaimPort, exp: number): Promise<RestoreOutcome> {
  const domain = input.domain;
  let taken: ClaimAnswer;
  try {
    taken = await claim.take();
  } catch (error) {
    return {
      ...outcome(
        'claim_unavailable',
        503,
        `${domain} was not restored`,
        `${domain} was NOT restored: the restore could not be registered first (so that no second click pays again). ${storeFailedThen(error)}`,
      ),
      detail: `the restore claim could not be taken: ${errorDetail(error)}`,
    };
  }
  if (!taken.taken)
    return outcome(
      'restore_claimed',
      409,
      `${domain} is already being restored`,
      `A restore of ${domain} is in progress or done (another request started it within the last ${RESTORE_CLAIM_MS / 60_000} minutes, and ${claimHeldLine(taken.until)}); nothing was sent again. ${CHECK_FIRST}`,
    );
  const decided = await lookUpAndRestore(input, 'POST', exp);
  return settleClaim(decided, domain, claim, taken.until ?? input.now + RESTORE_CLAIM_MS);
}

/** The look-up both GET and POST start with, and for a POST the restore. */
async function lookUpAndRestore(
  input: RestoreInput,
  method: 'GET' | 'POST',
  exp: number,
): Promise<RestoreOutcome> {
  const domain = input.domain;
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
  if (!found.status.includes('quarantine')) return notInQuarantine(domain, found, method);
  // Still in quarantine after a restore sent recently (queued, unknown): another may be paid twice.
  const earlier = await readEarlierRestore(input.earlierRestores, domain, input.now);
  if (!earlier.ok) return earlier.outcome;
  if (method === 'GET') {
    const token = verdictQuery(input.token);
    const resent = earlier.entry ? earlierRestoreLine(earlier.entry, domain) : undefined;
    // A program reading the JSON answer reads it too, and the field another restore needs.
    const said = resent
      ? `${domain} is in quarantine. ${resent} Another restore needs ${AGAIN_FIELD}=yes.`
      : `${domain} is in quarantine and can be restored.`;
    return {
      ...outcome('confirm', 200, `Restore ${domain}?`, said),
      confirm: {
        quarantinedSince: found.date_deleted,
        linkExpires: exp * 1000,
        formAction: token,
        deadline: restoreDeadline(found.domain_name, found.date_deleted, input.now, input.quarantineDays),
        consentRequired: needsConsent(domain),
        ...(resent && earlier.entry ? { earlierRestore: resent, earlierRestoreAt: earlier.entry.at } : {}),
      },
    };
  }
  if (earlier.entry && !againConfirmed(input.form?.[AGAIN_FIELD], earlier.entry))
    return resendUnconfirmed(domain, earlier.entry);
  return restoreFromQuarantine(reseller, found, domain, input.writeAhead);
}

/**
 * Sends the restore of a domain a look-up has just found in quarantine, and decides what came of
 * it: the documented 204, a clear refusal, or, for any other answer or none, what a fresh look-up
 * of the domain shows. The restore link and `sentinel restore` both end here, so a restore that
 * happened is never kept as failed by one of them. Never throws.
 *
 * @param domain the name as the caller asked for it, for the messages and the look-up.
 * @param writeAhead records the restore before it is sent: a restore is paid, and one sent must not
 *   go unrecorded when the process dies before its outcome is written. When it throws, nothing is sent.
 */
export async function restoreFromQuarantine(
  reseller: RestorePort,
  found: Domain,
  domain: string,
  writeAhead?: () => Promise<void>,
): Promise<RestoreOutcome> {
  try {
    await writeAhead?.();
  } catch (error) {
    return {
      ...outcome(
        'audit_unavailable',
        503,
        `${domain} was not restored`,
        `${domain} was NOT restored: the restore could not be recorded in the audit trail before it was sent, so nothing was sent. ${storeFailedThen(error)}`,
      ),
      detail: `the restore could not be written ahead in the audit trail: ${errorDetail(error)}`,
    };
  }
  let answer: RestoreAnswer;
  try {
    answer = await reseller.restoreDomain(found.domain_name); // the account's own spelling of the name
  } catch (error) {
    const failed = await restoreFailure(error, domain, reseller);
    // A DeadlineError is thrown before the request went out, a StoppedError says; anything else, after.
    const unsent = error instanceof DeadlineError || (error instanceof StoppedError && !error.sent);
    return unsent ? failed : { ...failed, sent: true };
  }
  if (answer.status === 204) return { ...restored(domain), sent: true };
  // Not the documented success: a 202 may be queued, a 200 may carry {"success":false}. Only the
  // domain's status tells.
  const answered = `HTTP ${answer.status}${answer.bodyEmpty ? '' : ' with a body'}`;
  const rechecked = await recheck(reseller, domain, {
    answered,
    detail: `the reseller answered the restore with ${answered}, not the documented 204`,
    kind: 'reseller_unexpected',
    // 202 Accepted: taken on, not yet carried out (RFC 9110 15.3.3). A look-up a moment later that
    // still shows quarantine is no proof it will not be; "NOT restored" would give the claim up
    // and invite a second paid restore while the first is still queued.
    stillQuarantinedIsUnknown: answer.status === 202,
  });
  return { ...rechecked, sent: true };
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
  // An answer, not silence: the API leaves unsaid what a search without a hit answers, so a 404 may
  // be "no such domain" or a wrong route; unproven, it is said as it came, and nothing is restored.
  if (error instanceof NotFoundError)
    return {
      ...outcome('lookup_not_found', 502, `${domain} was not restored`, notRestoredFor404(domain)),
      detail: errorDetail(error),
    };
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

function restored(domain: string, confirmed = false): RestoreOutcome {
  return outcome(
    'restored',
    200,
    `${domain} restored`,
    confirmed
      ? `${domain} has been restored from quarantine (confirmed by a fresh look-up of its status).`
      : `${domain} has been restored from quarantine.`,
  );
}

/** Status values a page names; the rest are counted. */
const SHOWN_STATUSES = 5;

function notInQuarantine(domain: string, found: Domain, method: string): RestoreOutcome {
  // The reseller's text, cut: a status of megabytes (or a million of them) made a page beyond the
  // 6 MB a Lambda may answer, and the caller got API Gateway's bare 502.
  const shown = found.status.slice(0, SHOWN_STATUSES).map(shownCut);
  const more = found.status.length - shown.length;
  const status = shown.length ? `${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}` : 'unknown';
  return outcome(
    'not_in_quarantine',
    method === 'POST' ? 409 : 200,
    `${domain} is not in quarantine`,
    `${domain} is not in quarantine (already restored?): its status is ${status}, so there is nothing to restore.`,
  );
}

function unknownOutcome(domain: string, why: string, detail: string): RestoreOutcome {
  return {
    ...outcome(
      'outcome_unknown',
      504,
      `The outcome for ${domain} is unknown`,
      `${why}, so ${domain} may or may not have been restored. ${CHECK_FIRST}`,
    ),
    detail: `outcome unknown: ${detail}`,
  };
}

interface Recheck {
  /** What the restore call got, for the person: `HTTP 500`, `no answer`. */
  readonly answered: string;
  /** What the restore call got, for the log. */
  readonly detail: string;
  readonly kind: RestoreOutcomeKind;
  /** A request that got no answer may still be running: still in quarantine is then no proof. */
  readonly stillQuarantinedIsUnknown?: boolean;
}

/**
 * The restore call's answer was not the documented success and not a clear refusal: a fresh
 * look-up decides. Restored when the domain left quarantine, NOT restored when it is still there,
 * unknown when the look-up fails too.
 */
async function recheck(reseller: RestorePort, domain: string, call: Recheck): Promise<RestoreOutcome> {
  let now: Domain | null;
  try {
    now = await reseller.findDomain(domain);
  } catch (error) {
    const after =
      error instanceof NotFoundError
        ? 'a search for it afterwards answered 404 (not found)'
        : 'its status could not be checked afterwards';
    return unknownOutcome(
      domain,
      `The reseller answered the restore of ${domain} with ${call.answered}, and ${after}`,
      `${call.detail}; the look-up that followed failed: ${errorDetail(error)}`,
    );
  }
  if (now && !now.status.includes('quarantine')) {
    return {
      ...restored(domain, true),
      detail: `${call.detail}; a fresh look-up shows it out of quarantine`,
    };
  }
  if (!now || call.stillQuarantinedIsUnknown) {
    return unknownOutcome(
      domain,
      `The reseller answered the restore of ${domain} with ${call.answered}`,
      `${call.detail}; a fresh look-up ${now ? 'still shows it in quarantine' : 'no longer finds it'}`,
    );
  }
  return {
    ...outcome(
      call.kind,
      502,
      `${domain} was not restored`,
      `${domain} was NOT restored: the reseller answered the restore with ${call.answered}, and a fresh look-up shows the domain still in quarantine. Please try again in a few minutes.`,
    ),
    detail: `${call.detail}; a fresh look-up still shows it in quarantine`,
  };
}

/** What the restore call's failure means for the domain: refused, not done, done after all, or unknown. */
async function restoreFailure(
  error: unknown,
  domain: string,
  reseller: RestorePort,
): Promise<RestoreOutcome> {
  const detail = errorDetail(error);
  if (error instanceof AuthenticationError) {
    return { ...outcome('reseller_auth_failed', 502, 'Restore unavailable', GENERIC_FAILURE), detail };
  }
  if (error instanceof StoppedError) {
    // Stopped (Ctrl-C): no fresh look-up settles it, the stop ends that too.
    if (error.sent)
      return unknownOutcome(
        domain,
        `The restore of ${domain} was stopped after it was sent, before the reseller answered`,
        detail,
      );
    return {
      ...outcome(
        'interrupted',
        503,
        `${domain} was not restored`,
        `${domain} was NOT restored: the restore was stopped before it was sent.`,
      ),
      detail,
    };
  }
  if (error instanceof DeadlineError) {
    // Thrown only before the request went out (after, the client reports a TimeoutError).
    return {
      ...outcome(
        'reseller_unreachable',
        502,
        `${domain} was not restored`,
        `${domain} was NOT restored: the reseller’s API did not answer in time, so the restore was not sent. Please try again in a few minutes.`,
      ),
      detail,
    };
  }
  if (error instanceof TimeoutError) {
    return recheck(reseller, domain, {
      answered: 'no answer in time',
      detail,
      kind: 'outcome_unknown',
      stillQuarantinedIsUnknown: true,
    });
  }
  const status = error instanceof ResellerApiError ? error.status : 0;
  if (status >= 300 && status < 400) return unexpected(domain, status, detail);
  if (status >= 400 && status < 500) return refusal(error as ResellerApiError, domain, reseller);
  return recheck(reseller, domain, {
    answered: status ? `HTTP ${status}` : 'a broken connection',
    detail,
    kind: status >= 200 && status < 300 ? 'reseller_unexpected' : 'reseller_unreachable',
    // A 504 is the reseller's own gateway giving up waiting on its back end, a 502 its gateway
    // losing the back end's answer, a 500 its back end failing at some point of the restore
    // (before or after it was taken: it does not say), a CDN's 520 to 524 its origin failing or
    // silent after it took the request, a broken connection ours lost: each may have left the
    // restore carried out or queued. "NOT restored" would give the claim up and leave no earlier
    // restore to name: the next click paid again. Only a 501 and a 503 refuse to start.
    stillQuarantinedIsUnknown:
      (status >= 500 && status !== 501 && status !== 503) ||
      (error instanceof ConnectionError && mayHaveArrived(error)),
  });
}

/**
 * A 4xx answer. Two people clicking one link at once: the second restore is refused because the
 * first succeeded, and its clicker must read that the domain is out of quarantine, not "refused".
 */
async function refusal(
  error: ResellerApiError,
  domain: string,
  reseller: RestorePort,
): Promise<RestoreOutcome> {
  const detail = errorDetail(error);
  let now: Domain | null | undefined;
  try {
    now = await reseller.findDomain(domain);
    if (now && !now.status.includes('quarantine')) {
      return {
        ...notInQuarantine(domain, now, 'POST'),
        detail: `${detail}; a fresh look-up shows it out of quarantine`,
      };
    }
  } catch {
    // The refusal stands on its own; the look-up was only to explain it better.
  }
  // A 404 is no refusal: the search found the domain in quarantine a moment before, so "refused"
  // would send the person away from a domain they can still restore by hand.
  if (error instanceof NotFoundError && now !== undefined) {
    const answered = `${domain} was NOT restored: the reseller answered its restore with HTTP 404 (not found),`;
    const message = now
      ? `${answered} yet its search finds ${domain} in quarantine: not the answer for a domain it lacks (a wrong route, or the name spelled another way). Restore it in the reseller’s control panel before its restore-by date.`
      : `${answered} and its search no longer finds ${domain}: it may have left the account. ${CHECK_FIRST}`;
    return { ...outcome('refused', 409, `${domain} was not restored`, message), detail };
  }
  // A 429 is no refusal of this restore but of the pace of calls: "refused" sent the person away
  // from a domain a restore a minute later would keep. (The error carries no Retry-After.)
  if (error.status === 429) {
    const message = `${domain} was NOT restored: the reseller’s API is limiting how often it is called (HTTP 429, rate limited), so it did not take the restore: nothing was restored. Please try again in a minute.`;
    return { ...outcome('refused', 409, `${domain} was not restored`, message), detail };
  }
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
