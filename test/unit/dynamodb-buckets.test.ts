import { describe, expect, it } from 'vitest';
import { planAll } from '../../functions/aws/dynamodb-buckets';
import type { DomainMemory } from '../../functions/core/memory/state';
import { AT, emptyKnown, keysOfOneBucket } from '../support/one-bucket';

describe('planAll', () => {
  it('cuts a bucket into parts by the bytes DynamoDB counts, not by characters', () => {
    // 16 memories in one bucket, each with 20 000 three-byte characters: 320 000 characters, and
    // 960 000 bytes, more than two items of 400 KB can hold.
    const memory = (n: number): DomainMemory => ({
      name: `${n}${'€'.repeat(20_000)}`,
      watched: {},
      finding: null,
      alerted: null,
    });
    const all = new Map(keysOfOneBucket(16, '.nl').map((key, n) => [key, memory(n)] as const));
    const known = emptyKnown();
    const items = [...planAll(AT, known, all, all)].map((w) => w.PutRequest?.Item);
    expect(items.length).toBeGreaterThanOrEqual(3);
    for (const item of items) expect(Buffer.byteLength(item?.m?.S ?? '')).toBeLessThan(400 * 1024);
    const kept = items.flatMap((item) => Object.keys(JSON.parse(item?.m?.S ?? '{}')));
    expect(kept.sort()).toEqual([...all.keys()].sort());
  });
});
