import { CHANGE_NEXT_STEPS, type DayFormat, FINDING_NEXT_STEPS, type NextStepEntry } from './next-step';

/**
 * What docs/when-an-alert-arrives.md says of each kind beside its next step (next-step.ts): the
 * section's words. Only `npm run docs` reads them, so the functions' bundles do not carry them.
 */

/** The docs words of one kind. */
export interface NextStepDoc {
  /** The section's heading. */
  readonly title: string;
  /** Its severity, in words (`critical`, `warning or critical`, …). */
  readonly severity: string;
  /** When a scan reports it. */
  readonly when: string;
  /** Where it is dealt with and what to check. */
  readonly how: string;
}

const PANEL = "the reseller's control panel";

const FINDING_DOCS: Record<keyof typeof FINDING_NEXT_STEPS, NextStepDoc> = {
  quarantine: {
    title: 'In quarantine',
    severity: 'critical',
    when: 'the domain was cancelled and the registry holds it in quarantine (redemption): it can still be restored, for a fee, until its restore-by date ([deadlines.md](deadlines.md)).',
    how: `Open the finding's link: its page offers Restore, which asks you to type the name and (for .nl) to confirm the registrant's consent before anything is restored. After the restore-by date the registry releases the name and anyone may register it. A restore costs the reseller's restore fee; check it in ${PANEL} if in doubt.`,
  },
  expired: {
    title: 'Expired',
    severity: 'critical',
    when: 'its expiry date has passed and it is not (yet) in quarantine.',
    how: `Renew it in ${PANEL} now. The API does not say how long the registry keeps an expired domain before it is cancelled; once cancelled it goes into quarantine, where a restore costs more than a renewal (the restore periods per TLD: [deadlines.md](deadlines.md)).`,
  },
  renewal_failed: {
    title: 'Renewal failed',
    severity: 'critical',
    when: 'auto-renew is on, but the renewal scheduled for `date_renewal` passed more than a day ago without the expiry date moving.',
    how: `The usual cause is the account's balance or payment method. Check both in ${PANEL}, then renew the domain by hand before it expires; the next scan reports it as renewed.`,
  },
  expiring: {
    title: 'Expiring',
    severity:
      'critical without auto-renew within the critical days (7), warning within the expiry window (30), info with auto-renew on',
    when: 'it expires within the expiry window (EXPIRY_DAYS, 30 by default). Without auto-renew (or with none stated) it will be lost unless someone renews it.',
    how: `Renew it, or turn auto-renew on, in ${PANEL} before its expiry date; if it is to go, acknowledge it (its page) so alerts stop asking. With auto-renew on there is nothing to do but keep the account able to pay.`,
  },
  auto_renew_off: {
    title: 'Auto-renew off',
    severity: 'info',
    when: 'auto-renew is off (or not stated) and the expiry is beyond the expiry window.',
    how: `Decide before it expires: turn auto-renew on in ${PANEL} to keep it, or acknowledge it (its page) to let it go. It becomes a warning once it enters the expiry window.`,
  },
  registry_redemption: {
    title: 'Registry: being deleted',
    severity: 'critical',
    when: 'with the registry check on ([registry.md](registry.md)): the registry has it in `redemption period` or `pending delete` while the reseller does not list it in quarantine.',
    how: `The registry is deleting it whatever the reseller's record says. Ask the reseller to restore it at the registry now (a restore fee applies), then find out why it was deleted: an unpaid invoice, a cancellation by mistake. The reseller's control panel may still show it as registered.`,
  },
  registry_hold: {
    title: 'Registry: on hold',
    severity: 'critical',
    when: 'with the registry check on: the registry shows `client hold` or `server hold`, so the domain does not resolve, while the reseller does not list it in quarantine.',
    how: "Check the registrant's verification first (an unconfirmed registrant e-mail puts a domain on client hold), then the reseller's account (an unpaid invoice) and the registry's notices to the registrant.",
  },
  registry_expiry_mismatch: {
    title: 'Registry: another expiry date',
    severity: 'critical when the registry’s date is within the critical days (or past), else warning',
    when: "with the registry check on: the registry's expiration and the reseller's `date_expiry` are more than `REGISTRY_TOLERANCE_DAYS` apart.",
    how: "The registry's date is the one that counts. An earlier registry date means a renewal that has not reached the registry: ask the reseller why, before that date. A later one means the reseller's record is behind: ask it to correct the record.",
  },
  registry_unknown: {
    title: 'Registry: does not know it',
    severity: 'critical when the reseller’s record is expired or within the critical days, else warning',
    when: 'with the registry check on: a gTLD registry answers HTTP 404 for a domain the reseller lists, and not in quarantine (every gTLD registry must serve every registered name over RDAP; a ccTLD’s 404 stays an info line).',
    how: 'The domain was deleted at the registry, or never registered. Confirm it with a WHOIS or registry lookup, and ask the reseller now: a deleted domain is free for anyone to register, and drop-catchers take names within days.',
  },
  contact_pending_validation: {
    title: 'Contact pending validation',
    severity: 'warning',
    when: 'a contact has status `pending_validation`: the registry sent its e-mail address a request to confirm it.',
    how: 'Ask the contact to find and confirm the validation e-mail (check spam), or correct the address in the control panel and send it again. Registries suspend the domains of a contact that is not validated in time: for gTLDs the registrar must within 15 days of the request (ICANN RAA, Whois accuracy).',
  },
};

const CHANGE_DOCS: Record<keyof typeof CHANGE_NEXT_STEPS, NextStepDoc> = {
  left_account: {
    title: 'Left the account',
    severity: 'critical',
    when: 'a domain of the last scan is no longer listed (a complete read of the account proves it): transferred out, or deleted.',
    how: `Check in ${PANEL} (and the reseller's transfer log) whether it was transferred out or deleted on purpose. If not, contact the reseller today: a domain transferred away must be claimed back from the new registrar.`,
  },
  returned: {
    title: 'Returned to the account',
    severity: 'warning',
    when: 'a domain announced as gone (left the account) in the last 90 days is listed again; its findings are new, and a snooze or acknowledgement it had holds again.',
    how: `Check in ${PANEL} why it is back (transferred back in, restored, or moved between accounts) and that its registrant, nameservers and auto-renew are what you expect.`,
  },
  transfer_lock_off: {
    title: 'Transfer lock turned off',
    severity: 'warning',
    when: 'the transfer lock was on in the last scan and is off now.',
    how: `A transfer needs the lock off and the auth code. If nobody here turned it off, turn it on again in ${PANEL} today and find out who had access.`,
  },
  auth_code_issued: {
    title: 'Auth code issued',
    severity: 'warning',
    when: 'the domain has an auth code (transfer code) it did not have in the last scan.',
    how: `With the auth code anyone can start a transfer away. If nobody here asked for it, reset the code and keep the transfer lock on in ${PANEL} today.`,
  },
  registrant_changed: {
    title: 'Registrant changed',
    severity: 'warning',
    when: 'the registrant contact (its handle) differs from the last scan.',
    how: `The registrant holds the domain. Check the new registrant in ${PANEL}; if nobody here made the change, contact the reseller today.`,
  },
  nameservers_changed: {
    title: 'Nameservers changed',
    severity: 'warning',
    when: 'the nameserver group or hosted DNS differs from the last scan.',
    how: `The domain's website and mail follow its nameservers. Check the new ones are yours; if not, set them back in ${PANEL} now.`,
  },
  auto_renew_turned_off: {
    title: 'Auto-renew turned off',
    severity: 'warning',
    when: 'auto-renew was on in the last scan and is off now.',
    how: `If the domain is to be kept, turn auto-renew on again in ${PANEL}; if it is to go, acknowledge it.`,
  },
  dnssec_unsigned: {
    title: 'DNSSEC turned off',
    severity: 'warning',
    when: 'the domain was signed with DNSSEC in the last scan and is unsigned now.',
    how: `If nobody here turned DNSSEC off (a move to other nameservers can), sign the zone again in ${PANEL}.`,
  },
  premium_price_changed: {
    title: 'Premium price changed',
    severity: 'warning',
    when: 'the renewal price of a premium or custom-priced domain differs from the last scan.',
    how: 'Check the new price before the domain renews, and budget for it or let the domain go.',
  },
};

/** Every row, findings first: what docs/when-an-alert-arrives.md is made of. */
export const NEXT_STEP_TABLE: ReadonlyArray<{
  readonly group: 'finding' | 'change';
  readonly kind: string;
  readonly doc: NextStepDoc;
  /** The next step of the row's sample, as an alert says it. */
  readonly line: (day: DayFormat) => string;
}> = [
  ...Object.entries(FINDING_NEXT_STEPS).map(([kind, entry]) => ({
    group: 'finding' as const,
    kind,
    doc: FINDING_DOCS[kind as keyof typeof FINDING_DOCS],
    line: (day: DayFormat) => (entry as NextStepEntry<unknown>).step(entry.sample, day),
  })),
  ...Object.entries(CHANGE_NEXT_STEPS).map(([kind, entry]) => ({
    group: 'change' as const,
    kind,
    doc: CHANGE_DOCS[kind as keyof typeof CHANGE_DOCS],
    line: (day: DayFormat) => (entry as NextStepEntry<unknown>).step(entry.sample, day),
  })),
];
