import { RENEWAL_GRACE_MS, RENEWAL_WINDOW_MS } from '../findings/classify';
import type { Domain } from '../reseller/schemas';

/**
 * What `date_renewal` means in this account, by the vote of the domains the renewal rule judges:
 * the coming renewal (the rule applies) or the last one (it stays off for the account).
 */

/**
 * The records the renewal rule judges (auto-renew on, a renewal date, not expired and expiring
 * within {@link RENEWAL_REACH_MS}), and how many of those read as last year's renewal.
 */
export interface RenewalMeaning {
  dated: number;
  yearBefore: number;
}

/**
 * How far ahead a failed renewal's expiry can lie: its `date_renewal` is at least a day past and at
 * most 60 days before expiry. The account's vote on what `date_renewal` means is taken among these
 * domains only: every mode reads all of them (a filtered read lists the next 60 days whole), so a
 * filtered read votes as a full one does, on the very domains the rule would judge.
 */
const RENEWAL_REACH_MS = RENEWAL_WINDOW_MS - RENEWAL_GRACE_MS;

/** True for a domain the renewal rule judges, whose `date_renewal` counts in the account's vote. */
const votesOnRenewal = (domain: Domain, now: number): boolean =>
  domain.auto_renew === true &&
  typeof domain.date_renewal === 'number' &&
  domain.date_expiry > now &&
  domain.date_expiry <= now + RENEWAL_REACH_MS;

/**
 * The seed describes `date_renewal` as the coming renewal, a little before expiry. A server that
 * keeps the last renewal there instead shows it about a year before expiry on most records; then
 * `renewal_failed` would judge a date that means something else, so it stays off for the account.
 */
const YEAR_BEFORE_MS = 300 * 86_400_000;

/** Why the renewal rule is off for the account, or undefined while it applies. */
export function renewalRuleOff(meaning: RenewalMeaning): string | undefined {
  if (meaning.dated === 0 || meaning.yearBefore * 2 <= meaning.dated) return undefined;
  return `date_renewal is 300 days or more before date_expiry on ${meaning.yearBefore} of the ${meaning.dated} domains with auto-renew on that expire within ${RENEWAL_REACH_MS / 86_400_000} days: in this account it reads as the last renewal, not the coming one, so failed renewals are not checked`;
}

/** Counts one domain's vote, when it is one the renewal rule judges. */
export function voteOnRenewal(meaning: RenewalMeaning, domain: Domain, now: number): void {
  if (!votesOnRenewal(domain, now)) return;
  meaning.dated++;
  if (domain.date_expiry - (domain.date_renewal as number) >= YEAR_BEFORE_MS) meaning.yearBefore++;
}
