import {
  type AttributeValue,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  QueryCommand,
  type QueryCommandInput,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { ConfigError, errorLine } from '../core/base/errors';
import { retry } from '../core/base/retry';
import type { AuditEntry, AuditTrail, RestoreClaim } from '../core/memory/audit';
import {
  type DomainMemory,
  readContactMemory,
  readDomainMemory,
  StateConflictError,
  StateError,
  type StateHead,
} from '../core/memory/state';
import type { StateDamagedError } from '../core/memory/state-header';
import {
  type Lease,
  MAX_LEASE_MS,
  type MemorySink,
  type OpenedState,
  readContacts,
  type SavedInPart,
  StateStore,
  type StateWrite,
} from '../use-cases/state-store';
import {
  BUCKETS,
  type BucketItem,
  bucketItem,
  bucketOf,
  bucketSk,
  checkItemSize,
  type ItemScope,
  itemJson,
  itemKey,
  type Known,
  planAll,
  planChanges,
  readMeta as readMetaItem,
  SHARDS,
  type Stoppable,
  shardPk,
  takeBucket,
} from './dynamodb-buckets';

import {
  beginAuditItem,
  type ClaimTable,
  completeAuditItem,
  endRestoreClaim,
  listAuditItems,
  putRestoreClaim,
  recordAuditItem,
} from './dynamodb-restore-records';
import { META_SORT_KEY, STATE_TABLE_DEFINITION } from './state-table-definition';

const { partitionKey: PK, sortKey: SK } = STATE_TABLE_DEFINITION;
const CONTACT_PREFIX = 'contact#';
/** Shard partitions queried at once: each query answers up to 1 MB, which the SDK makes several times that in objects. */
const READ_CONCURRENCY = 4;
/** BatchWriteItem's limit per call, and calls in flight at once. */
const BATCH = 25;
const WRITE_CONCURRENCY = 16;
/** Tries again for the items a BatchWriteItem left unprocessed (throttled), with full-jitter backoff. */
const UNPROCESSED_RETRIES = 10;
/** DynamoDB's 2 048 bytes a partition key (ServiceQuotas.html), less the room a shard's needs beside the scope (`#15`). */
const MAX_SCOPE_BYTES = 2048 - 3;
/**
 * How long a save keeps its lease from each renewal, and how often it renews while it writes: item
 * writes cannot be conditional (BatchWriteItem), so a save longer than its lease would let another
 * scan claim the generation while this one still writes.
 */
const RENEWED_LEASE_MS = 120_000;
const RENEW_EVERY_MS = 30_000;
/** The lease is `:o`'s on generation `:g`: every write of `#meta` after the claim is conditional on it. */
const HELD = 'generation = :g AND lease_owner = :o';
/**
 * The claim's condition: generation `:g` still stands, and its lease is free, ours, or no lease. A
 * lease further ahead than any is taken for was taken by a clock that ran ahead: lapsed. One whose
 * owner is no text or whose expiry no number is no lease (as the state's read finds it): a damaged
 * lease must not hold the state for good.
 */
const CLAIMABLE =
  '(attribute_not_exists(generation) OR generation = :g) AND ' +
  '(attribute_not_exists(lease_owner) OR lease_owner = :o OR NOT attribute_type(lease_owner, :text) ' +
  'OR NOT attribute_type(lease_expires, :number) OR lease_expires < :now OR lease_expires > :far)';
/**
 * A lease as every claim adds it to #meta (owners are 15 to 27 characters; 64 allowed): a save checks
 * #meta with this room, or one saved within a lease of 400 KB would fail every claim after it.
 */
const LEASE_ROOM = {
  lease_owner: { S: 'o'.repeat(64) },
  lease_expires: { N: String(Number.MAX_SAFE_INTEGER) },
} as const satisfies Record<string, AttributeValue>;
/** Bucket items taken in between two turns of the event loop, so the account's answers keep flowing. */
const YIELD_EVERY = 16;
/**
 * How long a lease's release may take once the run was stopped: well inside the command line's
 * grace (STOP_GRACE_MS, 1.8 s), after which a lease not given up lapses by itself.
 */
export const RELEASE_AFTER_STOP_MS = 1_000;

export { createStateTable, createStateTableInput } from './dynamodb-create-table';

export interface DynamoDbStateStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The account the state belongs to (the reseller base URL, or an account's own scope): its partition. */
  readonly scope: string;
  /** @default Date.now */
  readonly clock?: () => number;
  /**
   * The run's stop (Ctrl-C, SIGTERM): ends every request in flight and every retry's wait. A lease
   * taken is then released within {@link RELEASE_AFTER_STOP_MS}, or left to lapse; a save stopped
   * before its last write (the switch of generation) leaves the generation it read as it was.
   */
  readonly signal?: AbortSignal;
}

/**
 * The state in DynamoDB, as the six primitives of the state protocol (state-store.ts). The
 * account's partition holds a `#meta` item (generation, lease, the account-wide part, the bucket
 * layout), an item per flagged contact, and the audit trail; the domains' memories are in bucket
 * items spread over {@link SHARDS} partitions, read with parallel queries while the account is
 * read, and written only where they changed, in parallel batches. Only the lease holder writes
 * items; the last write moves the generation on and releases the lease, conditional on still
 * holding it.
 */
export class DynamoDbStateStore extends StateStore<Known> implements AuditTrail {
  readonly location: string;
  /** The client, the table and the run's stop; the audit trail and the restore claims are kept there too (dynamodb-restore-records.ts). */
  private readonly db: ClaimTable;
  private readonly at: ItemScope;
  private readonly clock: () => number;
  /** The options of every request: the run's stop ends it. */
  private readonly abort: { abortSignal: AbortSignal } | undefined;

  constructor(options: DynamoDbStateStoreOptions) {
    super();
    if (Buffer.byteLength(options.scope, 'utf8') > MAX_SCOPE_BYTES)
      throw new ConfigError(
        `the reseller base URL is longer than the ${MAX_SCOPE_BYTES} bytes a DynamoDB partition key holds beside a shard number; the state table keeps each account under its base URL`,
      );
    // A base URL never holds '#' (settings refuse a fragment): no account's partition can be another's shard.
    if (options.scope.includes('#'))
      throw new ConfigError(
        'the reseller base URL must not contain "#"; the state table keys shards with it',
      );
    this.clock = options.clock ?? Date.now;
    this.abort = options.signal ? { abortSignal: options.signal } : undefined;
    this.location = `dynamodb:${options.tableName}`;
    this.at = { scope: options.scope, location: this.location, where: `${this.location} (${options.scope})` };
    this.db = { ...this.at, client: options.client, table: options.tableName, signal: options.signal };
  }

  protected async readHead(): Promise<{ opened: OpenedState; known: Known }> {
    const stored: Array<[sk: string, body: string | undefined]> = [];
    const readContactItems = async () => {
      for await (const page of this.pages(this.at.scope, CONTACT_PREFIX))
        for (const item of page) stored.push([item[SK.name]?.S ?? '', item.m?.S]);
    };
    let meta: Record<string, AttributeValue> | undefined;
    // A query, not GetItem: the function's role allows Query, UpdateItem and BatchWriteItem only.
    const readMeta = async () => {
      for await (const page of this.pages(this.at.scope, META_SORT_KEY))
        meta ??= page.find((item) => item[SK.name]?.S === META_SORT_KEY);
    };
    await Promise.all([readMeta(), readContactItems()]);
    const { contacts, ...problems } = readContacts(
      stored.map(([sk, body]) => [sk, sk.slice(CONTACT_PREFIX.length), itemJson(body)]),
    );
    // One that cannot be read is written again at the save: its body stands for none, so the save puts or deletes it.
    const unread = new Set(problems.damaged?.map(([sk]) => sk));
    const bodies = new Map(stored.map(([sk, body]) => [sk, unread.has(sk) ? '' : (body as string)]));
    const { head, generation, lease } = readMetaItem(this.at, meta, contacts);
    const opened: OpenedState = { head, generation, lease, ...problems };
    return { opened, known: { contacts: bodies, dirty: new Set(), stray: [], generation } };
  }

  protected async readMemories(opened: OpenedState, sink: MemorySink, signal?: AbortSignal): Promise<void> {
    const known = this.knownOf(opened);
    const parts = new Uint8Array(BUCKETS);
    known.parts = parts;
    // Before the first save, nothing in the shards was ever committed: it is the first save's to delete.
    if (opened.generation === 0) return;
    const shard = async (n: number) => {
      const pk = shardPk(this.at, n);
      let taken = 0;
      // A bucket's parts come one after the other (their sort keys), to be checked together.
      let run: BucketItem[] = [];
      for await (const page of this.pages(pk, undefined, signal))
        for (const item of page) {
          if (++taken % YIELD_EVERY === 0) await new Promise(setImmediate);
          const found = bucketItem(item);
          if (!found) {
            const sk = item[SK.name]?.S ?? '';
            // Deleted once the next save committed: not in silence, whatever memories it held.
            if (sk.startsWith('b#')) sink.damaged(sk, 'its sort key names no bucket');
            known.stray.push([pk, sk]);
            continue;
          }
          if (run[0] && run[0].bucket !== found.bucket) {
            takeBucket(run, sink, known.dirty, parts);
            run = [];
          }
          run.push(found);
          // In another shard (moved by hand): its memories kept, its bucket written again in its own, it deleted.
          if (found.bucket % SHARDS !== n) {
            known.stray.push([pk, found.sk]);
            known.dirty.add(found.bucket);
          }
        }
      takeBucket(run, sink, known.dirty, parts);
    };
    let next = 0;
    const reader = async () => {
      while (next < SHARDS) await shard(next++);
    };
    await Promise.all(Array.from({ length: READ_CONCURRENCY }, reader));
  }

  async readDomain(opened: OpenedState, key: string): Promise<DomainMemory | undefined> {
    if (opened.generation === 0) return undefined;
    const members = await this.readBucket(bucketOf(key));
    const value = members.get(key);
    // A memory filed in another bucket (the next scan moves it) is not looked for: that would read them all.
    return value === undefined ? undefined : readDomainMemory(value, key, this.at.where);
  }

  async claim(generation: number, lease: Lease): Promise<void> {
    const now = this.clock();
    const update = 'SET generation = if_not_exists(generation, :g), lease_owner = :o, lease_expires = :e';
    await this.conditional(
      this.updateMeta(generation, lease.owner, update, CLAIMABLE, {
        ':e': { N: String(lease.expiresAt) },
        ':now': { N: String(now) },
        ':far': { N: String(now + MAX_LEASE_MS) },
        ':text': { S: 'S' },
        ':number': { S: 'N' },
      }),
      `another scan moved the state on or holds its lease (${this.location}, generation ${generation})`,
    ).catch(async (error: unknown) => {
      // A claim the run's stop cut off may have reached the table: its lease is released at once.
      if (this.db.signal?.aborted) await this.release(generation, lease.owner);
      throw error;
    });
  }

  async save(opened: OpenedState, owner: string, write: StateWrite): Promise<SavedInPart | undefined> {
    const known = this.knownOf(opened);
    const { contacts, ...header } = write.head;
    // #meta as the save leaves it: the lease removed, the next generation and the layout set.
    const [next, layout] = [{ N: String(opened.generation + 1) }, { N: String(BUCKETS) }];
    const h = { S: JSON.stringify(header) };
    const meta = { ...itemKey(this.at.scope, META_SORT_KEY), generation: next, h, layout };
    checkItemSize(this.at, { ...meta, ...LEASE_ROOM });
    const contactWrites = write.all ? this.contactWrites(contacts, known.contacts) : [];
    // Item writes are not conditional (BatchWriteItem cannot be): the lease must still be ours,
    // checked first with its own end (a snooze's 15 s stay 15 s), then made to last.
    const held = (update: string, values?: Record<string, AttributeValue>) =>
      this.conditional(this.updateMeta(opened.generation, owner, update, HELD, values));
    await held('SET lease_owner = :o');
    let renewed = this.clock();
    // Before each batch, once the last renewal is RENEW_EVERY_MS old: the lease never lapses mid-save.
    const keepLease = async () => {
      if (this.clock() - renewed < RENEW_EVERY_MS) return;
      renewed = this.clock();
      await held('SET lease_expires = :e', { ':e': { N: String(renewed + RENEWED_LEASE_MS) } });
    };
    // What a killed first save left goes before this one writes: none of it may be committed with it.
    // Listed now, under the lease, not as this state was read (a snooze reads none; a scan may have
    // read before another first save wrote and was killed).
    if (opened.generation === 0) await this.writeAll(await this.deletesOf(this.shards()), keepLease);
    const { saveBy } = write;
    // A first save (the state read holds no bucket) with a time to keep stops once that time came.
    const first = write.all && saveBy !== undefined && known.parts?.every((parts) => parts === 0);
    const stoppable = first ? ({ stop: () => this.clock() >= saveBy, kept: 0 } as Stoppable) : undefined;
    const writes = write.all
      ? planAll(this.at, known, write.changed, write.all, stoppable)
      : await planChanges(this.at, known, write.changed, (bucket, parts) => this.readBucket(bucket, parts));
    await this.writeAll(writes, keepLease);
    await this.writeAll(contactWrites, keepLease);
    // The layout always, so a #meta without one after a save is damage.
    const commit = 'SET generation = :next, h = :h, layout = :layout REMOVE lease_owner, lease_expires';
    await held(commit, { ':next': next, ':h': h, ':layout': layout });
    // Items read as no bucket stay so, so deleting them needs no lease; if it fails, the next save tries again.
    const stray = known.stray.map(([pk, sk]) => ({ DeleteRequest: { Key: itemKey(pk, sk) } }));
    await this.writeAll(stray).catch(() => undefined);
    return stoppable?.stopped ? { kept: stoppable.kept, of: write.all?.size ?? 0 } : undefined;
  }

  /**
   * Its failure (the lease no longer ours, or the table out of reach) is the base's to ignore. Not
   * ended by the run's stop, which is when a lease is most often given up: bounded instead to
   * {@link RELEASE_AFTER_STOP_MS} from the stop, after which the lease is left to lapse.
   */
  protected async dropLease(generation: number, owner: string): Promise<void> {
    const command = this.updateMeta(generation, owner, 'REMOVE lease_owner, lease_expires', HELD);
    const run = this.db.signal;
    if (!run) return void (await this.db.client.send(command));
    const bound = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const stop = () => {
      timer = setTimeout(() => bound.abort(run.reason), RELEASE_AFTER_STOP_MS).unref();
    };
    if (run.aborted) stop();
    else run.addEventListener('abort', stop, { once: true });
    try {
      await this.db.client.send(command, { abortSignal: bound.signal });
    } finally {
      run.removeEventListener('abort', stop);
      clearTimeout(timer);
    }
  }

  /** Given up at once when `fn` fails. The claim and the release write the lease's attributes of `#meta` only, never `h` or `layout`. */
  async holdDamaged<T>(damaged: StateDamagedError, lease: Lease, fn: () => Promise<T>): Promise<T> {
    if (damaged.item !== META_SORT_KEY || damaged.generation === undefined) throw damaged;
    // Kept once the alert is out, until it lapses: a retry of this run finds the state held.
    return this.leased(damaged.generation, lease, fn);
  }

  // The audit trail and the restore claims, in the account's partition; only a listing ends at the run's stop.
  /** A refusal never pushes out an attempt that reached the reseller. */
  readonly recordAudit = (entry: AuditEntry) => recordAuditItem(this.db, entry);
  /** A restore written ahead (two round trips), then its outcome written over it in place (one, and the trim). */
  readonly beginAudit = (entry: AuditEntry) => beginAuditItem(this.db, entry);
  readonly completeAudit = (ref: string, entry: AuditEntry) => completeAuditItem(this.db, ref, entry);
  /** Newest first; an item that does not parse is left out. */
  readonly listAudit = () => listAuditItems(this.db);
  /** One conditional write in the account's partition. */
  readonly claimRestore = (domain: string, claim: RestoreClaim, now: number) =>
    putRestoreClaim(this.db, domain, claim, now);
  readonly releaseRestore = (domain: string, owner: string) => endRestoreClaim(this.db, domain, owner);

  /** Deletes this account's state and audit trail (its partition and its shards); returns how many items went. */
  async clear(): Promise<number> {
    const deletes = await this.deletesOf([this.at.scope, ...this.shards()]);
    await this.writeAll(deletes);
    return deletes.length;
  }

  /** The partition keys of this account's shards. */
  private shards(): string[] {
    return Array.from({ length: SHARDS }, (_, n) => `${this.at.scope}#${n}`);
  }

  /** A delete of every item the partitions `pks` hold now. */
  private async deletesOf(pks: readonly string[]): Promise<WriteRequest[]> {
    const deletes: WriteRequest[] = [];
    for (const pk of pks)
      for await (const page of this.pages(pk))
        for (const item of page)
          deletes.push({ DeleteRequest: { Key: itemKey(pk, item[SK.name]?.S ?? '') } });
    return deletes;
  }

  /** One bucket's stored members, by key (each as stored); `parts` learns how many items it had. */
  private async readBucket(bucket: number, parts?: Uint8Array): Promise<Map<string, unknown>> {
    const run: BucketItem[] = [];
    for await (const page of this.pages(shardPk(this.at, bucket), bucketSk(bucket)))
      for (const item of page) {
        const found = bucketItem(item);
        if (found?.bucket === bucket) run.push(found);
      }
    const members = new Map<string, unknown>();
    const sink: MemorySink = {
      memory: (key, value) => !members.has(key) && members.set(key, value) !== undefined,
      // A link's step must not write a damaged (or torn) bucket over: the scan reports it before it heals it.
      damaged: (sk, damage) => {
        throw new StateError(
          `the state item ${sk} in ${this.at.where} cannot be read (${damage}); the next scan reports it and writes it again`,
        );
      },
    };
    takeBucket(run, sink, new Set(), parts);
    return members;
  }

  private contactWrites(
    contacts: StateHead['contacts'],
    before: ReadonlyMap<string, string>,
  ): WriteRequest[] {
    const writes: WriteRequest[] = [];
    const after = new Set<string>();
    for (const [handle, memory] of Object.entries(contacts)) {
      const sk = `${CONTACT_PREFIX}${handle}`;
      const body = JSON.stringify(readContactMemory(memory, handle, this.at.where));
      after.add(sk);
      if (before.get(sk) === body) continue;
      const item = { ...itemKey(this.at.scope, sk), m: { S: body } };
      checkItemSize(this.at, item);
      writes.push({ PutRequest: { Item: item } });
    }
    for (const sk of before.keys())
      if (!after.has(sk)) writes.push({ DeleteRequest: { Key: itemKey(this.at.scope, sk) } });
    return writes;
  }

  /** Every item of partition `pk` (those whose sort key starts with `prefix`), page by page, consistently read. */
  private async *pages(
    pk: string,
    prefix?: string,
    signal?: AbortSignal,
  ): AsyncGenerator<Array<Record<string, AttributeValue>>> {
    const by =
      prefix === undefined ? undefined : { name: { '#sk': SK.name }, value: { ':prefix': { S: prefix } } };
    const input: QueryCommandInput = {
      TableName: this.db.table,
      KeyConditionExpression: by ? '#pk = :pk AND begins_with(#sk, :prefix)' : '#pk = :pk',
      ExpressionAttributeNames: { '#pk': PK.name, ...by?.name },
      ExpressionAttributeValues: { ':pk': { S: pk }, ...by?.value },
      ConsistentRead: true,
    };
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      if (signal?.aborted) return;
      const query = new QueryCommand({ ...input, ExclusiveStartKey: startKey });
      const page = await this.wrap('read the state', () => this.db.client.send(query, this.abort));
      yield page.Items ?? [];
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  /**
   * Writes every request, {@link BATCH} a call and {@link WRITE_CONCURRENCY} calls at once, taking
   * the next batch from `requests` only when a writer is free: a first save of a million domains
   * holds a few hundred items at a time, not all of them. The first failure stops the others.
   * `beforeBatch` runs before each batch is sent (a long save renews its lease there).
   */
  private async writeAll(requests: Iterable<WriteRequest>, beforeBatch?: () => Promise<void>): Promise<void> {
    const batches = batchesOf(requests);
    let failure: { error: unknown } | undefined;
    const writer = async () => {
      for (let next = batches.next(); !failure && !next.done; next = batches.next())
        try {
          await beforeBatch?.();
          await this.batchWrite(next.value);
        } catch (error) {
          failure ??= { error };
        }
    };
    await Promise.all(Array.from({ length: WRITE_CONCURRENCY }, writer));
    if (failure) throw failure.error;
  }

  /** One BatchWriteItem, its unprocessed (throttled) items tried again after a full-jitter backoff. */
  private async batchWrite(requests: WriteRequest[]): Promise<void> {
    let pending = requests;
    await retry(
      async () => {
        const batch = pending;
        const out = await this.wrap('write the state', () =>
          this.db.client.send(
            new BatchWriteItemCommand({ RequestItems: { [this.db.table]: batch } }),
            this.abort,
          ),
        );
        pending = out.UnprocessedItems?.[this.db.table] ?? [];
        if (pending.length > 0)
          throw new UnprocessedItemsError(
            `${this.location}: ${pending.length} state items stayed unprocessed after ${UNPROCESSED_RETRIES} retries (throttled?)`,
          );
      },
      {
        retries: UNPROCESSED_RETRIES,
        minTimeout: 100,
        maxTimeout: 3_000,
        randomize: true,
        signal: this.db.signal,
        shouldRetry: ({ error }) => error instanceof UnprocessedItemsError,
      },
    );
  }

  /** An UpdateItem of `#meta` made on generation `:g` and owner `:o`, as the lease's conditions name them. */
  private updateMeta(
    generation: number,
    owner: string,
    update: string,
    condition: string,
    values: Record<string, AttributeValue> = {},
  ): UpdateItemCommand {
    return new UpdateItemCommand({
      TableName: this.db.table,
      Key: itemKey(this.at.scope, META_SORT_KEY),
      UpdateExpression: update,
      ConditionExpression: condition,
      ExpressionAttributeValues: { ':g': { N: String(generation) }, ':o': { S: owner }, ...values },
    });
  }

  private async conditional(
    command: UpdateItemCommand,
    conflict = `the state lease on ${this.location} was lost before the state was saved`,
  ): Promise<void> {
    try {
      await this.db.client.send(command, this.abort);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw new StateConflictError(conflict, { cause: error });
      throw new StateError(`${this.location}: ${errorLine(error)}`, { cause: error });
    }
  }

  private async wrap<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw new StateError(`could not ${what} in ${this.location}: ${errorLine(error)}`, { cause: error });
    }
  }
}

/** `requests` {@link BATCH} at a time, taken only as they are asked for. */
function* batchesOf(requests: Iterable<WriteRequest>): Generator<WriteRequest[]> {
  const batch: WriteRequest[] = [];
  for (const request of requests) if (batch.push(request) === BATCH) yield batch.splice(0);
  if (batch.length > 0) yield batch;
}

/** Items a BatchWriteItem left unprocessed (throttled): tried again, and the last try's error if they stay so. */
class UnprocessedItemsError extends StateError {
  override readonly name: string = 'UnprocessedItemsError';
}
