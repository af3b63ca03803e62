import { refusedForGood } from '../base/errors';
import type { RestoreDeadline } from '../findings/quarantine-periods';
import type { GateRefusalKind } from '../links/link-gate';

/** What the restore decision (functions/core/decisions/restore.ts) comes to. */

/** A refusal of the link gate, or what the restore itself came to. */
export type RestoreOutcomeKind =
  | GateRefusalKind
  | 'head'
  /** The POST's body cannot be a form (too large, or JSON that is not an object): functions/handlers/http-answer.ts. */
  | 'bad_form'
  | 'confirmation_missing'
  | 'consent_missing'
  | 'confirm'
  | 'not_in_account'
  /** The search by name answered 404: no proof the account lacks it (a wrong route answers so too). */
  | 'lookup_not_found'
  | 'not_in_quarantine'
  | 'restored'
  | 'refused'
  | 'reseller_auth_failed'
  | 'reseller_unexpected'
  | 'reseller_unreachable'
  | 'outcome_unknown'
  | 'interrupted'
  | 'restore_claimed'
  | 'claim_unavailable'
  /** The audit trail could not be read for an earlier restore, or record this one before it was sent: nothing was sent. */
  | 'audit_unavailable'
  /** A restore was sent recently and the POST did not ask for another (the `restore_again` field). */
  | 'resend_unconfirmed'
  | 'misconfigured';

export interface RestoreOutcome {
  readonly kind: RestoreOutcomeKind;
  readonly status: number;
  readonly title: string;
  /** For the person (or program) who followed the link. */
  readonly message: string;
  /** For the log only: what an operator acts on (which parameter failed, what the reseller said). */
  readonly detail?: string;
  /** Set on a POST to a valid link: a restore attempt, kept in the audit trail. */
  readonly attempt?: true;
  /** Set once the restore call went out to the reseller: the outcome may have cost money. */
  readonly sent?: true;
  /** Set when its claim on the domain could not be given up: until when another try is refused (in `message` too). */
  readonly claimHeld?: string;
  /** Present on `confirm`: what the confirmation page shows. */
  readonly confirm?: {
    readonly quarantinedSince: number | null;
    readonly linkExpires: number;
    /** The link's own query, so the form posts to the very same URL. */
    readonly formAction: string;
    /** When it must be restored by, or why that is unknown. */
    readonly deadline: RestoreDeadline;
    /** The page asks to confirm the registrant's consent (.nl). */
    readonly consentRequired: boolean;
    /** A restore sent recently, in words: the page says so and asks for another (the `restore_again` field). */
    readonly earlierRestore?: string;
    /**
     * When that restore was sent (its entry's `at`): the value of the page's box, so the form sent
     * again (a reload) after another restore confirms only the one it named.
     */
    readonly earlierRestoreAt?: string;
  };
}

/**
 * What a person is told to do when the state store (a claim, the audit trail) failed: try again in a
 * few minutes, unless AWS refused the call for good ({@link refusedForGood}: access denied, an item a
 * hand edit broke), which no retry mends.
 */
export const storeFailedThen = (error: unknown): string =>
  refusedForGood(error)
    ? 'The state store refuses it until the operator mends it, so trying again will not help; the operator has been told.'
    : 'Please try again in a few minutes.';
