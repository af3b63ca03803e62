import { normalizeDomainName, plural, safeText } from '../base/text';
import type { ContactFinding, DomainFinding, Finding } from './classify';
import { quarantinePeriodOf, tldOf } from './quarantine-periods';

/**
 * What to do about each kind of finding and change, and by when: one line that ends the finding in
 * the digest, the report page, chat, and the JSON (`next_step`), and one section per kind of
 * docs/when-an-alert-arrives.md (scripts/docs.ts writes it from {@link NEXT_STEP_TABLE}). A new
 * kind is one entry here; a kind without one does not compile where the kinds are listed
 * (classify's and memory's).
 */

/** A day as alerts show it: `29 Nov 2026`. */
export type DayFormat = (iso: string) => string;

/** A change between two scans as the next step reads it (memory/state.ts `DomainChange`). */
export interface ChangeSubject {
  readonly domain_name: string;
  readonly kind: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

/** One kind's row: what it is for the docs, and its next step. */
export interface NextStepEntry<S> {
  readonly kind: string;
  /** The docs section's heading. */
  readonly title: string;
  /** Its severity, in words (`critical`, `warning or critical`, …). */
  readonly severity: string;
  /** When a scan reports it. */
  readonly when: string;
  /** Where it is dealt with and what to check, for the docs. */
  readonly how: string;
  /** The line itself. */
  readonly step: (subject: S, day: DayFormat) => string;
  /** A subject the docs show the line for. */
  readonly sample: S;
}

const PANEL = "the reseller's control panel";
const UTC_DAY = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});
/** The day in UTC, as the JSON's `next_step` says it (the JSON carries no time zone). */
export const utcDay: DayFormat = (iso) => UTC_DAY.format(new Date(iso));

/** "once cancelled, .nl keeps it 40 days in quarantine, where a restore (paid) can bring it back". */
function afterCancelling(name: string): string {
  const ascii = normalizeDomainName(name);
  const tld = tldOf(ascii);
  const period = quarantinePeriodOf(ascii);
  return period
    ? `once cancelled, .${tld} allows ${period.restoreDays} days to restore it (paid)`
    : 'how long the registry keeps it is not known here';
}

const SAMPLE_DOMAIN: DomainFinding = {
  domain_name: 'example.nl',
  kind: 'expiring',
  severity: 'critical',
  date_expiry: '2026-11-29T06:00:00.000Z',
  days_left: 7,
  auto_renew: false,
  registrant: { handle: 'C00001', name: 'Anna Peters', email: 'anna@example.nl' },
};

/** The finding kinds, in the order alerts list them. */
export const FINDING_NEXT_STEPS = {
  quarantine: {
    kind: 'quarantine',
    title: 'In quarantine',
    severity: 'critical',
    when: 'the domain was cancelled and the registry holds it in quarantine (redemption): it can still be restored, for a fee, until its restore-by date ([deadlines.md](deadlines.md)).',
    how: `Open the finding's link: its page offers Restore, which asks you to type the name and (for .nl) to confirm the registrant's consent before anything is restored. After the restore-by date the registry releases the name and anyone may register it. A restore costs the reseller's restore fee; check it in ${PANEL} if in doubt.`,
    step: (f: DomainFinding, day: DayFormat) => {
      const left = f.days_to_restore;
      const consent =
        tldOf(normalizeDomainName(f.domain_name)) === 'nl' ? ", with the registrant's consent" : '';
      if (!f.restore_by || typeof left !== 'number')
        return `Restore it as soon as possible through its link${consent}: its restore deadline is not known (${safeText(f.restore_deadline_unknown ?? 'no date')}).`;
      if (left < 0)
        return `Restore it now through its link, or check it in ${PANEL}: its restore-by date ${day(f.restore_by)} has passed and the registry may release it at any moment.`;
      return `Restore it by ${day(f.restore_by)} (${left === 0 ? 'the last day' : `${plural(left, 'day')} left`}) through its link${consent}; a restore is paid.`;
    },
    sample: {
      ...SAMPLE_DOMAIN,
      kind: 'quarantine',
      date_expiry: '2026-10-20T06:00:00.000Z',
      days_left: -33,
      date_deleted: '2026-10-27T06:00:00.000Z',
      restore_by: '2026-12-06T06:00:00.000Z',
      days_to_restore: 14,
    },
  },
  expired: {
    kind: 'expired',
    title: 'Expired',
    severity: 'critical',
    when: 'its expiry date has passed and it is not (yet) in quarantine.',
    how: `Renew it in ${PANEL} now. The API does not say how long the registry keeps an expired domain before it is cancelled; once cancelled it goes into quarantine, where a restore costs more than a renewal (the restore periods per TLD: [deadlines.md](deadlines.md)).`,
    step: (f: DomainFinding, day: DayFormat) =>
      `Renew it now in ${PANEL}: it expired ${day(f.date_expiry)}; the grace left is not stated by the API, and ${afterCancelling(f.domain_name)}.`,
    sample: { ...SAMPLE_DOMAIN, kind: 'expired', date_expiry: '2026-11-20T06:00:00.000Z', days_left: -2 },
  },
  renewal_failed: {
    kind: 'renewal_failed',
    title: 'Renewal failed',
    severity: 'critical',
    when: 'auto-renew is on, but the renewal scheduled for `date_renewal` passed more than a day ago without the expiry date moving.',
    how: `The usual cause is the account's balance or payment method. Check both in ${PANEL}, then renew the domain by hand before it expires; the next scan reports it as renewed.`,
    step: (f: DomainFinding, day: DayFormat) =>
      `Check the account's balance and payment method in ${PANEL}, then renew it before ${day(f.date_expiry)}: the renewal due ${day(f.date_renewal ?? f.date_expiry)} did not happen.`,
    sample: {
      ...SAMPLE_DOMAIN,
      kind: 'renewal_failed',
      auto_renew: true,
      date_expiry: '2026-12-01T06:00:00.000Z',
      days_left: 9,
      date_renewal: '2026-11-19T06:00:00.000Z',
    },
  },
  expiring: {
    kind: 'expiring',
    title: 'Expiring',
    severity:
      'critical without auto-renew within the critical days (7), warning within the expiry window (30), info with auto-renew on',
    when: 'it expires within the expiry window (EXPIRY_DAYS, 30 by default). Without auto-renew (or with none stated) it will be lost unless someone renews it.',
    how: `Renew it, or turn auto-renew on, in ${PANEL} before its expiry date; if it is to go, acknowledge it (its page) so alerts stop asking. With auto-renew on there is nothing to do but keep the account able to pay.`,
    step: (f: DomainFinding, day: DayFormat) =>
      f.auto_renew === true
        ? `Nothing to do if the renewal goes through: keep the account's balance and payment method able to pay before ${day(f.date_expiry)}.`
        : `Renew it, or turn auto-renew on, in ${PANEL} before ${day(f.date_expiry)}${f.auto_renew === null ? ' (its auto-renew setting is not stated: check it)' : ''}.`,
    sample: SAMPLE_DOMAIN,
  },
  auto_renew_off: {
    kind: 'auto_renew_off',
    title: 'Auto-renew off',
    severity: 'info',
    when: 'auto-renew is off (or not stated) and the expiry is beyond the expiry window.',
    how: `Decide before it expires: turn auto-renew on in ${PANEL} to keep it, or acknowledge it (its page) to let it go. It becomes a warning once it enters the expiry window.`,
    step: (f: DomainFinding, day: DayFormat) =>
      `Decide before ${day(f.date_expiry)}: turn auto-renew on in ${PANEL} to keep it, or let it go.`,
    sample: {
      ...SAMPLE_DOMAIN,
      kind: 'auto_renew_off',
      severity: 'info',
      date_expiry: '2027-03-01T06:00:00.000Z',
      days_left: 99,
    },
  },
  contact_pending_validation: {
    kind: 'contact_pending_validation',
    title: 'Contact pending validation',
    severity: 'warning',
    when: 'a contact has status `pending_validation`: the registry sent its e-mail address a request to confirm it.',
    how: 'Ask the contact to find and confirm the validation e-mail (check spam), or correct the address in the control panel and send it again. Registries suspend the domains of a contact that is not validated in time: for gTLDs the registrar must within 15 days of the request (ICANN RAA, Whois accuracy).',
    step: (f: ContactFinding) =>
      `Ask ${f.email ? `<${safeText(f.email)}>` : 'the contact'} to confirm the validation e-mail now: until then the registry may suspend the domains it holds (for gTLDs within 15 days of the request).`,
    sample: {
      handle: 'C00001',
      kind: 'contact_pending_validation',
      severity: 'warning',
      name: 'Anna Peters',
      company_name: 'Polder IT',
      email: 'anna@example.nl',
    } satisfies ContactFinding,
  },
} as const;
// Every finding kind has its row: a kind added to classify without one does not compile.
FINDING_NEXT_STEPS satisfies Record<Finding['kind'], unknown>;

const SAMPLE_CHANGE: ChangeSubject = { domain_name: 'example.nl', kind: 'left_account' };

/** The changes between two scans (a state store), in the order memory lists their kinds. */
export const CHANGE_NEXT_STEPS = {
  left_account: {
    kind: 'left_account',
    title: 'Left the account',
    severity: 'critical',
    when: 'a domain of the last scan is no longer listed (a complete read of the account proves it): transferred out, or deleted.',
    how: `Check in ${PANEL} (and the reseller's transfer log) whether it was transferred out or deleted on purpose. If not, contact the reseller today: a domain transferred away must be claimed back from the new registrar.`,
    step: () =>
      `Check in ${PANEL} whether it was transferred out or deleted on purpose; if not, contact the reseller today.`,
    sample: SAMPLE_CHANGE,
  },
  transfer_lock_off: {
    kind: 'transfer_lock_off',
    title: 'Transfer lock turned off',
    severity: 'warning',
    when: 'the transfer lock was on in the last scan and is off now.',
    how: `A transfer needs the lock off and the auth code. If nobody here turned it off, turn it on again in ${PANEL} today and find out who had access.`,
    step: () => `If nobody here turned it off, turn the transfer lock on again in ${PANEL} today.`,
    sample: { ...SAMPLE_CHANGE, kind: 'transfer_lock_off' },
  },
  auth_code_issued: {
    kind: 'auth_code_issued',
    title: 'Auth code issued',
    severity: 'warning',
    when: 'the domain has an auth code (transfer code) it did not have in the last scan.',
    how: `With the auth code anyone can start a transfer away. If nobody here asked for it, reset the code and keep the transfer lock on in ${PANEL} today.`,
    step: () =>
      `If nobody here asked for it, reset the auth code and keep the transfer lock on in ${PANEL} today: with it a transfer can start.`,
    sample: { ...SAMPLE_CHANGE, kind: 'auth_code_issued' },
  },
  registrant_changed: {
    kind: 'registrant_changed',
    title: 'Registrant changed',
    severity: 'warning',
    when: 'the registrant contact (its handle) differs from the last scan.',
    how: `The registrant holds the domain. Check the new registrant in ${PANEL}; if nobody here made the change, contact the reseller today.`,
    step: () =>
      `Check that the new registrant is right in ${PANEL}; if nobody here changed it, contact the reseller today.`,
    sample: { ...SAMPLE_CHANGE, kind: 'registrant_changed', before: 'C00001', after: 'C00009' },
  },
  nameservers_changed: {
    kind: 'nameservers_changed',
    title: 'Nameservers changed',
    severity: 'warning',
    when: 'the nameserver group or hosted DNS differs from the last scan.',
    how: `The domain's website and mail follow its nameservers. Check the new ones are yours; if not, set them back in ${PANEL} now.`,
    step: () =>
      `Check that the new nameservers are yours (website and mail follow them); if not, set them back in ${PANEL} now.`,
    sample: { ...SAMPLE_CHANGE, kind: 'nameservers_changed' },
  },
  auto_renew_turned_off: {
    kind: 'auto_renew_turned_off',
    title: 'Auto-renew turned off',
    severity: 'warning',
    when: 'auto-renew was on in the last scan and is off now.',
    how: `If the domain is to be kept, turn auto-renew on again in ${PANEL}; if it is to go, acknowledge it.`,
    step: () => `If it is to be kept, turn auto-renew on again in ${PANEL} before it expires.`,
    sample: { ...SAMPLE_CHANGE, kind: 'auto_renew_turned_off' },
  },
  dnssec_unsigned: {
    kind: 'dnssec_unsigned',
    title: 'DNSSEC turned off',
    severity: 'warning',
    when: 'the domain was signed with DNSSEC in the last scan and is unsigned now.',
    how: `If nobody here turned DNSSEC off (a move to other nameservers can), sign the zone again in ${PANEL}.`,
    step: () => `If nobody here turned DNSSEC off, sign the zone again in ${PANEL}.`,
    sample: { ...SAMPLE_CHANGE, kind: 'dnssec_unsigned' },
  },
  premium_price_changed: {
    kind: 'premium_price_changed',
    title: 'Premium price changed',
    severity: 'warning',
    when: 'the renewal price of a premium or custom-priced domain differs from the last scan.',
    how: 'Check the new price before the domain renews, and budget for it or let the domain go.',
    step: () => 'Check the new renewal price before it renews: budget for it, or let it go.',
    sample: { ...SAMPLE_CHANGE, kind: 'premium_price_changed' },
  },
} as const;

/** Every row, findings first: what docs/when-an-alert-arrives.md is made of. */
export const NEXT_STEP_TABLE: ReadonlyArray<{
  readonly group: 'finding' | 'change';
  readonly entry: NextStepEntry<never>;
  readonly line: (day: DayFormat) => string;
}> = [
  ...Object.values(FINDING_NEXT_STEPS).map((entry) => ({
    group: 'finding' as const,
    entry: entry as unknown as NextStepEntry<never>,
    line: (day: DayFormat) => (entry.step as (s: unknown, d: DayFormat) => string)(entry.sample, day),
  })),
  ...Object.values(CHANGE_NEXT_STEPS).map((entry) => ({
    group: 'change' as const,
    entry: entry as unknown as NextStepEntry<never>,
    line: (day: DayFormat) => (entry.step as (s: unknown, d: DayFormat) => string)(entry.sample, day),
  })),
];

/** The next step of a finding, one line. */
export function nextStep(f: Finding, day: DayFormat = utcDay): string {
  if (f.kind === 'contact_pending_validation') return FINDING_NEXT_STEPS[f.kind].step(f);
  const entry = FINDING_NEXT_STEPS[f.kind] as NextStepEntry<DomainFinding> | undefined;
  return entry ? entry.step(f, day) : `Check it in ${PANEL}.`;
}

/** The next step of a change between two scans, one line. */
export function changeNextStep(change: ChangeSubject, day: DayFormat = utcDay): string {
  const entry = (CHANGE_NEXT_STEPS as Record<string, NextStepEntry<ChangeSubject>>)[change.kind];
  return entry ? entry.step(change, day) : `Check it in ${PANEL}.`;
}
