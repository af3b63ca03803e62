import { type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketOf, bucketSk } from '../../functions/aws/dynamodb-buckets';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { ScanMemory } from '../../functions/core/memory/scan-memory';
import { type DomainMemory, EMPTY_HEAD } from '../../functions/core/memory/state';
import { startDynalite } from '../support/dynalite';
import { keysOfOneBucket } from '../support/one-bucket';
import { EMPTY_STATE, loadState, type ScanState, saveState } from '../support/whole-state';

const LEASE_MS = 120_000;
const SCOPE = 'http://reseller.test';

const memory = (handle: string): DomainMemory => ({
  watched: { registrant_handle: handle, transfer_lock: true, auto_renew: true },
  finding: null,
  alerted: null,
});
const stateOf = (domains: Record<string, DomainMemory>, at: string): ScanState => ({
  ...EMPTY_STATE,
  scope: SCOPE,
  started_at: '2026-11-22T06:00:00.000Z',
  last_scan_at: at,
  domains,
});

/** A client whose process dies after `batches` BatchWriteItem calls got through, the next one taking only `take` of its items. */
function dying(client: DynamoDBClient, batches: number, take: number) {
  let left = batches;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'BatchWriteItemCommand') return next(args);
      if (left-- > 0) return next(args);
      const input = args.input as { RequestItems: Record<string, unknown[]> };
      const [t, requests] = Object.entries(input.RequestItems)[0] as [string, unknown[]];
      if (take > 0) await next({ ...args, input: { RequestItems: { [t]: requests.slice(0, take) } } });
      throw new Error('process killed');
    },
    { step: 'initialize' },
  );
  return client;
}

describe('a DynamoDB save killed part-way', () => {
  let db: Awaited<ReturnType<typeof startDynalite>>;
  let n = 0;
  beforeAll(async () => {
    db = await startDynalite();
  });
  afterAll(() => db.close());
  const table = async () => {
    const tableName = `crash-${++n}`;
    await createStateTable(db.client(), tableName);
    return tableName;
  };

  // Found by a review: a first save is all or nothing (every item is new, and #meta switches to
  // them at the end). A Lambda killed by its timeout in the middle of one kept nothing, so the next
  // run was a first scan again, announced every finding again, and was killed again: every run.
  it('keeps what a first save wrote by its time as a whole generation, after deleting what a killed one left', async () => {
    const tableName = await table();
    let now = Date.parse('2026-11-23T06:00:00.000Z');
    const clock = () => now;
    const names = Array.from({ length: 10_000 }, (_, i) => `d${i}.nl`);
    // A first save killed part-way: its items stay behind, in the buckets the next one writes.
    const killed = new DynamoDbStateStore({
      client: dying(db.client(), 20, 0),
      tableName,
      scope: SCOPE,
      clock,
    });
    const before = await loadState(killed);
    await killed.claim(0, { owner: 'a', expiresAt: now + LEASE_MS });
    const ghosts = stateOf(
      Object.fromEntries(names.map((k) => [k.replace('d', 'ghost'), memory('GHOST')])),
      '2026-11-22T06:00:00.000Z',
    );
    await expect(saveState(killed, ghosts, before, 'a')).rejects.toThrow(/killed/);
    // The next first save: each BatchWriteItem of its memories takes a second, and it has 3 s.
    const slow = db.client();
    slow.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        const input = args.input as { RequestItems?: Record<string, Array<{ PutRequest?: unknown }>> };
        const requests = Object.values(input.RequestItems ?? {})[0] ?? [];
        if (context.commandName === 'BatchWriteItemCommand' && requests[0]?.PutRequest) now += 1_000;
        return out;
      },
      { step: 'initialize' },
    );
    const store = new DynamoDbStateStore({ client: slow, tableName, scope: SCOPE, clock });
    const opened = await store.open(SCOPE);
    await store.read(opened, new ScanMemory());
    now += LEASE_MS + 1;
    await store.claim(0, { owner: 'b', expiresAt: now + LEASE_MS });
    const all = new Map(names.map((k) => [k, memory('NEW')]));
    const head = {
      ...EMPTY_HEAD,
      scope: SCOPE,
      started_at: '2026-11-23T06:00:00.000Z',
      last_scan_at: '2026-11-23T06:00:00.000Z',
    };
    const outcome = await store.save(opened, 'b', { head, changed: all, all, saveBy: now + 3_000 });
    expect(outcome?.of).toBe(10_000);
    expect(outcome?.kept).toBeGreaterThan(0);
    expect(outcome?.kept).toBeLessThan(10_000);
    const saved = await loadState(new DynamoDbStateStore({ client: db.client(), tableName, scope: SCOPE }));
    expect(saved.generation).toBe(1);
    expect(saved.lease).toBeNull();
    // The domains kept, each as saved, and nothing of the killed save.
    expect(Object.keys(saved.state.domains)).toHaveLength(outcome?.kept as number);
    for (const [key, value] of Object.entries(saved.state.domains)) expect(value).toEqual(all.get(key));
  });

  // A state saved before the account had a domain (an empty first scan) remembers none either: the
  // save that first writes every domain is a first save, which keeps what it wrote by its time.
  it('keeps what the first save of domains wrote by its time when an earlier save wrote none', async () => {
    const tableName = await table();
    let now = Date.parse('2026-11-23T06:00:00.000Z');
    const slow = db.client();
    slow.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'BatchWriteItemCommand') now += 1_000;
        return out;
      },
      { step: 'initialize' },
    );
    const store = new DynamoDbStateStore({ client: slow, tableName, scope: SCOPE, clock: () => now });
    await store.claim(0, { owner: 'a', expiresAt: now + LEASE_MS });
    await saveState(store, stateOf({}, '2026-11-22T06:00:00.000Z'), await loadState(store), 'a');
    const opened = await store.open(SCOPE);
    await store.read(opened, new ScanMemory());
    await store.claim(1, { owner: 'b', expiresAt: now + LEASE_MS });
    const all = new Map(Array.from({ length: 2_000 }, (_, i) => [`d${i}.nl`, memory('NEW')] as const));
    const outcome = await store.save(opened, 'b', {
      head: opened.head,
      changed: all,
      all,
      saveBy: now + 3_000,
    });
    expect(outcome?.of).toBe(2_000);
    expect(outcome?.kept).toBeGreaterThan(0);
    expect(outcome?.kept).toBeLessThan(2_000);
    const saved = await loadState(new DynamoDbStateStore({ client: db.client(), tableName, scope: SCOPE }));
    expect([saved.generation, Object.keys(saved.state.domains).length]).toEqual([2, outcome?.kept]);
  });

  /**
   * The save of `next` as generation 2 into `tableName`, killed once its first item is written; its
   * lease given up, as a lapse would.
   */
  async function killSecondSave(tableName: string, next: ScanState): Promise<void> {
    const killed = new DynamoDbStateStore({ client: dying(db.client(), 0, 1), tableName, scope: SCOPE });
    const before = await loadState(killed);
    await killed.claim(1, { owner: 'b', expiresAt: Date.now() + LEASE_MS });
    await expect(saveState(killed, next, before, 'b')).rejects.toThrow(/killed/);
    await killed.release(1, 'b');
  }

  /** A first save of 200 ghost domains into `tableName`, killed after its first writes (nothing committed). */
  async function killFirstSave(tableName: string): Promise<void> {
    const killed = new DynamoDbStateStore({ client: dying(db.client(), 2, 0), tableName, scope: SCOPE });
    const before = await loadState(killed);
    await killed.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    const ghosts = Array.from({ length: 200 }, (_, i) => [`ghost${i}.nl`, memory('GHOST')] as const);
    await expect(
      saveState(killed, stateOf(Object.fromEntries(ghosts), '2026-11-22T06:00:00.000Z'), before, 'a'),
    ).rejects.toThrow(/killed/);
    await killed.release(0, 'a');
  }

  // Found by a review: a snooze (one domain's step) on a state never committed was a first save
  // too, but it read none of the shards, so it deleted nothing of a killed first save: its items
  // were committed with the snooze's generation and read as memory from then on.
  it('commits nothing of a killed first save with a snooze on the state it never committed', async () => {
    const tableName = await table();
    await killFirstSave(tableName);
    const store = new DynamoDbStateStore({ client: db.client(), tableName, scope: SCOPE });
    await store.updateDomain(SCOPE, 'snoozed.nl', () => memory('SNOOZED'), {
      owner: 'link',
      clock: Date.now,
      attempts: 1,
      backoffMs: 1,
    });
    const saved = await loadState(store);
    expect([saved.generation, saved.state.domains]).toEqual([1, { 'snoozed.nl': memory('SNOOZED') }]);
  });

  // Found by a review: a first save deleted what a killed first save left as its scan had read it,
  // which can be long before its claim. A scan that read the empty state while another held the
  // lease, and claimed once that one was killed and its lease lapsed, committed what the killed
  // one had written in every bucket it did not write itself.
  it('commits nothing of a first save killed after the next first scan read the state', async () => {
    const tableName = await table();
    const store = new DynamoDbStateStore({ client: db.client(), tableName, scope: SCOPE });
    const late = await loadState(store);
    await killFirstSave(tableName);
    await store.claim(0, { owner: 'b', expiresAt: Date.now() + LEASE_MS });
    const mine = stateOf({ 'mine.nl': memory('MINE') }, '2026-11-23T06:00:00.000Z');
    await saveState(store, mine, late, 'b');
    const saved = await loadState(store);
    expect([saved.generation, saved.state.domains]).toEqual([1, mine.domains]);
  });

  // What docs/memory.md promises of a save killed between its batches: buckets of the next
  // generation beside the others under the old #meta, each domain's memory whole (at least once).
  it('leaves each domain its old or its new memory whole, under the old #meta, when killed between batches', async () => {
    const tableName = await table();
    const store = new DynamoDbStateStore({ client: db.client(), tableName, scope: SCOPE });
    const names = Array.from({ length: 200 }, (_, i) => `d${i}.nl`);
    const old = stateOf(Object.fromEntries(names.map((k) => [k, memory('OLD')])), '2026-11-22T06:00:00.000Z');
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, old, await loadState(store), 'a');
    const next = stateOf(
      Object.fromEntries(names.map((k) => [k, memory('NEW')])),
      '2026-11-23T06:00:00.000Z',
    );
    const killed = new DynamoDbStateStore({ client: dying(db.client(), 1, 0), tableName, scope: SCOPE });
    const before = await loadState(killed);
    await killed.claim(1, { owner: 'b', expiresAt: Date.now() + LEASE_MS });
    await expect(saveState(killed, next, before, 'b')).rejects.toThrow(/killed/);
    const after = await loadState(store);
    expect([after.generation, after.state.last_scan_at]).toEqual([1, '2026-11-22T06:00:00.000Z']);
    expect(Object.keys(after.state.domains).sort()).toEqual([...names].sort());
    const handles = Object.values(after.state.domains).map((d) => d.watched.registrant_handle);
    expect(new Set(handles)).toEqual(new Set(['OLD', 'NEW']));
    for (const [key, value] of Object.entries(after.state.domains))
      expect([old.domains[key], next.domains[key]]).toContainEqual(value);
  });

  // Found by a review: a bucket of several parts is written over in place, part by part. A save
  // killed between its parts left the bucket's first part new and its others old: the domains
  // that moved from the old first part into a later one were in neither, and were forgotten in
  // silence (announced as new again, their snoozes gone). The parts carry the generation they
  // were written for now: parts that disagree are a problem record, and the save writes them again.
  it('reports a bucket whose parts a killed save left from two generations, instead of forgetting in silence', async () => {
    const tableName = await table();
    const store = new DynamoDbStateStore({ client: db.client(), tableName, scope: SCOPE });
    // 8 domains of 100 KB: one bucket, in three parts.
    const names = keysOfOneBucket(8, '.nl');
    const torn = bucketSk(bucketOf(names[0] as string), 1);
    const big = (handle: string): DomainMemory => ({ ...memory(handle), name: 'x'.repeat(100_000) });
    const g1 = stateOf(Object.fromEntries(names.map((k) => [k, big('OLD')])), '2026-11-22T06:00:00.000Z');
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, g1, await loadState(store), 'a');
    // The next scan reads the account in the other order, and is killed after its first part.
    const g2 = stateOf(
      Object.fromEntries([...names].reverse().map((k) => [k, big('NEW')])),
      '2026-11-23T06:00:00.000Z',
    );
    await killSecondSave(tableName, g2);
    const opened = await store.open(SCOPE);
    const read = new ScanMemory();
    const damaged: Array<[string, string]> = [];
    const keep = read.damaged.bind(read);
    read.damaged = (item, reason) => {
      damaged.push([item, reason]);
      keep(item, reason);
    };
    await store.read(opened, read);
    expect(names.filter((k) => !read.prior.has(k)).length).toBeGreaterThan(0);
    expect(damaged).toEqual([
      [torn, 'its parts were written by different saves, one of which did not finish'],
    ]);
    // A snooze does not write it over before a scan reported it.
    const snooze = store.updateDomain(SCOPE, names[3] as string, (m) => m as DomainMemory, {
      owner: 'link',
      clock: Date.now,
      attempts: 1,
      backoffMs: 1,
    });
    await expect(snooze).rejects.toThrow(
      new RegExp(
        `^the state item ${torn.replace('.', '\\.')} in dynamodb:crash-\\d+ \\(http://reseller\\.test\\) cannot be read \\(its parts were written by different saves`,
      ),
    );
    // The next scan's save writes the bucket again whole: read back whole, nothing torn.
    const loaded = await loadState(store);
    await store.claim(1, { owner: 'c', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, g2, loaded, 'c');
    const healed = new ScanMemory();
    healed.damaged = (item) => {
      throw new Error(`still torn: ${item}`);
    };
    await store.read(await store.open(SCOPE), healed);
    expect([...healed.prior.keys()].sort()).toEqual([...names].sort());
  });

  // Found by a review: a bucket that grows past 300 KB is written as parts it did not have. A save
  // killed after its first part left that part alone, of one save: nothing disagreed, and the
  // memories written to the later parts were forgotten in silence (announced as new again, their
  // snoozes gone). Each part says how many its save wrote now: one missing is a torn bucket.
  it('reports a bucket that a killed save was cutting into more parts, instead of forgetting in silence', async () => {
    const tableName = await table();
    const store = new DynamoDbStateStore({ client: db.client(), tableName, scope: SCOPE });
    const names = keysOfOneBucket(3, '.nl');
    const sized = (handle: string, bytes: number): DomainMemory => ({
      ...memory(handle),
      name: 'x'.repeat(bytes),
    });
    // 3 domains of 90 KB: one part; then of 150 KB: two.
    const g1 = stateOf(
      Object.fromEntries(names.map((k) => [k, sized('OLD', 90_000)])),
      '2026-11-22T06:00:00.000Z',
    );
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, g1, await loadState(store), 'a');
    const g2 = stateOf(
      Object.fromEntries(names.map((k) => [k, sized('NEW', 150_000)])),
      '2026-11-23T06:00:00.000Z',
    );
    await killSecondSave(tableName, g2);
    const read = new ScanMemory();
    const damaged: string[] = [];
    const keep = read.damaged.bind(read);
    read.damaged = (item, reason) => {
      damaged.push(`${item}: ${reason}`);
      keep(item, reason);
    };
    await store.read(await store.open(SCOPE), read);
    expect(names.filter((k) => !read.prior.has(k))).toHaveLength(1);
    expect(damaged).toEqual([
      `${bucketSk(bucketOf(names[0] as string), 1)}: its parts were written by different saves, one of which did not finish`,
    ]);
    // A snooze does not write it over before a scan reported it.
    const snooze = store.updateDomain(SCOPE, names[0] as string, (m) => m as DomainMemory, {
      owner: 'link',
      clock: Date.now,
      attempts: 1,
      backoffMs: 1,
    });
    await expect(snooze).rejects.toThrow(/cannot be read \(its parts were written by different saves/);
  });
});

// DynamoDB refuses an item over 400 KB (dynalite too): every item a state writes must stay under it
// with the longest values a hostile reseller can send, and with every domain in one bucket.
describe('DynamoDB limits at the longest values the state keeps', () => {
  let db: Awaited<ReturnType<typeof startDynalite>>;
  beforeAll(async () => {
    db = await startDynalite();
  });
  afterAll(() => db.close());

  it('writes a bucket of 300 longest memories and a #meta of 1 000 longest problem keys, and reads them back whole', async () => {
    await createStateTable(db.client(), 'limits');
    const store = new DynamoDbStateStore({ client: db.client(), tableName: 'limits', scope: SCOPE });
    // 253 characters (the longest plain key: a stem of 27), all in one bucket.
    const names = keysOfOneBucket(300, `.${'a'.repeat(221)}.com`);
    expect(names.every((name) => name.length === 253)).toBe(true);
    const shard = bucketOf(names[0] as string) % 16;
    // 256 characters (the longest kept as is) that JSON writes as six bytes each.
    const field = '\u0001'.repeat(256);
    const at = '2026-11-22T06:00:00.000Z';
    const longest: DomainMemory = {
      group: 'g'.repeat(64),
      watched: {
        registrant_handle: field,
        transfer_lock: true,
        auto_renew: true,
        nsgroup: field,
        dns_hosted: true,
        dnssec: field,
        premium_price: { currency: 'EUR', amount: Number.MAX_VALUE },
        renewal: { due: at, expiry: at },
      },
      finding: { kind: 'renewal_failed', severity: 'critical', stage: Number.MAX_VALUE, date_expiry: at },
      alerted: {
        kind: 'renewal_failed',
        severity: 'critical',
        stage: Number.MAX_VALUE,
        at,
        first_at: at,
        escalated: Number.MAX_VALUE,
        repeats: Number.MAX_SAFE_INTEGER,
      },
      actions: {
        snooze: { until: at, at, kind: 'renewal_failed', severity: 'critical' },
        acknowledged: { at, kind: 'renewal_failed', severity: 'critical', date_expiry: at, auto_renew: true },
      },
    };
    const problemKeys = Array.from({ length: 1_000 }, (_, n) => `domain:${n}`.padEnd(150, 'x'));
    const state: ScanState = {
      ...stateOf(Object.fromEntries(names.map((k) => [k, longest])), at),
      problem_keys: problemKeys,
      problem_keys_digest: 'f'.repeat(64),
    };
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + LEASE_MS });
    await saveState(store, state, await loadState(store), 'a');
    // The bucket in parts, each under the limit by the bytes DynamoDB counts.
    const items = await db.client().send(
      new QueryCommand({
        TableName: 'limits',
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: `${SCOPE}#${shard}` } },
      }),
    );
    const sizes = (items.Items ?? []).map((item) => Buffer.byteLength(item.m?.S ?? ''));
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(300 * 1024);
    const loaded = await loadState(store);
    expect(loaded.generation).toBe(1);
    expect(loaded.state).toEqual(state);
  });
});
