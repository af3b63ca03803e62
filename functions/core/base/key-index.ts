/**
 * A set of string keys numbered 0, 1, 2… in the order they were added, kept as bytes in one growing
 * buffer with an open-addressing table over them. A `Map<string, …>` costs some 80–150 bytes a key
 * (the entry, the string's header, the table); this costs the key's bytes plus about 12, so a
 * million domain names fit in about 30 MB instead of 150. Callers keep what they know per key in
 * typed arrays indexed by the key's number. Pure.
 *
 * The slot hash is seeded at random per index: a reseller cannot choose names that pile up in one
 * chain. Every hit is checked byte for byte, so a hash collision never confuses two keys.
 */
export class KeyIndex {
  private bytes = new Uint8Array(1 << 16);
  private used = 0;
  /** Key `id` is bytes[starts[id], starts[id + 1]). */
  private starts = new Uint32Array(1 << 12);
  /** id + 1 of the key in each slot, 0 for an empty slot; kept at most half full. */
  private slots = new Int32Array(1 << 13);
  private mask = (1 << 13) - 1;
  private scratch = new Uint8Array(256);
  private scratchLength = 0;
  private readonly seed: number;
  /** How many keys were added. */
  size = 0;

  constructor(seed = (globalThis.crypto.getRandomValues(new Uint32Array(1))[0] ?? 0) | 1) {
    this.seed = seed >>> 0;
  }

  /** The number of `key`, or -1 when it was never added. */
  find(key: string): number {
    const hash = this.encode(key);
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const at = this.slots[slot] as number;
      if (at === 0) return -1;
      if (this.matches(at - 1)) return at - 1;
    }
  }

  /** The number of `key`, adding it first when it is new (then {@link size} grows by one). */
  add(key: string): number {
    const hash = this.encode(key);
    let slot = hash & this.mask;
    for (; ; slot = (slot + 1) & this.mask) {
      const at = this.slots[slot] as number;
      if (at === 0) break;
      if (this.matches(at - 1)) return at - 1;
    }
    const id = this.size;
    this.reserveSpace(id + 2, this.used + this.scratchLength);
    this.bytes.set(this.scratch.subarray(0, this.scratchLength), this.used);
    this.starts[id] = this.used;
    this.used += this.scratchLength;
    this.starts[id + 1] = this.used;
    this.size++;
    if (this.size * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.slots[slot] = id + 1;
    return id;
  }

  /** Key number `id` as a string. */
  keyOf(id: number): string {
    const start = this.starts[id] as number;
    const end = this.starts[id + 1] as number;
    let ascii = true;
    for (let i = start; i < end; i++)
      if ((this.bytes[i] as number) > 0x7f) {
        ascii = false;
        break;
      }
    if (ascii && end - start < 4096) return String.fromCharCode(...this.bytes.subarray(start, end));
    return new TextDecoder().decode(this.bytes.subarray(start, end));
  }

  /**
   * FNV-1a (32 bits) of key `id`'s bytes, with no seed: the same in every process and version (for
   * ASCII keys, stableKeyHash of the key as a string).
   */
  stableHash(id: number): number {
    let h = 0x811c9dc5;
    for (let i = this.starts[id] as number; i < (this.starts[id + 1] as number); i++)
      h = Math.imul(h ^ (this.bytes[i] as number), 0x01000193);
    return h >>> 0;
  }

  /** Bytes held, for measurements. */
  get byteLength(): number {
    return this.bytes.byteLength + this.starts.byteLength + this.slots.byteLength;
  }

  /** Writes `key` as UTF-8 into the scratch buffer and returns its hash. */
  private encode(key: string): number {
    let n = 0;
    let ascii = true;
    if (key.length > this.scratch.length) this.scratch = new Uint8Array(key.length * 3 + 16);
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      if (c > 0x7f) {
        ascii = false;
        break;
      }
      this.scratch[n++] = c;
    }
    if (!ascii) {
      if (key.length * 3 > this.scratch.length) this.scratch = new Uint8Array(key.length * 3 + 16);
      n = new TextEncoder().encodeInto(key, this.scratch).written;
    }
    this.scratchLength = n;
    return this.hashOf(this.scratch, 0, n);
  }

  /** FNV-1a over the bytes from a random basis, then murmur3's finaliser so every bit mixes. */
  private hashOf(bytes: Uint8Array, start: number, end: number): number {
    let h = this.seed ^ 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h >>> 0;
  }

  private matches(id: number): boolean {
    const start = this.starts[id] as number;
    const length = (this.starts[id + 1] as number) - start;
    if (length !== this.scratchLength) return false;
    for (let i = 0; i < length; i++) if (this.bytes[start + i] !== this.scratch[i]) return false;
    return true;
  }

  private reserveSpace(ids: number, bytes: number): void {
    if (ids > this.starts.length) {
      const starts = new Uint32Array(grow(ids, this.starts.length));
      starts.set(this.starts);
      this.starts = starts;
    }
    if (bytes > this.bytes.length) {
      const next = new Uint8Array(grow(bytes, this.bytes.length));
      next.set(this.bytes.subarray(0, this.used));
      this.bytes = next;
    }
  }

  /** Hashes are not kept (4 bytes a key): a rehash, once per doubling, hashes the keys again. */
  private rehash(length: number): void {
    this.slots = new Int32Array(length);
    this.mask = length - 1;
    for (let id = 0; id < this.size; id++) {
      let slot =
        this.hashOf(this.bytes, this.starts[id] as number, this.starts[id + 1] as number) & this.mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = id + 1;
    }
  }
}

/** The next capacity: half again as much, enough for `needed`. */
export function grow(needed: number, current: number): number {
  return Math.max(needed, Math.ceil(current * 1.5), 16);
}
