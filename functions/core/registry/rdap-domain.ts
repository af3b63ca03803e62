import * as z from 'zod';
import { normalizeDomainName } from '../base/text';
import type { RegistryFacts } from '../findings/registry-rules';
import { parseRfc3339 } from '../reseller/schemas';

/**
 * An RDAP domain object (RFC 9083 §5.3) as the registry check reads it: its name, status values
 * (RFC 9083 §4.6, in RFC 8056's words), events (§4.5: `expiration`, `last changed`) and
 * nameservers. Tolerant of what registries do in practice: EPP's own status words
 * (`clientHold`), upper case, missing optional members; strict where a wrong reading would
 * mislead: an answer for another name is refused.
 */

/** RFC 8056 §2: each EPP status and the RDAP word for it. */
export const EPP_TO_RDAP_STATUS: Readonly<Record<string, string>> = {
  addPeriod: 'add period',
  autoRenewPeriod: 'auto renew period',
  clientDeleteProhibited: 'client delete prohibited',
  clientHold: 'client hold',
  clientRenewProhibited: 'client renew prohibited',
  clientTransferProhibited: 'client transfer prohibited',
  clientUpdateProhibited: 'client update prohibited',
  inactive: 'inactive',
  linked: 'associated',
  ok: 'active',
  pendingCreate: 'pending create',
  pendingDelete: 'pending delete',
  pendingRenew: 'pending renew',
  pendingRestore: 'pending restore',
  pendingTransfer: 'pending transfer',
  pendingUpdate: 'pending update',
  redemptionPeriod: 'redemption period',
  renewPeriod: 'renew period',
  serverDeleteProhibited: 'server delete prohibited',
  serverRenewProhibited: 'server renew prohibited',
  serverTransferProhibited: 'server transfer prohibited',
  serverUpdateProhibited: 'server update prohibited',
  serverHold: 'server hold',
  transferPeriod: 'transfer period',
};

const BY_LOWER_EPP = new Map(
  Object.entries(EPP_TO_RDAP_STATUS).map(([epp, rdap]) => [epp.toLowerCase(), rdap]),
);

/**
 * A status value in RDAP's words, lower case: `clientHold`, `CLIENT HOLD` and `client_hold` all
 * read as `client hold` (registries send all of these, though RFC 9083 asks for the RDAP word).
 */
export function rdapStatusWord(value: string): string {
  const plain = value.trim().toLowerCase().replace(/[_-]+/g, ' ').replace(/\s+/g, ' ');
  return BY_LOWER_EPP.get(plain.replace(/ /g, '')) ?? plain;
}

/** What the check keeps of a domain object. */
export interface RegistryRecord extends RegistryFacts {
  /** The name the registry answered for, lower case (ldhName, else unicodeName as punycode). */
  readonly name: string | null;
  /** The `last changed` event (epoch ms), when given. */
  readonly lastChanged: number | null;
  /** Nameserver names, lower case, at most 13 (the DNS's own limit for a delegation that fits). */
  readonly nameservers: readonly string[];
}

const EventSchema = z.looseObject({ eventAction: z.unknown().optional(), eventDate: z.unknown().optional() });
const NameserverSchema = z.looseObject({
  ldhName: z.unknown().optional(),
  unicodeName: z.unknown().optional(),
});

/**
 * The members the check reads; anything else (entities, links, notices, remarks) is left alone. A
 * member sent as null is one left out: servers that write every member of their model send that.
 */
export const RdapDomainSchema = z.looseObject({
  objectClassName: z.string().nullish(),
  ldhName: z.string().nullish(),
  unicodeName: z.string().nullish(),
  status: z.array(z.unknown()).nullish(),
  events: z.array(z.unknown()).nullish(),
  nameservers: z.array(z.unknown()).nullish(),
});

/** Why an RDAP answer cannot be read as the domain asked for. */
export class RdapDomainShapeError extends Error {
  override readonly name: string = 'RdapDomainShapeError';
}

/**
 * Reads a domain object for `asked` (a normalised name). Unreadable events are skipped (an
 * expiration that does not read, or one dated before any domain existed, counts as none
 * published); with several `expiration` events the latest counts, the reading that raises no false
 * alarm.
 * @throws RdapDomainShapeError when it is not a domain object, names no domain, or one for another name
 */
export function parseRdapDomain(value: unknown, asked: string): RegistryRecord {
  const parsed = RdapDomainSchema.safeParse(value);
  if (!parsed.success) throw new RdapDomainShapeError('the answer is not an RDAP domain object');
  const domain = parsed.data;
  if (domain.objectClassName != null && domain.objectClassName !== 'domain')
    throw new RdapDomainShapeError(
      `the answer is an RDAP ${JSON.stringify(domain.objectClassName.slice(0, 40))} object, not a domain`,
    );
  const name = nameOf(domain.ldhName, domain.unicodeName);
  // Without a name it cannot be told from a canned answer or an error object sent with 200.
  if (name === null)
    throw new RdapDomainShapeError('the answer names no domain (neither ldhName nor unicodeName)');
  if (name !== asked)
    throw new RdapDomainShapeError(`the answer is for ${JSON.stringify(name.slice(0, 80))}, not ${asked}`);
  const status = [
    ...new Set((domain.status ?? []).filter((s): s is string => typeof s === 'string').map(rdapStatusWord)),
  ];
  return {
    name,
    status,
    expiration: latestEvent(domain.events, 'expiration'),
    lastChanged: latestEvent(domain.events, 'last changed'),
    nameservers: nameserversOf(domain.nameservers),
  };
}

function nameOf(ldh: string | null | undefined, unicode: string | null | undefined): string | null {
  const name = ldh ?? unicode;
  return name == null ? null : normalizeDomainName(name);
}

/**
 * The first domain under a TLD was registered in March 1985: an earlier date is a server's
 * placeholder (0, the epoch, the year 0), not an event of this domain. Read as an expiration it
 * would announce a live domain as lapsed decades ago, critical.
 */
const FIRST_DOMAIN_MS = Date.UTC(1985, 0, 1);

function latestEvent(events: readonly unknown[] | null | undefined, action: string): number | null {
  let latest: number | null = null;
  for (const raw of events ?? []) {
    const event = EventSchema.safeParse(raw);
    if (!event.success || typeof event.data.eventAction !== 'string') continue;
    if (event.data.eventAction.trim().toLowerCase() !== action) continue;
    const at = typeof event.data.eventDate === 'string' ? eventTime(event.data.eventDate) : Number.NaN;
    if (!Number.isNaN(at) && at >= FIRST_DOMAIN_MS && (latest === null || at > latest)) latest = at;
  }
  return latest;
}

/**
 * What registries send as an event date that names a day: RFC 3339 (RFC 9083 §4.5), and beside it
 * a leap second, no offset, a basic offset (`+0100`) or a date alone. Bounded, so a megabyte of
 * digits costs linear time.
 */
const EVENT_DATE =
  /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2}):(\d{2})(\.\d{1,30})?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An event date as epoch ms, NaN when it names no day. Read as none, a date a registry writes its
 * own way would count the domain as a registry without expiry dates, and a renewal that never
 * reached the registry would go unseen. A leap second reads as the second before it; no offset
 * reads as UTC: the check compares days with a tolerance of days, which no offset moves.
 */
function eventTime(text: string): number {
  const m = EVENT_DATE.exec(text.trim());
  if (!m) return Number.NaN;
  const [, day, hourMinute = '00:00', second = '00', fraction = '', zone = 'Z'] = m;
  const offset = zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  return parseRfc3339(`${day}T${hourMinute}:${second === '60' ? '59' : second}${fraction}${offset}`);
}

function nameserversOf(nameservers: readonly unknown[] | null | undefined): string[] {
  const names: string[] = [];
  for (const raw of nameservers ?? []) {
    const ns = NameserverSchema.safeParse(raw);
    if (!ns.success) continue;
    const name = ns.data.ldhName ?? ns.data.unicodeName;
    if (typeof name === 'string' && name.length <= 253) names.push(normalizeDomainName(name));
    if (names.length === 13) break;
  }
  return names;
}
