import * as z from 'zod';
import { ConfigError, SentinelError } from '../base/errors';
import { safeText } from '../base/text';
import { DOMAIN_FINDING_KINDS, type Finding, SEVERITIES, type Severity } from '../findings/classify';
import type { Domain } from '../reseller/schemas';
import type { Escalation, Repeat } from '../scan/policies';
import type { Report } from '../scan/scan';
import { shownCut } from './state-bounds';
import { StoredDateTime } from './state-time';

/**
 * The memory between scans as one model: what is remembered of each domain, contact and account,
 * the schemas a store reads it back with, the one encoder of a domain's memory, and the errors of
 * state. Pure. The comparison with a scan is compare.ts; the protocol the stores share is
 * functions/use-cases/state-store.ts.
 */

/** The version of every stored state format (file, DynamoDB items); a store refuses another. */
export const STATE_VERSION = 1;

/** A watched field: its stored schema, how it is read from a record, and the change it reports. */
interface WatchedField<T, K extends string> {
  readonly schema: z.ZodType<T>;
  /** The value as read; undefined when the record does not carry the field (nothing is inferred then). */
  readonly read: (domain: Domain) => T | undefined;
  /** Text from the reseller: kept cut, with a hash, past MAX_FIELD_LENGTH (state-bounds.ts). */
  readonly bounded?: true;
  /** The change between two reads it reports (a warning); `of` answers what to show, or null for none. */
  readonly change?: {
    readonly kind: K;
    readonly of: (before: T | undefined, after: T | undefined, b: AnyWatched, a: AnyWatched) => Shown | null;
  };
}
type AnyWatched = Readonly<Record<string, unknown>>;
type Shown = readonly [before: unknown, after: unknown];

const watch = <T, K extends string = never>(field: WatchedField<T, K>) => field;

/** A change from `from` to `to` exactly. */
const turned =
  <T>(from: T, to: T) =>
  (b: T | undefined, a: T | undefined): Shown | null =>
    b === from && a === to ? [from, to] : null;

const nameservers = (w: AnyWatched) => ({ nsgroup: w.nsgroup, dns_hosted: w.dns_hosted });
const knownNameservers = (w: AnyWatched) => w.nsgroup !== undefined && w.dns_hosted !== undefined;

/**
 * Every field of a domain watched between scans, in stored order. A new watched field is one entry
 * here (docs/contributing.md shows what else it touches). The auth code itself is a secret: only
 * whether one exists is kept.
 */
export const WATCHED = {
  registrant_handle: watch({
    schema: z.string().nullable(),
    read: (d) => d.registrant_handle,
    bounded: true,
    change: {
      kind: 'registrant_changed',
      of: (b, a) => (typeof b === 'string' && typeof a === 'string' && b !== a ? [b, a] : null),
    },
  }),
  transfer_lock: watch({
    schema: z.boolean().nullable(),
    read: (d) => d.transfer_lock,
    change: { kind: 'transfer_lock_off', of: turned<boolean | null>(true, false) },
  }),
  auth_code_present: watch({
    schema: z.boolean(),
    read: (d) => d.auth_code_present,
    change: { kind: 'auth_code_issued', of: turned(false, true) },
  }),
  nsgroup: watch({
    schema: z.string().nullable(),
    read: (d) => d.nsgroup,
    bounded: true,
    // The nameservers are the group and whether DNS is hosted: one change, known once both are.
    change: {
      kind: 'nameservers_changed',
      of: (_b, _a, b, a) =>
        knownNameservers(b) &&
        knownNameservers(a) &&
        (b.nsgroup !== a.nsgroup || b.dns_hosted !== a.dns_hosted)
          ? [nameservers(b), nameservers(a)]
          : null,
    },
  }),
  dns_hosted: watch({ schema: z.boolean().nullable(), read: (d) => d.dns_hosted }),
  auto_renew: watch({
    schema: z.boolean().nullable(),
    read: (d) => d.auto_renew,
    change: {
      kind: 'auto_renew_turned_off',
      of: (b, a) => (b === true && a !== undefined && a !== true ? [true, a] : null),
    },
  }),
  dnssec: watch({
    schema: z.string().nullable(),
    read: (d) => d.dnssec,
    bounded: true,
    change: { kind: 'dnssec_unsigned', of: turned<string | null>('signed', 'unsigned') },
  }),
  /** Premium domains: the price as read; null when the record states none. */
  premium_price: watch({
    schema: z.object({ currency: z.string().max(3), amount: z.number() }).nullable(),
    read: (d) => {
      if (d.price?.kind !== 'premium') return undefined;
      const { currency, amount } = d.price;
      return currency !== undefined && amount !== undefined ? { currency, amount } : null;
    },
    change: {
      kind: 'premium_price_changed',
      of: (b, a) => (b && a && (b.currency !== a.currency || b.amount !== a.amount) ? [b, a] : null),
    },
  }),
  /** Auto-renew domains: the renewal watched for (renewal-memory.ts). */
  renewal: watch({
    schema: z.object({ due: StoredDateTime.nullable(), expiry: StoredDateTime }),
    read: (d): RenewalWatch | undefined =>
      d.auto_renew !== true
        ? undefined
        : {
            due: typeof d.date_renewal === 'number' ? new Date(d.date_renewal).toISOString() : null,
            expiry: new Date(d.date_expiry).toISOString(),
          },
  }),
};

type Watched = typeof WATCHED;

/**
 * The watched fields of one domain. A field absent here was absent from the record: nothing is
 * inferred from or to an unknown value.
 */
export type WatchedFields = {
  readonly [K in keyof Watched]?: Exclude<ReturnType<Watched[K]['read']>, undefined>;
};
/** The names of the watched fields, in stored order. */
export const WATCHED_NAMES = Object.keys(WATCHED) as (keyof Watched)[];

/** The renewal a domain is watched for: when it is due, and the expiry it is to extend. */
export interface RenewalWatch {
  /** ISO 8601; null in an observation whose record has no `date_renewal`. */
  readonly due: string | null;
  /** ISO 8601: the expiry as read. */
  readonly expiry: string;
}

/** The watched fields of one domain as read. */
export function watchedFieldsOf(domain: Domain): WatchedFields {
  const out: Record<string, unknown> = {};
  for (const name of WATCHED_NAMES) {
    const value = WATCHED[name].read(domain);
    if (value !== undefined) out[name] = value;
  }
  return out as WatchedFields;
}

type FieldChangeKind = { [K in keyof Watched]: NonNullable<Watched[K]['change']>['kind'] }[keyof Watched];
/** Kinds of change to a domain that are news in themselves, finding or not. */
export type ChangeKind = 'left_account' | 'returned' | FieldChangeKind;

/** The group a domain was in when last read (its policy's name), and whether that policy lets it lapse. */
export interface InGroup {
  /** The policy the domain fell under (docs/policies.md); absent: none, the deployment's settings. */
  readonly policy?: string;
  /** Its policy lets it lapse: in the report, never in an alert (as a finding's `let_lapse`). */
  readonly let_lapse?: true;
}

/** `{domain_name, kind, severity, before, after}`: something about a domain changed. */
export interface DomainChange extends InGroup {
  readonly domain_name: string;
  readonly kind: ChangeKind;
  readonly severity: Severity;
  readonly before: unknown;
  readonly after: unknown;
}

/** The watched-field changes between two reads of one domain, in the table's order. */
export function fieldChanges(name: string, before: WatchedFields, after: WatchedFields): DomainChange[] {
  const out: DomainChange[] = [];
  for (const field of WATCHED_NAMES) {
    const change = (WATCHED[field] as WatchedField<unknown, ChangeKind>).change;
    const shown = change?.of(before[field], after[field], before, after);
    if (change && shown)
      out.push({
        domain_name: name,
        kind: change.kind,
        severity: 'warning',
        before: shown[0],
        after: shown[1],
      });
  }
  return out;
}

/**
 * True when two stored values are the same, a key set to undefined being one left out; objects are
 * compared key by key, one level deep (a memory's parts are flat).
 */
function same(x: unknown, y: unknown, deep = false): boolean {
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  const a = x as Record<string, unknown>;
  const b = y as Record<string, unknown>;
  for (const key in a) if (!(deep ? same(a[key], b[key]) : a[key] === b[key])) return false;
  for (const key in b) if (!(key in a) && b[key] !== undefined) return false;
  return true;
}

/** True when two reads of a domain's watched fields are the same. */
export const sameWatched = (a: WatchedFields, b: WatchedFields): boolean => same(a, b, true);

/** True when two memories encode the same ({@link encodeMemory}), without encoding them. */
export function sameMemory(a: DomainMemory, b: DomainMemory): boolean {
  return (
    a === b ||
    (a.name === b.name &&
      a.group === b.group &&
      same(a.finding, b.finding) &&
      same(a.alerted, b.alerted) &&
      same(a.watched, b.watched, true) &&
      same(a.actions, b.actions, true))
  );
}

/** How a finding relates to the last scan. */
export type Change = 'new' | 'escalated' | 'ongoing';

/** Why a finding went away (or fell in severity). */
export type ResolvedReason =
  | 'renewed'
  | 'auto_renew_on'
  | 'restored'
  | 'left_account'
  | 'no_longer_pending'
  | 'no_longer_flagged';

/*
 * What is remembered, as a store keeps it: each schema reads a stored value back, and each type is
 * what its schema reads (z.infer), so a field is declared once.
 */
/** What a schema reads, read-only at every depth: a remembered value is never changed in place. */
type Stored<S extends z.ZodType> = DeepReadonly<z.infer<S>>;
type DeepReadonly<T> = T extends readonly (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

const severity = z.enum(SEVERITIES);
const domainKind = z.enum(DOMAIN_FINDING_KINDS);
const findingKind = z.union([domainKind, z.literal('contact_pending_validation')]);

const FindingMemorySchema = z.object({
  kind: findingKind,
  severity,
  /** The ladder rung the finding stood on (see stageOf in escalation.ts); null off the ladder. */
  stage: z.number().nullable(),
  date_expiry: StoredDateTime.optional(),
  /** A quarantine read with its restore-by: a finding kept unjudged is judged by it (unjudged-memory.ts). */
  restore_by: StoredDateTime.optional(),
});
/** A finding as remembered: enough to tell new from escalated from ongoing, and why it went away. */
export type FindingMemory = Stored<typeof FindingMemorySchema>;

const AlertMemorySchema = FindingMemorySchema.omit({ date_expiry: true, restore_by: true }).extend({
  /** ISO 8601: the `now` of the scan that published it. */
  at: StoredDateTime,
  /** ISO 8601: the first alert of this finding (its kind; once critical, as critical), or the end of a snooze since. Escalation counts from it. */
  first_at: StoredDateTime,
  /** The rung (stage) it was escalated at, once escalated (docs/policies.md); each rung escalates once. */
  escalated: z.number().nullable().optional(),
  /** Times this finding (kind, severity, rung) was published again by its repeat cadence (repeat.ts); absent: none. */
  repeats: z.number().int().min(0).optional(),
});
/** The last alert that carried a finding. */
export type AlertMemory = Stored<typeof AlertMemorySchema>;

/** The watched fields, read by the schema each has in WATCHED; typed as WatchedFields, which WATCHED gives. */
const WatchedSchema = z.object(
  Object.fromEntries(WATCHED_NAMES.map((name) => [name, WATCHED[name].schema.optional()])),
) as unknown as z.ZodType<WatchedFields>;

const SnoozeSchema = z.object({
  /** ISO 8601. */
  until: StoredDateTime,
  /** ISO 8601: when it was snoozed. */
  at: StoredDateTime,
  /** The finding as it was when snoozed: worse than this comes back at once. */
  kind: domainKind,
  severity,
});
/** A snooze: silent until `until`, unless the finding gets worse than it was. */
export type Snooze = Stored<typeof SnoozeSchema>;

const AcknowledgementSchema = z.object({
  /** ISO 8601: when it was acknowledged. */
  at: StoredDateTime,
  kind: domainKind,
  severity,
  date_expiry: StoredDateTime,
  auto_renew: z.boolean().nullable(),
});
/** "We let this one go": silent while the expiry date, the status (kind) and auto-renew stay as they were. */
export type Acknowledgement = Stored<typeof AcknowledgementSchema>;

const DomainActionsSchema = z.object({
  snooze: SnoozeSchema.optional(),
  acknowledged: AcknowledgementSchema.optional(),
});
/** What one domain carries of the actions taken on it (actions.ts). */
export type DomainActions = Stored<typeof DomainActionsSchema>;

/** As a store keeps it: {@link DomainMemory}. */
export const DomainMemorySchema = z.object({
  /** The name (cut) when the memory is kept under a hash of it (see state-bounds.ts). */
  name: z.string().optional(),
  /**
   * The policy the domain fell under when last read: a domain that leaves the account is announced
   * to its group, and not at all when its policy lets it lapse (docs/policies.md).
   */
  group: z.string().max(64).optional(),
  watched: WatchedSchema,
  finding: FindingMemorySchema.nullable(),
  alerted: AlertMemorySchema.nullable(),
  /** Snooze and acknowledgement; absent when neither is set. */
  actions: DomainActionsSchema.optional(),
});
/** Everything remembered of one domain, as a store keeps it. */
export type DomainMemory = Stored<typeof DomainMemorySchema>;

/** As a store keeps it: {@link Departure}. */
export const DepartureSchema = DomainMemorySchema.pick({ name: true, group: true, actions: true }).extend({
  at: StoredDateTime,
});
/** What the state keeps of a domain announced as gone (departures.ts): when, its name (cut when hashed), group and actions. */
export type Departure = Stored<typeof DepartureSchema>;

/** As a store keeps it: {@link ContactMemory}. */
export const ContactMemorySchema = z.object({
  /** The handle (cut) when the memory is kept under a hash of it. */
  handle: z.string().optional(),
  finding: FindingMemorySchema,
  alerted: AlertMemorySchema.nullable(),
});
/** Everything remembered of one flagged contact, as a store keeps it. */
export type ContactMemory = Stored<typeof ContactMemorySchema>;

const AccountBindingSchema = z.object({
  /** base64url, 16 random bytes. */
  salt: z.string().regex(/^[A-Za-z0-9_-]{16,86}$/, 'not a salt (base64url)'),
  /** base64url of scrypt(key, salt), 32 bytes. */
  hash: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'not a hash (base64url of 32 bytes)'),
});
/** How a state names its account without keeping its key (state-account.ts). */
export type AccountBinding = Stored<typeof AccountBindingSchema>;

/** As a store keeps it: {@link StateHead}. */
export const StateHeaderSchema = z.object({
  version: z.literal(STATE_VERSION, {
    error: (issue) =>
      issue.input === undefined
        ? 'missing'
        : `written by another version of domain-sentinel (state format ${JSON.stringify(issue.input)}, this one reads ${STATE_VERSION})`,
  }),
  /** The reseller base URL the state belongs to; a store refuses to mix accounts. */
  scope: z.string().nullable(),
  /** The account (API key) the state belongs to, never the key itself; null until the first save. */
  account: AccountBindingSchema.nullable(),
  /** The first scan saved (the weekly summary counts from it until the first publish). */
  started_at: StoredDateTime.nullable(),
  last_scan_at: StoredDateTime.nullable(),
  last_published_at: StoredDateTime.nullable(),
  /** `domain:<name>` / `contact:<handle>` / `domain@page<n>` of the records that could not be read (bounded). */
  problem_keys: z.array(z.string()),
  /** The digest of every unreadable-record key, when there were more than `problem_keys` holds. */
  problem_keys_digest: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'not a sha256 digest')
    .optional(),
  /** The domains announced as gone (`left_account`), by memory key, for a while (departures.ts). */
  departed: z.record(z.string(), DepartureSchema).optional(),
});

/** The account-wide part of the state as a store keeps it (the contacts are read apart). */
export type StateHead = Stored<typeof StateHeaderSchema> & {
  /** By key: the handle, or a hash of it. */
  readonly contacts: Readonly<Record<string, ContactMemory>>;
};

/** The state before the first scan. */
export const EMPTY_HEAD: StateHead = {
  version: STATE_VERSION,
  scope: null,
  account: null,
  started_at: null,
  last_scan_at: null,
  last_published_at: null,
  problem_keys: [],
  contacts: {},
};

/** When to speak up, with state. */
export interface StatePolicy {
  /** Days-left rungs; crossing one since the last alert escalates. @default [30, 14, 7, 3, 1] */
  readonly thresholds: readonly number[];
  /** The rungs of each policy's findings that sets its own (`alertThresholds`), by the policy's name. */
  readonly thresholdsByGroup?: ReadonlyMap<string, readonly number[]>;
  /** The repeat cadence of a finding no policy claims (the policies' top-level `repeat`). @default DEFAULT_REPEAT */
  readonly repeat: Repeat;
  /** The cadence of each policy's findings, by the policy's name (`finding.policy`). */
  readonly repeatByGroup?: ReadonlyMap<string, Repeat>;
  /** A summary goes out when nothing was published for this many days; 0 turns it off. @default 7 */
  readonly summaryEveryDays: number;
  /** Only what reaches this severity makes a message. @default 'warning' */
  readonly minSeverity: Severity;
  /** The level of each policy's findings that sets its own (`minSeverity`), by the policy's name. */
  readonly minSeverityByGroup?: ReadonlyMap<string, Severity>;
  /** Escalation of a critical finding nobody acted on (the policies' `escalation`). @default - none */
  readonly escalation?: EscalationPolicy;
  /** The names of the policies that let their domains lapse: their changes and resolutions are never news. */
  readonly lapsing?: ReadonlySet<string>;
  /** The policies whose recipients get their group's news alone (alerts/groups.ts): other news leaves their repeat hours running. */
  readonly ownRecipients?: ReadonlySet<string>;
}

/**
 * When a critical finding nobody acknowledged or snoozed is published again as an escalation:
 * `afterHours` since its first alert, its deadline (expiry, or restore-by) within `withinDays`.
 */
export type EscalationPolicy = Pick<Escalation, 'afterHours' | 'withinDays'>;

/** A finding of the last scan that went away or fell in severity, and why. */
export interface Resolution extends InGroup {
  /** Set for a domain finding. */
  readonly domain_name?: string;
  /** Set for a contact finding. */
  readonly handle?: string;
  readonly kind: Finding['kind'];
  /** Its severity in the last scan. */
  readonly severity: Severity;
  readonly reason: ResolvedReason;
  /** What is left of it now, when the domain still has a (lesser) finding. */
  readonly now: { readonly kind: Finding['kind']; readonly severity: Severity } | null;
}

export type StatefulFinding = Finding & {
  readonly change: Change;
  /** Published again as an escalation (docs/policies.md): critical and not acted on for this many hours since its first alert. */
  readonly escalated_after_hours?: number;
  /** An ongoing finding published again now: its repeat cadence came round, or a quarantine's last days (docs/policies.md). */
  readonly repeated?: true;
};

/** The report with memory: each finding marked, plus what changed and what was resolved. */
export interface StatefulReport extends Omit<Report, 'findings'> {
  readonly findings: readonly StatefulFinding[];
  readonly changes: readonly DomainChange[];
  readonly resolved: readonly Resolution[];
}

/** The state could not be read or written. */
export class StateError extends SentinelError {
  override readonly name: string = 'StateError';
}

/**
 * This scan must not use this state: it belongs to another account, or the scan's time does not
 * fit it (see state-time.ts). A usage error (exit 2): the message says what to pass or point elsewhere.
 */
export class StateRefusedError extends ConfigError {
  override readonly name: string = 'StateRefusedError';
}

/**
 * Another scan moved the state first (its generation changed) or holds the lease: this scan must
 * not publish what that one may announce. The caller re-reads and recomputes, or fails.
 */
export class StateConflictError extends StateError {
  override readonly name: string = 'StateConflictError';
  /** Epoch ms until which another's lease holds the state, when that is what conflicted. */
  readonly heldUntil: number | undefined;

  constructor(message: string, options?: ErrorOptions & { readonly heldUntil?: number }) {
    super(message, options);
    this.heldUntil = options?.heldUntil;
  }
}

/**
 * A copy of a value `schema` checks with the keys it knows only, in the schema's order, at any
 * depth: what makes equal memories encode the same.
 */
function inSchemaOrder(schema: z.ZodType): (value: unknown) => unknown {
  const def = schema._zod.def as { shape?: Record<string, z.ZodType>; innerType?: z.ZodType };
  if (def.innerType) return inSchemaOrder(def.innerType);
  if (!def.shape) return (value) => value;
  const fields = Object.entries(def.shape).map(([key, field]) => [key, inSchemaOrder(field)] as const);
  return (value) => {
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, order] of fields) out[key] = order((value as Record<string, unknown>)[key]);
    return out;
  };
}
const memoryInOrder = inSchemaOrder(DomainMemorySchema);

/**
 * The one encoder of a domain's memory: JSON of the keys DomainMemorySchema knows, in its order
 * and nothing else, so equal memories give equal text (a store writes only what changed)
 * and what is written reads back as it was.
 */
export function encodeMemory(memory: DomainMemory): string {
  return JSON.stringify(memoryInOrder(memory));
}

/** One stored domain memory, read back; what cannot be read is a StateError naming the place and the reason. */
export const readDomainMemory = (value: unknown, key: string, where: string): DomainMemory =>
  readStored(DomainMemorySchema, value, ['domains', key], where) as DomainMemory;

/** One stored contact memory, read back as {@link readDomainMemory} reads a domain's. */
export const readContactMemory = (value: unknown, key: string, where: string): ContactMemory =>
  readStored(ContactMemorySchema, value, ['contacts', key], where) as ContactMemory;

function readStored(schema: z.ZodType, value: unknown, at: readonly string[], where: string): unknown {
  const read = checked(schema, value, at) as { readonly damage?: string };
  if (read.damage !== undefined) throw stateIssue(where, read.damage);
  return read;
}

/** The StateError of a stored value that cannot be used: `damage` says where in the state, and why. */
export const stateIssue = (where: string, damage: string): StateError =>
  new StateError(
    `the state in ${where} cannot be used (${damage}); correct that value, point --state elsewhere, or remove the state to start over`,
  );

/**
 * A stored value read back by `schema`, or what is wrong with it: its place in the state (as
 * `domains["example.nl"].alerted.at`) and the reason. A scan's read makes that a problem record,
 * where a link's read (readDomainMemory) fails.
 */
export function checked<T>(
  schema: z.ZodType<T>,
  value: unknown,
  path: readonly PropertyKey[],
): T | { readonly damage: string } {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  return {
    damage: `${statePath([...path, ...(issue?.path ?? [])])}: ${safeText(issue?.message ?? 'invalid')}`,
  };
}

/** Where in the state an issue is, e.g. `domains["example.nl"].alerted.at` (names cut and made safe). */
function statePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (typeof part === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(part))
      out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(shownCut(String(part)))}]`;
  }
  return out || 'root';
}
