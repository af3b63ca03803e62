import { cutText, inertText, normalizeDomainName, plural, safeText } from '../base/text';
import {
  asRemembered,
  type ContactFinding,
  type DomainFinding,
  type Finding,
  type RegistryView,
} from './classify';
import { quarantinePeriodOf, tldOf } from './quarantine-periods';
import { isRegistryKind } from './registry-rules';

/**
 * What to do about each kind of finding and change, and by when: one line that ends the finding in
 * the digest, the report page, chat, and the JSON (`next_step`), and one section per kind of
 * docs/when-an-alert-arrives.md (scripts/docs.ts writes it from this table and its words in
 * next-step-docs.ts). A new kind is one entry here and one there; a kind without them does not
 * compile (classify's and memory's kinds are checked against both).
 */

/** A plain e-mail address, which a mail client may link (mailto) without harm; quantifiers bounded. */
const PLAIN_EMAIL = /^[a-z0-9._%+-]{1,64}@[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){1,8}$/i;

/**
 * An e-mail address from the API as alerts show it: one line, at most 254 characters (the most an
 * address has), and, unless it is a plain address, inert text no mail client links: the API's
 * e-mail field is any text, and a URL in it would be a link in our own alert.
 */
export function shownEmail(email: string): string {
  const text = cutText(safeText(email), 254);
  return PLAIN_EMAIL.test(text) ? text : inertText(text);
}

/**
 * A day as alerts show it: `29 Nov 2026`; with `at`, the instant of a deadline in the same zone,
 * `29 Nov 2026 01:00 Pacific/Auckland` (deadlineText): a restore-by is an instant, and its day alone
 * reads a day late where the zone's clock is ahead of it (the deadline at 01:00 on the day named).
 */
export type DayFormat = ((iso: string) => string) & { readonly at?: (iso: string) => string };

/** A deadline as alerts show it: with its time and zone where the formatter knows them. */
export const deadlineText = (day: DayFormat, iso: string): string => (day.at ?? day)(iso);

const DAY_MS = 86_400_000;

/** The day and deadline formatters of one zone (Intl formatters are costly to build: make them once). */
export function dayFormatIn(timeZone: string): DayFormat {
  const dayOf = new Intl.DateTimeFormat('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    timeZone,
  });
  const clock = new Intl.DateTimeFormat('en-GB', {
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone,
  });
  const offsetOf = new Intl.DateTimeFormat('en-GB', { timeZoneName: 'longOffset', timeZone });
  // Minutes east of UTC at `ms`: 'GMT+05:45', 'GMT-03:00', or 'GMT' alone for none.
  const offset = (ms: number) => {
    const name = offsetOf.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? '';
    const m = /([+-])(\d{2}):(\d{2})/.exec(name);
    return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  };
  // The hour a change back from summer time repeats names two instants: the offset tells them apart.
  const repeated = (ms: number) => {
    const own = offset(ms);
    return [offset(ms - DAY_MS / 2), offset(ms + DAY_MS / 2)].some(
      (other) => other !== own && offset(ms + (own - other) * 60_000) === other,
    );
  };
  const utcOffset = (ms: number) => {
    const o = offset(ms);
    const a = Math.abs(o);
    return ` (UTC${o < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')})`;
  };
  const day = (iso: string) => dayOf.format(new Date(iso));
  return Object.assign(day, {
    at: (iso: string) => {
      const ms = Date.parse(iso);
      return `${day(iso)} ${clock.format(ms)} ${timeZone}${repeated(ms) ? utcOffset(ms) : ''}`;
    },
  });
}

/** A change between two scans as the next step reads it (memory/state.ts `DomainChange`). */
export interface ChangeSubject {
  readonly domain_name: string;
  readonly kind: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

/** One kind's row: its next step (what the docs say of it is in next-step-docs.ts, kept out of the functions). */
export interface NextStepEntry<S> {
  readonly kind: string;
  /** The line itself. */
  readonly step: (subject: S, day: DayFormat) => string;
  /** A subject the docs show the line for. */
  readonly sample: S;
}

const PANEL = "the reseller's control panel";
/** The day in UTC, as the JSON's `next_step` says it (the JSON carries no time zone: a deadline says UTC). */
export const utcDay: DayFormat = dayFormatIn('UTC');

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

/** The first thing to do about what the registry says (docs/registry.md), with its dates as `day` shows them. */
export function registryNextStep(
  view: RegistryView,
  resellerExpiry: string,
  day: DayFormat = utcDay,
): string {
  switch (view.kind) {
    case 'registry_redemption':
      return 'Ask the reseller to restore it at the registry now (a restore fee applies), then find out why it was deleted (an unpaid invoice, a cancellation by mistake).';
    case 'registry_hold':
      return "Check the registrant's verification first (an unconfirmed registrant e-mail puts a domain on client hold), then the reseller's account (an unpaid invoice) and the registry's notices to the registrant.";
    case 'registry_expiry_mismatch':
      if (view.date_expiry === null || Date.parse(view.date_expiry) >= Date.parse(resellerExpiry))
        return "Ask the reseller to correct its record; the registry's date is the one that counts.";
      return `Ask the reseller why the renewal has not reached the registry, ${(view.days_left ?? 0) < 0 ? 'today' : `before ${day(view.date_expiry)}`}: a renewal paid but never sent, or sent for a shorter term.`;
    case 'registry_unknown':
      return 'Confirm it with a WHOIS or registry lookup, and ask the reseller now: a deleted domain is free for anyone to register, and drop-catchers take names within days.';
  }
}

/** A registry finding's step: the registry's side, or the reseller's panel when the view is missing. */
function registryStepOf(f: DomainFinding, day: DayFormat): string {
  return f.registry
    ? registryNextStep(f.registry, f.date_expiry, day)
    : `Check it in ${PANEL} and at the registry (RDAP): the registry's answer was not kept.`;
}

function registrySample(kind: RegistryView['kind'], view: Partial<RegistryView>): DomainFinding {
  return {
    ...SAMPLE_DOMAIN,
    kind,
    auto_renew: true,
    date_expiry: '2027-11-29T06:00:00.000Z',
    days_left: 372,
    registry: {
      kind,
      severity: 'critical',
      date_expiry: null,
      days_left: null,
      status: [],
      server: 'https://rdap.example.nl',
      ...view,
    },
  };
}

/** The finding kinds, in the order alerts list them. */
export const FINDING_NEXT_STEPS = {
  quarantine: {
    kind: 'quarantine',
    step: (f: DomainFinding, day: DayFormat) => {
      const left = f.days_to_restore;
      const consent =
        tldOf(normalizeDomainName(f.domain_name)) === 'nl' ? ", with the registrant's consent" : '';
      if (!f.restore_by || typeof left !== 'number')
        return `Restore it as soon as possible through its link${consent}: its restore deadline is not known (${safeText(f.restore_deadline_unknown ?? 'no date')}).`;
      if (left < 0)
        return `Restore it now through its link, or check it in ${PANEL}: its restore-by date ${deadlineText(day, f.restore_by)} has passed and the registry may release it at any moment.`;
      return `Restore it by ${deadlineText(day, f.restore_by)} (${left === 0 ? 'the last day' : `${plural(left, 'day')} left`}) through its link${consent}; a restore is paid.`;
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
    step: (f: DomainFinding, day: DayFormat) =>
      `Renew it now in ${PANEL}: it expired ${day(f.date_expiry)}; the grace left is not stated by the API, and ${afterCancelling(f.domain_name)}.`,
    sample: { ...SAMPLE_DOMAIN, kind: 'expired', date_expiry: '2026-11-20T06:00:00.000Z', days_left: -2 },
  },
  renewal_failed: {
    kind: 'renewal_failed',
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
    step: (f: DomainFinding, day: DayFormat) =>
      f.auto_renew === true
        ? `Nothing to do if the renewal goes through: keep the account's balance and payment method able to pay before ${day(f.date_expiry)}.`
        : `Renew it, or turn auto-renew on, in ${PANEL} before ${day(f.date_expiry)}${f.auto_renew === null ? ' (its auto-renew setting is not stated: check it)' : ''}.`,
    sample: SAMPLE_DOMAIN,
  },
  auto_renew_off: {
    kind: 'auto_renew_off',
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
  registry_redemption: {
    kind: 'registry_redemption',
    step: (f: DomainFinding, day: DayFormat) => registryStepOf(f, day),
    sample: registrySample('registry_redemption', { status: ['redemption period'] }),
  },
  registry_hold: {
    kind: 'registry_hold',
    step: (f: DomainFinding, day: DayFormat) => registryStepOf(f, day),
    sample: registrySample('registry_hold', { status: ['client hold'] }),
  },
  registry_expiry_mismatch: {
    kind: 'registry_expiry_mismatch',
    step: (f: DomainFinding, day: DayFormat) => registryStepOf(f, day),
    sample: registrySample('registry_expiry_mismatch', {
      date_expiry: '2026-11-29T06:00:00.000Z',
      days_left: 7,
    }),
  },
  registry_unknown: {
    kind: 'registry_unknown',
    step: (f: DomainFinding, day: DayFormat) => registryStepOf(f, day),
    sample: registrySample('registry_unknown', {}),
  },
  contact_pending_validation: {
    kind: 'contact_pending_validation',
    step: (f: ContactFinding) =>
      `Ask ${f.email ? `<${shownEmail(f.email)}>` : 'the contact'} to confirm the validation e-mail now: until then the registry may suspend the domains it holds (for gTLDs within 15 days of the request).`,
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
    step: () =>
      `Check in ${PANEL} whether it was transferred out or deleted on purpose; if not, contact the reseller today.`,
    sample: SAMPLE_CHANGE,
  },
  returned: {
    kind: 'returned',
    step: () =>
      `Check in ${PANEL} why it is back (transferred back in, restored, or another account's mistake) and that its registrant and nameservers are yours.`,
    sample: { ...SAMPLE_CHANGE, kind: 'returned' },
  },
  transfer_lock_off: {
    kind: 'transfer_lock_off',
    step: () => `If nobody here turned it off, turn the transfer lock on again in ${PANEL} today.`,
    sample: { ...SAMPLE_CHANGE, kind: 'transfer_lock_off' },
  },
  auth_code_issued: {
    kind: 'auth_code_issued',
    step: () =>
      `If nobody here asked for it, reset the auth code and keep the transfer lock on in ${PANEL} today: with it a transfer can start.`,
    sample: { ...SAMPLE_CHANGE, kind: 'auth_code_issued' },
  },
  registrant_changed: {
    kind: 'registrant_changed',
    step: () =>
      `Check that the new registrant is right in ${PANEL}; if nobody here changed it, contact the reseller today.`,
    sample: { ...SAMPLE_CHANGE, kind: 'registrant_changed', before: 'C00001', after: 'C00009' },
  },
  nameservers_changed: {
    kind: 'nameservers_changed',
    step: () =>
      `Check that the new nameservers are yours (website and mail follow them); if not, set them back in ${PANEL} now.`,
    sample: { ...SAMPLE_CHANGE, kind: 'nameservers_changed' },
  },
  auto_renew_turned_off: {
    kind: 'auto_renew_turned_off',
    step: () => `If it is to be kept, turn auto-renew on again in ${PANEL} before it expires.`,
    sample: { ...SAMPLE_CHANGE, kind: 'auto_renew_turned_off' },
  },
  dnssec_unsigned: {
    kind: 'dnssec_unsigned',
    step: () => `If nobody here turned DNSSEC off, sign the zone again in ${PANEL}.`,
    sample: { ...SAMPLE_CHANGE, kind: 'dnssec_unsigned' },
  },
  premium_price_changed: {
    kind: 'premium_price_changed',
    step: () => 'Check the new renewal price before it renews: budget for it, or let it go.',
    sample: { ...SAMPLE_CHANGE, kind: 'premium_price_changed' },
  },
} as const;

/** Typed over every kind, so a kind added without its words fails to compile. */
const REMEMBERED_WORDS: Readonly<Record<DomainFinding['kind'], string>> = {
  quarantine: 'in quarantine',
  expired: 'expired',
  renewal_failed: 'with a renewal that did not happen',
  expiring: 'expiring',
  auto_renew_off: 'set not to renew',
  registry_redemption: 'in redemption at the registry',
  registry_hold: 'on hold at the registry',
  registry_expiry_mismatch: 'with another expiry date at the registry',
  registry_unknown: 'unknown to its registry (HTTP 404 or 410)',
};

/** A finding kind memory kept, in words after "last read": `in quarantine`. */
/** An expiry memory last read that has passed since, the domain's record not saying so: an inference, said as one. */
export const inferredExpiry = (expiry: string, day: (iso: string) => string): string =>
  `its expiry date memory last read, ${day(expiry)}, has passed`;

export const rememberedWords = (kind: string): string =>
  Object.hasOwn(REMEMBERED_WORDS, kind)
    ? REMEMBERED_WORDS[kind as DomainFinding['kind']]
    : cutText(safeText(kind), 40);

/**
 * The step of a finding memory kept as the one it remembers (`remembered`, docs/memory.md): the
 * record cannot say what stands, so check it in the control panel, and act on what was last read
 * by its deadline (a remembered quarantine's restore-by: its restore link was not signed).
 */
function keptStep(f: DomainFinding, day: DayFormat): string {
  const r = f.remembered as NonNullable<DomainFinding['remembered']>;
  const why =
    r.because === 'registry_unconfirmed'
      ? 'the registry could not be checked this scan'
      : 'its record now has a status the API does not document';
  const last = r.date_expiry
    ? inferredExpiry(r.date_expiry, day)
    : `it was last read ${rememberedWords(r.kind)}`;
  const head = `Check it in ${PANEL} now: ${last}, and ${why}.`;
  const entry = Object.hasOwn(FINDING_NEXT_STEPS, r.kind)
    ? (FINDING_NEXT_STEPS[r.kind] as NextStepEntry<DomainFinding>)
    : undefined;
  if (r.kind !== 'quarantine')
    return entry ? `${head} If it still is: ${entry.step(asRemembered(f), day)}` : head;
  return `${head} ${restoreKeptStep(r, day)}`;
}

/** What to do about a quarantine memory keeps by its restore-by (null: not known), once checked. */
export function restoreKeptStep(
  r: { readonly restore_by?: string | null; readonly days_to_restore?: number | null },
  day: DayFormat,
): string {
  const left = r.days_to_restore;
  if (!r.restore_by || typeof left !== 'number')
    return 'If it is still in quarantine, restore it there as soon as possible: its restore deadline is not known.';
  if (left < 0)
    return `Its restore-by date ${deadlineText(day, r.restore_by)} has passed: if it is still listed, restore it there now.`;
  return `If it is still in quarantine, restore it there by ${deadlineText(day, r.restore_by)} (${left === 0 ? 'the last day' : `${plural(left, 'day')} left`}); a restore is paid.`;
}

/**
 * The step of a quarantine memory keeps while the record gives no finding at all (a problem record
 * marked `kept_quarantine`, memory/kept-quarantine.ts; `unread`: one that could not be read at all):
 * as a kept quarantine finding's.
 */
export function keptQuarantineStep(
  kept: {
    readonly restore_by: string | null;
    readonly days_to_restore: number | null;
    readonly unread?: true;
  },
  day: DayFormat = utcDay,
): string {
  const now = kept.unread
    ? 'its record could not be read now'
    : 'its record now reads as nothing to report, with a status the API does not document';
  return `Check it in ${PANEL} now: it was last read in quarantine, and ${now}. ${restoreKeptStep(kept, day)}`;
}

/** The next step of a finding, one line. */
export function nextStep(f: Finding, day: DayFormat = utcDay): string {
  if (f.kind === 'contact_pending_validation') return FINDING_NEXT_STEPS[f.kind].step(f);
  if (f.remembered) return keptStep(f, day);
  const entry = FINDING_NEXT_STEPS[f.kind] as NextStepEntry<DomainFinding> | undefined;
  const own = entry ? entry.step(f, day) : `Check it in ${PANEL}.`;
  // The reseller's finding leads, and the registry disagrees too: both steps (docs/registry.md).
  return f.registry && !isRegistryKind(f.kind)
    ? `${own} The registry: ${registryNextStep(f.registry, f.date_expiry, day)}`
    : own;
}

/** The next step of a change between two scans, one line. */
export function changeNextStep(change: ChangeSubject, day: DayFormat = utcDay): string {
  const entry = (CHANGE_NEXT_STEPS as Record<string, NextStepEntry<ChangeSubject>>)[change.kind];
  return entry ? entry.step(change, day) : `Check it in ${PANEL}.`;
}
