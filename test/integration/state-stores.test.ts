import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AttributeValue,
  type BatchWriteItemCommandOutput,
  DeleteItemCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bucketOf, bucketSk, shardPk } from '../../functions/aws/dynamodb-buckets';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { ScanMemory } from '../../functions/core/memory/scan-memory';
import { type DomainMemory, StateConflictError, StateError } from '../../functions/core/memory/state';
import { StateDamagedError } from '../../functions/core/memory/state-header';
import { FileStateStore } from '../../functions/local/file-state-store';
import type { StateStore } from '../../functions/use-cases/state-store';
import { startDynalite } from '../support/dynalite';
import { keysOfOneBucket } from '../support/one-bucket';
import { reportOf } from '../support/report';
import { domain, scanWithState } from '../support/state-scan';
import { EMPTY_STATE, loadState, type ScanState, saveState } from '../support/whole-state';

/** A state file as JSON, to damage in a test. */
// biome-ignore lint/suspicious/noExplicitAny: a test damages any part of it
type FileJson = { state: Record<string, any> };

/** As long as a scan's lease: a lease of more than MAX_LEASE_MS counts as lapsed. */
const LEASE_MS = 120_000;

const memory = (name: string) => ({
  watched: { registrant_handle: `C-${name}`, transfer_lock: true, auto_renew: true },
  finding: null,
  alerted: null,
});
function stateWith(names: readonly string[], extra: Partial<ScanState> = {}): ScanState {
  return {
    ...EMPTY_STATE,
    scope: 'http://reseller.test',
    started_at: '2026-11-22T06:00:00.000Z',
    last_scan_at: '2026-11-22T06:00:00.000Z',
    domains: Object.fromEntries(names.map((n) => [n, memory(n)])),
    ...extra,
  };
}

/** Every command `client` sends from now on, with its input, in the order sent. */
function recordCommands(client: DynamoDBClient): Array<{ command: string; input: unknown }> {
  const sent: Array<{ command: string; input: unknown }> = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push({ command: String(context.commandName), input: args.input });
      return next(args);
    },
    { step: 'initialize' },
  );
  return sent;
}

/** The contract both stores keep: conditional on the generation, leased, released. */
function storeContract(open: () => Promise<StateStore>) {
  it('reads one domain as saved, and nothing for a domain it does not remember', async () => {
    const store = await open();
    const names = Array.from({ length: 40 }, (_, i) => `d${i}.nl`);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(names), await loadState(store), 'a');
    const opened = await store.open('http://reseller.test');
    expect(await store.readDomain(opened, 'd17.nl')).toEqual(
      (await loadState(store)).state.domains['d17.nl'],
    );
    expect(await store.readDomain(opened, 'd17.nl')).toBeDefined();
    expect(await store.readDomain(opened, 'never.nl')).toBeUndefined();
  });

  it('keeps the restore-by of a quarantine remembered, and reads a memory saved without one', async () => {
    const store = await open();
    const finding = { kind: 'quarantine' as const, severity: 'critical' as const, stage: -1 };
    const held = { ...memory('held.nl'), finding: { ...finding, restore_by: '2026-12-01T06:00:00.000Z' } };
    const before = { ...memory('before.nl'), finding };
    const state = { ...stateWith([]), domains: { 'held.nl': held, 'before.nl': before } };
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, state, await loadState(store), 'a');
    expect((await loadState(store)).state.domains).toEqual(state.domains);
    const opened = await store.open('http://reseller.test');
    expect((await store.readDomain(opened, 'held.nl'))?.finding).toEqual(held.finding);
  });

  it('starts empty at generation 0, and saves generation by generation', async () => {
    const store = await open();
    const empty = await loadState(store);
    expect(empty).toEqual({ state: EMPTY_STATE, generation: 0, lease: null });
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['one.nl', 'two.nl']), empty, 'a');
    const first = await loadState(store);
    expect(first.generation).toBe(1);
    expect(first.lease).toBeNull();
    expect(first.state).toEqual(stateWith(['one.nl', 'two.nl']));
    await store.claim(1, { owner: 'b', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['two.nl', 'three.nl']), first, 'b');
    expect(await loadState(store)).toEqual({
      state: stateWith(['two.nl', 'three.nl']),
      generation: 2,
      lease: null,
    });
  });

  it('lets only one of two scans claim the same generation', async () => {
    const store = await open();
    const outcomes = await Promise.allSettled([
      store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS }),
      store.claim(0, { owner: 'b', expiresAt: Date.now() + LEASE_MS }),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const rejected = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(StateConflictError);
  });

  it('refuses a claim on a generation that moved on, and a save without the lease', async () => {
    const store = await open();
    const empty = await loadState(store);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await expect(saveState(store, stateWith(['x.nl']), empty, 'b')).rejects.toBeInstanceOf(
      StateConflictError,
    );
    await saveState(store, stateWith(['x.nl']), empty, 'a');
    await expect(store.claim(0, { owner: 'b', expiresAt: Date.now() + LEASE_MS })).rejects.toThrow(
      StateConflictError,
    );
  });

  it('lets a lapsed lease be taken over, and a released one at once', async () => {
    const store = await open();
    await store.claim(0, { owner: 'crashed', expiresAt: Date.now() - 1 });
    await store.claim(0, { owner: 'next', expiresAt: Date.now() + LEASE_MS });
    await store.release(0, 'next');
    await store.claim(0, { owner: 'third', expiresAt: Date.now() + LEASE_MS });
    expect((await loadState(store)).lease?.owner).toBe('third');
  });
}

describe('DynamoDbStateStore (dynalite, real SDK)', () => {
  let db: Awaited<ReturnType<typeof startDynalite>>;
  let table = 0;
  beforeAll(async () => {
    db = await startDynalite();
  });
  afterAll(() => db.close());
  const open = async (scope = 'http://reseller.test') => {
    const tableName = `state-${++table}`;
    expect(await createStateTable(db.client(), tableName)).toEqual([
      expect.stringMatching(/^point-in-time recovery not turned on: /),
    ]);
    return new DynamoDbStateStore({ client: db.client(), tableName, scope });
  };

  storeContract(() => open());

  /** Every item of the last table's 16 shards of http://reseller.test (the domains' buckets). */
  const shardItems = async () =>
    (
      await Promise.all(
        Array.from({ length: 16 }, (_, n) =>
          db.client().send(
            new QueryCommand({
              TableName: `state-${table}`,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': { S: `http://reseller.test#${n}` } },
            }),
          ),
        ),
      )
    ).flatMap((page) => page.Items ?? []);

  it('creates the table from the one definition: pk/sk strings, on demand', async () => {
    await open();
    const { Table } = await db.client().send(new DescribeTableCommand({ TableName: `state-${table}` }));
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
  });

  it('returns from creating the table only once it is ACTIVE, so the scan right after state init finds it', async () => {
    // DynamoDB keeps a new table CREATING for a while; a scan in that time gets ResourceNotFoundException.
    const slow = await startDynalite({ createTableMs: 300 });
    try {
      await createStateTable(slow.client(), 'state-slow');
      const { Table } = await slow.client().send(new DescribeTableCommand({ TableName: 'state-slow' }));
      expect(Table?.TableStatus).toBe('ACTIVE');
    } finally {
      await slow.close();
    }
  });

  /** Two domains of one bucket, its item's sort key and partition. */
  const [d0, d1] = keysOfOneBucket(2, '.nl') as [string, string];
  const sk = bucketSk(bucketOf(d0));
  const at = { scope: 'http://reseller.test', location: '', where: '' };
  const pk = shardPk(at, bucketOf(d0));

  it("reads one domain's memory with one query, of its own bucket", async () => {
    const store = await open();
    const names = Array.from({ length: 200 }, (_, i) => `d${i}.nl`);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(names), await loadState(store), 'a');
    const client = db.client();
    const sent = recordCommands(client);
    const queries = () =>
      sent
        .filter((s) => s.command === 'QueryCommand')
        .map((s) => String((s.input as QueryCommandInput).ExpressionAttributeValues?.[':pk']?.S));
    const counting = new DynamoDbStateStore({
      client,
      tableName: `state-${table}`,
      scope: 'http://reseller.test',
    });
    const opened = await counting.open('http://reseller.test');
    sent.length = 0;
    expect((await counting.readDomain(opened, 'd123.nl'))?.watched).toEqual(memory('d123.nl').watched);
    expect(queries()).toEqual([expect.stringMatching(/^http:\/\/reseller\.test#\d+$/)]);
  });

  it('keeps domains in buckets over 16 partitions, writes only the bucket that changed, and deletes what left', async () => {
    const store = await open();
    // d0 and d1 share their bucket.
    const names = [d0, d1, ...Array.from({ length: 58 }, (_, i) => `d${i}.nl`)];
    const empty = await loadState(store);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(names), empty, 'a');
    const loaded = await loadState(store);
    expect(Object.keys(loaded.state.domains)).toHaveLength(60);

    const client = db.client();
    const itemsOf = async (pk: string) =>
      (
        await client.send(
          new QueryCommand({
            TableName: `state-${table}`,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': { S: pk } },
          }),
        )
      ).Items ?? [];
    const shards = async () =>
      (await Promise.all(Array.from({ length: 16 }, (_, n) => itemsOf(`http://reseller.test#${n}`)))).flat();
    // The account's partition: the meta item; no domain there.
    expect((await itemsOf('http://reseller.test')).map((i) => i.sk?.S)).toEqual(['#meta']);
    const buckets = await shards();
    // 60 domains, each in the item of its bucket, each bucket in its shard partition.
    const keyOf = (bucket: number) => `${shardPk(at, bucket)} ${bucketSk(bucket)}`;
    expect(buckets.map((i) => `${i.pk?.S} ${i.sk?.S}`).sort()).toEqual(
      [...new Set(names.map((name) => keyOf(bucketOf(name))))].sort(),
    );
    expect(new Set(buckets.map((i) => i.pk?.S)).size).toBeGreaterThan(1);
    expect(buckets.reduce((n, i) => n + Object.keys(JSON.parse(i.m?.S ?? '{}')).length, 0)).toBe(60);

    const sent = recordCommands(client);
    const counting = new DynamoDbStateStore({
      client,
      tableName: `state-${table}`,
      scope: 'http://reseller.test',
    });
    const again = await loadState(counting);
    const changed = stateWith(names.slice(1));
    await counting.claim(1, { owner: 'b', expiresAt: Date.now() + LEASE_MS });
    await saveState(counting, changed, again, 'b');
    // Only d0 left: its bucket is written again without it, in one batch; nothing else is written.
    const writes = sent.filter((s) => s.command === 'BatchWriteItemCommand');
    expect(writes).toHaveLength(1);
    const input = writes[0]?.input as { RequestItems: Record<string, unknown[]> };
    const requests = Object.values(input.RequestItems).flat();
    expect(requests).toHaveLength(1);
    const put = (requests[0] as { PutRequest: { Item: Record<string, { S: string }> } }).PutRequest.Item;
    expect(Object.keys(JSON.parse(put.m?.S ?? '{}'))).toEqual([d1]);
    expect((await shards()).reduce((n, i) => n + Object.keys(JSON.parse(i.m?.S ?? '{}')).length, 0)).toBe(59);
    expect((await loadState(counting)).state).toEqual(changed);
  });

  it('writes again what a BatchWriteItem left unprocessed (throttled), until every item is in', async () => {
    const store = await open();
    const client = db.client();
    // Each of the first three batches: DynamoDB takes its first item only and hands the rest back.
    let throttled = 3;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchWriteItemCommand' || throttled === 0) return next(args);
        throttled--;
        const input = args.input as { RequestItems: Record<string, unknown[]> };
        const [tableName, requests] = Object.entries(input.RequestItems)[0] as [string, unknown[]];
        const out = await next({ ...args, input: { RequestItems: { [tableName]: requests.slice(0, 1) } } });
        const rest = requests.slice(1);
        const output = out.output as BatchWriteItemCommandOutput;
        return {
          ...out,
          output: { ...output, UnprocessedItems: rest.length ? { [tableName]: rest as WriteRequest[] } : {} },
        };
      },
      { step: 'initialize' },
    );
    const flaky = new DynamoDbStateStore({
      client,
      tableName: `state-${table}`,
      scope: 'http://reseller.test',
    });
    const names = Array.from({ length: 300 }, (_, i) => `d${i}.nl`);
    const empty = await loadState(flaky);
    await flaky.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(flaky, stateWith(names), empty, 'a');
    expect(throttled).toBe(0);
    expect((await loadState(store)).state).toEqual(stateWith(names));
  });

  // Found untested by a review of the stores' refactor (issue 32), which built each query's input
  // once and its ExclusiveStartKey per page: dynalite pages at 1 MB, so no test read a second page.
  it('reads every page of every query: #meta, the contacts and the shards, each page asked for once', async () => {
    const store = await open();
    const contacts = Object.fromEntries(
      Array.from({ length: 9 }, (_, i) => [
        `C-${i}`,
        { finding: { kind: 'contact_pending_validation', severity: 'warning', stage: null }, alerted: null },
      ]),
    ) as ScanState['contacts'];
    const saved = stateWith(
      Array.from({ length: 300 }, (_, i) => `d${i}.nl`),
      { contacts },
    );
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, saved, await loadState(store), 'a');
    const client = db.client();
    const asked = new Set<string>();
    let later = 0;
    // Pages of 2 items: a query that does not go on from where its last page ended reads a page twice.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'QueryCommand') return next(args);
        const input = args.input as QueryCommandInput;
        const page = JSON.stringify([input.ExpressionAttributeValues, input.ExclusiveStartKey ?? null]);
        if (asked.has(page)) throw new Error(`a page asked for twice: ${page}`);
        asked.add(page);
        if (input.ExclusiveStartKey) later++;
        return next({ ...args, input: { ...input, Limit: 2 } });
      },
      { step: 'initialize' },
    );
    const paged = new DynamoDbStateStore({
      client,
      tableName: `state-${table}`,
      scope: 'http://reseller.test',
    });
    expect((await loadState(paged)).state).toEqual(saved);
    // More pages after a first than the 16 shards and the contacts' partition: every query went on past its first.
    expect(later).toBeGreaterThan(17);
  });

  it('writes 25 items a BatchWriteItem, the rest in the next, and sends no empty batch', async () => {
    const contact = {
      finding: { kind: 'contact_pending_validation', severity: 'warning', stage: null },
      alerted: null,
    };
    const batches = async (count: number) => {
      const store = await open();
      const client = db.client();
      const sent = recordCommands(client);
      const writing = new DynamoDbStateStore({
        client,
        tableName: `state-${table}`,
        scope: 'http://reseller.test',
      });
      const contacts = Object.fromEntries(
        Array.from({ length: count }, (_, i) => [`C-${i}`, contact]),
      ) as ScanState['contacts'];
      await writing.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
      // No domain: the contacts are the only items written.
      await saveState(writing, stateWith([], { contacts }), await loadState(writing), 'a');
      expect(Object.keys((await loadState(store)).state.contacts)).toHaveLength(count);
      return sent
        .filter((s) => s.command === 'BatchWriteItemCommand')
        .map(
          (s) =>
            Object.values((s.input as { RequestItems: Record<string, unknown[]> }).RequestItems)[0]?.length,
        );
    };
    expect(await batches(0)).toEqual([]);
    expect(await batches(1)).toEqual([1]);
    expect(await batches(25)).toEqual([25]);
    expect(await batches(26)).toEqual([25, 1]);
    expect(await batches(51)).toEqual([25, 25, 1]);
  });

  // Found by a review: the lease was checked once before a save's writes, never renewed. A save
  // longer than the lease (a throttled first save of a million domains) let another scan claim the
  // same generation while this one still wrote its buckets, unconditionally: the two scans' writes
  // mixed, and this one's commit then failed. A long save now renews its lease as it writes.
  it('keeps its lease while a save writes for longer than the lease: no other scan claims it mid-save', async () => {
    await open();
    const tableName = `state-${table}`;
    const client = db.client();
    let now = Date.parse('2026-11-22T06:00:00Z');
    const claimedAt = now;
    const competitor = new DynamoDbStateStore({
      client: db.client(),
      tableName,
      scope: 'http://reseller.test',
      clock: () => now,
    });
    const attempts: string[] = [];
    // A throttled table: it takes one batch of writes at a time, ten seconds of the clock each. Once
    // the first lease would have lapsed, another scan tries to claim the generation.
    let turns: Promise<unknown> = Promise.resolve();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchWriteItemCommand') return next(args);
        const turn = turns.then(async () => {
          const out = await next(args);
          now += 10_000;
          if (now > claimedAt + LEASE_MS && attempts.length === 0)
            attempts.push(
              await competitor.claim(0, { owner: 'b', expiresAt: now + LEASE_MS }).then(
                () => 'claimed',
                (error: Error) => error.name,
              ),
            );
          return out;
        });
        turns = turn.catch(() => undefined);
        return turn;
      },
      { step: 'initialize' },
    );
    const slow = new DynamoDbStateStore({
      client,
      tableName,
      scope: 'http://reseller.test',
      clock: () => now,
    });
    const names = Array.from({ length: 4_000 }, (_, i) => `d${i}.nl`);
    const empty = await loadState(slow);
    await slow.claim(0, { owner: 'a', expiresAt: now + LEASE_MS });
    await saveState(slow, stateWith(names), empty, 'a');
    expect(now - claimedAt).toBeGreaterThan(LEASE_MS);
    expect(attempts).toEqual(['StateConflictError']);
    const saved = await loadState(competitor);
    expect([saved.generation, Object.keys(saved.state.domains).length]).toEqual([1, 4_000]);
  });

  // The renewal above must not lengthen a short lease of a save that never needed it: a snooze's
  // 15 s lease made 120 s blocked scans for two minutes when its process died mid-save.
  it('leaves a short save its own lease: no renewal before 30 s of writing', async () => {
    const store = await open();
    const expiresAt = Date.now() + 15_000;
    await store.claim(0, { owner: 'step', expiresAt });
    const client = db.client();
    // The process "dies" at its first item write: the save fails, and nobody releases the lease.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'BatchWriteItemCommand') throw new Error('the process died');
        return next(args);
      },
      { step: 'initialize' },
    );
    const dying = new DynamoDbStateStore({
      client,
      tableName: `state-${table}`,
      scope: 'http://reseller.test',
    });
    await expect(saveState(dying, stateWith(['d0.nl']), await loadState(dying), 'step')).rejects.toThrow(
      /the process died/,
    );
    expect((await loadState(store)).lease).toEqual({ owner: 'step', expiresAt });
  });

  /** A bucket item as a test damages it. */
  type Item = Record<string, AttributeValue>;
  it.each([
    ['is not JSON', (item: Item) => ({ ...item, m: { S: `{"${d0}":` } }), 'its memory text is not JSON'],
    [
      'holds its memories as a number',
      (item: Item) => ({ ...item, m: { N: '1' } }),
      'it holds no memory as text',
    ],
    ['holds a list', (item: Item) => ({ ...item, m: { S: '[1]' } }), 'it is not a set of domain memories'],
    // Every save writes `n`: an item without it cannot show its bucket whole, and is not read as if it did.
    [
      'does not say how many parts its save wrote',
      ({ n: _, ...item }: Item) => item,
      'it does not say how many parts its save wrote (n)',
    ],
    [
      'does not say which save wrote it',
      ({ g: _, ...item }: Item) => item,
      'it does not say which save wrote it (g)',
    ],
    [
      'says its save wrote no part',
      (item: Item) => ({ ...item, n: { N: '0' } }),
      'it does not say how many parts its save wrote (n)',
    ],
  ])(
    'reports a bucket item that %s as a problem record instead of failing the scan, and writes it again at the save',
    async (_what, damage, reason) => {
      const store = await open();
      const empty = await loadState(store);
      await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
      await saveState(store, stateWith([d0, d1]), empty, 'a');
      const [bucket] = await shardItems();
      expect(bucket?.sk?.S).toBe(sk);
      await db
        .client()
        .send(new PutItemCommand({ TableName: `state-${table}`, Item: damage(bucket as Item) }));
      const opened = await store.open('http://reseller.test');
      const memory = new ScanMemory();
      await store.read(opened, memory);
      expect(memory.prior.size).toBe(0);
      const { problems } = memory.keyFindings(reportOf([])).report;
      expect(problems).toEqual([
        expect.objectContaining({
          resource: 'state',
          key: sk,
          reason: expect.stringContaining(`(${reason})`),
        }),
      ]);
      // The save writes the damaged bucket again from what the scan holds: the damage is gone.
      await store.claim(opened.generation, { owner: 'b', expiresAt: Date.now() + LEASE_MS });
      const kept = stateWith([d1]).domains[d1] as DomainMemory;
      await store.save(opened, 'b', {
        head: opened.head,
        changed: new Map([[d1, kept]]),
        all: new Map([[d1, kept]]),
      });
      const healed = new ScanMemory();
      await store.read(await store.open('http://reseller.test'), healed);
      expect([...healed.prior.keys()]).toEqual([d1]);
      expect(healed.keyFindings(reportOf([])).report.problems).toEqual([]);
    },
  );

  /** A scan's read of both domains (it finds them), and its save of them all as the next generation. */
  async function readAndSaveAll(store: DynamoDbStateStore): Promise<void> {
    const opened = await store.open('http://reseller.test');
    const memory = new ScanMemory();
    await store.read(opened, memory);
    expect([...memory.prior.keys()].sort()).toEqual([d0, d1].sort());
    await store.claim(opened.generation, { owner: 'b', expiresAt: Date.now() + LEASE_MS });
    const all = stateWith([d0, d1]).domains as Record<string, DomainMemory>;
    await store.save(opened, 'b', {
      head: opened.head,
      changed: new Map(),
      all: new Map(Object.entries(all)),
    });
  }

  // Found by a review: a bucket item in another shard than its bucket's was read as no bucket and
  // deleted after the next save, its memories forgotten in silence. It is read and moved now.
  it('moves a bucket item found in another shard to its own at the next save, its memories kept', async () => {
    const store = await open();
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith([d0, d1]), await loadState(store), 'a');
    const [bucket] = await shardItems();
    const own = bucket?.pk?.S as string;
    const other = `http://reseller.test#${(Number(own.split('#').pop()) + 1) % 16}`;
    await db
      .client()
      .send(new PutItemCommand({ TableName: `state-${table}`, Item: { ...bucket, pk: { S: other } } }));
    await db
      .client()
      .send(new DeleteItemCommand({ TableName: `state-${table}`, Key: { pk: { S: own }, sk: { S: sk } } }));
    await readAndSaveAll(store);
    expect((await shardItems()).map((item) => [item.pk?.S, item.sk?.S])).toEqual([[own, sk]]);
  });

  // Found by a review: an item of the shards whose sort key names no bucket (b#0A3F, by hand) was
  // deleted after the next save without a word, with whatever memories it held. Only this version's
  // spelling names a bucket: b#0a3f.0 and b#a3f, once read as b#0a3f, are no bucket either.
  it.each([
    ['in capitals', (sk: string) => sk.toUpperCase().replace('B#', 'b#')],
    ['with a part .0', (sk: string) => `${sk}.0`],
    ['with a part of a leading zero', (sk: string) => `${sk}.01`],
    ['with fewer hex digits', (sk: string) => sk.replace(/^b#0*/, 'b#')],
  ])(
    'reports an item of the shards whose sort key names no bucket (%s) as a problem record before it goes',
    async (_spelling, spell) => {
      const store = await open();
      await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
      await saveState(store, stateWith([d0, d1]), await loadState(store), 'a');
      const [bucket] = await shardItems();
      const odd = spell(sk);
      expect(odd).not.toBe(sk);
      await db
        .client()
        .send(new PutItemCommand({ TableName: `state-${table}`, Item: { ...bucket, sk: { S: odd } } }));
      await db.client().send(
        new DeleteItemCommand({
          TableName: `state-${table}`,
          Key: { pk: bucket?.pk as AttributeValue, sk: { S: sk } },
        }),
      );
      const opened = await store.open('http://reseller.test');
      const memory = new ScanMemory();
      const damaged: string[] = [];
      memory.damaged = (item, reason) => void damaged.push(`${item}: ${reason}`);
      await store.read(opened, memory);
      expect(damaged).toEqual([`${odd}: its sort key names no bucket`]);
      expect(memory.prior.size).toBe(0);
      // Deleted once the next save committed, the domains it held written at their own bucket.
      await store.claim(opened.generation, { owner: 'b', expiresAt: Date.now() + LEASE_MS });
      const all = new Map(Object.entries(stateWith([d0, d1]).domains as Record<string, DomainMemory>));
      await store.save(opened, 'b', { head: opened.head, changed: all, all });
      expect((await shardItems()).map((item) => item.sk?.S)).toEqual([sk]);
    },
  );

  // A link's step (a snooze) must not write over a damaged bucket before a scan has reported it.
  it('refuses a snooze in a damaged bucket, naming the item, and leaves the item as it was', async () => {
    const store = await open();
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith([d0]), await loadState(store), 'a');
    const Item = { pk: { S: pk }, sk: { S: sk }, m: { S: `{"${d0}":` } };
    await db.client().send(new PutItemCommand({ TableName: `state-${table}`, Item }));
    const snooze = store.updateDomain('http://reseller.test', d0, (memory) => memory as DomainMemory, {
      owner: 'link',
      clock: Date.now,
      attempts: 1,
      backoffMs: 1,
    });
    await expect(snooze).rejects.toThrow(
      new RegExp(
        `the state item ${sk} in dynamodb:state-\\d+ \\(http://reseller\\.test\\) cannot be read \\(its memory text is not JSON\\); the next scan reports it`,
      ),
    );
    const stored = await db.client().send(
      new QueryCommand({
        TableName: `state-${table}`,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': Item.pk },
      }),
    );
    expect(stored.Items?.find((item) => item.sk?.S === sk)?.m).toEqual(Item.m);
  });

  // One damaged contact item stopped every alert of the account until someone reset the state.
  it('reports a contact item without its memory as text as a problem record; a snooze leaves it, a scan writes it again', async () => {
    const store = await open();
    const contact = {
      finding: { kind: 'contact_pending_validation', severity: 'warning', stage: null },
      alerted: null,
    };
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    const contacts = { 'C-1': contact, 'C-2': contact } as ScanState['contacts'];
    await saveState(store, stateWith(['d0.nl'], { contacts }), await loadState(store), 'a');
    const Item = { pk: { S: 'http://reseller.test' }, sk: { S: 'contact#C-1' }, m: { N: '1' } };
    await db.client().send(new PutItemCommand({ TableName: `state-${table}`, Item }));
    const contactItem = async () =>
      (
        await db.client().send(
          new QueryCommand({
            TableName: `state-${table}`,
            KeyConditionExpression: 'pk = :pk AND sk = :sk',
            ExpressionAttributeValues: { ':pk': Item.pk, ':sk': Item.sk },
          }),
        )
      ).Items?.[0];

    const loaded = await loadState(store);
    expect(Object.keys(loaded.state.contacts)).toEqual(['C-2']);
    const memory = new ScanMemory();
    await store.read(await store.open('http://reseller.test'), memory);
    expect(memory.keyFindings(reportOf([])).report.problems).toEqual([
      expect.objectContaining({
        resource: 'state',
        key: 'contact#C-1',
        reason: expect.stringMatching(/^could not be read \(it holds no memory as text\): /),
      }),
    ]);
    // A snooze changes no contact: the damaged item stays for the scan to report.
    await store.updateDomain('http://reseller.test', 'd0.nl', (m) => m as DomainMemory, {
      owner: 'link',
      clock: Date.now,
      attempts: 1,
      backoffMs: 1,
    });
    expect((await contactItem())?.m).toEqual(Item.m);
    // A scan's save writes the contact again from what it read.
    const scanned = await loadState(store);
    await store.claim(scanned.generation, { owner: 'scan', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['d0.nl'], { contacts }), scanned, 'scan');
    expect((await contactItem())?.m?.S).toBe(JSON.stringify(contact));
  });

  // The account-wide part and the layout are damage (a scan alerts without memory under the lease);
  // a generation that cannot be read is refused: every claim is conditional on it.
  it.each([
    [
      'h',
      { N: '1' },
      /^the state item #meta in dynamodb:state-\d+ \(http:\/\/reseller\.test\) has no account-wide part \(h\) as text; reset the state$/,
      'h: not text',
    ],
    [
      'h',
      { S: '{"version":1,' },
      /^the state item #meta in dynamodb:state-\d+ \(http:\/\/reseller\.test\) is not JSON; reset the state$/,
      'h: not JSON',
    ],
    [
      'h',
      {
        S: JSON.stringify({
          ...stateWith([]),
          domains: undefined,
          contacts: undefined,
          last_scan_at: 'garbage',
        }),
      },
      /^the state in dynamodb:state-\d+ \(http:\/\/reseller\.test\) cannot be used \(last_scan_at: not an RFC 3339 date-time: "garbage"\)/,
      'last_scan_at: not an RFC 3339 date-time: "garbage"',
    ],
    [
      'layout',
      { S: '0' },
      /^the state item #meta in dynamodb:state-\d+ \(http:\/\/reseller\.test\) has no bucket layout \(layout\) as a number; reset the state$/,
      'layout: not a number',
    ],
    // No release wrote NULL there (only an unreleased build of a resizing layout did): damage as any other type.
    [
      'layout',
      { NULL: true },
      /^the state item #meta in dynamodb:state-\d+ \(http:\/\/reseller\.test\) has no bucket layout \(layout\) as a number; reset the state$/,
      'layout: not a number',
    ],
    // Gone (null: removed) after a save, every bucket was taken for garbage, its domains forgotten
    // in silence (snoozes too, every finding announced again) and its items deleted.
    [
      'layout',
      null,
      /^the state item #meta in dynamodb:state-\d+ \(http:\/\/reseller\.test\) has no bucket layout \(layout\) after a save; reset the state$/,
      'layout: missing',
    ],
    // Read as 0, it told the next scan "another scan moved the state on" instead of naming the item.
    [
      'generation',
      { S: '1' },
      /^the state item #meta in dynamodb:state-\d+ \(http:\/\/reseller\.test\) has no generation as a whole number; reset the state$/,
      null,
    ],
    [
      'generation',
      { N: '1.5' },
      /^the state item #meta in dynamodb:state-\d+ \(http:\/\/reseller\.test\) has no generation as a whole number; reset the state$/,
      null,
    ],
  ])(
    'refuses a #meta item whose %s is damaged, instead of reading an empty state, telling damage from a refusal',
    async (name, value, message, damage) => {
      const store = await open();
      const empty = await loadState(store);
      await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
      await saveState(store, stateWith(['d0.nl']), empty, 'a');
      await db.client().send(
        new UpdateItemCommand({
          TableName: `state-${table}`,
          Key: { pk: { S: 'http://reseller.test' }, sk: { S: '#meta' } },
          UpdateExpression: value === null ? 'REMOVE #a' : 'SET #a = :v',
          ExpressionAttributeNames: { '#a': name },
          ...(value === null ? {} : { ExpressionAttributeValues: { ':v': value } }),
        }),
      );
      await expect(loadState(store)).rejects.toThrow(message);
      const error = await store.open('http://reseller.test').catch((e: unknown) => e);
      if (damage === null) expect(error).not.toBeInstanceOf(StateDamagedError);
      else expect(error).toMatchObject({ name: 'StateDamagedError', item: '#meta', damage, generation: 1 });
    },
  );

  // The buckets are a fixed count, kept as the layout: a state of another count is another release's state.
  it.each([[{ N: '8' }, '8']])(
    'refuses a #meta item of another bucket layout (%o) as a state of another version, not as damage',
    async (value, shown) => {
      const store = await open();
      await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
      await saveState(store, stateWith(['d0.nl']), await loadState(store), 'a');
      await db.client().send(
        new UpdateItemCommand({
          TableName: `state-${table}`,
          Key: { pk: { S: 'http://reseller.test' }, sk: { S: '#meta' } },
          UpdateExpression: 'SET layout = :v',
          ExpressionAttributeValues: { ':v': value },
        }),
      );
      const error = await store.open('http://reseller.test').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StateError);
      expect(error).not.toBeInstanceOf(StateDamagedError);
      expect((error as Error).message).toMatch(
        new RegExp(
          `^the state in dynamodb:state-\\d+ \\(http://reseller\\.test\\) cannot be used \\(layout: written by another version of domain-sentinel \\(bucket layout ${shown}, this one reads 16384\\)\\); correct that value, point --state elsewhere, or remove the state to start over$`,
        ),
      );
    },
  );

  // A save that wrote no domain writes the layout too, which the refusal of a layout removed after
  // a save (above) must not take for one lost.
  it('opens a state whose saves wrote no domain yet', async () => {
    const store = await open();
    const opened = await store.open('http://reseller.test');
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await store.save(opened, 'a', { head: opened.head, changed: new Map() });
    const again = await store.open('http://reseller.test');
    expect(again.generation).toBe(1);
    await store.claim(1, { owner: 'b', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['d0.nl']), await loadState(store), 'b');
    expect(Object.keys((await loadState(store)).state.domains)).toEqual(['d0.nl']);
  });

  it('holds the lease on the generation beside a damaged #meta while a scan publishes and after, and writes nothing else', async () => {
    const store = await open();
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['d0.nl']), await loadState(store), 'a');
    const Key = { pk: { S: 'http://reseller.test' }, sk: { S: '#meta' } };
    await db.client().send(
      new UpdateItemCommand({
        TableName: store.location.slice('dynamodb:'.length),
        Key,
        UpdateExpression: 'SET h = :h',
        ExpressionAttributeValues: { ':h': { S: '{"version":1,' } },
      }),
    );
    const meta = async () =>
      (
        await db.client().send(
          new QueryCommand({
            TableName: store.location.slice('dynamodb:'.length),
            KeyConditionExpression: 'pk = :pk AND sk = :sk',
            ExpressionAttributeValues: { ':pk': Key.pk, ':sk': Key.sk },
          }),
        )
      ).Items?.[0];
    const before = await meta();
    const damaged = (await store.open('http://reseller.test').catch((e: unknown) => e)) as StateDamagedError;
    expect(damaged).toBeInstanceOf(StateDamagedError);
    const lease = (owner: string) => ({ owner, expiresAt: Date.now() + LEASE_MS });
    const held = await store.holdDamaged(damaged, lease('scan-1'), async () => {
      // A second scan of the same damaged state cannot publish meanwhile, nor can any claim.
      await expect(store.holdDamaged(damaged, lease('scan-2'), async () => 'two')).rejects.toThrow(
        StateConflictError,
      );
      await expect(store.claim(1, lease('link'))).rejects.toThrow(StateConflictError);
      return 'one';
    });
    expect(held).toBe('one');
    // Kept once published, until it lapses (a retry of the run finds it held); nothing else written.
    const { lease_owner, lease_expires, ...rest } = (await meta()) ?? {};
    expect(rest).toEqual(before);
    expect(lease_owner).toEqual({ S: 'scan-1' });
    await expect(store.holdDamaged(damaged, lease('retry'), async () => 'again')).rejects.toThrow(
      StateConflictError,
    );
    // A publish that fails gives the lease up at once: the retry may try again.
    await store.release(1, 'scan-1');
    await expect(
      store.holdDamaged(damaged, lease('scan-3'), async () => {
        throw new Error('SNS is down');
      }),
    ).rejects.toThrow('SNS is down');
    expect(await store.holdDamaged(damaged, lease('scan-4'), async () => 'four')).toBe('four');
  });

  it('takes over a lease whose expiry is no number or whose owner is no text: a damaged lease holds nothing', async () => {
    const store = await open();
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['d0.nl']), await loadState(store), 'a');
    const Key = { pk: { S: 'http://reseller.test' }, sk: { S: '#meta' } };
    for (const damage of [
      { lease_owner: { S: 'ghost' }, lease_expires: { S: String(Date.now() + LEASE_MS) } },
      { lease_owner: { N: '7' }, lease_expires: { N: String(Date.now() + LEASE_MS) } },
    ]) {
      await db.client().send(
        new UpdateItemCommand({
          TableName: store.location.slice('dynamodb:'.length),
          Key,
          UpdateExpression: 'SET lease_owner = :o, lease_expires = :e',
          ExpressionAttributeValues: { ':o': damage.lease_owner, ':e': damage.lease_expires },
        }),
      );
      // Read back as no lease, and claimed as none.
      expect((await loadState(store)).lease).toBeNull();
      await store.claim(1, { owner: 'next', expiresAt: Date.now() + LEASE_MS });
      expect((await loadState(store)).lease?.owner).toBe('next');
      await store.release(1, 'next');
    }
    // A live lease of the right types still holds.
    await store.claim(1, { owner: 'live', expiresAt: Date.now() + LEASE_MS });
    await expect(store.claim(1, { owner: 'other', expiresAt: Date.now() + LEASE_MS })).rejects.toThrow(
      StateConflictError,
    );
  });

  it('keeps accounts apart: one partition per scope', async () => {
    const store = await open('https://live.example');
    const empty = await loadState(store);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['live.nl']), empty, 'a');
    const other = new DynamoDbStateStore({
      client: db.client(),
      tableName: `state-${table}`,
      scope: 'https://test.example',
    });
    expect((await loadState(other)).state).toEqual(EMPTY_STATE);
  });

  it('fails naming the table when it does not exist', async () => {
    const store = new DynamoDbStateStore({ client: db.client(), tableName: 'no-such-table', scope: 's' });
    await expect(loadState(store)).rejects.toThrow(
      /could not read the state in dynamodb:no-such-table: ResourceNotFoundException/,
    );
  });
});

describe('FileStateStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sentinel-state-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  storeContract(async () => new FileStateStore(join(dir, `state-${Math.random()}.json`)));

  it('reports a contact memory that does not read back as a problem record; a snooze leaves it, a scan writes it again', async () => {
    const path = join(dir, 'state.json');
    const store = new FileStateStore(path);
    const contact = {
      finding: { kind: 'contact_pending_validation', severity: 'warning', stage: null },
      alerted: null,
    };
    const contacts = { 'C-1': contact, 'C-2': contact } as ScanState['contacts'];
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['d0.nl'], { contacts }), await loadState(store), 'a');
    const file = JSON.parse(await readFile(path, 'utf8'));
    file.state.contacts['C-1'].alerted = { at: 'garbage' };
    await writeFile(path, JSON.stringify(file));
    const storedC1 = async () => JSON.parse(await readFile(path, 'utf8')).state.contacts['C-1'];

    expect(Object.keys((await loadState(store)).state.contacts)).toEqual(['C-2']);
    const memory = new ScanMemory();
    await store.read(await store.open('http://reseller.test'), memory);
    expect(memory.keyFindings(reportOf([])).report.problems).toEqual([
      expect.objectContaining({
        resource: 'state',
        key: 'C-1',
        reason: expect.stringMatching(/^could not be read \(contacts\["C-1"\]\.alerted\.\S+: /),
      }),
    ]);
    await store.updateDomain('http://reseller.test', 'd0.nl', (m) => m as DomainMemory, {
      owner: 'link',
      clock: Date.now,
      attempts: 1,
      backoffMs: 1,
    });
    expect(await storedC1()).toEqual({ ...contact, alerted: { at: 'garbage' } });
    const scanned = await loadState(store);
    await store.claim(scanned.generation, { owner: 'scan', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['d0.nl'], { contacts }), scanned, 'scan');
    expect(await storedC1()).toEqual(contact);
  });

  it('leaves the old file whole when the process dies between the temporary write and the rename', async () => {
    const path = join(dir, 'state.json');
    const store = new FileStateStore(path);
    const empty = await loadState(store);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['old.nl']), empty, 'a');
    const before = await readFile(path, 'utf8');

    let temp = '';
    const crashing = new FileStateStore(path, {
      beforeRename: async (t) => {
        temp = t;
        expect(JSON.parse(await readFile(t, 'utf8')).generation).toBe(1); // written whole, not yet in place
        throw new Error('power cut');
      },
    });
    const loaded = await loadState(crashing);
    await expect(crashing.claim(1, { owner: 'b', expiresAt: Date.now() + LEASE_MS })).rejects.toThrow(
      /cannot write the state file .*power cut/,
    );
    expect(temp).toMatch(/\.state\.json\.\d+\.[0-9a-f]+\.tmp$/);
    expect(await readFile(path, 'utf8')).toBe(before);
    expect((await loadState(store)).state).toEqual(loaded.state);
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('lets concurrent savers take turns: no update lost, no file interleaved', async () => {
    const path = join(dir, 'state.json');
    const writers = Array.from({ length: 8 }, (_, i) => ({
      store: new FileStateStore(path),
      name: `w${i}.nl`,
    }));
    await Promise.all(
      writers.map(async ({ store, name }) => {
        for (;;) {
          const loaded = await loadState(store);
          try {
            await store.claim(loaded.generation, { owner: name, expiresAt: Date.now() + LEASE_MS });
          } catch (error) {
            if (!(error instanceof StateConflictError)) throw error;
            await new Promise((r) => setTimeout(r, 1));
            continue;
          }
          await saveState(store, stateWith([...Object.keys(loaded.state.domains), name]), loaded, name);
          return;
        }
      }),
    );
    const final = await loadState(new FileStateStore(path));
    expect(final.generation).toBe(8);
    expect(Object.keys(final.state.domains).sort()).toEqual(writers.map((w) => w.name).sort());
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('loads a state saved before restore-by was kept (departed in its head), and its next save keeps one', async () => {
    const path = join(dir, 'state.json');
    const at = '2026-11-22T06:00:00.000Z';
    const held = {
      watched: { registrant_handle: 'C1', auto_renew: false },
      finding: {
        kind: 'quarantine',
        severity: 'critical',
        stage: -1,
        date_expiry: '2026-11-20T06:00:00.000Z',
      },
      alerted: { kind: 'quarantine', severity: 'critical', stage: -1, at, first_at: at },
    };
    const state = {
      ...stateWith([]),
      departed: { 'gone.nl': { at } },
      domains: { 'held.nl': held },
    };
    await writeFile(
      path,
      JSON.stringify({ format: 'domain-sentinel-state', version: 1, generation: 3, lease: null, state }),
    );
    const store = new FileStateStore(path);
    const loaded = await loadState(store);
    expect(loaded.state).toEqual(state);
    const now = Date.parse(at) + 3_600_000;
    const read = domain('held.nl', now, {
      status: ['quarantine'],
      auto_renew: false,
      date_expiry: Date.parse('2026-11-20T06:00:00.000Z'),
      date_deleted: Date.parse('2026-11-21T06:00:00.000Z'),
    });
    const next = scanWithState([read], now, loaded.state).next;
    await store.claim(3, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, next, loaded, 'a');
    const saved = await loadState(store);
    expect(saved.state.departed).toEqual(state.departed);
    expect(saved.state.domains['held.nl']?.finding?.restore_by).toBe('2026-12-31T06:00:00.000Z');
  });

  it('refuses a file that is not domain-sentinel state, naming it', async () => {
    const path = join(dir, 'notes.json');
    await writeFile(path, '{"hello": 1}');
    await expect(loadState(new FileStateStore(path))).rejects.toThrow(StateError);
    await expect(loadState(new FileStateStore(path))).rejects.toThrow(
      /notes\.json is not a domain-sentinel state file/,
    );
    await writeFile(path, 'not json');
    await expect(loadState(new FileStateStore(path))).rejects.toThrow(/is not JSON/);
  });

  it.each([
    [
      'a date-time that does not parse',
      (f: FileJson) => Object.assign(f.state, { last_scan_at: 'garbage' }),
      /^last_scan_at: not an RFC 3339 date-time: "garbage"$/,
    ],
    [
      'a value of another type',
      (f: FileJson) => Object.assign(f.state, { problem_keys: 5 }),
      /^problem_keys: /,
    ],
    ['a missing field', (f: FileJson) => delete f.state.started_at, /^started_at: /],
    // Not another release's state: one of those says its version. Refused, it stopped every alert.
    ['a missing version', (f: FileJson) => delete f.state.version, /^version: missing$/],
    [
      'domains that are not an object',
      (f: FileJson) => Object.assign(f.state, { domains: [] }),
      /^domains: not an object$/,
    ],
    ['text that is not JSON', 'not JSON', /^not JSON \(/],
  ])(
    'refuses a header with %s as damage (StateDamagedError), naming what and why',
    async (_what, damage, reason) => {
      const path = join(dir, 'state.json');
      const store = new FileStateStore(path);
      await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
      await saveState(store, stateWith(['x.nl']), await loadState(store), 'a');
      const file = JSON.parse(await readFile(path, 'utf8'));
      if (typeof damage === 'string') await writeFile(path, damage);
      else {
        damage(file);
        await writeFile(path, JSON.stringify(file));
      }
      const error = await store.open('http://reseller.test').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StateDamagedError);
      expect(error).toMatchObject({ item: path, damage: expect.stringMatching(reason) });
    },
  );

  /** A state file saved with x.nl, then its text changed by `change`: the store, its path and the text saved. */
  async function savedAndChanged(change: (text: string) => string) {
    const path = join(dir, 'state.json');
    const store = new FileStateStore(path);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['x.nl']), await loadState(store), 'a');
    const text = await readFile(path, 'utf8');
    await writeFile(path, change(text));
    return { store, path, text };
  }

  it.each([
    ['text that is not JSON', () => 'not json'],
    ['domains that are not an object', (t: string) => t.replace(/"domains":\{[^}]{0,200}\}/, '"domains":[]')],
  ])(
    'clears a state file damaged by %s (state reset, as the scan over it says to), but no file that is not state',
    async (_what, change) => {
      const { store } = await savedAndChanged(change);
      expect(await store.open('http://reseller.test').catch((e: unknown) => e)).toBeInstanceOf(
        StateDamagedError,
      );
      await expect(store.clear()).resolves.toBe(true);
      expect(await readdir(dir)).not.toContain('state.json');

      const notes = join(dir, 'notes.json');
      await writeFile(notes, '{"hello": 1}');
      await expect(new FileStateStore(notes).clear()).rejects.toThrow(/is not a domain-sentinel state file/);
      expect(await readFile(notes, 'utf8')).toBe('{"hello": 1}');
    },
  );

  it.each([
    ['a format of another release', (t: string) => t.replace('"version":1', '"version":2')],
    ['a header of another release', (t: string) => t.replace('"state":{"version":1', '"state":{"version":2')],
    [
      'a generation that is not a whole number',
      (t: string) => t.replace(/"generation":\d+/, '"generation":1.5'),
    ],
    ['a file that is not state', () => '{"hello":1}'],
  ])('refuses %s as before, not as damage', async (_what, change) => {
    const { store, path, text } = await savedAndChanged(change);
    expect(await readFile(path, 'utf8')).not.toBe(text);
    const error = await store.open('http://reseller.test').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateError);
    expect(error).not.toBeInstanceOf(StateDamagedError);
  });

  it('holds the lock of a damaged file while a scan publishes, refuses while another holds its lease, and writes nothing', async () => {
    const path = join(dir, 'state.json');
    const store = new FileStateStore(path);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['x.nl']), await loadState(store), 'a');
    const file = JSON.parse(await readFile(path, 'utf8'));
    file.state.last_scan_at = 'garbage';
    await writeFile(path, JSON.stringify(file));
    const before = await readFile(path, 'utf8');
    const damaged = (await store.open('http://reseller.test').catch((e: unknown) => e)) as StateDamagedError;
    const lease = (owner: string) => ({ owner, expiresAt: Date.now() + LEASE_MS });
    const other = new FileStateStore(path, { lockWaitMs: 50 });
    const held = await store.holdDamaged(damaged, lease('scan-1'), async () => {
      await expect(other.holdDamaged(damaged, lease('scan-2'), async () => 'two')).rejects.toThrow(
        /stayed in use by another request of this process/,
      );
      return 'one';
    });
    expect(held).toBe('one');
    // A snooze or an acknowledgement still refuses the damaged state, and writes nothing either.
    const snooze = store.updateDomain('http://reseller.test', 'x.nl', (m) => m as DomainMemory, {
      owner: 'link',
      clock: Date.now,
      attempts: 1,
      backoffMs: 1,
    });
    await expect(snooze).rejects.toThrow(/cannot be used \(last_scan_at: not an RFC 3339 date-time/);
    expect(await readFile(path, 'utf8')).toBe(before);
    // A lease of another scan, live in the file: that scan may publish, so this one does not.
    await writeFile(path, JSON.stringify({ ...file, lease: lease('healthy') }));
    await expect(store.holdDamaged(damaged, lease('scan-1'), async () => 'one')).rejects.toThrow(
      /another scan holds the state until/,
    );
  });

  // The scope is read from the file: as it was, a hand-edited one wrote a megabyte, or a line break
  // and terminal escapes, into the one line of the refusal.
  it('names the scope of another account in its refusal cut and on one line', async () => {
    const path = join(dir, 'state.json');
    const store = new FileStateStore(path);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['x.nl']), await loadState(store), 'a');
    const file = JSON.parse(await readFile(path, 'utf8'));
    file.state.scope = `http://other.test/\n\u001b[31mforged line${'x'.repeat(5000)}`;
    await writeFile(path, JSON.stringify(file));
    const error = (await store.open('http://reseller.test').catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(
      /belongs to http:\/\/other\.test\/.*, but this scan reads http:\/\/reseller\.test;/,
    );
    expect(error.message.includes('\n') || error.message.includes('\u001b')).toBe(false);
    expect(error.message.length).toBeLessThan(400);
  });

  it('refuses a generation that is not a whole number, rather than claim and save from it', async () => {
    const path = join(dir, 'state.json');
    const store = new FileStateStore(path);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, stateWith(['x.nl']), await loadState(store), 'a');
    const saved = await readFile(path, 'utf8');
    // 1e400 reads as Infinity, which a claim wrote back as null: the file damaged further.
    for (const generation of ['1e400', '1.5', '-1', '9007199254740993', '"3"', 'null', '{"n":1}']) {
      await writeFile(path, saved.replace(/"generation":\d+/, `"generation":${generation}`));
      await expect(loadState(new FileStateStore(path))).rejects.toThrow(
        /^the state in .*state\.json cannot be used \(generation: .* is not a whole number\); correct that value, point --state elsewhere, or remove the state to start over$/,
      );
    }
  });
});
