import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { ScanMemory } from '../../functions/core/memory/scan-memory';
import { type DomainMemory, EMPTY_HEAD } from '../../functions/core/memory/state';
import { startDynalite } from '../support/dynalite';
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
    // A first save killed part-way: its items stay behind, under the layout the next one takes.
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
});
