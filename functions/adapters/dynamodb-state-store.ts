import {
  type AttributeValue,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  QueryCommand,
  UpdateContinuousBackupsCommand,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { AUDIT_MAX_ENTRIES, type AuditEntry, type AuditTrail, parseAuditEntries } from '../core/audit';
import { ConfigError } from '../core/errors';
import {
  ContactMemorySchema,
  DomainMemorySchema,
  parseState,
  type ScanState,
  StateConflictError,
  StateError,
  StateHeaderSchema,
  statePath,
} from '../core/state';
import { shownCut } from '../core/state-bounds';
import { type Lease, MAX_LEASE_MS, type StateStore, type StoredState } from './state-store';
import { META_SORT_KEY, STATE_TABLE_DEFINITION } from './state-table-definition';

const { partitionKey: PK, sortKey: SK } = STATE_TABLE_DEFINITION;
const DOMAIN_PREFIX = 'domain#';
const CONTACT_PREFIX = 'contact#';
/**
 * Restore attempts: `audit#seq#<16 digits>` in the account's partition, the entry in attribute `a`,
 * numbered in order of arrival by the counter item `audit-counter` (attribute `n`). load() reads
 * only items with `m`, and save() writes and deletes only those, so the trail never takes part in a
 * scan's state. Items of older versions, `audit#<ISO time>#<random>`, sort before every numbered
 * one, as they arrived before them.
 */
const AUDIT_PREFIX = 'audit#';
const AUDIT_SEQUENCE_PREFIX = `${AUDIT_PREFIX}seq#`;
const AUDIT_COUNTER_SORT_KEY = 'audit-counter';
/** BatchWriteItem's limit per call. */
const BATCH = 25;
const UNPROCESSED_RETRIES = 8;
/** DynamoDB's limits (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html). */
const MAX_ITEM_BYTES = 400 * 1024;
const MAX_SORT_KEY_BYTES = 1024;
const MAX_PARTITION_KEY_BYTES = 2048;

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

export interface DynamoDbStateStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The account the state belongs to (the reseller base URL): its partition. */
  readonly scope: string;
  /** @default Date.now */
  readonly clock?: () => number;
}

/**
 * The state in DynamoDB: one partition per account, one item per domain and per flagged contact
 * (so a scan writes only the items that changed), and a `#meta` item with the generation and the
 * lease. Only the lease holder writes items; the last write moves the generation on and releases
 * the lease, conditional on still holding it.
 */
export class DynamoDbStateStore implements StateStore, AuditTrail {
  readonly location: string;
  private readonly client: DynamoDBClient;
  private readonly table: string;
  private readonly scope: string;
  private readonly clock: () => number;
  /** Item bodies as loaded, to write only what changed. */
  private readonly loadedItems = new WeakMap<StoredState, Map<string, string>>();

  constructor(options: DynamoDbStateStoreOptions) {
    if (Buffer.byteLength(options.scope, 'utf8') > MAX_PARTITION_KEY_BYTES)
      throw new ConfigError(
        `the reseller base URL is longer than the ${MAX_PARTITION_KEY_BYTES} bytes a DynamoDB partition key holds; the state table keeps each account under its base URL`,
      );
    this.client = options.client;
    this.table = options.tableName;
    this.scope = options.scope;
    this.clock = options.clock ?? Date.now;
    this.location = `dynamodb:${options.tableName}`;
  }

  async load(): Promise<StoredState> {
    const items = new Map<string, string>();
    let meta: Record<string, AttributeValue> | undefined;
    for await (const item of this.partitionItems()) {
      const sk = item[SK.name]?.S;
      if (sk === META_SORT_KEY) meta = item;
      else if (sk && item.m?.S !== undefined) items.set(sk, item.m.S);
    }

    const parse = (sk: string, body: string): unknown => {
      try {
        return JSON.parse(body);
      } catch (error) {
        throw new StateError(
          `the state item ${sk} in ${this.location} (${this.scope}) is not JSON; reset the state`,
          {
            cause: error,
          },
        );
      }
    };
    const generation = meta?.generation?.N ? Number(meta.generation.N) : 0;
    const lease =
      meta?.lease_owner?.S && meta.lease_expires?.N
        ? { owner: meta.lease_owner.S, expiresAt: Number(meta.lease_expires.N) }
        : null;
    const header = meta?.h?.S ? StateHeaderSchema.safeParse(parse(META_SORT_KEY, meta.h.S)) : null;
    if (header && !header.success) {
      const issue = header.error.issues[0];
      throw new StateError(
        `the state in ${this.location} (${this.scope}) cannot be used (${issue ? `${statePath(issue.path)}: ${issue.message}` : 'invalid'}); correct that value, or reset the state`,
      );
    }
    // Keys are data: an object without a prototype, so no key can reach JavaScript's own machinery.
    const domains: Record<string, unknown> = Object.create(null);
    const contacts: Record<string, unknown> = Object.create(null);
    for (const [sk, body] of items) {
      if (sk.startsWith(DOMAIN_PREFIX)) domains[sk.slice(DOMAIN_PREFIX.length)] = parse(sk, body);
      else if (sk.startsWith(CONTACT_PREFIX)) contacts[sk.slice(CONTACT_PREFIX.length)] = parse(sk, body);
    }
    const state = header
      ? parseState({ ...header.data, domains, contacts }, `${this.location} (${this.scope})`)
      : parseState(
          {
            version: 1,
            scope: null,
            account: null,
            started_at: null,
            last_scan_at: null,
            last_published_at: null,
            problem_keys: [],
            domains,
            contacts,
          },
          this.location,
        );
    const stored = { state, generation, lease };
    this.loadedItems.set(stored, items);
    return stored;
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

  async save(state: ScanState, loaded: StoredState, owner: string): Promise<void> {
    const before = this.loadedItems.get(loaded) ?? new Map<string, string>();
    const after = new Map<string, string>();
    for (const [name, memory] of Object.entries(state.domains))
      after.set(`${DOMAIN_PREFIX}${name}`, JSON.stringify(DomainMemorySchema.parse(memory)));
    for (const [handle, memory] of Object.entries(state.contacts))
      after.set(`${CONTACT_PREFIX}${handle}`, JSON.stringify(ContactMemorySchema.parse(memory)));

    const writes: WriteRequest[] = [];
    for (const [sk, body] of after)
      if (before.get(sk) !== body) {
        this.checkItemSize(sk, body);
        writes.push({ PutRequest: { Item: { ...this.key(sk), m: { S: body } } } });
      }
    for (const sk of before.keys()) if (!after.has(sk)) writes.push({ DeleteRequest: { Key: this.key(sk) } });
    const { domains: _d, contacts: _c, ...header } = state;
    this.checkItemSize(META_SORT_KEY, JSON.stringify(header));

    await this.ensureLease(loaded.generation, owner);
    for (let i = 0; i < writes.length; i += BATCH) await this.batchWrite(writes.slice(i, i + BATCH));

    await this.conditional(
      new UpdateItemCommand({
        TableName: this.table,
        Key: this.key(META_SORT_KEY),
        UpdateExpression: 'SET generation = :next, h = :h REMOVE lease_owner, lease_expires',
        ConditionExpression: 'generation = :g AND lease_owner = :o',
        ExpressionAttributeValues: {
          ':g': { N: String(loaded.generation) },
          ':next': { N: String(loaded.generation + 1) },
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
    const old = keys.slice(AUDIT_MAX_ENTRIES).map((Key): WriteRequest => ({ DeleteRequest: { Key } }));
    for (let i = 0; i < old.length; i += BATCH) await this.batchWrite(old.slice(i, i + BATCH));
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
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.wrap('read the audit trail', () =>
        this.client.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
            ExpressionAttributeNames: { '#pk': PK.name, '#sk': SK.name },
            ExpressionAttributeValues: { ':pk': { S: this.scope }, ':prefix': { S: AUDIT_PREFIX } },
            ...(keysOnly ? { ProjectionExpression: '#pk, #sk' } : {}),
            ScanIndexForward: false,
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        ),
      );
      yield* page.Items ?? [];
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  /** Deletes this account's state and audit trail (every item of its partition); returns how many items went. */
  async clear(): Promise<number> {
    const keys: WriteRequest[] = [];
    for await (const item of this.partitionItems(true)) keys.push({ DeleteRequest: { Key: item } });
    for (let i = 0; i < keys.length; i += BATCH) await this.batchWrite(keys.slice(i, i + BATCH));
    return keys.length;
  }

  /** Every item of this account's partition, consistently read, page by page (only the keys when `keysOnly`). */
  private async *partitionItems(keysOnly = false): AsyncGenerator<Record<string, AttributeValue>> {
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.wrap('read the state', () =>
        this.client.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: keysOnly ? { '#pk': PK.name, '#sk': SK.name } : { '#pk': PK.name },
            ExpressionAttributeValues: { ':pk': { S: this.scope } },
            ...(keysOnly ? { ProjectionExpression: '#pk, #sk' } : {}),
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        ),
      );
      yield* page.Items ?? [];
      startKey = page.LastEvaluatedKey;
    } while (startKey);
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

  private async batchWrite(requests: WriteRequest[]): Promise<void> {
    let pending = requests;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > UNPROCESSED_RETRIES)
        throw new StateError(
          `${this.location}: ${pending.length} state items stayed unprocessed after ${UNPROCESSED_RETRIES} retries (throttled?)`,
        );
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 2_000)));
      const batch = pending;
      const out = await this.wrap('write the state', () =>
        this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: batch } })),
      );
      pending = out.UnprocessedItems?.[this.table] ?? [];
    }
  }

  /**
   * Fails before anything is written when an item would break DynamoDB's limits (sort key 1 024
   * bytes, item 400 KB). compareWithState bounds every name and field, so this names a bug rather
   * than the reseller's data; it still says which item, instead of a failed batch halfway through.
   */
  private checkItemSize(sk: string, body: string): void {
    const keyBytes = Buffer.byteLength(sk, 'utf8');
    const bytes =
      Buffer.byteLength(this.scope, 'utf8') +
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
