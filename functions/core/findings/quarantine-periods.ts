import { domainToASCII } from 'node:url';
import * as z from 'zod';
import { isStorableInstant } from '../reseller/schemas';

/**
 * How long a deleted (quarantined) domain can still be restored, per TLD, each period with the
 * registry policy page it comes from (docs/deadlines.md shows the same table). A TLD that is not
 * here has no restore deadline: the report says "restore deadline unknown" rather than guess, and
 * QUARANTINE_DAYS adds or overrides periods (`nl=40,be=40`).
 */

/** One registry's rule for the days after deletion. */
export interface QuarantinePeriod {
  /** Whose rule it is. */
  readonly registry: string;
  /** Days after `date_deleted` during which a restore is possible. */
  readonly restoreDays: number;
  /** Days after those in which nothing can be done any more before the name is released (gTLD pending delete). */
  readonly pendingDeleteDays: number;
  /** The policy pages the numbers come from. */
  readonly sources: readonly string[];
}

const SIDN: QuarantinePeriod = {
  registry: 'SIDN (.nl)',
  restoreDays: 40,
  pendingDeleteDays: 0,
  sources: [
    'https://www.sidn.nl/en/nl-domain-name/undoing-the-cancellation-of-a-domain-name',
    'https://sidn.nl/en/news-and-blogs/quarantine-period-end-times-to-be-shown-in-whois',
  ],
};

const DNS_BELGIUM: QuarantinePeriod = {
  registry: 'DNS Belgium (.be)',
  restoreDays: 40,
  pendingDeleteDays: 0,
  sources: ['https://docs.dnsbelgium.be/be/general/deletes.html'],
};

const EURID: QuarantinePeriod = {
  registry: 'EURid (.eu, .ею, .ευ)',
  restoreDays: 40,
  pendingDeleteDays: 0,
  sources: [
    'https://help.eurid.eu/hc/en-gb/articles/9731562911261-Why-is-my-domain-name-in-quarantine-How-can-I-restore-it',
  ],
};

const DENIC: QuarantinePeriod = {
  registry: 'DENIC (.de)',
  restoreDays: 30,
  pendingDeleteDays: 0,
  sources: ['https://denic.de/en/domains/de-domains/domain-deletion/redemption-grace-period'],
};

/** ICANN's Redemption Grace Period for (non-sponsored) gTLDs, then 5 days of pending delete. */
const GTLD_RGP: QuarantinePeriod = {
  registry: 'ICANN Redemption Grace Period (gTLD)',
  restoreDays: 30,
  pendingDeleteDays: 5,
  sources: [
    'https://icannwiki.org/Expired_Registration_Recovery_Policy',
    'http://www.icann.org/tlds/agreements/info/registry-agmt-appc-j-20jan04.htm',
    'https://datatracker.ietf.org/doc/rfc3915/',
  ],
};

/**
 * The built-in periods by TLD (ASCII form). gTLDs are listed one by one: another gTLD follows the
 * same ICANN policy, but a TLD is only trusted to be one when it is named here or in QUARANTINE_DAYS.
 */
export const QUARANTINE_PERIODS: Readonly<Record<string, QuarantinePeriod>> = {
  nl: SIDN,
  be: DNS_BELGIUM,
  eu: EURID,
  'xn--e1a4c': EURID,
  'xn--qxa6a': EURID,
  de: DENIC,
  com: GTLD_RGP,
  net: GTLD_RGP,
  org: GTLD_RGP,
  info: GTLD_RGP,
  biz: GTLD_RGP,
};

/** Restore periods by TLD from QUARANTINE_DAYS; they win over the built-in table. */
export type QuarantineOverrides = Readonly<Record<string, number>>;

/** The longest period QUARANTINE_DAYS accepts: no registry keeps a deleted name restorable longer. */
export const MAX_QUARANTINE_DAYS = 365;

/** A TLD label as a key: lower case, no leading dot, Unicode as punycode; null when it is not a label. */
export function tldKey(text: string): string | null {
  const label = text.trim().toLowerCase().replace(/^\./, '');
  const ascii = /^[\x21-\x7e]*$/.test(label) ? label : domainToASCII(`x.${label}`).slice(2);
  return /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(ascii) ? ascii : null;
}

/**
 * Parses QUARANTINE_DAYS: `tld=days` pairs, comma-separated (`nl=40,be=40`). Throws a RangeError
 * naming the bad pair, so the setting's error says which one.
 */
export function parseQuarantineDays(text: string): QuarantineOverrides {
  const out: Record<string, number> = {};
  for (const part of text.split(',')) {
    const pair = part.trim();
    if (!pair) continue;
    const match = /^([^=\s]+)\s*=\s*(\d{1,4})$/.exec(pair);
    const tld = match ? tldKey(match[1] as string) : null;
    const days = Number(match?.[2]);
    if (!match || tld === null || days < 1 || days > MAX_QUARANTINE_DAYS)
      throw new RangeError(
        `${JSON.stringify(pair.slice(0, 40))} is not tld=days (a TLD such as nl, and 1 to ${MAX_QUARANTINE_DAYS} days)`,
      );
    out[tld] = days;
  }
  return out;
}

/** The QUARANTINE_DAYS setting's schema: tld=days pairs read into overrides (none when unset). */
export const quarantineDaysSetting = z
  .string()
  .trim()
  .max(2_000, 'must be at most 2000 characters')
  .transform((text, ctx) => {
    try {
      return parseQuarantineDays(text);
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        message: `must list tld=days pairs, e.g. nl=40,be=40: ${(error as Error).message}`,
      });
      return z.NEVER;
    }
  })
  .default({});

/** The period that applies to a domain: from QUARANTINE_DAYS, the built-in table, or none. */
export interface AppliedPeriod {
  readonly tld: string;
  readonly restoreDays: number;
  readonly pendingDeleteDays: number;
  /** `QUARANTINE_DAYS`, or the policy pages of the built-in entry. */
  readonly source: string;
}

/** The TLD of a domain name: its last label, in ASCII. */
export function tldOf(domainName: string): string {
  const labels = domainName.trim().toLowerCase().replace(/\.$/, '').split('.');
  return tldKey(labels[labels.length - 1] ?? '') ?? '';
}

/** The restore period of `domainName`'s TLD, or null when neither the table nor QUARANTINE_DAYS knows it. */
export function quarantinePeriodOf(
  domainName: string,
  overrides: QuarantineOverrides = {},
): AppliedPeriod | null {
  const tld = tldOf(domainName);
  if (!tld) return null;
  // A TLD label from the API is data: own entries only, so `constructor` or `tostring` finds no period
  // on Object.prototype (a function there made every date NaN and failed the whole scan).
  const own = Object.hasOwn(overrides, tld) ? overrides[tld] : undefined;
  if (own !== undefined) return { tld, restoreDays: own, pendingDeleteDays: 0, source: 'QUARANTINE_DAYS' };
  const known = Object.hasOwn(QUARANTINE_PERIODS, tld) ? QUARANTINE_PERIODS[tld] : undefined;
  if (!known) return null;
  return {
    tld,
    restoreDays: known.restoreDays,
    pendingDeleteDays: known.pendingDeleteDays,
    source: known.sources.join(' '),
  };
}

const DAY_MS = 86_400_000;
/** How far after now a `date_deleted` may lie and still be believed: clocks of two hosts differ a little. */
export const DATE_DELETED_LEEWAY_MS = 3_600_000;

/** When a quarantined domain must be restored by, or why that is unknown. */
export type RestoreDeadline =
  | {
      readonly known: true;
      /** ISO 8601: `date_deleted` + the TLD's restore period. */
      readonly restore_by: string;
      /** Whole days from now to `restore_by`, rounded down: 0 on the last day, negative once past. */
      readonly days_to_restore: number;
    }
  | { readonly known: false; readonly reason: string };

/**
 * The restore deadline of a quarantined domain: `date_deleted` + its TLD's period. Unknown, never
 * guessed, when the record has no `date_deleted`, one later than now (beyond
 * {@link DATE_DELETED_LEEWAY_MS}), or the TLD has no known period.
 */
export function restoreDeadline(
  domainName: string,
  dateDeleted: number | null,
  now: number,
  overrides: QuarantineOverrides = {},
): RestoreDeadline {
  const period = quarantinePeriodOf(domainName, overrides);
  if (dateDeleted === null || !Number.isFinite(dateDeleted)) {
    return {
      known: false,
      reason: 'the record has no date_deleted, so when the quarantine ends is not known',
    };
  }
  if (!period) {
    const tld = tldOf(domainName);
    return {
      known: false,
      reason: `no quarantine period is known for ${tld ? `.${tld}` : 'this name'} (set QUARANTINE_DAYS, e.g. ${tld || 'tld'}=40, from the registry's policy)`,
    };
  }
  // No domain can have been deleted after now: a date_deleted in the future (a lying server, a
  // registry clock, a typo) would give more days to restore than the TLD allows. A little leeway
  // for clocks of two hosts: within it, the days left stay within the period (they round down).
  if (dateDeleted - now > DATE_DELETED_LEEWAY_MS)
    return {
      known: false,
      reason: 'date_deleted is in the future, so when the quarantine ends is not known',
    };
  const restoreBy = dateDeleted + period.restoreDays * DAY_MS;
  // A deadline no ISO 8601 year can hold (a replay dated in the year 9999) is not a date to show.
  if (!isStorableInstant(restoreBy))
    return { known: false, reason: 'the restore deadline falls after the year 9999' };
  return {
    known: true,
    restore_by: new Date(restoreBy).toISOString(),
    days_to_restore: Math.floor((restoreBy - now) / DAY_MS),
  };
}

/** The last days before a restore deadline, in which alerts repeat daily and the SMS says LAST DAYS. */
export const LAST_DAYS = 7;
