import {
  AuthenticationError,
  ConfigError,
  errorLine,
  NotFoundError,
  refusedForGood,
  SecretError,
  SentinelError,
} from '../base/errors';
import { type DomainFinding, severityRank } from '../findings/classify';
import { checkActingLink, type GateRefusalKind, type GateResult, keyReadRefusal } from '../links/link-gate';
import { type LinkFinding, type SigningKey, signLinkQuery } from '../links/links';
import {
  type Acknowledgement,
  type ActionStore,
  acknowledgementOf,
  cannotBeSilenced,
  DEFAULT_SNOOZE_DAYS,
  restoring,
  SNOOZE_CHOICES,
  type Snooze,
  silenceEndsAt,
  snoozeChoicesFor,
  snoozeOf,
} from '../memory/actions';
import { StateRefusedError } from '../memory/state';
import { StateDamagedError } from '../memory/state-header';
import { type KeptQuarantine, keptQuarantineWords, utc } from './kept-decision';

export {
  type KeptQuarantine,
  keptQuarantineIn,
  keptQuarantineOf,
  keptQuarantineWords,
} from './kept-decision';

/**
 * The snooze and acknowledge decisions, pure, in the way of functions/core/decisions/restore.ts: method,
 * domain, link token, form, clock and two ports in; an outcome out. GET confirms (mail scanners
 * open every link) and changes nothing, HEAD checks the link only, POST acts.
 */

export type SilenceAction = 'snooze' | 'acknowledge';

/**
 * Thrown by {@link ActionPort.findFinding} when the domain's record has a status the API does not
 * document and the scans' memory of it (its `cause`: the store's error, or a record that does not
 * parse) cannot be read: memory may keep it as a quarantine in its last days, which ends any
 * silence, so how long one would hold is unknown. Refused with 503 (try again), nothing changed.
 */
export class MemoryUnreadableError extends SentinelError {
  override readonly name: string = 'MemoryUnreadableError';
}

/** What the decision needs: the domain's finding as it stands now, and the store the action goes to. */
export interface ActionPort {
  findFinding(name: string): Promise<DomainFinding | KeptQuarantine | null>;
  readonly store: ActionStore;
}

export interface ActionInput {
  readonly action: SilenceAction;
  readonly method: string;
  /** As it arrived in the path, decoded; validated here before anything else. */
  readonly domain: string;
  readonly token: Readonly<Record<string, string | undefined>>;
  /** The POSTed form (`days` for snooze), already parsed; empty for GET and HEAD. */
  readonly form: Readonly<Record<string, string | undefined>>;
  /** Epoch ms. */
  readonly now: number;
  readonly signingKeys: () => Promise<readonly SigningKey[]>;
  /** Built lazily, only once the link is proven valid and the method needs it. */
  readonly port: () => Promise<ActionPort>;
}

/** A refusal of the link gate, or what the action itself came to. */
export type ActionOutcomeKind =
  | GateRefusalKind
  | 'head'
  | 'confirm'
  | 'no_finding'
  /** No finding as the record reads, and a quarantine in memory: what to do, nothing silenced. */
  | 'kept_quarantine'
  | 'last_days'
  | 'bad_days'
  /** The POST's body is not a form (too large, not JSON, not an object): the handler refuses it. */
  | 'bad_form'
  | 'finding_changed'
  | 'snoozed'
  | 'acknowledged'
  | 'lookup_failed'
  /** The search by name answered 404: the domain may have left the account, or the route is wrong. */
  | 'lookup_not_found'
  | 'store_failed'
  | 'misconfigured';

export interface ActionOutcome {
  readonly kind: ActionOutcomeKind;
  readonly status: number;
  readonly title: string;
  readonly message: string;
  /** For the log only. */
  readonly detail?: string;
  /** Present on `confirm`: what the confirmation page shows. */
  readonly confirm?: {
    readonly action: SilenceAction;
    readonly finding: DomainFinding;
    readonly linkExpires: number;
    /** The link's own query, so the form posts to the very same URL. */
    readonly formAction: string;
    /** Snooze only: the choices offered and the one chosen by default. */
    readonly days?: { readonly choices: readonly number[]; readonly chosen: number };
    /** What the link was sent for, when the finding has since changed (the form then acts on what it is now). */
    readonly sentFor?: LinkFinding;
  };
  /**
   * On `finding_changed`: the domain's finding is another kind or more severe than the one the link
   * was sent for, and links (relative to this one) for the finding as it is now.
   */
  readonly changed?: {
    readonly sentFor: LinkFinding;
    readonly now: DomainFinding;
    readonly links: { readonly snooze: string; readonly acknowledge: string };
  };
  /** What was stored, on `snoozed` / `acknowledged`. */
  readonly stored?: Snooze | Acknowledgement;
}

const GENERIC_FAILURE =
  'This service is not configured correctly. The operator has been told; please try again later.';
const VERB: Record<SilenceAction, string> = { snooze: 'Snooze', acknowledge: 'Acknowledge' };

/** Decides what a request to a snooze or acknowledge link does and answers. Never throws. */
export async function decideAction(input: ActionInput): Promise<ActionOutcome> {
  const gate = await checkLink(input);
  if (!gate.ok) return gate.refusal;
  const { method, exp, finding: sentFor } = gate;
  if (method === 'HEAD') return outcome('head', 200, '', '');
  const posted = postedDays(input, method);
  if (!posted.ok) return posted.refusal;
  const found = await findSilenceable(input, method);
  if (!found.ok) return found.refusal;
  const { port, finding } = found;
  const days = daysFor(finding, posted.days);
  if (!days.ok) return days.refusal;
  const current = await linksForChangedFinding(input, sentFor, finding, exp);
  if (!current.ok) return current.refusal;
  if (method === 'GET') {
    return confirmation(input, { exp, sentFor, finding, days, currentQuery: current.query });
  }
  if (current.query && sentFor) return findingChanged(input, sentFor, finding, current.query);
  const silence = await storeSilence(input, port, finding, days.chosen);
  if (!silence.ok) return silence.refusal;
  return silenced(input, finding, silence.stored);
}

/** A step of the decision: what it found, or the outcome that answers the request there. */
type Step<T> = ({ readonly ok: true } & T) | { readonly ok: false; readonly refusal: ActionOutcome };

const refuse = (refusal: ActionOutcome) => ({ ok: false, refusal }) as const;

/** The query of a fresh link for the finding as it is now, per action. */
type CurrentQuery = (action: SilenceAction) => string;

/** The snooze lengths the finding offers, and the one this request asks for. */
interface DaysChoice {
  readonly choices: readonly number[];
  readonly chosen: number;
}

/** The link's signature, expiry and domain, checked before anything is looked up. */
function checkLink(input: ActionInput): Promise<GateResult> {
  return checkActingLink({
    action: input.action,
    method: input.method,
    domain: input.domain,
    token: input.token,
    now: input.now,
    signingKeys: input.signingKeys,
    expiredMessage: `Links in an alert are valid for a limited time. Use the link in the latest alert about ${input.domain}.`,
    invalidMessage:
      'The link was changed, or is for another domain or another action. Use the link from the alert exactly as sent.',
    unavailableMessage: GENERIC_FAILURE,
  });
}

/**
 * The form's days are checked against the finding's own choices once it is known (a quarantine's
 * are cut to its days to restore); anything beyond the longest choice is refused before a lookup.
 */
function postedDays(input: ActionInput, method: 'GET' | 'POST'): Step<{ readonly days?: number }> {
  const form = input.form.days;
  if (method !== 'POST' || input.action !== 'snooze' || form === undefined) return { ok: true };
  const days = Number(form);
  if (!/^\d+$/.test(form) || days < 1 || days > Math.max(...SNOOZE_CHOICES)) {
    return refuse(badDays(SNOOZE_CHOICES));
  }
  return { ok: true, days };
}

/**
 * The domain's finding as it stands now, when a link may silence it: there is one, and it is not a
 * quarantine in its last days to restore (or past them), which is alerted daily whatever anyone chose.
 */
async function findSilenceable(
  input: ActionInput,
  method: 'GET' | 'POST',
): Promise<Step<{ readonly port: ActionPort; readonly finding: DomainFinding }>> {
  const found = await lookUpFinding(input);
  if (!found.ok) return found;
  const { finding } = found;
  const domain = input.domain;
  if (finding && 'keptQuarantine' in finding)
    return refuse(keptQuarantineOutcome(input, method, finding.keptQuarantine));
  if (!finding) {
    return refuse(
      outcome(
        'no_finding',
        method === 'POST' ? 409 : 200,
        `Nothing to ${input.action} for ${domain}`,
        `${domain} has nothing to report now (renewed, restored or gone from the account), so there is nothing to ${input.action}.`,
      ),
    );
  }
  if (cannotBeSilenced(finding)) {
    return refuse(
      outcome(
        'last_days',
        method === 'POST' ? 409 : 200,
        `${domain} cannot be ${input.action === 'snooze' ? 'snoozed' : 'acknowledged'} now`,
        `${domain} is ${lastDaysWords(finding)}: alerts about it repeat daily until it is restored or gone, and cannot be snoozed or acknowledged. Nothing was changed.`,
      ),
    );
  }
  return { ok: true, port: found.port, finding };
}

/**
 * Builds the port (only now that the link is proven valid) and looks the domain up. A key the
 * reseller refuses is the operator's to fix; any other failure is worth trying again.
 */
async function lookUpFinding(
  input: ActionInput,
): Promise<Step<{ readonly port: ActionPort; readonly finding: DomainFinding | KeptQuarantine | null }>> {
  let port: ActionPort;
  try {
    port = await input.port();
  } catch (error) {
    return refuse(misconfigured(error));
  }
  try {
    return { ok: true, port, finding: await port.findFinding(input.domain) };
  } catch (error) {
    if (error instanceof AuthenticationError)
      return refuse({ ...misconfigured(error), detail: error.message });
    if (error instanceof MemoryUnreadableError) return refuse(memoryUnreadable(input, error.cause));
    // An answer, not silence: the API leaves unsaid what a search without a hit answers, so a 404
    // may be "no such domain" or a wrong route, and is said as it came.
    if (error instanceof NotFoundError)
      return refuse({
        ...outcome(
          'lookup_not_found',
          502,
          'The reseller’s search found nothing',
          `Nothing was changed: the reseller’s search answered 404 (not found) for ${input.domain}: it may have left the account. Check it in the reseller’s control panel.`,
        ),
        detail: errorLine(error),
      });
    return refuse({
      ...outcome(
        'lookup_failed',
        502,
        'The reseller could not be reached',
        `Nothing was changed: the reseller’s API did not answer when ${input.domain} was looked up. Please try again in a few minutes.`,
      ),
      detail: errorLine(error),
    });
  }
}

/** The snooze length asked for (posted, or the default cut to the finding's longest), if the finding offers it. */
function daysFor(finding: DomainFinding, posted: number | undefined): Step<DaysChoice> {
  const choices = snoozeChoicesFor(finding);
  const chosen = posted ?? Math.min(DEFAULT_SNOOZE_DAYS, Math.max(...choices));
  if (!choices.includes(chosen)) return refuse(badDays(choices));
  return { ok: true, choices, chosen };
}

/**
 * A link acts only on what it was sent for: a finding that became another kind or more severe (a
 * warning's link, used after the domain went into quarantine) is not silenced by it. For such a
 * finding, the query of a fresh link for what it is now; none while the finding is what was sent.
 */
async function linksForChangedFinding(
  input: ActionInput,
  sentFor: LinkFinding | undefined,
  finding: DomainFinding,
  exp: number,
): Promise<Step<{ readonly query?: CurrentQuery }>> {
  const changed =
    sentFor !== undefined &&
    (finding.kind !== sentFor.kind || severityRank(finding.severity) > severityRank(sentFor.severity));
  if (!changed) return { ok: true };
  let keys: readonly SigningKey[];
  try {
    keys = await input.signingKeys();
  } catch (error) {
    return refuse(keyReadRefusal(error, GENERIC_FAILURE));
  }
  const current = { kind: finding.kind, severity: finding.severity };
  // Never past the link that made them (as the finding page's links): else each change of the
  // finding would make a link a day longer-lived than the one the alert sent.
  const ttlSeconds = Math.max(1, Math.min(CURRENT_LINK_TTL_SECONDS, exp - Math.floor(input.now / 1000)));
  const query: CurrentQuery = (action) =>
    signLinkQuery({
      action,
      subject: input.domain,
      finding: current,
      keys,
      now: input.now,
      ttlSeconds,
    });
  return { ok: true, query };
}

/**
 * GET asks to confirm and changes nothing (mail scanners open every link). The form posts to the
 * very link that was opened, or to a fresh one when the finding has changed since it was sent.
 */
function confirmation(
  input: ActionInput,
  link: {
    readonly exp: number;
    readonly sentFor: LinkFinding | undefined;
    readonly finding: DomainFinding;
    readonly days: DaysChoice;
    readonly currentQuery: CurrentQuery | undefined;
  },
): ActionOutcome {
  const { exp, sentFor, finding, days, currentQuery } = link;
  const query = currentQuery
    ? currentQuery(input.action)
    : `${new URLSearchParams({
        ...(sentFor ? { kind: sentFor.kind, sev: sentFor.severity } : {}),
        exp: String(input.token.exp),
        kid: String(input.token.kid),
        sig: String(input.token.sig),
      })}`;
  return {
    ...outcome('confirm', 200, `${VERB[input.action]} ${input.domain}?`, ''),
    confirm: {
      action: input.action,
      finding,
      linkExpires: currentQuery
        ? Math.min(input.now + CURRENT_LINK_TTL_SECONDS * 1000, exp * 1000)
        : exp * 1000,
      formAction: `?${query}`,
      ...(input.action === 'snooze' ? { days: { choices: days.choices, chosen: days.chosen } } : {}),
      ...(currentQuery && sentFor ? { sentFor } : {}),
    },
  };
}

/** POST with a link for a finding that has since changed: nothing is silenced; links for it as it is now. */
function findingChanged(
  input: ActionInput,
  sentFor: LinkFinding,
  finding: DomainFinding,
  currentQuery: CurrentQuery,
): ActionOutcome {
  const domain = input.domain;
  const path = (action: SilenceAction) =>
    `../${action}/${encodeURIComponent(domain)}?${currentQuery(action)}`;
  return {
    ...outcome(
      'finding_changed',
      409,
      `${domain} is now ${findingWords(finding)}`,
      `This link was sent when ${domain} was ${findingWords(sentFor)}; it is now ${findingWords(finding)}, so the link does not ${input.action} it. Nothing was changed. To ${input.action} it as it is now, use a link below.`,
    ),
    changed: { sentFor, now: finding, links: { snooze: path('snooze'), acknowledge: path('acknowledge') } },
  };
}

/** Writes the snooze or acknowledgement; a store that fails changes nothing and says to try again. */
async function storeSilence(
  input: ActionInput,
  port: ActionPort,
  finding: DomainFinding,
  days: number,
): Promise<Step<{ readonly stored: Snooze | Acknowledgement }>> {
  const domain = input.domain;
  const stored =
    input.action === 'snooze' ? snoozeOf(finding, days, input.now) : acknowledgementOf(finding, input.now);
  try {
    if (input.action === 'snooze') await port.store.snooze(domain, stored as Snooze);
    else await port.store.acknowledge(domain, stored as Acknowledgement);
  } catch (error) {
    return refuse({
      ...outcome(
        'store_failed',
        503,
        `${domain} was not ${input.action === 'snooze' ? 'snoozed' : 'acknowledged'}`,
        stuck(error)
          ? 'Nothing was changed: the state store cannot be written until the operator mends it (trying again will not help). The operator has been told.'
          : 'Nothing was changed: the state store could not be written. Please try again in a few minutes.',
      ),
      detail: errorLine(error),
    });
  }
  return { ok: true, stored };
}

/**
 * The finding's memory could not be read while its record has an undocumented status: no page
 * offers or confirms a silence whose end it cannot know. Said as a store that cannot be written is.
 */
function memoryUnreadable(input: ActionInput, reason: unknown): ActionOutcome {
  const domain = input.domain;
  return {
    ...outcome(
      'store_failed',
      503,
      `${domain} was not ${input.action === 'snooze' ? 'snoozed' : 'acknowledged'}`,
      `Nothing was changed: ${domain} has a status the reseller’s API does not document, and the scans’ memory of ${domain} could not be read, so how long alerts could leave it out is unknown (its last days to restore may be near). ${
        stuck(reason)
          ? 'The state store cannot be read until the operator mends it (trying again will not help). The operator has been told.'
          : 'Please try again in a few minutes.'
      }`,
    ),
    detail: errorLine(reason),
  };
}

/** What the silence means for the alerts, and when a quarantine's last days end it. */
function silenced(
  input: ActionInput,
  finding: DomainFinding,
  stored: Snooze | Acknowledgement,
): ActionOutcome {
  const domain = input.domain;
  const ends = silenceEndsAt(finding);
  const lastDays =
    ends === null ? '' : ` Its last days to restore begin ${utc(ends)}: from then on it is alerted daily.`;
  if (input.action === 'snooze') {
    const until = utc(Date.parse((stored as Snooze).until));
    return {
      ...outcome(
        'snoozed',
        200,
        `${domain} snoozed`,
        `Alerts leave ${domain} out until ${until}, unless it gets worse (for example enters quarantine). It stays in the report.${lastDays}`,
      ),
      stored,
    };
  }
  return {
    ...outcome(
      'acknowledged',
      200,
      `${domain} acknowledged`,
      `Alerts leave ${domain} out until its expiry date, status or auto-renew changes. It stays in the report.${lastDays}`,
    ),
    stored,
  };
}

/** A snooze or acknowledge link of a domain memory keeps in quarantine ({@link keptQuarantineWords}): nothing silenced. */
function keptQuarantineOutcome(
  input: ActionInput,
  method: 'GET' | 'POST',
  kept: KeptQuarantine['keptQuarantine'],
): ActionOutcome {
  const { title, message } = keptQuarantineWords(
    input.domain,
    kept.restore_by,
    input.now,
    kept.snoozed_until,
  );
  return outcome(
    'kept_quarantine',
    method === 'POST' ? 409 : 200,
    title,
    `${message} Nothing was ${input.action === 'snooze' ? 'snoozed' : 'acknowledged'}.`,
  );
}

/** Where a quarantine stands in (or past) its last days to restore, in words: "in its last days to restore, 3 days left (restore by …)". */
export function lastDaysWords(found: DomainFinding): string {
  const finding = restoring(found);
  const left = finding.days_to_restore ?? 0;
  const by = finding.restore_by ? utc(Date.parse(finding.restore_by)) : 'unknown';
  if (left < 0) return `past its restore-by date (${by})`;
  return `in its last days to restore, ${left === 0 ? 'on the last day' : `${left} day${left === 1 ? '' : 's'} left`} (restore by ${by})`;
}

function badDays(choices: readonly number[]): ActionOutcome {
  return outcome(
    'bad_days',
    400,
    'Not a snooze length',
    `Choose ${choices.join(', ')} days. Nothing was changed.`,
  );
}

/** How long the links offered for a finding that changed stay valid: for use now, from the page (never past the link that made them). */
const CURRENT_LINK_TTL_SECONDS = 86_400;

const KIND_WORDS: Readonly<Record<string, string>> = {
  quarantine: 'in quarantine',
  expired: 'expired',
  expiring: 'expiring',
  auto_renew_off: 'set not to renew',
};

/** A finding in words: `in quarantine (critical)`. */
export function findingWords(finding: LinkFinding): string {
  return `${KIND_WORDS[finding.kind] ?? finding.kind.replace(/_/g, ' ')} (${finding.severity})`;
}

function outcome(kind: ActionOutcomeKind, status: number, title: string, message: string): ActionOutcome {
  return { kind, status, title, message };
}

function misconfigured(error: unknown): ActionOutcome {
  const detail =
    error instanceof SecretError || error instanceof ConfigError ? error.message : (error as Error).name;
  return { ...outcome('misconfigured', 500, 'Unavailable', GENERIC_FAILURE), detail };
}

/**
 * A state no retry mends: damaged, or refused (bound to another API key after a rotation, another
 * release's format): only the operator's `sentinel state rebind` or `reset` does; or refused by AWS
 * for good (access denied: refusedForGood). A lease a running scan holds, or a store out of reach, passes.
 */
const stuck = (error: unknown): boolean =>
  error instanceof StateDamagedError || error instanceof StateRefusedError || refusedForGood(error);
