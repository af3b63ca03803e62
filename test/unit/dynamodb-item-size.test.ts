import { type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { planAll } from '../../functions/aws/dynamodb-buckets';
import { DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { type DomainMemory, EMPTY_HEAD } from '../../functions/core/memory/state';
import { AT, emptyKnown, SCOPE } from '../support/one-bucket';

// DynamoDB counts an item as the UTF-8 bytes of its attribute names and values, a number as one
// byte per two digits and one more (docs: "DynamoDB item sizes and formats"); 400 KB at most.
const MAX_ITEM_BYTES = 400 * 1024;

/** The writes of a first save's one bucket holding one memory whose name is `name`. */
function writesOf(name: string) {
  const all = new Map<string, DomainMemory>([
    ['example.nl', { name, watched: {}, finding: null, alerted: null }],
  ]);
  return () => [...planAll(AT, emptyKnown(), all, all)];
}

/** A store on a table that answers every query with nothing, its state opened, and its calls cleared. */
async function storeOnStub() {
  const send = vi.fn(async (_command: unknown) => ({}));
  const store = new DynamoDbStateStore({
    client: { send } as unknown as DynamoDBClient,
    tableName: 'state',
    scope: SCOPE,
  });
  const opened = await store.open(SCOPE);
  send.mockClear();
  /** The requests sent besides queries: none, when a save is refused before it writes. */
  const writes = () => send.mock.calls.filter(([command]) => !(command instanceof QueryCommand));
  return { store, opened, writes };
}

const head = (scope: string) => ({ ...EMPTY_HEAD, scope });
/** #meta's bytes after a save of an empty head: its key, h, generation 1 (10 + 2) and layout 16384 (6 + 4). */
const { contacts: _, ...emptyHeader } = head('');
const META_BYTES =
  Buffer.byteLength(`pk${SCOPE}sk#metah`) + 12 + 10 + Buffer.byteLength(JSON.stringify(emptyHeader));

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
    const { store, opened, writes } = await storeOnStub();
    // Prepare: with room for the next claim's lease besides: lease_owner of 64 characters (11 + 64),
    // lease_expires of 16 digits (13 + 9); one byte over.
    const over = { head: head('x'.repeat(MAX_ITEM_BYTES - META_BYTES - 75 - 22 + 1)), changed: new Map() };
    // Act / Assess: refused by name, and nothing sent.
    await expect(store.save(opened, 'scan-1', over)).rejects.toThrow(
      /the state item "#meta" would be 409601 bytes .*over DynamoDB's limits/,
    );
    expect(writes()).toEqual([]);
  });

  it('leaves #meta room for the next claim’s lease, so a save at the edge cannot lock the state', async () => {
    const { store, opened, writes } = await storeOnStub();
    // Prepare: a head whose #meta fits 400 KB with 20 bytes to spare: too few for a lease
    // (lease_owner and lease_expires, some 60 bytes), which every later claim adds to #meta.
    const edge = { head: head('x'.repeat(MAX_ITEM_BYTES - META_BYTES - 20)), changed: new Map() };
    // Act / Assess: refused by name before anything is sent, not saved to be refused by every claim after.
    await expect(store.save(opened, 'scan-1', edge)).rejects.toThrow(/the state item "#meta" would be/);
    expect(writes()).toEqual([]);
  });
});
