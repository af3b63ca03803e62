import type { AttributeValue, WriteRequest } from '@aws-sdk/client-dynamodb';
import { fnv1a } from '../core/base/hash';
import { type DomainMemory, encodeMemory, readDomainMemory, StateError } from '../core/memory/state';
import { shownCut } from '../core/memory/state-bounds';
import type { StateWrite } from '../use-cases/state-store';
import { STATE_TABLE_DEFINITION } from './state-table-definition';

/**
 * How the DynamoDB store lays the domains' memories out in items: buckets of a few domains under
 * a power-of-two bucket count, spread over shard partitions, each bucket one item (or parts), and
 * what a save writes and deletes. The queries and writes themselves are dynamodb-state-store.ts's.
 */

const { partitionKey: PK, sortKey: SK } = STATE_TABLE_DEFINITION;
/**
 * Partitions the domains are spread over: `<scope>#0` … `#15`. One partition key serves at most
 * 1 000 write and 3 000 read units a second; a first scan of a million domains under one key would
 * take longer than a Lambda may run.
 */
export const SHARDS = 16;
/**
 * Domains per bucket item: about 8 memories of some 270 bytes make a 2 KB item (2 write units),
 * where one item per domain would pay a whole unit for a quarter of one. The bucket count is a
 * power of two chosen at the first save and doubled (every item written anew under the next
 * count, switched to in the one conditional write of `#meta`) when the account outgrows it.
 */
const BUCKET_TARGET = 8;
const BUCKET_MAX = 16;
/** A bucket whose memories outgrow this is written as several parts (`.1`, `.2`…), far below the 400 KB limit. */
const PART_BYTES = 300 * 1024;
/** DynamoDB's limits (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html). */
const MAX_ITEM_BYTES = 400 * 1024;
const MAX_SORT_KEY_BYTES = 1024;

const BUCKET_SK = /^b(\d{1,2})#([0-9a-f]{1,8})(?:\.(\d{1,4}))?$/;

/** The account whose items these are, and how messages name it. */
export interface ItemScope {
  /** Its partition key: the reseller base URL, or an account's own scope. */
  readonly scope: string;
  /** `dynamodb:TABLE`. */
  readonly location: string;
  /** `dynamodb:TABLE (scope)`. */
  readonly where: string;
}

/** What the store learnt opening a state, for the writes that follow. */
export interface Layout {
  /** The bucket exponent in force; null before the first save. */
  readonly exponent: number | null;
  /** Contact items as loaded (sort key → body), to write only what changed. */
  readonly contacts: ReadonlyMap<string, string>;
  /** Parts loaded per bucket in force, once the domains were read. */
  parts?: Uint8Array;
  /** Buckets to write again whatever changed (a memory filed in the wrong one, or twice). */
  readonly dirty: Set<number>;
  /** Items outside the layout in force (a resize whose cleanup failed): deleted after the next save. */
  readonly garbage: Array<readonly [string, string]>;
  /** The generation opened: a save tags each bucket item it writes with the next one (`g`). */
  readonly generation: number;
}

/** What a save writes: its bucket writes, the layout it leaves in force, and what goes once it committed. */
export interface Plan {
  readonly exponent: number | null;
  readonly writes: Iterable<WriteRequest>;
  readonly cleanup: Iterable<WriteRequest>;
}

/**
 * A save of every domain that may stop early (StateWrite.saveBy): `stop` is asked before each
 * bucket's first write of a new layout, `kept` counts the domains of the buckets begun (each begun
 * bucket is written whole), and `stopped` says that it stopped. A first save (nothing remembered to
 * lose) keeps what it wrote; a resize gives the new layout up and writes the changes in the old one.
 */
export interface Stoppable {
  readonly stop: () => boolean;
  kept: number;
  stopped?: true;
}

/** For a save of every domain with a time to keep (StateWrite.saveBy): what stops it once that time came. */
export function stoppableOf(
  write: Pick<StateWrite, 'all' | 'saveBy'>,
  clock: () => number,
): Stoppable | undefined {
  const saveBy = write.saveBy;
  if (!write.all || saveBy === undefined) return undefined;
  return { stop: () => clock() >= saveBy, kept: 0 };
}

/** The bucket of `key` under 2^`exponent` buckets. */
export const bucketOf = (key: string, exponent: number): number => fnv1a(key) & ((1 << exponent) - 1);

/** The partition of bucket `bucket`'s items. */
export const shardPk = (at: ItemScope, bucket: number): string => `${at.scope}#${bucket % SHARDS}`;

/** An item's key. */
export const itemKey = (pk: string, sk: string): Record<string, AttributeValue> => ({
  [PK.name]: { S: pk },
  [SK.name]: { S: sk },
});

/** The sort key of part `part` of bucket `bucket` under 2^`exponent` buckets. */
export function bucketSk(exponent: number, bucket: number, part = 0): string {
  const digits = Math.max(1, Math.ceil(exponent / 4));
  return `b${exponent}#${bucket.toString(16).padStart(digits, '0')}${part > 0 ? `.${part}` : ''}`;
}

/** The bucket exponent for `count` domains: about {@link BUCKET_TARGET} a bucket, at least `from`. */
function exponentFor(count: number, from: number | null): number {
  let exponent = from ?? 0;
  if (from === null) while ((1 << exponent) * BUCKET_TARGET < count) exponent++;
  while (count > BUCKET_MAX * (1 << exponent)) exponent++;
  return exponent;
}

/**
 * Fails before anything is written when an item would break DynamoDB's limits (sort key 1 024
 * bytes, item 400 KB). The comparison bounds every name and field and buckets are cut into parts,
 * so this names a bug rather than the reseller's data; it still says which item.
 */
export function checkItemSize(at: ItemScope, sk: string, body: string, pk = at.scope): void {
  const keyBytes = Buffer.byteLength(sk, 'utf8');
  const bytes =
    Buffer.byteLength(pk, 'utf8') +
    keyBytes +
    Buffer.byteLength(body, 'utf8') +
    PK.name.length +
    SK.name.length +
    1;
  if (keyBytes > MAX_SORT_KEY_BYTES || bytes > MAX_ITEM_BYTES)
    throw new StateError(
      `${at.location}: the state item ${JSON.stringify(shownCut(sk))} would be ${bytes} bytes (sort key ${keyBytes}), over DynamoDB's limits (${MAX_ITEM_BYTES} bytes an item, ${MAX_SORT_KEY_BYTES} a sort key); nothing was written`,
    );
}

/**
 * A bucket item of the layout in force: its bucket, part and members; null for anything else.
 * One whose memories cannot be read has none, and says why in `damage`: reported, not dropped in
 * silence, and not the end of the scan either (its domains are compared as if seen for the first time).
 */
export function bucketItem(
  item: Record<string, AttributeValue>,
  exponent: number | null,
): {
  bucket: number;
  part: number;
  members: Array<[string, unknown]>;
  damage?: string;
  /** The generation the item was written for (`g`); undefined for one written before items had it. */
  written?: string;
} | null {
  const sk = item[SK.name]?.S ?? '';
  const match = BUCKET_SK.exec(sk);
  if (!match || exponent === null || Number(match[1]) !== exponent) return null;
  const bucket = Number.parseInt(match[2] as string, 16);
  if (bucket >= 1 << exponent) return null;
  const part = Number(match[3] ?? 0);
  const written = item.g?.N;
  const at = { bucket, part, ...(written !== undefined ? { written } : {}) };
  const read = itemJson(item.m?.S);
  if ('damage' in read) return { ...at, members: [], damage: read.damage };
  const members = read.value;
  return typeof members === 'object' && members !== null && !Array.isArray(members)
    ? { ...at, members: Object.entries(members) }
    : { ...at, members: [], damage: 'it is not a set of domain memories' };
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

/**
 * A scan's save: the buckets holding a changed domain, or every bucket under a new layout. A resize
 * that `stoppable` stops before it wrote every bucket is given up: the buckets of the changed domains
 * are written in the old layout instead (`exponent` then says the old one, once the writes are
 * done), and the items it wrote of the new one, never read as the old one's (their sort keys name
 * their layout), are the next save's garbage: deleted after it, or written over or deleted before
 * the switch by the next resize (staleOfNewLayout).
 */
export function planAll(
  at: ItemScope,
  known: Layout,
  changed: ReadonlyMap<string, DomainMemory | null>,
  all: ReadonlyMap<string, DomainMemory>,
  stoppable?: Stoppable,
): Plan {
  const exponent = exponentFor(all.size, known.exponent);
  const memory = (key: string) => all.get(key) as DomainMemory;
  if (exponent === known.exponent)
    return {
      exponent,
      writes: inPlace(at, known, changed, all, exponent),
      cleanup: cleanupWrites(at, known, null),
    };
  const members = new Map<number, string[]>();
  for (const key of all.keys()) {
    const bucket = bucketOf(key, exponent);
    const list = members.get(bucket);
    if (list) list.push(key);
    else members.set(bucket, [key]);
  }
  const written = new Uint8Array(1 << exponent);
  const old = known.exponent;
  // A first save that stopped keeps what it wrote; a resize that stopped keeps the old layout.
  const gaveUp = () => old !== null && stoppable?.stopped === true;
  return {
    get exponent() {
      return gaveUp() ? old : exponent;
    },
    writes: (function* () {
      yield* bucketWrites(at, exponent, members, memory, known, undefined, written, stoppable);
      if (old !== null && gaveUp()) yield* inPlace(at, known, changed, all, old);
      else yield* staleOfNewLayout(at, known, exponent, written);
    })(),
    cleanup: (function* () {
      yield* cleanupWrites(at, known, gaveUp() ? null : exponent);
    })(),
  };
}

/** The writes of a save in the layout in force: the buckets of the changed domains, and those to write again. */
function inPlace(
  at: ItemScope,
  known: Layout,
  changed: ReadonlyMap<string, DomainMemory | null>,
  all: ReadonlyMap<string, DomainMemory>,
  exponent: number,
): Generator<WriteRequest> {
  const members = new Map<number, string[]>([...known.dirty].map((bucket) => [bucket, []]));
  for (const key of changed.keys()) members.set(bucketOf(key, exponent), []);
  for (const key of all.keys()) members.get(bucketOf(key, exponent))?.push(key);
  const memory = (key: string) => all.get(key) as DomainMemory;
  return bucketWrites(at, exponent, members, memory, known, known.parts);
}

/**
 * A change to some domains alone (a snooze): their buckets read (`readBucket`, which counts each
 * bucket's parts), changed and written back.
 */
export async function planChanges(
  at: ItemScope,
  known: Layout,
  changed: ReadonlyMap<string, DomainMemory | null>,
  readBucket: (exponent: number, bucket: number, parts: Uint8Array) => Promise<Map<string, unknown>>,
): Promise<Plan> {
  if (changed.size === 0) return { exponent: known.exponent, writes: [], cleanup: [] };
  const exponent = known.exponent ?? exponentFor(changed.size, null);
  const members = new Map<number, string[]>();
  const values = new Map<string, unknown>();
  const parts = new Uint8Array(1 << exponent);
  for (const bucket of new Set([...changed.keys()].map((key) => bucketOf(key, exponent)))) {
    const read =
      known.exponent === null ? new Map<string, unknown>() : await readBucket(exponent, bucket, parts);
    for (const [key, value] of changed) if (bucketOf(key, exponent) === bucket) read.set(key, value);
    const list: string[] = [];
    for (const [key, value] of read) {
      if (value === null) continue;
      values.set(key, value);
      list.push(key);
    }
    members.set(bucket, list);
  }
  const memory = (key: string) => {
    const value = values.get(key);
    return changed.has(key) ? (value as DomainMemory) : readDomainMemory(value, key, at.where);
  };
  return { exponent, writes: bucketWrites(at, exponent, members, memory, known, parts), cleanup: [] };
}

/**
 * The writes of the given buckets, made one bucket at a time as the writers ask for them: each
 * bucket's memories as one item (or parts past {@link PART_BYTES}), and deletes for parts no
 * longer needed (`parts`: how many each bucket had; absent after a resize, which drops them all).
 */
function* bucketWrites(
  at: ItemScope,
  exponent: number,
  members: ReadonlyMap<number, readonly string[]>,
  memory: (key: string) => DomainMemory,
  known: Pick<Layout, 'generation'>,
  parts: Uint8Array | undefined,
  written?: Uint8Array,
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
    let part = 0;
    let body = '';
    // In UTF-8 bytes, as DynamoDB counts an item: a name of three-byte characters is three times its length.
    let bodyBytes = 0;
    const put = (): WriteRequest => {
      const sk = bucketSk(exponent, bucket, part++);
      const text = `{${body}}`;
      body = '';
      bodyBytes = 0;
      checkItemSize(at, sk, text, pk);
      return { PutRequest: { Item: { ...itemKey(pk, sk), m: { S: text }, g } } };
    };
    for (const key of keys) {
      const entry = `${JSON.stringify(key)}:${encodeMemory(memory(key))}`;
      const entryBytes = Buffer.byteLength(entry, 'utf8');
      if (body && bodyBytes + entryBytes + 2 > PART_BYTES) yield put();
      body = body ? `${body},${entry}` : entry;
      bodyBytes += entryBytes + 1;
    }
    if (body) yield put();
    if (written) written[bucket] = Math.min(part, 255);
    for (let old = part; old < (parts?.[bucket] ?? 0); old++)
      yield { DeleteRequest: { Key: itemKey(pk, bucketSk(exponent, bucket, old)) } };
  }
}

/**
 * Deletes for the items of the layout a resize (or first save) switches to that an earlier one left
 * behind (failed or killed before switching) and this one did not write again (a bucket now empty,
 * a part fewer): made before the switch, so none of them is ever read as a bucket of the layout in
 * force, which would bring back memories no save committed. `written`: the parts this save wrote.
 */
function* staleOfNewLayout(
  at: ItemScope,
  known: Layout,
  exponent: number,
  written: Uint8Array,
): Generator<WriteRequest> {
  for (const [pk, sk] of known.garbage) {
    const match = BUCKET_SK.exec(sk);
    if (!match || Number(match[1]) !== exponent) continue;
    const bucket = Number.parseInt(match[2] as string, 16);
    const part = Number(match[3] ?? 0);
    const rewritten =
      sk === bucketSk(exponent, bucket, part) && pk === shardPk(at, bucket) && part < (written[bucket] ?? 0);
    if (!rewritten) yield { DeleteRequest: { Key: itemKey(pk, sk) } };
  }
}

/**
 * What to delete once a save committed: items outside the layout in force, and after a resize (to
 * `resizedTo`) every item of the old one; items of the new layout are {@link staleOfNewLayout}'s.
 */
function* cleanupWrites(at: ItemScope, known: Layout, resizedTo: number | null): Generator<WriteRequest> {
  for (const [pk, sk] of known.garbage) {
    const match = BUCKET_SK.exec(sk);
    if (!(resizedTo !== null && match && Number(match[1]) === resizedTo))
      yield { DeleteRequest: { Key: itemKey(pk, sk) } };
  }
  if (resizedTo === null || known.exponent === null || !known.parts) return;
  for (let bucket = 0; bucket < known.parts.length; bucket++)
    for (let part = 0; part < (known.parts[bucket] as number); part++)
      yield { DeleteRequest: { Key: itemKey(shardPk(at, bucket), bucketSk(known.exponent, bucket, part)) } };
}
