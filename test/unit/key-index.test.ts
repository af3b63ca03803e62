import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyIndex } from '../../functions/core/base/key-index';
import { stableKeyHash } from '../../functions/core/memory/state-table';

/** The same keys through a Map: what KeyIndex must agree with. */
function check(keys: readonly string[], seed?: number) {
  const index = new KeyIndex(seed);
  const ids = new Map<string, number>();
  for (const key of keys) {
    const expected = ids.get(key) ?? ids.size;
    ids.set(key, expected);
    expect(index.add(key)).toBe(expected);
  }
  expect(index.size).toBe(ids.size);
  for (const [key, id] of ids) {
    expect(index.find(key)).toBe(id);
    expect(index.keyOf(id)).toBe(key);
  }
  return index;
}

describe('KeyIndex', () => {
  it('numbers keys as a Map would, for any strings, in any seed', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string({ maxLength: 12 }),
            fc.string({ unit: 'grapheme', maxLength: 12 }),
            fc.constantFrom('a.nl', 'A.nl', 'a.nl.', 'bücher.de', 'xn--bcher-kva.de', ''),
            fc.string({ minLength: 250, maxLength: 600 }),
          ),
          { maxLength: 60 },
        ),
        fc.integer(),
        (keys, seed) => {
          const index = check(keys, seed);
          for (const key of ['never-added', 'a.nl\u0000', 'A.NL'])
            if (!keys.includes(key)) expect(index.find(key)).toBe(-1);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps every key through its buffers and table growing many times over', () => {
    // 20 000 names: past the first 4 096 ids, 64 KiB of bytes and 8 192 slots, so every array grows and the table is rebuilt.
    const keys = Array.from({ length: 20_000 }, (_, i) =>
      i % 7 === 0 ? `bücher-${i}.de` : `domain-${i}.nl`,
    );
    const index = check([...keys, ...keys.slice(0, 500)], 12345);
    expect(index.byteLength).toBeLessThan(20_000 * 60);
  });

  it('finds long keys (past the scratch buffer and past the ASCII fast path of keyOf)', () => {
    check(['x'.repeat(5_000), 'y'.repeat(300), `${'é'.repeat(2_000)}.nl`, 'x'.repeat(4_999)]);
  });

  it('gives each key the same stable hash in every index, whatever the seed (state buckets depend on it)', () => {
    const a = new KeyIndex(1);
    const b = new KeyIndex(987654);
    for (const key of ['a.nl', 'example.com', 'domain-123.eu']) {
      expect(a.stableHash(a.add(key))).toBe(b.stableHash(b.add(key)));
      expect(a.stableHash(a.find(key))).toBe(stableKeyHash(key));
    }
  });
});
