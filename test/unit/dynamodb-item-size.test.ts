import { type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { BUCKETS, type ItemScope, type Known, planAll } from '../../functions/aws/dynamodb-buckets';
import { DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { type DomainMemory, EMPTY_HEAD } from '../../functions/core/memory/state';

// DynamoDB counts an item as the UTF-8 bytes of its attribute names and values, a number as one
// byte per two digits and one more (docs: "DynamoDB item sizes and formats"); 400 KB at most.
const MAX_ITEM_BYTES = 400 * 1024;
const SCOPE = 'http://reseller.test';
const at: ItemScope = { scope: SCOPE, location: 'dynamodb:state', where: `dynamodb:state (${SCOPE})` };

/** The writes of a first save's one bucket holding one memory whose name is `name`. */
function writesOf(name: string) {
  const all = new Map<string, DomainMemory>([
    ['example.nl', { name, watched: {}, finding: null, alerted: null }],
  ]);
  const known: Known = {
    contacts: new Map(),
    parts: new Uint8Array(BUCKETS),
    dirty: new Set(),
    stray: [],
    generation: 1,
  };
  return () => [...planAll(at, known, all, all)];
}

describe('the DynamoDB store’s item size check', () => {
  it('counts a bucket item’s generation (g) and part count (n) as DynamoDB does', () => {
    // Prepare: a bucket item of exactly 400 KB by DynamoDB's count, then one byte more.
    const [write] = writesOf('')();
    const item = write?.PutRequest?.Item ?? {};
    const keys = Buffer.byteLength(`pk${item.pk?.S}sk${item.sk?.S}m`);
    // g (generation 2) and n (1 part): a name of one byte and a number of one digit (1 + 1) each.
    const numbers = 2 * (1 + 2);
    const room = MAX_ITEM_BYTES - keys - numbers - Buffer.byteLength(item.m?.S ?? '');
    // Act / Assess
    expect(writesOf('x'.repeat(room))).not.toThrow();
    expect(writesOf('x'.repeat(room + 1))).toThrow(/over DynamoDB's limits \(409600 bytes an item/);
  });

  it('counts #meta’s generation and layout before a save writes anything', async () => {
    // Prepare: a store on a table that answers every query with nothing.
    const send = vi.fn(async (_command: unknown) => ({}));
    const store = new DynamoDbStateStore({
      client: { send } as unknown as DynamoDBClient,
      tableName: 'state',
      scope: SCOPE,
    });
    const opened = await store.open(SCOPE);
    // #meta after the save: its key, h, generation 1 (10 + 2 bytes) and layout 16384 (6 + 4), with
    // room for the next claim's lease: lease_owner of 64 characters (11 + 64), lease_expires of 16
    // digits (13 + 9).
    const head = (scope: string) => ({ ...EMPTY_HEAD, scope });
    const { contacts: _, ...header } = head('');
    const fixed =
      Buffer.byteLength(`pk${SCOPE}sk#metah`) + 12 + 10 + 75 + 22 + Buffer.byteLength(JSON.stringify(header));
    const over = { head: head('x'.repeat(MAX_ITEM_BYTES - fixed + 1)), changed: new Map() };
    send.mockClear();
    // Act / Assess: refused by name, and nothing sent.
    await expect(store.save(opened, 'scan-1', over)).rejects.toThrow(
      /the state item "#meta" would be 409601 bytes .*over DynamoDB's limits/,
    );
    expect(send.mock.calls.filter(([command]) => !(command instanceof QueryCommand))).toEqual([]);
  });

  it('leaves #meta room for the next claim’s lease, so a save at the edge cannot lock the state', async () => {
    // Prepare: a head whose #meta fits 400 KB with 20 bytes to spare: too few for a lease
    // (lease_owner and lease_expires, some 60 bytes), which every later claim adds to #meta.
    const send = vi.fn(async (_command: unknown) => ({}));
    const store = new DynamoDbStateStore({
      client: { send } as unknown as DynamoDBClient,
      tableName: 'state',
      scope: SCOPE,
    });
    const opened = await store.open(SCOPE);
    const head = (scope: string) => ({ ...EMPTY_HEAD, scope });
    const { contacts: _, ...header } = head('');
    const fixed =
      Buffer.byteLength(`pk${SCOPE}sk#metah`) + 12 + 10 + Buffer.byteLength(JSON.stringify(header));
    const edge = { head: head('x'.repeat(MAX_ITEM_BYTES - fixed - 20)), changed: new Map() };
    send.mockClear();
    // Act / Assess: refused by name before anything is sent, not saved to be refused by every claim after.
    await expect(store.save(opened, 'scan-1', edge)).rejects.toThrow(/the state item "#meta" would be/);
    expect(send.mock.calls.filter(([command]) => !(command instanceof QueryCommand))).toEqual([]);
  });
});
