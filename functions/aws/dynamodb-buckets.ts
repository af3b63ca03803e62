import type { AttributeValue, WriteRequest } from '@aws-sdk/client-dynamodb';
import { fnv1a } from '../core/base/hash';
import {
  type DomainMemory,
  EMPTY_HEAD,
  encodeMemory,
  readDomainMemory,
  StateError,
  type StateHead,
  stateIssue,
} from '../core/memory/state';
import { shownCut } from '../core/memory/state-bounds';
import { readStateHead, StateDamagedError } from '../core/memory/state-header';
import type { MemorySink, OpenedState } from '../use-cases/state-store';
import { META_SORT_KEY, STATE_TABLE_DEFINITION } from './state-table-definition';

/**
 * How the DynamoDB store lays the state out in items: the `#meta` item read back (readMeta), and the
 * domains' memories in a fixed number of buckets, spread over shard partitions, each bucket one item
 * (or parts), and what a save writes. The queries and writes themselves are dynamodb-state-store.ts's.
 */

const { partitionKey: PK, sortKey: SK } = STATE_TABLE_DEFINITION;
/**
 * Partitions the domains are spread over: `<scope>#0` … `#15`. One partition key serves at most
 * 1 000 write and 3 000 read units a second; a first scan of a million domains under one key would
 * take longer than a Lambda may run.
 */
export const SHARDS = 16;
/**
 * The buckets a domain is filed in by the hash of its key: 2^14, fixed, so no save ever lays the
 * memory out anew. A memory is some 270 bytes, and a write pays a unit a KB of its item. At
 * 100 000 domains a bucket holds about 6 (1.6 KB: 2 units a changed domain); at 1 000 000 about
 * 61 (16 KB: 17 units a changed bucket, some 280 000 for a first save); at 10 000 000 about 610
 * (165 KB, parts past {@link PART_BYTES} beyond). A scan reads every item, and reading costs by
 * the item more than by the byte: with 2^16 an unchanged scan of 100 000 domains read its state in
 * 9.9 s, not 6.4, and took 1.36 times a stateless one, past the 1.3 target, not 1.15
 * (docs/performance.md), for a change of one unit instead of two. `#meta` keeps the count as
 * `layout`: a state laid out in another is another release's.
 */
export const BUCKETS = 0x4000;
/** A bucket whose memories outgrow this is written as several parts (`.1`, `.2`…), far below the 400 KB limit. */
const PART_BYTES = 300 * 1024;
/** DynamoDB's limits (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html). */
const MAX_ITEM_BYTES = 400 * 1024;
const MAX_SORT_KEY_BYTES = 1024;

/** `b#0a3f`, `b#0a3f.1` (bucketSk): any other spelling (`b#a3f`, `b#0a3f.0`) names no bucket. */
const BUCKET_SK = /^b#([0-9a-f]{4})(?:\.([1-9]\d{0,3}))?$/;

/** The account whose items these are (`scope`: its partition key), and how messages name it: `location` `dynamodb:TABLE`, `where` `dynamodb:TABLE (scope)`. */
export interface ItemScope {
  readonly scope: string;
  readonly location: string;
  readonly where: string;
}

/** What the store learnt opening a state, for the writes that follow. */
export interface Known {
  /** Contact items as loaded (sort key → body), to write only what changed. */
  readonly contacts: ReadonlyMap<string, string>;
  /** Parts loaded per bucket, once the domains were read. */
  parts?: Uint8Array;
  /** Buckets to write again whatever changed (a memory filed in the wrong one, or twice). */
  readonly dirty: Set<number>;
  /** Items of the shards read as no bucket, or as one of another shard: deleted once the next save committed. */
  readonly stray: Array<readonly [pk: string, sk: string]>;
  /** The generation opened: a save tags each bucket item it writes with the next one (`g`). */
  readonly generation: number;
}

/**
 * A first save (nothing remembered, so nothing to lose) that may stop early (StateWrite.saveBy):
 * `stop` is asked before each bucket's first write, `kept` counts the domains of the buckets begun
 * (each begun bucket is written whole), and `stopped` says that it stopped.
 */
export interface Stoppable {
  readonly stop: () => boolean;
  kept: number;
  stopped?: true;
}

/** The bucket of `key`. */
export const bucketOf = (key: string): number => fnv1a(key) & (BUCKETS - 1);

/** The partition of bucket `bucket`'s items. */
export const shardPk = (at: ItemScope, bucket: number): string => `${at.scope}#${bucket % SHARDS}`;

/** An item's key. */
export const itemKey = (pk: string, sk: string): Record<string, AttributeValue> => ({
  [PK.name]: { S: pk },
  [SK.name]: { S: sk },
});

/** The sort key of part `part` of bucket `bucket`. */
export const bucketSk = (bucket: number, part = 0): string =>
  `b#${bucket.toString(16).padStart(4, '0')}${part > 0 ? `.${part}` : ''}`;

/**
 * Fails before anything is written when `item` would break DynamoDB's limits (sort key 1 024
 * bytes, item 400 KB). The comparison bounds every name and field and buckets are cut into parts,
 * so this names a bug rather than the reseller's data; it still says which item.
 */
export function checkItemSize(at: ItemScope, item: Record<string, AttributeValue>): void {
  const sk = item[SK.name]?.S ?? '';
  const keyBytes = Buffer.byteLength(sk, 'utf8');
  const bytes = itemBytes(item);
  if (keyBytes > MAX_SORT_KEY_BYTES || bytes > MAX_ITEM_BYTES)
    throw new StateError(
      `${at.location}: the state item ${JSON.stringify(shownCut(sk))} would be ${bytes} bytes (sort key ${keyBytes}), over DynamoDB's limits (${MAX_ITEM_BYTES} bytes an item, ${MAX_SORT_KEY_BYTES} a sort key); nothing was written`,
    );
}

/**
 * An item's size as DynamoDB counts it ("Item size calculations"): every attribute's name and
 * value in UTF-8 bytes, a number one byte per two digits and one more (an upper bound: DynamoDB
 * trims leading and trailing zeros), a null or a boolean one byte.
 */
function itemBytes(item: Record<string, AttributeValue>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) {
    const size =
      value.S !== undefined
        ? Buffer.byteLength(value.S, 'utf8')
        : value.N !== undefined
          ? Math.ceil(value.N.length / 2) + 1
          : 1;
    bytes += Buffer.byteLength(name, 'utf8') + size;
  }
  return bytes;
}

/** A bucket item as read (bucketItem). */
export interface BucketItem {
  readonly sk: string;
  readonly bucket: number;
  readonly part: number;
  readonly members: Array<[string, unknown]>;
  readonly damage?: string;
  /** The generation the item was written for (`g`). */
  readonly written?: string | undefined;
  /** How many parts its save wrote of the bucket (`n`); undefined only on an item damaged for want of it or of `g`. */
  readonly count?: number | undefined;
}

/** Why a bucket whose parts were written by different saves is a problem record. */
const TORN = 'its parts were written by different saves, one of which did not finish';

/**
 * The sort key of the part that shows a bucket torn, from its parts as read (in any order): the
 * first written by another save than the first part, or, all of one save, the first part that save
 * wrote and is missing or it did not write. Undefined when the bucket is whole. A save killed
 * between the parts of a bucket it wrote over leaves one torn: a memory that moved from one part to
 * another (or into a part the bucket did not have) may be in neither.
 */
function tornPart(parts: readonly BucketItem[]): string | undefined {
  // A part that does not say which save wrote it and how many parts is damage, reported as such.
  const first = parts.find((p) => p.count !== undefined);
  if (first?.count === undefined) return undefined;
  const count = first.count;
  const other = parts.find(
    (p) => p.count !== undefined && (p.written !== first.written || p.count !== count),
  );
  if (other) return bucketSk(first.bucket, other.part);
  const have = new Set(parts.map((p) => p.part));
  for (let part = 0; part < count; part++) if (!have.has(part)) return bucketSk(first.bucket, part);
  const extra = parts.find((p) => p.part >= count);
  return extra && bucketSk(first.bucket, extra.part);
}

/**
 * Hands the memories of one bucket's parts (`run`, as read) to `sink`, reporting each part that
 * cannot be read and a torn bucket (tornPart): not forgotten in silence, and the bucket added to
 * `dirty`, to be written again at the next save. `parts` learns how many items the bucket has.
 */
export function takeBucket(
  run: readonly BucketItem[],
  sink: MemorySink,
  dirty: Set<number>,
  parts?: Uint8Array,
): void {
  const reported = new Set<string>();
  for (const found of run) {
    if (parts) parts[found.bucket] = Math.max(parts[found.bucket] as number, Math.min(found.part + 1, 255));
    if (found.damage !== undefined) {
      sink.damaged(found.sk, found.damage);
      reported.add(bucketSk(found.bucket, found.part));
      dirty.add(found.bucket);
    }
    for (const [key, value] of found.members) {
      // A memory filed in the wrong bucket, or a second one of a key, or one that cannot be
      // read, is written again where it belongs, and its bucket without it.
      const own = bucketOf(key);
      if (own !== found.bucket) dirty.add(found.bucket).add(own);
      if (!sink.memory(key, value)) dirty.add(found.bucket);
    }
  }
  const torn = tornPart(run);
  if (torn !== undefined && !reported.has(torn)) {
    sink.damaged(torn, TORN);
    dirty.add((run[0] as BucketItem).bucket);
  }
}

/**
 * A bucket item: its bucket, part and members; null for anything else. One whose memories cannot
 * be read has none, and says why in `damage`: reported, not dropped in silence, and not the end of
 * the scan either (its domains are compared as if seen for the first time).
 */
export function bucketItem(item: Record<string, AttributeValue>): BucketItem | null {
  const sk = item[SK.name]?.S ?? '';
  const match = BUCKET_SK.exec(sk);
  if (!match) return null;
  const bucket = Number.parseInt(match[1] as string, 16);
  const written = item.g?.N;
  const n = Number(item.n?.N);
  // Every save writes both: without them, the item cannot show its bucket whole (tornPart).
  const count = written !== undefined && Number.isSafeInteger(n) && n > 0 ? n : undefined;
  const at = { sk, bucket, part: Number(match[2] ?? 0), written, count };
  const read = itemJson(item.m?.S);
  if ('damage' in read) return { ...at, members: [], damage: read.damage };
  const members = read.value;
  if (typeof members !== 'object' || members === null || Array.isArray(members))
    return { ...at, members: [], damage: 'it is not a set of domain memories' };
  if (count === undefined) {
    const missing = written === undefined ? 'which save wrote it (g)' : 'how many parts its save wrote (n)';
    return { ...at, members: [], damage: `it does not say ${missing}` };
  }
  return { ...at, members: Object.entries(members) };
}

/** An item's memory text (`m`) as JSON, or why it cannot be read. */
export function itemJson(
  body: string | undefined,
): { readonly value: unknown } | { readonly damage: string } {
  if (body === undefined) return { damage: 'it holds no memory as text' };
  try {
    return { value: JSON.parse(body) };
  } catch {
    return { damage: 'its memory text is not JSON' };
  }
}

/** A scan's save: the buckets holding a changed domain, and those to write again. */
export function planAll(
  at: ItemScope,
  known: Known,
  changed: ReadonlyMap<string, DomainMemory | null>,
  all: ReadonlyMap<string, DomainMemory>,
  stoppable?: Stoppable,
): Iterable<WriteRequest> {
  const members = new Map<number, string[]>([...known.dirty].map((bucket) => [bucket, []]));
  for (const key of changed.keys()) members.set(bucketOf(key), []);
  for (const key of all.keys()) members.get(bucketOf(key))?.push(key);
  const memory = (key: string) => all.get(key) as DomainMemory;
  return bucketWrites(at, members, memory, known, known.parts, stoppable);
}

/**
 * A change to some domains alone (a snooze): their buckets read (`readBucket`, which counts each
 * bucket's parts), changed and written back.
 */
export async function planChanges(
  at: ItemScope,
  known: Known,
  changed: ReadonlyMap<string, DomainMemory | null>,
  readBucket: (bucket: number, parts: Uint8Array) => Promise<Map<string, unknown>>,
): Promise<Iterable<WriteRequest>> {
  const members = new Map<number, string[]>();
  const values = new Map<string, unknown>();
  const parts = new Uint8Array(BUCKETS);
  for (const bucket of new Set([...changed.keys()].map(bucketOf))) {
    // Before the first save, nothing in the shards was ever committed.
    const read = known.generation === 0 ? new Map<string, unknown>() : await readBucket(bucket, parts);
    for (const [key, value] of changed) if (bucketOf(key) === bucket) read.set(key, value);
    for (const [key, value] of read) if (value !== null) values.set(key, value);
    members.set(
      bucket,
      [...read.keys()].filter((key) => read.get(key) !== null),
    );
  }
  const memory = (key: string) => {
    const value = values.get(key);
    return changed.has(key) ? (value as DomainMemory) : readDomainMemory(value, key, at.where);
  };
  return bucketWrites(at, members, memory, known, parts);
}

/**
 * The writes of the given buckets, made one bucket at a time as the writers ask for them: each
 * bucket's memories as one item (or parts past {@link PART_BYTES}), and deletes for parts no
 * longer needed (`parts`: how many each bucket had).
 */
function* bucketWrites(
  at: ItemScope,
  members: ReadonlyMap<number, readonly string[]>,
  memory: (key: string) => DomainMemory,
  known: Pick<Known, 'generation'>,
  parts: Uint8Array | undefined,
  stoppable?: Stoppable,
): Generator<WriteRequest> {
  // Every part of a bucket says which save wrote it: parts of two saves are a torn bucket.
  const g = { N: String(known.generation + 1) };
  for (const [bucket, keys] of members) {
    if (stoppable?.stop()) {
      stoppable.stopped = true;
      return;
    }
    if (stoppable) stoppable.kept += keys.length;
    const pk = shardPk(at, bucket);
    const bodies = partBodies(keys, memory);
    // And how many parts it wrote: a part that never came (killed) tears the bucket too.
    const n = { N: String(bodies.length) };
    for (const [part, text] of bodies.entries()) {
      const item = { ...itemKey(pk, bucketSk(bucket, part)), m: { S: text }, g, n };
      checkItemSize(at, item);
      yield { PutRequest: { Item: item } };
    }
    for (let old = bodies.length; old < (parts?.[bucket] ?? 0); old++)
      yield { DeleteRequest: { Key: itemKey(pk, bucketSk(bucket, old)) } };
  }
}

/** The memory texts of one bucket's parts: a part each {@link PART_BYTES}, none when it holds no domain. */
function partBodies(keys: readonly string[], memory: (key: string) => DomainMemory): string[] {
  const bodies: string[] = [];
  let body = '';
  // In UTF-8 bytes, as DynamoDB counts an item: a name of three-byte characters is three times its length.
  let bodyBytes = 0;
  for (const key of keys) {
    const entry = `${JSON.stringify(key)}:${encodeMemory(memory(key))}`;
    const entryBytes = Buffer.byteLength(entry, 'utf8');
    if (body && bodyBytes + entryBytes + 2 > PART_BYTES) {
      bodies.push(`{${body}}`);
      body = '';
      bodyBytes = 0;
    }
    body = body ? `${body},${entry}` : entry;
    bodyBytes += entryBytes + 1;
  }
  if (body) bodies.push(`{${body}}`);
  return bodies;
}

/**
 * The `#meta` item of an account's partition (undefined: none yet) read back, `contacts` as read
 * apart: its generation and lease (what the protocol's conditional writes are made on), its
 * account-wide part (`h`) and the bucket layout (`layout`, the bucket count). A generation that is
 * not a whole number is refused (a StateError): every claim is conditional on it, so no scan may
 * publish on it. An account-wide part or a layout that does not read back is damage
 * (StateDamagedError, with the generation): a scan alerts without memory under the lease, and
 * writes nothing else. A layout of another bucket count is another release's, refused as a state of
 * another format version is.
 */
export function readMeta(
  at: ItemScope,
  meta: Record<string, AttributeValue> | undefined,
  contacts: StateHead['contacts'],
): Omit<OpenedState, 'damaged'> {
  const { generation: stored, h, layout, lease_owner: owner, lease_expires: expires } = meta ?? {};
  // Read as 0, a damaged generation would tell every scan "another scan moved the state on".
  if (stored !== undefined && !/^\d{1,15}$/.test(stored.N ?? ''))
    throw new StateError(
      `the state item ${META_SORT_KEY} in ${at.where} has no generation as a whole number; reset the state`,
    );
  const generation = Number(stored?.N ?? 0);
  const damaged = (what: string, damage: string, cause?: unknown) =>
    new StateDamagedError(
      `the state item ${META_SORT_KEY} in ${at.where} ${what}; reset the state`,
      { item: META_SORT_KEY, damage, generation },
      cause === undefined ? undefined : { cause },
    );
  // Gone after a save, the account-wide part would open as empty: every memory taken for a first scan's.
  if ((h !== undefined || generation > 0) && h?.S === undefined)
    throw damaged('has no account-wide part (h) as text', 'h: not text');
  // Every save writes it: gone after one, it is damage (and read as absent, no bucket would be read).
  if (layout === undefined && generation > 0)
    throw damaged('has no bucket layout (layout) after a save', 'layout: missing');
  if (layout !== undefined && layout.N === undefined)
    throw damaged('has no bucket layout (layout) as a number', 'layout: not a number');
  if (layout !== undefined && layout.N !== String(BUCKETS))
    throw stateIssue(
      at.where,
      `layout: written by another version of domain-sentinel (bucket layout ${layout.N}, this one reads ${BUCKETS})`,
    );
  const lease = owner?.S && expires?.N ? { owner: owner.S, expiresAt: Number(expires.N) } : null;
  if (h?.S === undefined) return { head: { ...EMPTY_HEAD, contacts }, generation, lease };
  let value: unknown;
  try {
    value = JSON.parse(h.S);
  } catch (error) {
    throw damaged('is not JSON', 'h: not JSON', error);
  }
  return {
    head: readStateHead(value, contacts, at.where, { item: META_SORT_KEY, generation }),
    generation,
    lease,
  };
}
