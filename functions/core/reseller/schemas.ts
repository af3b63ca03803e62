import * as z from 'zod';
import { cutText, normalizeDomainName } from '../base/text';

/**
 * Schemas for the reseller API's responses, tolerant of the aliases the documentation shows
 * (`auto_renewal`, `auto_renewal_period`, `registant_handle`, `page`, `connections` as a string)
 * and of omitted optional fields. Records are parsed one by one so that one bad record becomes a
 * problem in the report instead of failing the whole page.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The instants an ISO 8601 string with a four-digit year can hold once in UTC: 0000-01-01 to
 * 9999-12-31. `9999-12-31T23:00:00-02:00` is valid RFC 3339 but falls in the year 10000 UTC, which
 * `toISOString()` writes as `+010000-…`: a time that no RFC 3339 reader (the state's among them)
 * reads back.
 */
export const MIN_INSTANT_MS = Date.parse('0000-01-01T00:00:00.000Z');
export const MAX_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** True when `ms` is an instant {@link MIN_INSTANT_MS}..{@link MAX_INSTANT_MS}: one `toISOString()` writes as RFC 3339. */
export const isStorableInstant = (ms: number): boolean =>
  Number.isFinite(ms) && ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS;

/**
 * Why `text` is not a usable date-time (null when it is): not RFC 3339, an impossible calendar
 * date, or an instant outside the years 0000–9999 once in UTC.
 */
export function rfc3339Problem(text: string): string | null {
  const ms = parseCalendar(text);
  if (ms === null) return `not an RFC 3339 date-time: ${JSON.stringify(text.slice(0, 40))}`;
  if (!isStorableInstant(ms))
    return `an RFC 3339 date-time outside the years 0000–9999 in UTC: ${JSON.stringify(text.slice(0, 40))}`;
  return null;
}

/**
 * Parses an RFC 3339 date-time with any offset or fraction into epoch milliseconds, or NaN.
 * Fractions beyond milliseconds are truncated; impossible dates (month 13, 31 April) are NaN, and
 * so is an instant outside the years 0000–9999 in UTC, so that every time read can be written back
 * as RFC 3339 (see {@link isStorableInstant}).
 */
export function parseRfc3339(text: string): number {
  const ms = parseCalendar(text);
  return ms !== null && isStorableInstant(ms) ? ms : Number.NaN;
}

function parseCalendar(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = '', zone = 'Z'] = m;
  // A leap second (RFC 3339 5.7: second 60), which Date.parse refuses, is read as the next second.
  const leap = s === '60';
  const ms = leap ? '000' : `${frac}000`.slice(0, 3);
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone;
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${leap ? '59' : s}.${ms}${offset}`;
  const value = Date.parse(iso);
  if (Number.isNaN(value)) return null;
  // Date.parse rolls 2026-02-30 over to March; reject it by checking the calendar date back.
  const shifted = new Date(value + offsetMinutes(offset) * 60_000);
  if (shifted.getUTCDate() !== Number(d) || shifted.getUTCMonth() + 1 !== Number(mo)) return null;
  return leap ? value + 1000 : value;
}

function offsetMinutes(zone: string): number {
  if (zone === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const [hh = '0', mm = '0'] = zone.slice(1).split(':');
  return sign * (Number(hh) * 60 + Number(mm));
}

/** What a record holds instead of the date-time it should, in words rather than zod's default. */
const notADateTime = (input: unknown): string =>
  input === undefined
    ? 'missing'
    : input === null
      ? 'null instead of an RFC 3339 date-time'
      : `${Array.isArray(input) ? 'a list' : typeof input === 'object' ? 'an object' : `a ${typeof input}`} instead of an RFC 3339 date-time`;

const dateTime = z.string({ error: (issue) => notADateTime(issue.input) }).transform((text, ctx) => {
  const problem = rfc3339Problem(text);
  if (problem !== null) {
    ctx.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  }
  return parseRfc3339(text);
});

/**
 * A value as a reason quotes it: JSON, cut to 40 characters (a hostile record's megabyte handle),
 * never between the two halves of an emoji (mail shows a lone half as ?).
 */
const quoted = (value: unknown): string => cutText(JSON.stringify(value) ?? String(value), 42);

/** Booleans, and the strings "true"/"false" some PHP-backed APIs send instead. */
const looseBoolean = z.union([z.boolean(), z.enum(['true', 'false']).transform((s) => s === 'true')], {
  error: (issue) => `not a boolean: ${quoted(issue.input)}`,
});

/**
 * An integer, or a string holding one (the contact table types `connections` as a string); either
 * within what a double holds exactly, so `"12345678901234567891"` is not read as another number.
 */
const looseInt = z.union(
  [
    z.number().int(),
    z
      .string()
      .regex(/^-?\d{1,16}$/)
      .transform(Number)
      .refine(Number.isSafeInteger),
  ],
  { error: (issue) => `not an integer: ${quoted(issue.input)}` },
);

/**
 * Status values as a clean list, from whatever a record holds: an array, or a lone string where the
 * documentation shows an array (also `"registered,quarantine"`); each value trimmed and lower-cased,
 * so `QUARANTINE`, `Quarantine ` and ` quarantine` are all seen as quarantine. Anything else: none.
 */
export function statusValues(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  return list
    .filter((v): v is string => typeof v === 'string')
    .flatMap((v) => v.split(','))
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);
}

/** The status values the documentation shows; any other is reported (see functions/core/scan/scan.ts). */
export const DOCUMENTED_DOMAIN_STATUSES: readonly string[] = ['registered', 'quarantine'];

/** An ISO 4217 currency code; anything else is no currency (it reaches the digest and the SMS). */
const currencyCode = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z]{3}$/);

/** A price: a float (or a string holding one), finite, not negative, below a billion. */
const priceAmount = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v),
  z.number().finite().min(0).max(999_999_999),
);

const stringList = z
  .union([z.array(z.string()), z.string()], {
    error: (issue) => `not a list of strings: ${quoted(issue.input)}`,
  })
  .transform(statusValues);

/**
 * Tags as a clean list: an array of strings (or one string where a server sends a lone value),
 * each trimmed, empty ones and anything but strings dropped, at most 100 of at most 200 characters
 * each (a hostile record's megabyte tag must not reach every policy match).
 */
const tagList = z.union([z.array(z.unknown()), z.string()]).transform((raw) =>
  (Array.isArray(raw) ? raw : [raw])
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.trim())
    .filter((v) => v.length > 0 && v.length <= 200)
    .slice(0, 100),
);

/** A domain as domain-sentinel uses it, whatever aliases the record carried. */
export interface Domain {
  readonly domain_name: string;
  readonly status: readonly string[];
  /** Epoch milliseconds. */
  readonly date_expiry: number;
  /** `auto_renew` or its alias `auto_renewal`; null when the record carries neither. */
  readonly auto_renew: boolean | null;
  readonly auto_renew_period: number | null;
  /** Epoch milliseconds, or null. */
  readonly date_deleted: number | null;
  /** Epoch milliseconds: when the domain was added to the account; null or absent when not given or unreadable. */
  readonly date_created?: number | null;
  readonly registrant_handle: string | null;
  /**
   * Set when the record gives the handle under both spellings the documentation shows
   * (`registrant_handle`, `registant_handle`) and they disagree: the two, in that order.
   * `registrant_handle` above is the first; the scan names the record as a problem.
   */
  readonly registrant_conflict?: readonly [string, string];
  /** Watched fields (state between scans); undefined when the record omits the field. */
  readonly transfer_lock?: boolean | null;
  /** Whether an auth code exists; the code itself is a secret and is never kept. */
  readonly auth_code_present?: boolean;
  readonly nsgroup?: string | null;
  readonly dns_hosted?: boolean | null;
  readonly dnssec?: string | null;
  /** Epoch ms: the coming renewal (the seed: "when the domain is renewed"); null when absent or unreadable. */
  readonly date_renewal?: number | null;
  /** Set for premium and custom-priced domains: what a renewal costs, as far as the record says. */
  readonly price?: DomainPrice;
  /** The domain's tags, trimmed (policies match them, functions/core/scan/policies.ts); absent when it has none. */
  readonly tags?: readonly string[];
}

/** The renewal price of a premium or custom-priced domain; currency and amount absent when the record does not state them. */
export interface DomainPrice {
  readonly kind: 'premium' | 'custom';
  /** ISO 4217 code, upper case. */
  readonly currency?: string;
  readonly amount?: number;
}

/**
 * A name with nothing in it once normalised (``, spaces, `.`) names no domain: the record may be any
 * of them, so it is a problem without a name (no domain is then judged to have left the account).
 */
export const blankDomainName = (name: string): boolean => normalizeDomainName(name) === '';

export const DomainSchema = z
  .object({
    domain_name: z.string().refine((name) => !blankDomainName(name), 'a blank name'),
    status: stringList.optional(),
    date_expiry: dateTime,
    auto_renew: looseBoolean.nullish(),
    auto_renewal: looseBoolean.nullish(),
    auto_renew_period: looseInt.nullish(),
    auto_renewal_period: looseInt.nullish(),
    date_deleted: dateTime.nullish(),
    // Read only to spare a domain registered minutes ago a registry_unknown: tolerant.
    date_created: dateTime.nullish().catch(undefined),
    registrant_handle: z.string().nullish(),
    registant_handle: z.string().nullish(),
    // Watched fields: tolerant, since a scan must not fail over a field it only watches.
    transfer_lock: looseBoolean.nullish().catch(undefined),
    auth_code: z.string().nullish().catch(undefined),
    // The search table types nsgroup as a boolean, the field table as a string: keep it as text.
    nsgroup: z
      .union([z.string(), z.boolean().transform(String)])
      .nullish()
      .catch(undefined),
    dns_hosted: looseBoolean.nullish().catch(undefined),
    dnssec: z.string().nullish().catch(undefined),
    // Renewal and price fields only add rules and totals: an odd value must not cost the record.
    date_renewal: dateTime.nullish().catch(undefined),
    premium_domain: looseBoolean.nullish().catch(undefined),
    premium_price: z
      .object({
        currency: currencyCode.optional().catch(undefined),
        price: priceAmount.optional().catch(undefined),
      })
      .nullish()
      .catch(undefined),
    custom_price_domain: looseBoolean.nullish().catch(undefined),
    // Not in the field table, but the search takes them: read them when a record carries them.
    custom_price: priceAmount.nullish().catch(undefined),
    custom_price_currency: currencyCode.nullish().catch(undefined),
    // Tags only choose a policy: an odd value costs the tags (the domain keeps the deployment's
    // settings), never the record.
    tags: tagList.nullish().catch(undefined),
  })
  .transform(
    (r): Domain => ({
      domain_name: r.domain_name.toLowerCase(),
      status: r.status ?? [],
      date_expiry: r.date_expiry,
      // The two names disagreeing is read as off: a false alarm is cheaper than a lost domain.
      auto_renew:
        r.auto_renew === false || r.auto_renewal === false ? false : (r.auto_renew ?? r.auto_renewal ?? null),
      auto_renew_period: r.auto_renew_period ?? r.auto_renewal_period ?? null,
      date_deleted: r.date_deleted ?? null,
      ...(typeof r.date_created === 'number' ? { date_created: r.date_created } : {}),
      registrant_handle: r.registrant_handle ?? r.registant_handle ?? null,
      ...(r.registrant_handle && r.registant_handle && r.registrant_handle !== r.registant_handle
        ? { registrant_conflict: [r.registrant_handle, r.registant_handle] as const }
        : {}),
      ...watchedFields(r),
      ...renewalFields(r),
      ...(r.tags?.length ? { tags: r.tags } : {}),
    }),
  );

function renewalFields(r: {
  date_renewal?: number | null | undefined;
  premium_domain?: boolean | null | undefined;
  premium_price?: { currency?: string | undefined; price?: number | undefined } | null | undefined;
  custom_price_domain?: boolean | null | undefined;
  custom_price?: number | null | undefined;
  custom_price_currency?: string | null | undefined;
}): Partial<Domain> {
  const out: { -readonly [K in keyof Domain]?: Domain[K] } = {};
  if (r.date_renewal !== undefined) out.date_renewal = r.date_renewal;
  if (r.premium_domain === true)
    out.price = priceOf('premium', r.premium_price?.currency, r.premium_price?.price);
  else if (r.custom_price_domain === true)
    out.price = priceOf('custom', r.custom_price_currency ?? undefined, r.custom_price ?? undefined);
  return out;
}

/** A price is only a price with both its currency and its amount; otherwise only its kind is known. */
function priceOf(
  kind: DomainPrice['kind'],
  currency: string | undefined,
  amount: number | undefined,
): DomainPrice {
  return currency !== undefined && amount !== undefined ? { kind, currency, amount } : { kind };
}

function watchedFields(r: {
  transfer_lock?: boolean | null | undefined;
  auth_code?: string | null | undefined;
  nsgroup?: string | null | undefined;
  dns_hosted?: boolean | null | undefined;
  dnssec?: string | null | undefined;
}): Partial<Domain> {
  const out: { -readonly [K in keyof Domain]?: Domain[K] } = {};
  if (r.transfer_lock !== undefined) out.transfer_lock = r.transfer_lock;
  if (r.auth_code !== undefined) out.auth_code_present = Boolean(r.auth_code);
  if (r.nsgroup !== undefined) out.nsgroup = r.nsgroup;
  if (r.dns_hosted !== undefined) out.dns_hosted = r.dns_hosted;
  if (r.dnssec !== undefined) out.dnssec = r.dnssec;
  return out;
}

/** A contact as domain-sentinel uses it. */
export interface Contact {
  readonly handle: string;
  readonly name: string;
  readonly company_name: string;
  readonly email: string;
  readonly status: readonly string[];
  readonly connections: number | null;
}

export const ContactSchema = z
  .object({
    handle: z.string().refine((handle) => handle.trim() !== '', 'a blank handle'),
    name: z.string().nullish(),
    company_name: z.string().nullish(),
    email: z.string().nullish(),
    status: stringList.optional(),
    connections: looseInt.nullish(),
  })
  .transform(
    (r): Contact => ({
      handle: r.handle,
      name: r.name ?? '',
      company_name: r.company_name ?? '',
      email: r.email ?? '',
      status: r.status ?? [],
      connections: r.connections ?? null,
    }),
  );

/** The pagination object; `page` is the examples' name for `current_page`. */
export const PaginationSchema = z
  .object({
    // Null is no value, as an omitted field is: the other one names the page.
    current_page: looseInt.nullish().transform((n) => n ?? undefined),
    page: looseInt.nullish().transform((n) => n ?? undefined),
    per_page: looseInt,
    total_pages: looseInt,
    total_results: looseInt,
  })
  .transform((p, ctx) => {
    // Which page this is decides whether the listing is proven whole: two answers is none.
    if (p.current_page !== undefined && p.page !== undefined && p.current_page !== p.page) {
      ctx.addIssue({
        code: 'custom',
        message: `current_page (${p.current_page}) and page (${p.page}) disagree`,
      });
      return z.NEVER;
    }
    const current = p.current_page ?? p.page;
    if (current === undefined) {
      ctx.addIssue({ code: 'custom', message: 'pagination has neither current_page nor page' });
      return z.NEVER;
    }
    if (p.per_page < 1 || p.total_pages < 0 || p.total_results < 0 || current < 1) {
      ctx.addIssue({ code: 'custom', message: `pagination out of range: ${JSON.stringify(p)}` });
      return z.NEVER;
    }
    return {
      current_page: current,
      per_page: p.per_page,
      total_pages: p.total_pages,
      total_results: p.total_results,
    };
  });

export type Pagination = z.output<typeof PaginationSchema>;

/** The list envelope; records stay unknown here and are parsed one by one. */
export const ListEnvelopeSchema = z.object({
  data: z.array(z.unknown()),
  pagination: PaginationSchema,
});

/** One line per issue: `date_expiry: not an RFC 3339 date-time`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : 'record'}: ${issue.message}`)
    .join('; ');
}
