import { grow, KeyIndex } from './key-index';
import type { DomainMemory, WatchedFields } from './state';

/**
 * The memory of one account's domains while a scan compares itself with it, kept so that its size
 * follows the findings, not the account. A domain with nothing to say (no finding, no alert, no
 * snooze, a name that is its own key) is what most of an account is: its watched fields are kept
 * as numbers in typed arrays (strings shared through one pool), about 100 bytes a domain with its
 * key, twice (as remembered and as read now). Anything else is kept as the object it is, in a map
 * that grows with the findings. Pure: the stores fill it, state.ts compares it, the stores write
 * back what changed.
 *
 * Each domain has a number (its key's, see {@link KeyIndex}); per number the table knows its
 * memory from the last scan ("prior"), what this scan read ("seen"), and, once compared, what to
 * remember next ("next").
 */

/** Has a memory from the last scan. */
const PRIOR = 1;
/** That memory is an object in `priorFull` (else compact). */
const PRIOR_FULL = 2;
/** Read by this scan (its first record). */
const SEEN = 4;
/** What was read is an object in `seenFull` (else compact). */
const SEEN_FULL = 8;
/** The store must write this domain's item even when nothing changed (it moves to another layout). */
const REWRITE = 16;
/** The next memory differs from the prior one: its item must be written (or deleted). */
const CHANGED = 32;
const NEXT_SHIFT = 6;
const NEXT_MASK = 3 << NEXT_SHIFT;
/** The key is a hash of the name (state-bounds.ts): the next memory carries the name cut. */
const HASHED = 1 << 8;
/** Which renewal watch the next memory keeps (renewal-memory.ts): as read, none, or the remembered one. */
const KEEP_SHIFT = 9;
const KEEP_MASK = 3 << KEEP_SHIFT;
const KEEP_NONE = 1;
const KEEP_PRIOR = 2;

/** What a domain's next memory is. */
export const NEXT = {
  /** Nothing: the domain is forgotten (it left the account), or was never remembered. */
  none: 0,
  /** The prior memory, as it was (a domain not read by an incomplete scan). */
  prior: 1,
  /** What was read, with no finding, alert or action: compact. */
  seen: 2,
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
/** The bits fieldChanges looks at (all but the renewal watch). */
const FIELD_BITS = 0xff;

const ISO_LENGTH = 24;
/** `due` and `expiry` of a renewal watch, kept as epoch ms when they read back exactly as written. */
function canonicalTime(value: unknown): number {
  if (typeof value !== 'string' || value.length !== ISO_LENGTH) return Number.NaN;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && new Date(ms).toISOString() === value ? ms : Number.NaN;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One column set of compact watched records (prior or seen). */
class WatchedColumns {
  strings = new Uint32Array(STRINGS * 1024);
  bits = new Uint16Array(1024);
  times = new Float64Array(2 * 1024);

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

  get byteLength(): number {
    return this.strings.byteLength + this.bits.byteLength + this.times.byteLength;
  }
}

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
  private readonly prior = new WatchedColumns();
  private readonly seen = new WatchedColumns();
  private pages = new Uint32Array(1024);
  /** {@link stableKeyHash} of each key: where a store files it. */
  private stable = new Uint32Array(1024);
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

  /** The number of `key`, adding it when new. */
  idOf(key: string): number {
    const id = this.keys.add(key);
    if (id >= this.flags.length) {
      const n = grow(id + 1, this.flags.length);
      const flags = new Uint16Array(n);
      flags.set(this.flags);
      this.flags = flags;
      const pages = new Uint32Array(n);
      pages.set(this.pages);
      this.pages = pages;
      const stable = new Uint32Array(n);
      stable.set(this.stable);
      this.stable = stable;
    }
    this.prior.reserve(id + 1);
    this.seen.reserve(id + 1);
    if (id === this.keys.size - 1 && this.stable[id] === 0) {
      this.stable[id] = stableKeyHash(key);
      if (key.charCodeAt(0) === 0x23) this.flags[id] = (this.flags[id] as number) | HASHED;
    }
    return id;
  }

  /** Where a store files the domain (see {@link stableKeyHash}). */
  bucketHash(id: number): number {
    return this.stable[id] as number;
  }

  /** The number of `key`, or -1 when the table does not know it. */
  find(key: string): number {
    return this.keys.find(key);
  }

  keyOf(id: number): string {
    return this.keys.keyOf(id);
  }

  /**
   * Remembers `memory` (already valid: see {@link fastMemory} and DomainMemorySchema) as the prior
   * memory of `key`. The first memory of a key wins, as a stored record's first entry does; returns
   * false for a second one. `rewrite` asks the store to write it back even when nothing changes.
   */
  addPrior(key: string, memory: DomainMemory, rewrite = false): boolean {
    const id = this.idOf(key);
    const flags = this.flags[id] as number;
    if (flags & PRIOR) return false;
    let next = flags | PRIOR | (rewrite ? REWRITE : 0);
    const simple =
      memory.finding === null &&
      memory.alerted === null &&
      memory.actions === undefined &&
      memory.name === undefined;
    if (!simple || !this.encode(this.prior, id, memory.watched)) {
      next |= PRIOR_FULL;
      this.priorFull.set(id, memory);
    }
    this.flags[id] = next;
    this.priorCount++;
    return true;
  }

  /** Marks `id` as read by this scan as `name`, with its (bounded) watched fields, on `page`. */
  markSeen(id: number, name: string, watched: WatchedFields, page: number, key: string): void {
    let flags = (this.flags[id] as number) | SEEN;
    if (this.encode(this.seen, id, watched)) flags &= ~SEEN_FULL;
    else {
      flags |= SEEN_FULL;
      this.seenFull.set(id, watched);
    }
    this.flags[id] = flags;
    this.pages[id] = page;
    if (name !== key) this.names.set(id, name);
  }

  /** Sets the watched fields `id` remembers next (read, with the renewal watch decided) as an object. */
  setNextWatched(id: number, watched: WatchedFields): void {
    this.nextWatchedFull.set(id, watched);
  }

  /** Keeps the renewal watch of a compact `id` as read, none, or the remembered one. */
  keepRenewal(id: number, keep: 'none' | 'prior' | 'seen'): void {
    const code = keep === 'none' ? KEEP_NONE : keep === 'prior' ? KEEP_PRIOR : 0;
    this.flags[id] = ((this.flags[id] as number) & ~KEEP_MASK) | (code << KEEP_SHIFT);
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
    const prior = this.decode(this.prior, id).renewal;
    return prior ? { ...rest, renewal: prior } : rest;
  }

  /** Forgets every prior memory (the state moved on: it is read again). */
  clearPrior(): void {
    for (let id = 0; id < this.size; id++)
      this.flags[id] = (this.flags[id] as number) & ~(PRIOR | PRIOR_FULL | REWRITE);
    this.priorFull.clear();
    this.priorCount = 0;
  }

  /** Forgets every next memory and renewal decision, so a comparison can run again. */
  resetNext(): void {
    for (let id = 0; id < this.size; id++)
      this.flags[id] = (this.flags[id] as number) & ~(NEXT_MASK | CHANGED | KEEP_MASK);
    this.nextFull.clear();
    this.nextWatchedFull.clear();
  }

  /** Forgets what this scan read (the read started over). */
  clearSeen(): void {
    for (let id = 0; id < this.size; id++) this.flags[id] = (this.flags[id] as number) & ~(SEEN | SEEN_FULL);
    this.seenFull.clear();
    this.names.clear();
    this.resetNext();
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

  /** The prior memory of `id` when it is kept as an object (it may have a finding, an alert, actions). */
  fullPrior(id: number): DomainMemory | undefined {
    return ((this.flags[id] as number) & PRIOR_FULL) !== 0 ? this.priorFull.get(id) : undefined;
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

  /** The prior memory of `id` (made again from the compact record when it is one), or undefined. */
  priorMemory(id: number): DomainMemory | undefined {
    const flags = this.flags[id] as number;
    if (!(flags & PRIOR)) return undefined;
    if (flags & PRIOR_FULL) return this.priorFull.get(id);
    return { watched: this.decode(this.prior, id), finding: null, alerted: null };
  }

  /** Prior memories kept as objects (findings, alerts, snoozes, hashed names, odd values): few. */
  fullPriors(): IterableIterator<[number, DomainMemory]> {
    return this.priorFull.entries();
  }

  priorWatched(id: number): WatchedFields | undefined {
    const flags = this.flags[id] as number;
    if (!(flags & PRIOR)) return undefined;
    if (flags & PRIOR_FULL) return this.priorFull.get(id)?.watched;
    return this.decode(this.prior, id);
  }

  seenWatched(id: number): WatchedFields {
    const flags = this.flags[id] as number;
    if (flags & SEEN_FULL) return this.seenFull.get(id) ?? {};
    return this.decode(this.seen, id);
  }

  /**
   * True when what was read of `id` has the same watched fields as its prior memory, the renewal
   * watch left aside (fieldChanges does not look at it): then no field changed.
   */
  sameFields(id: number): boolean {
    const flags = this.flags[id] as number;
    if (!(flags & PRIOR_FULL) && !(flags & SEEN_FULL)) {
      const p = this.prior;
      const s = this.seen;
      const at = id * STRINGS;
      return (
        ((p.bits[id] as number) & FIELD_BITS) === ((s.bits[id] as number) & FIELD_BITS) &&
        p.strings[at] === s.strings[at] &&
        p.strings[at + 1] === s.strings[at + 1] &&
        p.strings[at + 2] === s.strings[at + 2] &&
        p.strings[at + 3] === s.strings[at + 3]
      );
    }
    return false;
  }

  /**
   * The renewal watch of `id` as remembered (`prior`) or read (`seen`), as numbers: whether there is
   * one, its due time (NaN when none) and its expiry. A record kept as an object answers undefined:
   * the caller asks for the object.
   */
  renewalOf(which: 'prior' | 'seen', id: number): { has: boolean; due: number; expiry: number } | undefined {
    const flags = this.flags[id] as number;
    if (which === 'prior' ? flags & PRIOR_FULL : flags & SEEN_FULL) return undefined;
    const columns = which === 'prior' ? this.prior : this.seen;
    const has = ((columns.bits[id] as number) & RENEWAL) !== 0;
    return { has, due: columns.times[2 * id] as number, expiry: columns.times[2 * id + 1] as number };
  }

  /** Sets what `id` remembers next; `memory` for {@link NEXT.full}. */
  setNext(id: number, kind: NextKind, memory?: DomainMemory): void {
    this.flags[id] = ((this.flags[id] as number) & ~NEXT_MASK) | (kind << NEXT_SHIFT);
    if (kind === NEXT.full && memory) this.nextFull.set(id, memory);
    else this.nextFull.delete(id);
  }

  nextKind(id: number): NextKind {
    return (((this.flags[id] as number) & NEXT_MASK) >> NEXT_SHIFT) as NextKind;
  }

  /** What `id` remembers next, or undefined when it is forgotten. */
  nextMemory(id: number): DomainMemory | undefined {
    switch (this.nextKind(id)) {
      case NEXT.prior:
        return this.priorMemory(id);
      case NEXT.seen:
        return { watched: this.nextWatched(id), finding: null, alerted: null };
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
      else if (kind === NEXT.seen && !(flags & (PRIOR_FULL | SEEN_FULL)) && !this.nextWatchedFull.has(id))
        differs = !this.sameNextAndPrior(id);
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
      this.prior.byteLength +
      this.seen.byteLength
    );
  }

  /** For compact records: whether the next watched fields (renewal watch as decided) equal the prior ones. */
  private sameNextAndPrior(id: number): boolean {
    const p = this.prior;
    const s = this.seen;
    const pBits = p.bits[id] as number;
    if ((pBits & FIELD_BITS) !== ((s.bits[id] as number) & FIELD_BITS)) return false;
    const at = id * STRINGS;
    for (let i = 0; i < STRINGS; i++) if (p.strings[at + i] !== s.strings[at + i]) return false;
    const keep = ((this.flags[id] as number) & KEEP_MASK) >> KEEP_SHIFT;
    if (keep === KEEP_PRIOR) return true;
    if (keep === KEEP_NONE) return (pBits & RENEWAL) === 0;
    if ((pBits & RENEWAL) !== ((s.bits[id] as number) & RENEWAL)) return false;
    if ((pBits & RENEWAL) === 0) return true;
    const due = p.times[2 * id] as number;
    const other = s.times[2 * id] as number;
    return (
      (due === other || (Number.isNaN(due) && Number.isNaN(other))) &&
      p.times[2 * id + 1] === s.times[2 * id + 1]
    );
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
        due: Number.isNaN(due) ? null : new Date(due).toISOString(),
        expiry: new Date(columns.times[2 * id + 1] as number).toISOString(),
      };
    }
    return out;
  }

  private stringSlot(value: unknown): number {
    if (value === undefined) return 0;
    if (value === null) return 1;
    return typeof value === 'string' ? this.pool.idOf(value) + 2 : -1;
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

/**
 * A hash of a memory key that never changes between versions or processes (FNV-1a, 32 bits, over
 * the key's UTF-16 code units; memory keys are ASCII): stores file a domain under it, so it is
 * part of the stored layout and must not change.
 */
export function stableKeyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  // Never 0: the table keeps 0 for "not computed yet".
  return h >>> 0 || 1;
}

function booleanBits(value: unknown, nullable: boolean): number {
  if (value === undefined) return 0;
  if (value === null) return nullable ? 1 : -1;
  if (value === true) return 3;
  if (value === false) return 2;
  return -1;
}

/**
 * A stored domain memory that needs no schema check to be read as it is: no finding, alert,
 * snooze or hashed name, and watched fields of the plain kinds a compact record holds. Most of an
 * account; the rest goes through DomainMemorySchema, which names what is wrong. Returns the memory
 * to keep (unknown fields dropped, as the schema drops them), or null.
 */
export function fastMemory(value: unknown): DomainMemory | null {
  if (!isRecord(value) || value.finding !== null || value.alerted !== null) return null;
  if (value.actions !== undefined || value.name !== undefined || !isRecord(value.watched)) return null;
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
  return { watched: w as WatchedFields, finding: null, alerted: null };
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
