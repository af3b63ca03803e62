import { grow, KeyIndex } from '../base/key-index';
import type { Finding } from '../findings/classify';
import type { Domain } from '../reseller/schemas';
import type { AlertMemory, DomainMemory, FindingMemory, WatchedFields } from './state';
import { MAX_FIELD_LENGTH } from './state-bounds';

/**
 * The memory of one account's domains while a scan compares itself with it, kept so that its size
 * follows the findings, not the account. Per domain (numbered by its key, see {@link KeyIndex}):
 * its memory from the last scan ("prior"), what this scan read ("seen"), and, once compared, what
 * to remember next ("next"). Pure: the stores fill it, state.ts compares it, the stores write back
 * what changed.
 *
 * What most of an account is, a domain read as it was remembered, costs about 60 bytes beside its
 * key: its watched fields once, as numbers in typed arrays (strings shared through one pool), for
 * the prior and the seen memory alike. A finding and its last alert take a slot of numbers of
 * their own. Objects are kept only for what has no compact form: a snooze or acknowledgement, a
 * name kept beside a hashed key, an odd stored value, and a domain whose watched fields changed
 * since the last scan (its seen fields then).
 */

/** Has a memory from the last scan. */
const PRIOR = 1;
/** That memory is an object in `priorFull` (actions, a name, a value with no compact form). */
const PRIOR_OBJECT = 2;
/** Read by this scan (its first record). */
const SEEN = 4;
/** The columns hold the prior watched fields. */
const COLUMNS_PRIOR = 8;
/** The columns hold the seen watched fields (with COLUMNS_PRIOR: the two are the same). */
const COLUMNS_SEEN = 16;
/** The store must write this domain's item even when nothing changed (it moves to another layout). */
const REWRITE = 32;
/** The next memory differs from the prior one: its item must be written (or deleted). */
const CHANGED = 64;
const NEXT_SHIFT = 7;
const NEXT_MASK = 3 << NEXT_SHIFT;
/** The key is a hash of the name (state-bounds.ts): the next memory carries the name cut. */
const HASHED = 1 << 9;
/** Which renewal watch the next memory keeps (renewal-memory.ts): as read, none, or the remembered one. */
const KEEP_SHIFT = 10;
const KEEP_MASK = 3 << KEEP_SHIFT;
const KEEP_NONE = 1;
const KEEP_PRIOR = 2;

/** What a domain's next memory is. */
export const NEXT = {
  /** Nothing: the domain is forgotten (it left the account), or was never remembered. */
  none: 0,
  /** The prior memory, as it was (a domain not read by an incomplete scan). */
  prior: 1,
  /** What was read (renewal watch as decided), with the finding and alert set by setNextCompact. */
  compact: 2,
  /** An object in `nextFull`. */
  full: 3,
} as const;
export type NextKind = (typeof NEXT)[keyof typeof NEXT];

/** Slots of a compact watched record's strings: 0 absent, 1 null, n + 2 the pool's string n. */
const HANDLE = 0;
const NSGROUP = 1;
const DNSSEC = 2;
const PRICE = 3;
const STRINGS = 4;
/** Two bits each: 0 absent, 1 null, 2 false, 3 true. */
const TRANSFER_LOCK = 0;
const AUTH_CODE = 2;
const DNS_HOSTED = 4;
const AUTO_RENEW = 6;
const RENEWAL = 1 << 8;

const ISO_LENGTH = 24;
const DAY_MS = 86_400_000;
/**
 * A time as the state writes it (toISOString), kept as epoch ms; NaN for anything else: exactly
 * the strings `new Date(ms).toISOString()` makes (years 0000-9999; wider years are longer). Read
 * with arithmetic: a state of a million domains holds millions of these, and Date.parse plus
 * toISOString to prove each one canonical was a good part of reading it.
 */
export function canonicalTime(value: unknown): number {
  if (typeof value !== 'string' || value.length !== ISO_LENGTH) return Number.NaN;
  // YYYY-MM-DDTHH:MM:SS.sssZ
  if (
    value.charCodeAt(4) !== 0x2d ||
    value.charCodeAt(7) !== 0x2d ||
    value.charCodeAt(10) !== 0x54 ||
    value.charCodeAt(13) !== 0x3a ||
    value.charCodeAt(16) !== 0x3a ||
    value.charCodeAt(19) !== 0x2e ||
    value.charCodeAt(23) !== 0x5a
  )
    return Number.NaN;
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 7);
  const day = digits(value, 8, 10);
  const hour = digits(value, 11, 13);
  const minute = digits(value, 14, 16);
  const second = digits(value, 17, 19);
  const ms = digits(value, 20, 23);
  // A place that is not a digit makes its number negative.
  if (year < 0 || ms < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59)
    return Number.NaN;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return Number.NaN;
  return daysFromCivil(year, month, day) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
}

/** The decimal number in value[from, to), or -1 when one of its places is not a digit. */
function digits(value: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = value.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
const isoOf = (ms: number) => new Date(ms).toISOString();

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An epoch-ms time a Date holds exactly: toISOString of it reads back as the same number. */
const validTime = (ms: number): boolean => Number.isInteger(ms) && Math.abs(ms) <= 8.64e15;

/** Compact watched records: strings, bits and the renewal watch's two times. */
class WatchedColumns {
  strings: Uint32Array;
  bits: Uint16Array;
  times: Float64Array;

  constructor(size: number) {
    this.strings = new Uint32Array(STRINGS * size);
    this.bits = new Uint16Array(size);
    this.times = new Float64Array(2 * size);
  }

  reserve(size: number): void {
    if (size <= this.bits.length) return;
    const n = grow(size, this.bits.length);
    const strings = new Uint32Array(STRINGS * n);
    strings.set(this.strings);
    this.strings = strings;
    const bits = new Uint16Array(n);
    bits.set(this.bits);
    this.bits = bits;
    const times = new Float64Array(2 * n);
    times.set(this.times);
    this.times = times;
  }

  copy(from: number, to: WatchedColumns, at: number): void {
    for (let i = 0; i < STRINGS; i++)
      to.strings[at * STRINGS + i] = this.strings[from * STRINGS + i] as number;
    to.bits[at] = this.bits[from] as number;
    to.times[2 * at] = this.times[2 * from] as number;
    to.times[2 * at + 1] = this.times[2 * from + 1] as number;
  }

  equals(a: number, other: WatchedColumns, b: number): boolean {
    if (this.bits[a] !== other.bits[b]) return false;
    for (let i = 0; i < STRINGS; i++)
      if (this.strings[a * STRINGS + i] !== other.strings[b * STRINGS + i]) return false;
    if (((this.bits[a] as number) & RENEWAL) === 0) return true;
    return (
      sameTime(this.times[2 * a] as number, other.times[2 * b] as number) &&
      this.times[2 * a + 1] === other.times[2 * b + 1]
    );
  }

  get byteLength(): number {
    return this.strings.byteLength + this.bits.byteLength + this.times.byteLength;
  }
}

const sameTime = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b));

/** Kinds and severities of a finding or an alert as small numbers (0: none). */
const KINDS = ['', 'quarantine', 'expired', 'renewal_failed', 'expiring', 'auto_renew_off'] as const;
const SEVERITY_CODES = ['', 'info', 'warning', 'critical'] as const;
const NO_STAGE = -32768;

/**
 * The finding and last alert of domains that have one, prior and next: four records of a kind, a
 * severity, a rung and a time (the finding's expiry, the alert's moment) in typed arrays.
 */
class FindingSlots {
  kinds = new Uint8Array(4 * 256);
  severities = new Uint8Array(4 * 256);
  stages = new Int16Array(4 * 256);
  times = new Float64Array(4 * 256);
  size = 0;
  private free: number[] = [];

  allocate(): number {
    const slot = this.free.pop() ?? this.size++;
    if (4 * (slot + 1) > this.kinds.length) {
      const n = 4 * grow(slot + 1, this.kinds.length / 4);
      const kinds = new Uint8Array(n);
      kinds.set(this.kinds);
      this.kinds = kinds;
      const severities = new Uint8Array(n);
      severities.set(this.severities);
      this.severities = severities;
      const stages = new Int16Array(n);
      stages.set(this.stages);
      this.stages = stages;
      const times = new Float64Array(n);
      times.set(this.times);
      this.times = times;
    }
    for (let i = 0; i < 4; i++) this.kinds[4 * slot + i] = 0;
    return slot;
  }

  release(slot: number): void {
    this.free.push(slot);
  }

  get byteLength(): number {
    return (
      this.kinds.byteLength + this.severities.byteLength + this.stages.byteLength + this.times.byteLength
    );
  }
}
/** Which of a slot's four records: the prior finding, the prior alert, the next finding, the next alert. */
const PRIOR_FINDING = 0;
const PRIOR_ALERT = 1;
const NEXT_FINDING = 2;
const NEXT_ALERT = 3;

/** Strings shared by the compact records: registrant handles, nameserver groups, DNSSEC states, prices. */
class StringPool {
  private readonly ids = new Map<string, number>();
  private readonly values: string[] = [];

  idOf(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      this.ids.set(value, id);
    }
    return id;
  }

  valueOf(id: number): string {
    return this.values[id] as string;
  }
}

export class MemoryTable {
  /** Memory keys (state-bounds.ts) and their numbers. */
  readonly keys = new KeyIndex();
  private flags = new Uint16Array(1024);
  private columns = new WatchedColumns(1024);
  /** One record to encode into before comparing with the columns. */
  private readonly scratch = new WatchedColumns(1);
  private pages = new Uint16Array(1024);
  /** Each domain's slot in `slots`, or -1. */
  private slotOf = new Int32Array(1024).fill(-1);
  private readonly slots = new FindingSlots();
  private readonly pool = new StringPool();
  private readonly priorFull = new Map<number, DomainMemory>();
  private readonly seenFull = new Map<number, WatchedFields>();
  private readonly nextFull = new Map<number, DomainMemory>();
  /** Next watched fields made as objects (a renewal watch kept from a memory held as one). */
  private readonly nextWatchedFull = new Map<number, WatchedFields>();
  /** The name as read, where it is not the key itself. */
  private readonly names = new Map<number, string>();
  /** How many domains have a prior memory. */
  priorCount = 0;

  /** How many keys the table knows (every number below this is one). */
  get size(): number {
    return this.keys.size;
  }

  /** Room for `count` domains without growing (a store that knows the count avoids the copies). */
  reserve(count: number): void {
    this.grow(count);
  }

  /** The number of `key`, adding it when new. */
  idOf(key: string): number {
    const before = this.keys.size;
    const id = this.keys.add(key);
    if (id === before) {
      this.grow(id + 1);
      if (key.charCodeAt(0) === 0x23) this.flags[id] = (this.flags[id] as number) | HASHED;
    }
    return id;
  }

  /** The number of `key`, or -1 when the table does not know it. */
  find(key: string): number {
    return this.keys.find(key);
  }

  keyOf(id: number): string {
    return this.keys.keyOf(id);
  }

  /** Where a store files the domain: {@link stableKeyHash} of its key, from the key's bytes. */
  bucketHash(id: number): number {
    return this.keys.stableHash(id);
  }

  /**
   * Remembers `memory` (already valid: see {@link fastMemory} and DomainMemorySchema) as the prior
   * memory of `key`. The first memory of a key wins, as a stored record's first entry does; returns
   * false for a second one. `rewrite` asks the store to write it back even when nothing changes.
   */
  addPrior(key: string, memory: DomainMemory, rewrite = false): boolean {
    const id = this.idOf(key);
    let flags = this.flags[id] as number;
    if (flags & PRIOR) return false;
    flags |= PRIOR | (rewrite ? REWRITE : 0);
    this.priorCount++;
    if (memory.actions !== undefined || memory.name !== undefined || !this.slotable(memory)) {
      this.flags[id] = flags | PRIOR_OBJECT;
      this.priorFull.set(id, memory);
      return true;
    }
    // The watched fields into the columns: free, or holding the same fields as read already.
    let placed = false;
    if (!(flags & COLUMNS_SEEN)) {
      placed = this.encode(this.columns, id, memory.watched);
      if (placed) flags |= COLUMNS_PRIOR;
    } else if (this.encode(this.scratch, 0, memory.watched) && this.scratch.equals(0, this.columns, id)) {
      placed = true;
      flags |= COLUMNS_PRIOR;
    }
    if (!placed) {
      this.flags[id] = flags | PRIOR_OBJECT;
      this.priorFull.set(id, memory);
      return true;
    }
    this.flags[id] = flags;
    this.setSlot(id, PRIOR_FINDING, memory.finding);
    this.setSlot(id, PRIOR_ALERT, memory.alerted);
    return true;
  }

  /** Marks `id` as read by this scan as `name`, with its (bounded) watched fields, on `page`. */
  markSeen(id: number, name: string, watched: WatchedFields, page: number, key: string): void {
    this.seenAs(id, this.encode(this.scratch, 0, watched) ? null : watched);
    this.pages[id] = Math.min(page, 0xffff);
    if (name !== key) this.names.set(id, name);
  }

  /**
   * Marks `id` as read as `domain` (its first record), straight from the record: the watched fields
   * watchedFieldsOf would make, without making them (a scan of a million domains would make and
   * drop a million objects and two million date strings). False when some field has no compact form
   * (or a text field needs bounding): the caller goes through {@link markSeen} then.
   */
  markSeenDomain(id: number, domain: Domain, page: number, key: string): boolean {
    const handle = this.plainSlot(domain.registrant_handle);
    const nsgroup = this.plainSlot(domain.nsgroup);
    const dnssec = this.plainSlot(domain.dnssec);
    if (handle < 0 || nsgroup < 0 || dnssec < 0) return false;
    let price = 0;
    if (domain.price?.kind === 'premium') {
      const { currency, amount } = domain.price;
      if (currency === undefined || amount === undefined) price = 1;
      else if (currency.length > 3 || !Number.isFinite(amount)) return false;
      else price = this.pool.idOf(JSON.stringify([currency, amount])) + 2;
    }
    const lock = booleanBits(domain.transfer_lock, true);
    const auth = booleanBits(domain.auth_code_present, false);
    const hosted = booleanBits(domain.dns_hosted, true);
    const renew = booleanBits(domain.auto_renew, true);
    if (lock < 0 || auth < 0 || hosted < 0 || renew < 0) return false;
    let bits = (lock << TRANSFER_LOCK) | (auth << AUTH_CODE) | (hosted << DNS_HOSTED) | (renew << AUTO_RENEW);
    let due = 0;
    let expiry = 0;
    // As renewalObservation: only auto-renew domains are renewed by the reseller.
    if (domain.auto_renew === true) {
      if (!validTime(domain.date_expiry)) return false;
      const renewal = domain.date_renewal;
      if (typeof renewal === 'number' && !validTime(renewal)) return false;
      due = typeof renewal === 'number' ? renewal : Number.NaN;
      expiry = domain.date_expiry;
      bits |= RENEWAL;
    }
    const s = this.scratch;
    s.strings[HANDLE] = handle;
    s.strings[NSGROUP] = nsgroup;
    s.strings[DNSSEC] = dnssec;
    s.strings[PRICE] = price;
    s.bits[0] = bits;
    s.times[0] = due;
    s.times[1] = expiry;
    this.seenAs(id, null);
    this.pages[id] = Math.min(page, 0xffff);
    if (domain.domain_name !== key) this.names.set(id, domain.domain_name);
    return true;
  }

  /** Forgets what this scan read (the read started over). */
  clearSeen(): void {
    for (let id = 0; id < this.size; id++)
      this.flags[id] = (this.flags[id] as number) & ~(SEEN | COLUMNS_SEEN | NEXT_MASK | CHANGED | KEEP_MASK);
    this.seenFull.clear();
    this.names.clear();
    this.resetNext();
  }

  /** Forgets every prior memory (the state moved on: it is read again). What was read stays. */
  clearPrior(): void {
    for (let id = 0; id < this.size; id++) {
      this.flags[id] = (this.flags[id] as number) & ~(PRIOR | PRIOR_OBJECT | COLUMNS_PRIOR | REWRITE);
      const slot = this.slotOf[id] as number;
      if (slot >= 0) {
        this.slots.kinds[4 * slot + PRIOR_FINDING] = 0;
        this.slots.kinds[4 * slot + PRIOR_ALERT] = 0;
      }
    }
    this.priorFull.clear();
    this.priorCount = 0;
  }

  /** Forgets every next memory and renewal decision, so a comparison can run again. */
  resetNext(): void {
    for (let id = 0; id < this.size; id++) {
      this.flags[id] = (this.flags[id] as number) & ~(NEXT_MASK | CHANGED | KEEP_MASK);
      const slot = this.slotOf[id] as number;
      if (slot >= 0) {
        this.slots.kinds[4 * slot + NEXT_FINDING] = 0;
        this.slots.kinds[4 * slot + NEXT_ALERT] = 0;
      }
    }
    this.nextFull.clear();
    this.nextWatchedFull.clear();
  }

  hasPrior(id: number): boolean {
    return ((this.flags[id] as number) & PRIOR) !== 0;
  }

  isSeen(id: number): boolean {
    return ((this.flags[id] as number) & SEEN) !== 0;
  }

  /** True when the key is a hash of the name rather than the name. */
  isHashed(id: number): boolean {
    return ((this.flags[id] as number) & HASHED) !== 0;
  }

  needsRewrite(id: number): boolean {
    return ((this.flags[id] as number) & REWRITE) !== 0;
  }

  /** The name `id` was read as (its key when it was read as that). */
  seenName(id: number): string {
    return this.names.get(id) ?? this.keyOf(id);
  }

  pageOf(id: number): number {
    return this.pages[id] as number;
  }

  /** The prior memory of `id` (made again from its compact form when it has one), or undefined. */
  priorMemory(id: number): DomainMemory | undefined {
    const flags = this.flags[id] as number;
    if (!(flags & PRIOR)) return undefined;
    if (flags & PRIOR_OBJECT) return this.priorFull.get(id);
    return {
      watched: this.decode(this.columns, id),
      finding: this.slotFinding(id, PRIOR_FINDING),
      alerted: this.slotAlert(id, PRIOR_ALERT),
    };
  }

  /** The prior finding of `id`, if any, without making its watched fields. */
  priorFinding(id: number): FindingMemory | null {
    const flags = this.flags[id] as number;
    if (!(flags & PRIOR)) return null;
    if (flags & PRIOR_OBJECT) return this.priorFull.get(id)?.finding ?? null;
    return this.slotFinding(id, PRIOR_FINDING);
  }

  /** The last alert remembered for `id`, if any. */
  priorAlert(id: number): AlertMemory | null {
    const flags = this.flags[id] as number;
    if (!(flags & PRIOR)) return null;
    if (flags & PRIOR_OBJECT) return this.priorFull.get(id)?.alerted ?? null;
    return this.slotAlert(id, PRIOR_ALERT);
  }

  /** Prior memories kept as objects (snoozes and acknowledgements are among them): few. */
  fullPriors(): IterableIterator<[number, DomainMemory]> {
    return this.priorFull.entries();
  }

  priorWatched(id: number): WatchedFields | undefined {
    const flags = this.flags[id] as number;
    if (!(flags & PRIOR)) return undefined;
    if (flags & PRIOR_OBJECT) return this.priorFull.get(id)?.watched;
    return this.decode(this.columns, id);
  }

  seenWatched(id: number): WatchedFields {
    const flags = this.flags[id] as number;
    if (flags & COLUMNS_SEEN) return this.decode(this.columns, id);
    return this.seenFull.get(id) ?? {};
  }

  /** True when what was read of `id` is what was remembered (watched fields and renewal watch alike). */
  sameFields(id: number): boolean {
    const flags = this.flags[id] as number;
    return (flags & (COLUMNS_PRIOR | COLUMNS_SEEN)) === (COLUMNS_PRIOR | COLUMNS_SEEN);
  }

  /**
   * The renewal watch of `id` as remembered (`prior`) or read (`seen`), as numbers: whether there is
   * one, its due time (NaN when none) and its expiry. Undefined when that side is an object: the
   * caller asks for the object. `into` is filled and returned (no allocation).
   */
  renewalOf(which: 'prior' | 'seen', id: number, into: RenewalNumbers): RenewalNumbers | undefined {
    const flags = this.flags[id] as number;
    if (!(flags & (which === 'prior' ? COLUMNS_PRIOR : COLUMNS_SEEN))) return undefined;
    const c = this.columns;
    into.has = ((c.bits[id] as number) & RENEWAL) !== 0;
    into.due = c.times[2 * id] as number;
    into.expiry = c.times[2 * id + 1] as number;
    return into;
  }

  /** Keeps the renewal watch of a compact `id` as read, none, or the remembered one. */
  keepRenewal(id: number, keep: 'none' | 'prior' | 'seen'): void {
    const code = keep === 'none' ? KEEP_NONE : keep === 'prior' ? KEEP_PRIOR : 0;
    this.flags[id] = ((this.flags[id] as number) & ~KEEP_MASK) | (code << KEEP_SHIFT);
  }

  /** Sets the watched fields `id` remembers next (read, with the renewal watch decided) as an object. */
  setNextWatched(id: number, watched: WatchedFields): void {
    this.nextWatchedFull.set(id, watched);
  }

  /** The watched fields `id` remembers next: as read, with the renewal watch decided. */
  nextWatched(id: number): WatchedFields {
    const full = this.nextWatchedFull.get(id);
    if (full) return full;
    const watched = this.seenWatched(id);
    const keep = ((this.flags[id] as number) & KEEP_MASK) >> KEEP_SHIFT;
    if (keep === 0) return watched;
    const { renewal: _read, ...rest } = watched;
    if (keep === KEEP_NONE) return rest;
    const prior = this.priorWatched(id)?.renewal;
    return prior ? { ...rest, renewal: prior } : rest;
  }

  /** Sets what `id` remembers next; `memory` for {@link NEXT.full}. */
  setNext(id: number, kind: NextKind, memory?: DomainMemory): void {
    this.flags[id] = ((this.flags[id] as number) & ~NEXT_MASK) | (kind << NEXT_SHIFT);
    if (kind === NEXT.full && memory) this.nextFull.set(id, memory);
    else this.nextFull.delete(id);
  }

  /**
   * Sets `id` to remember next what it read (renewal watch as decided) with this finding and
   * alert, kept as numbers. False when one of them has no compact form: set {@link NEXT.full} then.
   */
  setNextCompact(id: number, finding: FindingMemory | null, alerted: AlertMemory | null): boolean {
    if (!slotable(finding, false) || !slotable(alerted, true)) return false;
    this.setNext(id, NEXT.compact);
    this.setSlot(id, NEXT_FINDING, finding);
    this.setSlot(id, NEXT_ALERT, alerted);
    return true;
  }

  nextKind(id: number): NextKind {
    return (((this.flags[id] as number) & NEXT_MASK) >> NEXT_SHIFT) as NextKind;
  }

  /** What `id` remembers next, or undefined when it is forgotten. */
  nextMemory(id: number): DomainMemory | undefined {
    switch (this.nextKind(id)) {
      case NEXT.prior:
        return this.priorMemory(id);
      case NEXT.compact:
        return {
          watched: this.nextWatched(id),
          finding: this.slotFinding(id, NEXT_FINDING),
          alerted: this.slotAlert(id, NEXT_ALERT),
        };
      case NEXT.full:
        return this.nextFull.get(id);
      default:
        return undefined;
    }
  }

  /**
   * Marks every domain whose next memory differs from its prior one (an item to write or delete),
   * and returns how many there are. Compact records compare as numbers; objects as JSON in the
   * schema's order, so an equal memory read back is never written again.
   */
  markChanged(serialize: (memory: DomainMemory) => string): number {
    let changed = 0;
    for (let id = 0; id < this.size; id++) {
      const flags = this.flags[id] as number;
      const kind = ((flags & NEXT_MASK) >> NEXT_SHIFT) as NextKind;
      let differs: boolean;
      if (!(flags & PRIOR)) differs = kind !== NEXT.none;
      else if (kind === NEXT.none) differs = true;
      else if (kind === NEXT.prior) differs = false;
      else if (kind === NEXT.compact && this.sameFields(id) && !this.nextWatchedFull.has(id))
        differs = !this.sameCompactNext(id);
      else {
        const before = this.priorMemory(id);
        const after = this.nextMemory(id);
        differs = !before || !after || serialize(before) !== serialize(after);
      }
      this.flags[id] = differs ? flags | CHANGED : flags & ~CHANGED;
      if (differs) changed++;
    }
    return changed;
  }

  /** True when `id`'s item must be written: its memory changed, or it moves to another layout. */
  isDirty(id: number): boolean {
    const flags = this.flags[id] as number;
    return (flags & CHANGED) !== 0 || ((flags & REWRITE) !== 0 && this.nextKind(id) !== NEXT.none);
  }

  /** Bytes the table holds in typed arrays (the maps of objects not counted), for measurements. */
  get byteLength(): number {
    return (
      this.keys.byteLength +
      this.flags.byteLength +
      this.pages.byteLength +
      this.slotOf.byteLength +
      this.columns.byteLength +
      this.slots.byteLength
    );
  }

  private grow(size: number): void {
    if (size > this.flags.length) {
      const n = grow(size, this.flags.length);
      const flags = new Uint16Array(n);
      flags.set(this.flags);
      this.flags = flags;
      const pages = new Uint16Array(n);
      pages.set(this.pages);
      this.pages = pages;
      const slotOf = new Int32Array(n).fill(-1);
      slotOf.set(this.slotOf);
      this.slotOf = slotOf;
    }
    this.columns.reserve(size);
  }

  /** Records that `id` was read: the scratch record (or `object`, which has no compact form). */
  private seenAs(id: number, object: WatchedFields | null): void {
    let flags = ((this.flags[id] as number) | SEEN) & ~COLUMNS_SEEN;
    this.seenFull.delete(id);
    if (object) this.seenFull.set(id, object);
    else if (flags & COLUMNS_PRIOR) {
      if (this.scratch.equals(0, this.columns, id)) flags |= COLUMNS_SEEN;
      else this.seenFull.set(id, this.decode(this.scratch, 0));
    } else {
      this.scratch.copy(0, this.columns, id);
      flags |= COLUMNS_SEEN;
    }
    this.flags[id] = flags;
  }

  /** For a compact next memory over equal watched fields: whether renewal, finding and alert are the prior ones. */
  private sameCompactNext(id: number): boolean {
    const keep = ((this.flags[id] as number) & KEEP_MASK) >> KEEP_SHIFT;
    if (keep === KEEP_NONE && ((this.columns.bits[id] as number) & RENEWAL) !== 0) return false;
    const slot = this.slotOf[id] as number;
    if (slot < 0) return true;
    return (
      this.sameRecord(slot, PRIOR_FINDING, NEXT_FINDING) && this.sameRecord(slot, PRIOR_ALERT, NEXT_ALERT)
    );
  }

  private sameRecord(slot: number, a: number, b: number): boolean {
    const s = this.slots;
    const i = 4 * slot + a;
    const j = 4 * slot + b;
    if (s.kinds[i] !== s.kinds[j]) return false;
    if (s.kinds[i] === 0) return true;
    return (
      s.severities[i] === s.severities[j] &&
      s.stages[i] === s.stages[j] &&
      sameTime(s.times[i] as number, s.times[j] as number)
    );
  }

  /** Whether a plain memory's finding and alert fit a slot. */
  private slotable(memory: DomainMemory): boolean {
    return slotable(memory.finding, false) && slotable(memory.alerted, true);
  }

  private setSlot(id: number, which: number, value: FindingMemory | AlertMemory | null): void {
    let slot = this.slotOf[id] as number;
    if (value === null) {
      if (slot >= 0) this.slots.kinds[4 * slot + which] = 0;
      return;
    }
    if (slot < 0) {
      slot = this.slots.allocate();
      this.slotOf[id] = slot;
    }
    const at = 4 * slot + which;
    this.slots.kinds[at] = KINDS.indexOf(value.kind as (typeof KINDS)[number]);
    this.slots.severities[at] = SEVERITY_CODES.indexOf(value.severity);
    this.slots.stages[at] = value.stage === null ? NO_STAGE : value.stage;
    const time = 'at' in value ? value.at : value.date_expiry;
    this.slots.times[at] = time === undefined ? Number.NaN : Date.parse(time);
  }

  private slotFinding(id: number, which: number): FindingMemory | null {
    const slot = this.slotOf[id] as number;
    if (slot < 0) return null;
    const at = 4 * slot + which;
    const kind = this.slots.kinds[at] as number;
    if (kind === 0) return null;
    const time = this.slots.times[at] as number;
    const stage = this.slots.stages[at] as number;
    return {
      kind: KINDS[kind] as Finding['kind'],
      severity: SEVERITY_CODES[this.slots.severities[at] as number] as FindingMemory['severity'],
      stage: stage === NO_STAGE ? null : stage,
      ...(Number.isNaN(time) ? {} : { date_expiry: isoOf(time) }),
    };
  }

  private slotAlert(id: number, which: number): AlertMemory | null {
    const slot = this.slotOf[id] as number;
    if (slot < 0) return null;
    const at = 4 * slot + which;
    const kind = this.slots.kinds[at] as number;
    if (kind === 0) return null;
    const stage = this.slots.stages[at] as number;
    return {
      kind: KINDS[kind] as Finding['kind'],
      severity: SEVERITY_CODES[this.slots.severities[at] as number] as AlertMemory['severity'],
      stage: stage === NO_STAGE ? null : stage,
      at: isoOf(this.slots.times[at] as number),
    };
  }

  /** Writes `watched` as a compact record; false when some value has no compact form (kept as an object then). */
  private encode(columns: WatchedColumns, id: number, watched: unknown): boolean {
    if (!isRecord(watched)) return false;
    const at = id * STRINGS;
    const handle = this.stringSlot(watched.registrant_handle);
    const nsgroup = this.stringSlot(watched.nsgroup);
    const dnssec = this.stringSlot(watched.dnssec);
    const price = this.priceSlot(watched.premium_price);
    if (handle < 0 || nsgroup < 0 || dnssec < 0 || price < 0) return false;
    const lock = booleanBits(watched.transfer_lock, true);
    const auth = booleanBits(watched.auth_code_present, false);
    const hosted = booleanBits(watched.dns_hosted, true);
    const renew = booleanBits(watched.auto_renew, true);
    if (lock < 0 || auth < 0 || hosted < 0 || renew < 0) return false;
    let bits = (lock << TRANSFER_LOCK) | (auth << AUTH_CODE) | (hosted << DNS_HOSTED) | (renew << AUTO_RENEW);
    let due = 0;
    let expiry = 0;
    const renewal = watched.renewal;
    if (renewal !== undefined) {
      if (!isRecord(renewal)) return false;
      expiry = canonicalTime(renewal.expiry);
      due = renewal.due === null ? Number.NaN : canonicalTime(renewal.due);
      if (Number.isNaN(expiry) || (renewal.due !== null && Number.isNaN(due))) return false;
      bits |= RENEWAL;
    }
    columns.strings[at + HANDLE] = handle;
    columns.strings[at + NSGROUP] = nsgroup;
    columns.strings[at + DNSSEC] = dnssec;
    columns.strings[at + PRICE] = price;
    columns.bits[id] = bits;
    columns.times[2 * id] = due;
    columns.times[2 * id + 1] = expiry;
    return true;
  }

  private decode(columns: WatchedColumns, id: number): WatchedFields {
    const at = id * STRINGS;
    const bits = columns.bits[id] as number;
    const out: { -readonly [K in keyof WatchedFields]: WatchedFields[K] } = {};
    const str = (slot: number) => {
      const v = columns.strings[at + slot] as number;
      return v === 0 ? undefined : v === 1 ? null : this.pool.valueOf(v - 2);
    };
    const bool = (shift: number) => {
      const v = (bits >> shift) & 3;
      return v === 0 ? undefined : v === 1 ? null : v === 3;
    };
    const handle = str(HANDLE);
    if (handle !== undefined) out.registrant_handle = handle;
    const lock = bool(TRANSFER_LOCK);
    if (lock !== undefined) out.transfer_lock = lock;
    const auth = bool(AUTH_CODE);
    if (auth !== undefined && auth !== null) out.auth_code_present = auth;
    const nsgroup = str(NSGROUP);
    if (nsgroup !== undefined) out.nsgroup = nsgroup;
    const hosted = bool(DNS_HOSTED);
    if (hosted !== undefined) out.dns_hosted = hosted;
    const renew = bool(AUTO_RENEW);
    if (renew !== undefined) out.auto_renew = renew;
    const dnssec = str(DNSSEC);
    if (dnssec !== undefined) out.dnssec = dnssec;
    const price = columns.strings[at + PRICE] as number;
    if (price === 1) out.premium_price = null;
    else if (price > 1) {
      const [currency, amount] = JSON.parse(this.pool.valueOf(price - 2)) as [string, number];
      out.premium_price = { currency, amount };
    }
    if (bits & RENEWAL) {
      const due = columns.times[2 * id] as number;
      out.renewal = {
        due: Number.isNaN(due) ? null : isoOf(due),
        expiry: isoOf(columns.times[2 * id + 1] as number),
      };
    }
    return out;
  }

  private stringSlot(value: unknown): number {
    if (value === undefined) return 0;
    if (value === null) return 1;
    return typeof value === 'string' ? this.pool.idOf(value) + 2 : -1;
  }

  /** A text field read from a record: kept as it is only within the state's bound (else the caller bounds it). */
  private plainSlot(value: string | null | undefined): number {
    if (value === undefined) return 0;
    if (value === null) return 1;
    return value.length > MAX_FIELD_LENGTH ? -1 : this.pool.idOf(value) + 2;
  }

  private priceSlot(value: unknown): number {
    if (value === undefined) return 0;
    if (value === null) return 1;
    if (!isRecord(value)) return -1;
    const { currency, amount } = value;
    // The schema keeps a currency of at most three letters: anything else stays an object, so the
    // store's check still names it.
    if (typeof currency !== 'string' || currency.length > 3 || typeof amount !== 'number') return -1;
    if (!Number.isFinite(amount) || Object.keys(value).length !== 2) return -1;
    return this.pool.idOf(JSON.stringify([currency, amount])) + 2;
  }
}

/** A renewal watch as numbers (see {@link MemoryTable.renewalOf}). */
export interface RenewalNumbers {
  has: boolean;
  due: number;
  expiry: number;
}

/** Whether a finding (or an alert: `alert`) memory fits a slot exactly: a known kind, canonical times, a small rung. */
function slotable(value: FindingMemory | AlertMemory | null, alert: boolean): boolean {
  if (value === null) return true;
  if (!isRecord(value)) return false;
  const keys = Object.keys(value);
  if (KINDS.indexOf(value.kind as (typeof KINDS)[number]) < 1) return false;
  if (SEVERITY_CODES.indexOf(value.severity) < 1) return false;
  if (value.stage !== null && !(Number.isInteger(value.stage) && Math.abs(value.stage) < 32_000))
    return false;
  if (alert) return keys.length === 4 && !Number.isNaN(canonicalTime((value as AlertMemory).at));
  const expiry = (value as FindingMemory).date_expiry;
  if (expiry === undefined) return keys.length === 3;
  return keys.length === 4 && !Number.isNaN(canonicalTime(expiry));
}

/**
 * A hash of a memory key that never changes between versions or processes (FNV-1a, 32 bits, over
 * the key's UTF-16 code units; memory keys are ASCII): stores file a domain under it, so it is
 * part of the stored layout and must not change.
 */
export function stableKeyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function booleanBits(value: unknown, nullable: boolean): number {
  if (value === undefined) return 0;
  if (value === null) return nullable ? 1 : -1;
  if (value === true) return 3;
  if (value === false) return 2;
  return -1;
}

/**
 * A stored domain memory that needs no schema check to be read as it is: no snooze or hashed name,
 * watched fields of the plain kinds a compact record holds, and a finding and alert a slot holds.
 * Most of an account; the rest goes through DomainMemorySchema, which names what is wrong. Returns
 * the memory to keep (unknown fields dropped, as the schema drops them), or null.
 */
export function fastMemory(value: unknown): DomainMemory | null {
  if (!isRecord(value) || value.actions !== undefined || value.name !== undefined) return null;
  if (!isRecord(value.watched)) return null;
  const finding = value.finding ?? null;
  const alerted = value.alerted ?? null;
  if (value.finding === undefined || value.alerted === undefined) return null;
  if (!slotable(finding as FindingMemory | null, false) || !slotable(alerted as AlertMemory | null, true))
    return null;
  const w = value.watched;
  for (const key in w) if (!FAST_FIELDS.has(key)) return null;
  const str = (v: unknown) => v === undefined || v === null || typeof v === 'string';
  const bool = (v: unknown) => v === undefined || v === null || typeof v === 'boolean';
  if (!str(w.registrant_handle) || !str(w.nsgroup) || !str(w.dnssec)) return null;
  if (!bool(w.transfer_lock) || !bool(w.dns_hosted) || !bool(w.auto_renew)) return null;
  if (w.auth_code_present !== undefined && typeof w.auth_code_present !== 'boolean') return null;
  const price = w.premium_price;
  if (price !== undefined && price !== null) {
    if (!isRecord(price) || typeof price.currency !== 'string' || price.currency.length > 3) return null;
    if (typeof price.amount !== 'number' || !Number.isFinite(price.amount)) return null;
    if (Object.keys(price).length !== 2) return null;
  }
  const renewal = w.renewal;
  if (renewal !== undefined) {
    if (!isRecord(renewal) || Object.keys(renewal).length !== 2) return null;
    if (Number.isNaN(canonicalTime(renewal.expiry))) return null;
    if (renewal.due !== null && Number.isNaN(canonicalTime(renewal.due))) return null;
  }
  return {
    watched: w as WatchedFields,
    finding: finding as FindingMemory | null,
    alerted: alerted as AlertMemory | null,
  };
}

const FAST_FIELDS = new Set([
  'registrant_handle',
  'transfer_lock',
  'auth_code_present',
  'nsgroup',
  'dns_hosted',
  'auto_renew',
  'dnssec',
  'premium_price',
  'renewal',
]);
