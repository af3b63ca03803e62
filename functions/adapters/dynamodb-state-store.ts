import {
  type AttributeValue,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  QueryCommand,
  type QueryCommandInput,
  UpdateContinuousBackupsCommand,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { ConfigError } from '../core/base/errors';
import { AUDIT_MAX_ENTRIES, type AuditEntry, type AuditTrail, parseAuditEntries } from '../core/memory/audit';
import {
  ContactMemorySchema,
  type DomainMemory,
  EMPTY_STATE_HEADER,
  memoryJson,
  nextFromState,
  priorStateOf,
  readStoredMemory,
  ScanMemory,
  type ScanState,
  StateConflictError,
  StateError,
  type StateHead,
  StateHeaderSchema,
  statePath,
} from '../core/memory/state';
import { shownCut, storedContactKey, storedDomainKey } from '../core/memory/state-bounds';
import { NEXT, stableKeyHash } from '../core/memory/state-table';
import { type HeapPacer, NO_PACE } from './heap-pacer';
import {
  type Lease,
  MAX_LEASE_MS,
  type NextToSave,
  type OpenedState,
  type StateStore,
  type StoredState,
} from './state-store';
import { META_SORT_KEY, STATE_TABLE_DEFINITION } from './state-table-definition';

const { partitionKey: PK, sortKey: SK } = STATE_TABLE_DEFINITION;
/** Items of a state written before domains were kept in buckets (one item per domain, in the account's partition). */
const LEGACY_PREFIX = 'domain#';
const CONTACT_PREFIX = 'contact#';
/**
 * In the account's partition of a bucketed state: an item that versions from before buckets read as
 * a domain whose memory does not parse, so they refuse the state (naming `!layout`) instead of
 * taking its domains for gone. Newer versions pass over it.
 */
const LAYOUT_MARKER = `${LEGACY_PREFIX}!layout`;
/**
 * Restore attempts: `audit#seq#<16 digits>` in the account's partition, the entry in attribute `a`,
 * numbered in order of arrival by the counter item `audit-counter` (attribute `n`); no scan reads or
 * writes them (open() reads the #meta item and the contacts by their keys and prefixes only). Items
 * of older versions, `audit#<ISO time>#<random>`, sort before every numbered one, as they arrived
 * before them.
 */
const AUDIT_PREFIX = 'audit#';
const AUDIT_SEQUENCE_PREFIX = `${AUDIT_PREFIX}seq#`;
const AUDIT_COUNTER_SORT_KEY = 'audit-counter';
/**
 * Partitions the domains are spread over: `<base URL>#0` … `#15`. One partition key serves at most
 * 1 000 write and 3 000 read units a second; a first scan of a million domains under one key would
 * take longer than a Lambda may run. Sixteen let the reads and writes of a large account run in
 * parallel within those limits; the account's own partition keeps the `#meta` item (generation,
 * lease), the contacts and the audit trail.
 */
export const SHARDS = 16;
/**
 * Domains per bucket item. A write unit is 1 KB, and a domain's memory about 270 bytes: one item
 * per domain pays a whole unit for a quarter of it, and makes a first scan of a million domains a
 * million writes. Buckets of about 8 domains (2 KB, 2 write units) make it 125 000 writes of a
 * third of the units; a day's few changed domains still touch about as many items as before.
 * The bucket count is a power of two chosen at the first save and doubled (all items written anew
 * under the next count, switched to in one conditional write) when the account outgrows it.
 */
const BUCKET_TARGET = 8;
const BUCKET_MAX = 16;
/** A bucket whose memories outgrow this is written as several parts (`.1`, `.2`…), far below the 400 KB limit. */
const PART_BYTES = 300 * 1024;
/**
 * Shard partitions queried at once. Each query answers up to 1 MB at a time, which the SDK turns
 * into objects several times that size: four at once read a partition's 3 000 read units a second
 * (12 MB/s) each, far more than a scan needs, within a few tens of MB.
 */
const READ_CONCURRENCY = 4;
/** BatchWriteItem's limit per call. */
const BATCH = 25;
/** BatchWriteItem calls in flight at once. */
const WRITE_CONCURRENCY = 16;
/** Tries for the items a BatchWriteItem left unprocessed (throttled), with full-jitter backoff. */
const UNPROCESSED_RETRIES = 10;
const BACKOFF_MS = 50;
const BACKOFF_CAP_MS = 3_000;
/** DynamoDB's limits (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html). */
const MAX_ITEM_BYTES = 400 * 1024;
const MAX_SORT_KEY_BYTES = 1024;
const MAX_PARTITION_KEY_BYTES = 2048;
/** Room a shard's partition key needs beside the base URL (`#15`). */
const SHARD_SUFFIX_BYTES = 3;

const BUCKET_SK = /^b(\d{1,2})#([0-9a-f]{1,8})(?:\.(\d{1,4}))?$/;

/** The sort key of part `part` of bucket `bucket` under 2^`exponent` buckets. */
function bucketSk(exponent: number, bucket: number, part = 0): string {
  const digits = Math.max(1, Math.ceil(exponent / 4));
  return `b${exponent}#${bucket.toString(16).padStart(digits, '0')}${part > 0 ? `.${part}` : ''}`;
}

/** The bucket exponent for `count` domains at the first save: about {@link BUCKET_TARGET} a bucket. */
function initialExponent(count: number): number {
  let exponent = 0;
  while ((1 << exponent) * BUCKET_TARGET < count) exponent++;
  return exponent;
}

/** CreateTable input for the state table, from the one definition the stack also uses. */
export function createStateTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    AttributeDefinitions: [
      { AttributeName: PK.name, AttributeType: PK.type },
      { AttributeName: SK.name, AttributeType: SK.type },
    ],
    KeySchema: [
      { AttributeName: PK.name, KeyType: 'HASH' },
      { AttributeName: SK.name, KeyType: 'RANGE' },
    ],
    BillingMode: STATE_TABLE_DEFINITION.billingMode,
    // SSEType KMS without a key id: the AWS-managed key, as the stack's TableEncryption.AWS_MANAGED.
    SSESpecification: { Enabled: true, SSEType: 'KMS' },
  };
}

/**
 * Creates the state table (`sentinel state init dynamodb:TABLE`) and turns on point-in-time
 * recovery. Returns what could not be done (an emulator may not know continuous backups).
 */
export async function createStateTable(client: DynamoDBClient, tableName: string): Promise<string[]> {
  const notes: string[] = [];
  try {
    await client.send(new CreateTableCommand(createStateTableInput(tableName)));
  } catch (error) {
    throw new StateError(`could not create the DynamoDB table ${tableName}: ${describe(error)}`, {
      cause: error,
    });
  }
  if (STATE_TABLE_DEFINITION.pointInTimeRecovery) {
    try {
      await client.send(
        new UpdateContinuousBackupsCommand({
          TableName: tableName,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        }),
      );
    } catch (error) {
      notes.push(`point-in-time recovery not turned on: ${describe(error)}`);
    }
  }
  return notes;
}

const describe = (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`;
/** Bucket items taken in between two turns of the event loop (about 1 ms of work). */
const YIELD_EVERY = 16;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface DynamoDbStateStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The account the state belongs to (the reseller base URL): its partition. */
  readonly scope: string;
  /** @default Date.now */
  readonly clock?: () => number;
  /** BatchWriteItem calls in flight at once. @default 16 */
  readonly writeConcurrency?: number;
  /** Shard partitions queried at once. @default 4 */
  readonly readConcurrency?: number;
  /** Called after each query page taken in and each batch written (see heap-pacer.ts). @default none */
  readonly pace?: HeapPacer;
}

/** What the store learnt opening a state, for the writes that follow. */
interface Opened {
  /** The bucket exponent in force; null for a state of one item per domain (or none yet). */
  readonly exponent: number | null;
  /** Contact items as loaded (sort key → body), to write only what changed. */
  readonly contacts: ReadonlyMap<string, string>;
  readonly markerFound: boolean;
  /** Filled by readDomains. */
  read?: DomainsRead;
}

interface DomainsRead {
  readonly memory: ScanMemory;
  /** Parts loaded per bucket in force (0: no item). */
  readonly parts: Uint8Array;
  /** Buckets whose items must be written again whatever changed (a duplicate or misfiled memory). */
  readonly dirty: Set<number>;
  /** Items outside the layout in force (an unfinished resize, a finished migration): deleted after the next save. */
  readonly garbage: Array<readonly [string, string]>;
  /** Per-domain items of a state from before buckets, in force: deleted once the buckets are saved. */
  readonly legacy: string[];
  markerFound: boolean;
}

/**
 * The state in DynamoDB. The account's partition (its base URL) holds a `#meta` item with the
 * generation, the lease, the account-wide fields and the bucket layout, an item per flagged
 * contact, and the audit trail; the domains' memories are in bucket items spread over
 * {@link SHARDS} partitions, so a scan reads them with parallel queries and writes only the
 * buckets that changed, in parallel batches. Only the lease holder writes items; the last write
 * moves the generation on and releases the lease, conditional on still holding it.
 *
 * A state of one item per domain (before buckets) is read as it is and moved into buckets by its
 * next save.
 */
export class DynamoDbStateStore implements StateStore, AuditTrail {
  readonly location: string;
  private readonly client: DynamoDBClient;
  private readonly table: string;
  private readonly scope: string;
  private readonly clock: () => number;
  private readonly writeConcurrency: number;
  private readonly readConcurrency: number;
  private readonly pace: HeapPacer;
  private readonly where: string;
  private readonly opened = new WeakMap<OpenedState, Opened>();
  private readonly loaded = new WeakMap<StoredState, OpenedState>();

  constructor(options: DynamoDbStateStoreOptions) {
    if (Buffer.byteLength(options.scope, 'utf8') > MAX_PARTITION_KEY_BYTES - SHARD_SUFFIX_BYTES)
      throw new ConfigError(
        `the reseller base URL is longer than the ${MAX_PARTITION_KEY_BYTES - SHARD_SUFFIX_BYTES} bytes a DynamoDB partition key holds beside a shard number; the state table keeps each account under its base URL`,
      );
    // A base URL never holds '#' (settings refuse a fragment): no account's partition can be another's shard.
    if (options.scope.includes('#'))
      throw new ConfigError(
        'the reseller base URL must not contain "#"; the state table keys shards with it',
      );
    this.client = options.client;
    this.table = options.tableName;
    this.scope = options.scope;
    this.clock = options.clock ?? Date.now;
    this.writeConcurrency = Math.max(1, options.writeConcurrency ?? WRITE_CONCURRENCY);
    this.readConcurrency = Math.max(1, options.readConcurrency ?? READ_CONCURRENCY);
    this.pace = options.pace ?? NO_PACE;
    this.location = `dynamodb:${options.tableName}`;
    this.where = `${this.location} (${this.scope})`;
  }

  async open(): Promise<OpenedState> {
    const [metaItems, contactItems] = await Promise.all([
      this.collect({ sk: META_SORT_KEY }),
      this.collect({ prefix: CONTACT_PREFIX }),
    ]);
    const meta = metaItems[0];
    const generation = meta?.generation?.N ? Number(meta.generation.N) : 0;
    const lease =
      meta?.lease_owner?.S && meta.lease_expires?.N
        ? { owner: meta.lease_owner.S, expiresAt: Number(meta.lease_expires.N) }
        : null;
    const exponent = meta?.layout?.N !== undefined ? Number(meta.layout.N) : null;
    if (exponent !== null && !(Number.isInteger(exponent) && exponent >= 0 && exponent <= 28))
      throw new StateError(
        `the state in ${this.where} names a bucket layout it cannot have (${exponent}); reset the state`,
      );
    const header = meta?.h?.S ? StateHeaderSchema.safeParse(this.parse(META_SORT_KEY, meta.h.S)) : null;
    if (header && !header.success) {
      const issue = header.error.issues[0];
      throw new StateError(
        `the state in ${this.where} cannot be used (${issue ? `${statePath(issue.path)}: ${issue.message}` : 'invalid'}); correct that value, or reset the state`,
      );
    }
    const contactBodies = new Map<string, string>();
    // Keys are data: an object without a prototype, so no key can reach JavaScript's own machinery.
    const contacts: Record<string, unknown> = Object.create(null);
    for (const item of contactItems) {
      const sk = item[SK.name]?.S;
      const body = item.m?.S;
      if (!sk || body === undefined) continue;
      contactBodies.set(sk, body);
      const stored = sk.slice(CONTACT_PREFIX.length);
      const parsed = ContactMemorySchema.safeParse(this.parse(sk, body));
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new StateError(
          `the state in ${this.where} cannot be used (${statePath(['contacts', stored, ...(issue?.path ?? [])])}: ${issue?.message ?? 'invalid'}); correct that value, point --state elsewhere, or remove the state to start over`,
        );
      }
      const key = storedContactKey(stored);
      if (!(key in contacts)) contacts[key] = parsed.data;
    }
    const base = header?.success ? header.data : { ...EMPTY_STATE_HEADER, problem_keys: [] };
    const head = { ...base, contacts } as StateHead;
    const opened: OpenedState = { head, generation, lease };
    this.opened.set(opened, { exponent, contacts: contactBodies, markerFound: false });
    return opened;
  }

  async readDomains(opened: OpenedState, memory: ScanMemory, signal?: AbortSignal): Promise<void> {
    const known = this.internals(opened);
    const exponent = known.exponent;
    const read: DomainsRead = {
      memory,
      parts: new Uint8Array(exponent === null ? 0 : 1 << exponent),
      dirty: new Set(),
      garbage: [],
      legacy: [],
      markerFound: false,
    };
    const table = memory.table;
    const legacy = async () => {
      for await (const page of this.pages({ prefix: LEGACY_PREFIX }, signal)) {
        for (const item of page) {
          const sk = item[SK.name]?.S ?? '';
          if (sk === LAYOUT_MARKER) {
            read.markerFound = true;
            continue;
          }
          if (exponent !== null) {
            read.garbage.push([this.scope, sk]);
            continue;
          }
          const body = item.m?.S;
          if (body === undefined) continue;
          const stored = sk.slice(LEGACY_PREFIX.length);
          read.legacy.push(sk);
          table.addPrior(
            storedDomainKey(stored),
            readStoredMemory(this.parse(sk, body), stored, this.where),
            true,
          );
        }
      }
    };
    const shard = async (n: number) => {
      const pk = `${this.scope}#${n}`;
      for await (const page of this.pages({ pk }, signal)) {
        this.pace();
        let sinceYield = 0;
        for (const item of page) {
          // A page of a million-domain state takes tens of milliseconds to take in: let the
          // account's answers that arrived meanwhile through first, so its requests keep flowing
          // and the state is read in the time the account read spends waiting.
          if (++sinceYield === YIELD_EVERY) {
            sinceYield = 0;
            await new Promise(setImmediate);
          }
          const sk = item[SK.name]?.S ?? '';
          const match = BUCKET_SK.exec(sk);
          const body = item.m?.S;
          if (!match || exponent === null || Number(match[1]) !== exponent || body === undefined) {
            read.garbage.push([pk, sk]);
            continue;
          }
          const bucket = Number.parseInt(match[2] as string, 16);
          const part = Number(match[3] ?? 0);
          if (bucket >= read.parts.length || bucket % SHARDS !== n) {
            read.garbage.push([pk, sk]);
            continue;
          }
          read.parts[bucket] = Math.max(read.parts[bucket] as number, Math.min(part + 1, 255));
          const members = this.parse(sk, body);
          if (typeof members !== 'object' || members === null || Array.isArray(members))
            throw new StateError(
              `the state item ${sk} in ${this.where} is not a set of domain memories; reset the state`,
            );
          const mask = read.parts.length - 1;
          for (const [stored, value] of Object.entries(members)) {
            const key = storedDomainKey(stored);
            // A memory filed in the wrong bucket is written to its own (and this bucket without it);
            // a second memory of a key is dropped the same way.
            const misfiled = (stableKeyHash(key) & mask) !== bucket;
            if (!table.addPrior(key, readStoredMemory(value, stored, this.where), misfiled) || misfiled)
              read.dirty.add(bucket);
          }
        }
      }
    };
    let nextShard = 0;
    const reader = async () => {
      while (nextShard < SHARDS) await shard(nextShard++);
    };
    await Promise.all([legacy(), ...Array.from({ length: Math.min(SHARDS, this.readConcurrency) }, reader)]);
    known.read = read;
  }

  async claim(generation: number, lease: Lease): Promise<void> {
    await this.conditional(
      new UpdateItemCommand({
        TableName: this.table,
        Key: this.key(META_SORT_KEY),
        UpdateExpression:
          'SET generation = if_not_exists(generation, :g), lease_owner = :o, lease_expires = :e',
        // A lease further ahead than any is taken for was taken by a clock that ran ahead: lapsed.
        ConditionExpression:
          '(attribute_not_exists(generation) OR generation = :g) AND ' +
          '(attribute_not_exists(lease_owner) OR lease_owner = :o OR lease_expires < :now OR lease_expires > :far)',
        ExpressionAttributeValues: {
          ':g': { N: String(generation) },
          ':o': { S: lease.owner },
          ':e': { N: String(lease.expiresAt) },
          ':now': { N: String(this.clock()) },
          ':far': { N: String(this.clock() + MAX_LEASE_MS) },
        },
      }),
      `another scan moved the state on or holds its lease (${this.location}, generation ${generation})`,
    );
  }

  async saveNext(next: NextToSave, opened: OpenedState, owner: string): Promise<void> {
    const known = this.internals(opened);
    const { contacts, ...header } = next.head;
    const contactWrites = this.contactWrites(contacts, known.contacts);
    const headerJson = JSON.stringify(header);
    this.checkItemSize(META_SORT_KEY, headerJson);
    const read = next.memory ? known.read : undefined;
    if (next.memory && read?.memory !== next.memory)
      throw new StateError(`${this.location}: the memory to save was not read from this state`);

    await this.ensureLease(opened.generation, owner);
    let exponent = known.exponent;
    let cleanup: Iterable<WriteRequest> = [];
    if (read) {
      const plan = this.plan(read, known.exponent);
      exponent = plan.exponent;
      const written = new Uint8Array(1 << plan.exponent);
      await this.writeAll(this.bucketWrites(read, plan.exponent, plan.selected, plan.resized, written));
      if (!read.markerFound)
        await this.writeAll([
          { PutRequest: { Item: { ...this.key(LAYOUT_MARKER), m: { S: MARKER_BODY } } } },
        ]);
      cleanup = this.garbageWrites(read, known.exponent, plan.exponent, written, plan.resized);
    }
    await this.writeAll(contactWrites);

    await this.conditional(
      new UpdateItemCommand({
        TableName: this.table,
        Key: this.key(META_SORT_KEY),
        UpdateExpression: `SET generation = :next, h = :h${exponent !== null ? ', layout = :layout' : ''} REMOVE lease_owner, lease_expires`,
        ConditionExpression: 'generation = :g AND lease_owner = :o',
        ExpressionAttributeValues: {
          ':g': { N: String(opened.generation) },
          ':next': { N: String(opened.generation + 1) },
          ':o': { S: owner },
          ':h': { S: headerJson },
          ...(exponent !== null ? { ':layout': { N: String(exponent) } } : {}),
        },
      }),
      `the state lease on ${this.location} was lost before the state was saved`,
    );
    // Items of the layout left behind: never read again (the generation moved on under another
    // layout), so deleting them needs no lease. If it fails, the next save finds them and tries again.
    await this.writeAll(cleanup).catch(() => undefined);
  }

  async readDomain(opened: OpenedState, key: string): Promise<DomainMemory | undefined> {
    const exponent = this.internals(opened).exponent;
    if (exponent === null) {
      // One item per domain (a state from before buckets), under its key.
      const sk = `${LEGACY_PREFIX}${key}`;
      for await (const page of this.pages({ sk }))
        for (const item of page)
          if (item.m?.S !== undefined) return readStoredMemory(this.parse(sk, item.m.S), key, this.where);
      return undefined;
    }
    const bucket = stableKeyHash(key) & ((1 << exponent) - 1);
    for await (const page of this.pages({ pk: this.shardPk(bucket), prefix: bucketSk(exponent, bucket) }))
      for (const item of page) {
        const sk = item[SK.name]?.S ?? '';
        const match = BUCKET_SK.exec(sk);
        const body = item.m?.S;
        if (!match || Number.parseInt(match[2] as string, 16) !== bucket || body === undefined) continue;
        const members = this.parse(sk, body) as Record<string, unknown>;
        for (const [stored, value] of Object.entries(members ?? {}))
          if (storedDomainKey(stored) === key) return readStoredMemory(value, stored, this.where);
      }
    // A memory filed in another bucket (the next scan moves it) is not looked for: that would read them all.
    return undefined;
  }

  async changeDomain(
    key: string,
    update: (memory: DomainMemory | undefined) => DomainMemory,
    opened: OpenedState,
    owner: string,
  ): Promise<void> {
    const known = this.internals(opened);
    const exponent = known.exponent;
    const whole = async () => {
      // Read the state whole and save it: a state from before buckets moves into them.
      const memory = new ScanMemory();
      await this.readDomains(opened, memory);
      const table = memory.table;
      for (let id = 0; id < table.size; id++) if (table.hasPrior(id)) table.setNext(id, NEXT.prior);
      const id = table.idOf(key);
      table.setNext(id, NEXT.full, update(table.priorMemory(id)));
      table.markChanged(memoryJson);
      await this.saveNext({ head: opened.head, memory }, opened, owner);
    };
    if (exponent === null) return whole();
    // One bucket: read it, change the one memory, write it back.
    const memory = new ScanMemory();
    const table = memory.table;
    const bucket = stableKeyHash(key) & ((1 << exponent) - 1);
    const read: DomainsRead = {
      memory,
      parts: new Uint8Array(1 << exponent),
      dirty: new Set([bucket]),
      garbage: [],
      legacy: [],
      markerFound: true,
    };
    const pk = this.shardPk(bucket);
    for await (const page of this.pages({ pk, prefix: bucketSk(exponent, bucket) })) {
      for (const item of page) {
        const sk = item[SK.name]?.S ?? '';
        const match = BUCKET_SK.exec(sk);
        const body = item.m?.S;
        if (!match || Number.parseInt(match[2] as string, 16) !== bucket || body === undefined) continue;
        read.parts[bucket] = Math.max(read.parts[bucket] as number, Number(match[3] ?? 0) + 1);
        const members = this.parse(sk, body) as Record<string, unknown>;
        for (const [stored, value] of Object.entries(members ?? {})) {
          const other = storedDomainKey(stored);
          // A memory filed in another bucket would be lost by writing this one alone.
          if ((stableKeyHash(other) & ((1 << exponent) - 1)) !== bucket) return whole();
          table.addPrior(other, readStoredMemory(value, stored, this.where));
        }
      }
    }
    for (let id = 0; id < table.size; id++) if (table.hasPrior(id)) table.setNext(id, NEXT.prior);
    const id = table.idOf(key);
    table.setNext(id, NEXT.full, update(table.priorMemory(id)));
    table.markChanged(memoryJson);
    const { contacts: _contacts, ...header } = opened.head;
    await this.ensureLease(opened.generation, owner);
    await this.writeAll(
      this.bucketWrites(read, exponent, oneBucket(exponent, bucket), false, new Uint8Array(1 << exponent)),
    );
    await this.conditional(
      new UpdateItemCommand({
        TableName: this.table,
        Key: this.key(META_SORT_KEY),
        UpdateExpression: 'SET generation = :next, h = :h REMOVE lease_owner, lease_expires',
        ConditionExpression: 'generation = :g AND lease_owner = :o',
        ExpressionAttributeValues: {
          ':g': { N: String(opened.generation) },
          ':next': { N: String(opened.generation + 1) },
          ':o': { S: owner },
          ':h': { S: JSON.stringify(header) },
        },
      }),
      `the state lease on ${this.location} was lost before the state was saved`,
    );
  }

  async release(generation: number, owner: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.key(META_SORT_KEY),
          UpdateExpression: 'REMOVE lease_owner, lease_expires',
          ConditionExpression: 'generation = :g AND lease_owner = :o',
          ExpressionAttributeValues: { ':g': { N: String(generation) }, ':o': { S: owner } },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return; // not ours any more: nothing to give up
      throw new StateError(`could not release the state lease on ${this.location}: ${describe(error)}`, {
        cause: error,
      });
    }
  }

  async load(): Promise<StoredState> {
    const opened = await this.open();
    const memory = new ScanMemory();
    await this.readDomains(opened, memory);
    const stored: StoredState = {
      state: priorStateOf(opened.head, memory),
      generation: opened.generation,
      lease: opened.lease,
    };
    this.loaded.set(stored, opened);
    return stored;
  }

  async save(state: ScanState, loaded: StoredState, owner: string): Promise<void> {
    const opened = this.loaded.get(loaded);
    const read = opened ? this.opened.get(opened)?.read : undefined;
    if (!opened || !read) throw new StateError(`${this.location}: save() takes a state this store loaded`);
    nextFromState(read.memory, state.domains);
    const { domains: _domains, ...head } = state;
    await this.saveNext({ head, memory: read.memory }, opened, owner);
  }

  /**
   * Adds a restore attempt as an item of its own (UpdateItems: the actions the state store is
   * granted), then deletes the oldest beyond AUDIT_MAX_ENTRIES. Ordered by arrival, never by the
   * time in the entry: keyed by that clock, an attempt recorded after it stepped back (an NTP
   * correction, another function's clock) sorted as the oldest and was trimmed the moment it was
   * written. The atomic counter cannot go backwards, also between two functions at once.
   */
  async recordAudit(entry: AuditEntry): Promise<void> {
    const counted = await this.wrap('number the restore attempt', () =>
      this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.key(AUDIT_COUNTER_SORT_KEY),
          UpdateExpression: 'ADD n :one',
          ExpressionAttributeValues: { ':one': { N: '1' } },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    const sequence = Number(counted.Attributes?.n?.N);
    if (!Number.isSafeInteger(sequence) || sequence < 1)
      throw new StateError(
        `could not number the restore attempt in ${this.location}: the counter ${AUDIT_COUNTER_SORT_KEY} holds ${JSON.stringify(counted.Attributes?.n?.N ?? null)}`,
      );
    const sk = `${AUDIT_SEQUENCE_PREFIX}${String(sequence).padStart(16, '0')}`;
    await this.wrap('keep the restore attempt', () =>
      this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.key(sk),
          UpdateExpression: 'SET a = :a',
          ExpressionAttributeValues: { ':a': { S: JSON.stringify(entry) } },
        }),
      ),
    );
    const keys: Array<Record<string, AttributeValue>> = [];
    for await (const item of this.auditItems(true)) keys.push(item);
    await this.writeAll(
      keys.slice(AUDIT_MAX_ENTRIES).map((Key): WriteRequest => ({ DeleteRequest: { Key } })),
    );
  }

  /** The restore attempts kept, newest first; an item that does not parse is left out. */
  async listAudit(): Promise<AuditEntry[]> {
    const values: unknown[] = [];
    for await (const item of this.auditItems(false)) {
      try {
        values.push(JSON.parse(item.a?.S ?? ''));
      } catch {
        // Not JSON: not an entry this tool wrote; left out.
      }
      if (values.length >= AUDIT_MAX_ENTRIES) break;
    }
    return parseAuditEntries(values);
  }

  /** The audit items of this account, newest first (only the keys when `keysOnly`). */
  private async *auditItems(keysOnly: boolean): AsyncGenerator<Record<string, AttributeValue>> {
    for await (const page of this.pages({ prefix: AUDIT_PREFIX, keysOnly, newestFirst: true })) yield* page;
  }

  /**
   * Deletes this account's state and audit trail (every item of its partition and of its shards);
   * returns how many items went.
   */
  async clear(): Promise<number> {
    let count = 0;
    const keys = async function* (this: DynamoDbStateStore): AsyncGenerator<WriteRequest> {
      for (const pk of [this.scope, ...Array.from({ length: SHARDS }, (_, n) => `${this.scope}#${n}`)])
        for await (const page of this.pages({ pk, keysOnly: true }))
          for (const Key of page) {
            count++;
            yield { DeleteRequest: { Key } };
          }
    }.call(this);
    const batch: WriteRequest[] = [];
    for await (const request of keys) batch.push(request);
    await this.writeAll(batch);
    return count;
  }

  /** Which buckets to write under which exponent: all of them after a resize or a migration. */
  private plan(
    read: DomainsRead,
    current: number | null,
  ): { exponent: number; resized: boolean; selected: Uint8Array } {
    const table = read.memory.table;
    let count = 0;
    for (let id = 0; id < table.size; id++) if (table.nextKind(id) !== NEXT.none) count++;
    let exponent = current ?? initialExponent(count);
    while (count > BUCKET_MAX * (1 << exponent)) exponent++;
    const resized = exponent !== current;
    const selected = new Uint8Array(1 << exponent);
    if (resized) selected.fill(1);
    else {
      const mask = selected.length - 1;
      for (let id = 0; id < table.size; id++)
        if (table.isDirty(id)) selected[table.bucketHash(id) & mask] = 1;
      for (const bucket of read.dirty) selected[bucket] = 1;
    }
    return { exponent, resized, selected };
  }

  /**
   * The writes of the selected buckets, made one bucket at a time as the writers ask for them:
   * each bucket's next memories as one item (or parts), or deletes for a bucket left empty and for
   * parts no longer needed.
   */
  private *bucketWrites(
    read: DomainsRead,
    exponent: number,
    selected: Uint8Array,
    resized: boolean,
    written: Uint8Array,
  ): Generator<WriteRequest> {
    const table = read.memory.table;
    const buckets = 1 << exponent;
    const mask = buckets - 1;
    // Members of each selected bucket, by a counting sort of the domain numbers.
    const starts = new Uint32Array(buckets + 1);
    for (let id = 0; id < table.size; id++) {
      if (table.nextKind(id) === NEXT.none) continue;
      const bucket = table.bucketHash(id) & mask;
      if (selected[bucket]) (starts[bucket + 1] as number)++;
    }
    for (let b = 0; b < buckets; b++) starts[b + 1] = (starts[b + 1] as number) + (starts[b] as number);
    const order = new Uint32Array(starts[buckets] as number);
    const fill = starts.slice(0, buckets);
    for (let id = 0; id < table.size; id++) {
      if (table.nextKind(id) === NEXT.none) continue;
      const bucket = table.bucketHash(id) & mask;
      if (selected[bucket]) order[(fill[bucket] as number)++] = id;
    }
    for (let bucket = 0; bucket < buckets; bucket++) {
      if (!selected[bucket]) continue;
      const pk = this.shardPk(bucket);
      let part = 0;
      let body = '';
      const flush = function* (this: DynamoDbStateStore): Generator<WriteRequest> {
        const sk = bucketSk(exponent, bucket, part);
        const text = `{${body}}`;
        this.checkItemSize(sk, text, pk);
        yield { PutRequest: { Item: { [PK.name]: { S: pk }, [SK.name]: { S: sk }, m: { S: text } } } };
        part++;
        body = '';
      }.bind(this);
      for (let i = starts[bucket] as number; i < (starts[bucket + 1] as number); i++) {
        const id = order[i] as number;
        const memory = table.nextMemory(id) as DomainMemory;
        const entry = `${JSON.stringify(table.keyOf(id))}:${table.nextKind(id) === NEXT.full || memory.name !== undefined ? memoryJson(memory) : JSON.stringify(memory)}`;
        if (body && body.length + entry.length + 2 > PART_BYTES) yield* flush();
        body = body ? `${body},${entry}` : entry;
      }
      if (body) yield* flush();
      written[bucket] = Math.min(part, 255);
      // After a resize every old item goes with the old layout; otherwise parts no longer needed go now.
      if (!resized)
        for (let old = part; old < ((read.parts[bucket] as number) ?? 0); old++)
          yield {
            DeleteRequest: {
              Key: { [PK.name]: { S: pk }, [SK.name]: { S: bucketSk(exponent, bucket, old) } },
            },
          };
    }
  }

  /**
   * What to delete once a save committed: items outside the layout in force, and after a resize or
   * a migration every item of the layout left behind. An item of the new layout found as garbage
   * (a resize that did not finish) stays when this save just wrote it again.
   */
  private *garbageWrites(
    read: DomainsRead,
    previous: number | null,
    exponent: number,
    written: Uint8Array,
    resized: boolean,
  ): Generator<WriteRequest> {
    const remove = (pk: string, sk: string): WriteRequest => ({
      DeleteRequest: { Key: { [PK.name]: { S: pk }, [SK.name]: { S: sk } } },
    });
    for (const [pk, sk] of read.garbage) {
      const match = BUCKET_SK.exec(sk);
      if (match && Number(match[1]) === exponent) {
        const bucket = Number.parseInt(match[2] as string, 16);
        const part = Number(match[3] ?? 0);
        if (bucket < written.length && part < (written[bucket] as number) && pk === this.shardPk(bucket))
          continue;
      }
      yield remove(pk, sk);
    }
    if (!resized) return;
    for (const sk of read.legacy) yield remove(this.scope, sk);
    if (previous !== null)
      for (let bucket = 0; bucket < read.parts.length; bucket++)
        for (let part = 0; part < (read.parts[bucket] as number); part++)
          yield remove(this.shardPk(bucket), bucketSk(previous, bucket, part));
  }

  private contactWrites(
    contacts: StateHead['contacts'],
    before: ReadonlyMap<string, string>,
  ): WriteRequest[] {
    const after = new Map<string, string>();
    for (const [handle, memory] of Object.entries(contacts))
      after.set(`${CONTACT_PREFIX}${handle}`, JSON.stringify(ContactMemorySchema.parse(memory)));
    const writes: WriteRequest[] = [];
    for (const [sk, body] of after)
      if (before.get(sk) !== body) {
        this.checkItemSize(sk, body);
        writes.push({ PutRequest: { Item: { ...this.key(sk), m: { S: body } } } });
      }
    for (const sk of before.keys()) if (!after.has(sk)) writes.push({ DeleteRequest: { Key: this.key(sk) } });
    return writes;
  }

  private shardPk(bucket: number): string {
    return `${this.scope}#${bucket % SHARDS}`;
  }

  private internals(opened: OpenedState): Opened {
    const known = this.opened.get(opened);
    if (!known) throw new StateError(`${this.location}: that state was not opened by this store`);
    return known;
  }

  private parse(sk: string, body: string): unknown {
    try {
      return JSON.parse(body);
    } catch (error) {
      throw new StateError(`the state item ${sk} in ${this.where} is not JSON; reset the state`, {
        cause: error,
      });
    }
  }

  /** Every item of one partition key (one sort key, or those with a prefix), page by page, consistently read. */
  private async *pages(
    query: {
      readonly pk?: string;
      readonly sk?: string;
      readonly prefix?: string;
      readonly keysOnly?: boolean;
      readonly newestFirst?: boolean;
    },
    signal?: AbortSignal,
  ): AsyncGenerator<Array<Record<string, AttributeValue>>> {
    const names: Record<string, string> = { '#pk': PK.name };
    const values: Record<string, AttributeValue> = { ':pk': { S: query.pk ?? this.scope } };
    let condition = '#pk = :pk';
    if (query.sk !== undefined || query.prefix !== undefined || query.keysOnly) names['#sk'] = SK.name;
    if (query.sk !== undefined) {
      condition += ' AND #sk = :sk';
      values[':sk'] = { S: query.sk };
    } else if (query.prefix !== undefined) {
      condition += ' AND begins_with(#sk, :prefix)';
      values[':prefix'] = { S: query.prefix };
    }
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      if (signal?.aborted) return;
      const input: QueryCommandInput = {
        TableName: this.table,
        KeyConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ...(query.keysOnly ? { ProjectionExpression: '#pk, #sk' } : {}),
        ...(query.newestFirst ? { ScanIndexForward: false } : {}),
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      };
      const page = await this.wrap(
        query.prefix === AUDIT_PREFIX ? 'read the audit trail' : 'read the state',
        () => this.client.send(new QueryCommand(input)),
      );
      yield page.Items ?? [];
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  private async collect(query: { readonly sk?: string; readonly prefix?: string }) {
    const items: Array<Record<string, AttributeValue>> = [];
    for await (const page of this.pages(query)) items.push(...page);
    return items;
  }

  /** Item writes are not conditional (BatchWriteItem cannot be): check the lease is still ours first. */
  private async ensureLease(generation: number, owner: string): Promise<void> {
    await this.conditional(
      new UpdateItemCommand({
        TableName: this.table,
        Key: this.key(META_SORT_KEY),
        UpdateExpression: 'SET lease_owner = :o',
        ConditionExpression: 'generation = :g AND lease_owner = :o',
        ExpressionAttributeValues: { ':g': { N: String(generation) }, ':o': { S: owner } },
      }),
      `the state lease on ${this.location} was lost before the state was saved`,
    );
  }

  /**
   * Writes every request, {@link BATCH} a call and {@link writeConcurrency} calls at once, taking
   * the next batch from `requests` only when a writer is free: a first save of a million domains
   * holds a few hundred items at a time, not all of them. The first failure stops the others.
   */
  private async writeAll(requests: Iterable<WriteRequest>): Promise<void> {
    const source = requests[Symbol.iterator]();
    let failed = false;
    const take = (): WriteRequest[] => {
      const batch: WriteRequest[] = [];
      while (batch.length < BATCH) {
        const next = source.next();
        if (next.done) break;
        batch.push(next.value);
      }
      return batch;
    };
    const writer = async () => {
      while (!failed) {
        const batch = take();
        if (batch.length === 0) return;
        try {
          await this.batchWrite(batch);
          this.pace();
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    };
    const outcomes = await Promise.allSettled(Array.from({ length: this.writeConcurrency }, writer));
    const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failure) throw failure.reason;
  }

  /** One BatchWriteItem, its unprocessed items tried again after a full-jitter exponential backoff. */
  private async batchWrite(requests: WriteRequest[]): Promise<void> {
    let pending = requests;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > UNPROCESSED_RETRIES)
        throw new StateError(
          `${this.location}: ${pending.length} state items stayed unprocessed after ${UNPROCESSED_RETRIES} retries (throttled?)`,
        );
      if (attempt > 0) await sleep(Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_MS * 2 ** attempt));
      const batch = pending;
      const out = await this.wrap('write the state', () =>
        this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: batch } })),
      );
      pending = out.UnprocessedItems?.[this.table] ?? [];
    }
  }

  /**
   * Fails before anything is written when an item would break DynamoDB's limits (sort key 1 024
   * bytes, item 400 KB). compareWithState bounds every name and field and buckets are cut into
   * parts, so this names a bug rather than the reseller's data; it still says which item, instead
   * of a failed batch halfway through.
   */
  private checkItemSize(sk: string, body: string, pk = this.scope): void {
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
        `${this.location}: the state item ${JSON.stringify(shownCut(sk))} would be ${bytes} bytes (sort key ${keyBytes}), over DynamoDB's limits (${MAX_ITEM_BYTES} bytes an item, ${MAX_SORT_KEY_BYTES} a sort key); nothing was written`,
      );
  }

  private key(sk: string): Record<string, AttributeValue> {
    return { [PK.name]: { S: this.scope }, [SK.name]: { S: sk } };
  }

  private async conditional(command: UpdateItemCommand, conflict: string): Promise<void> {
    try {
      await this.client.send(command);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw new StateConflictError(conflict, { cause: error });
      throw new StateError(`${this.location}: ${describe(error)}`, { cause: error });
    }
  }

  private async wrap<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw new StateError(`could not ${what} in ${this.location}: ${describe(error)}`, { cause: error });
    }
  }
}

/** What versions from before buckets read at {@link LAYOUT_MARKER}: not a domain memory, so they stop. */
const MARKER_BODY = JSON.stringify(
  'this state keeps its domains in buckets (domain-sentinel after issue 24): upgrade domain-sentinel, or reset the state',
);

function oneBucket(exponent: number, bucket: number): Uint8Array {
  const selected = new Uint8Array(1 << exponent);
  selected[bucket] = 1;
  return selected;
}
