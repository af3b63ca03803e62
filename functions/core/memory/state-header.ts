import {
  checked,
  DepartureSchema,
  STATE_VERSION,
  StateError,
  type StateHead,
  StateHeaderSchema,
  stateIssue,
} from './state';

/**
 * The account-wide part of a state (the file's header, the table's `#meta` item) read back, and
 * what a store throws when it does not read back. Pure.
 */

/**
 * The account-wide part of the state is damaged: it does not read back (not JSON, a value of
 * another type, a date-time that does not parse, a field missing). Thrown by a store's open. A link
 * refuses it as any StateError; a scan alerts without memory, writes nothing, then fails with it.
 * Not damage, and refused as before: another account's or scope's state, a format of another
 * release, a generation that cannot be read (the lease is taken on it), I/O.
 */
export class StateDamagedError extends StateError {
  override readonly name: string = 'StateDamagedError';
  /** The item damaged, as a problem record names it: the state file's path, or `#meta` (a table). */
  readonly item: string;
  /** What is damaged and why, as checked words it (`last_scan_at: not an RFC 3339 date-time: "garbage"`). */
  readonly damage: string;
  /** The generation stored beside the damage, when it reads: a scan takes the lease on it to publish. */
  readonly generation: number | undefined;

  constructor(
    message: string,
    damaged: { readonly item: string; readonly damage: string; readonly generation?: number },
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.item = damaged.item;
    this.damage = damaged.damage;
    this.generation = damaged.generation;
  }
}

/**
 * The stored account-wide part read back (with `contacts` as read apart). What cannot be read is a
 * StateDamagedError naming the field and the reason, in `item`; a `version` of another release is
 * a plain StateError: that state is not damaged, it is another release's to read.
 */
export function readStateHead(
  value: unknown,
  contacts: StateHead['contacts'],
  where: string,
  damaged: { readonly item: string; readonly generation?: number } = { item: 'header' },
): StateHead {
  const read = checked(StateHeaderSchema, withReadableDepartures(value), []);
  if (!('damage' in read)) return { ...read, contacts } as StateHead;
  // A version of another release is its to read; none at all is damage (every release writes one).
  const version =
    typeof value === 'object' && value !== null ? (value as { version?: unknown }).version : undefined;
  if (version !== undefined && version !== STATE_VERSION) throw stateIssue(where, read.damage);
  throw new StateDamagedError(stateIssue(where, read.damage).message, { ...damaged, damage: read.damage });
}

/**
 * `value` with only the departures that read back: one that does not (a state edited by hand, a
 * value of another type) is dropped, not the account-wide part with it. A departure only tells a
 * scan that a domain is back; as damage it would cost every memory and fail each run until corrected.
 */
function withReadableDepartures(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !('departed' in value)) return value;
  const { departed, ...rest } = value as { departed: unknown };
  if (typeof departed !== 'object' || departed === null || Array.isArray(departed)) return rest;
  const readable = Object.entries(departed).filter(([, d]) => DepartureSchema.safeParse(d).success);
  return readable.length ? { ...rest, departed: Object.fromEntries(readable) } : rest;
}
