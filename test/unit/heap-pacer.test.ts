import { describe, expect, it } from 'vitest';
import { HEAP_STEP_BYTES, heapPacer } from '../../functions/adapters/heap-pacer';

/** A heap whose size the test sets; a collection brings it back to what is `alive`. */
function fakeHeap(alive: number) {
  const heap = { used: alive, alive, collections: 0 };
  return {
    heap,
    gc: () => {
      heap.collections++;
      heap.used = heap.alive;
    },
    usedBytes: () => heap.used,
  };
}

describe('heapPacer', () => {
  it('collects once the heap grew a step since the last collection, and not before', () => {
    const { heap, gc, usedBytes } = fakeHeap(100);
    const pace = heapPacer({ gc, usedBytes, stepBytes: 50 });
    heap.used = 149;
    pace();
    expect(heap.collections).toBe(0);
    heap.used = 150;
    pace();
    expect(heap.collections).toBe(1);
    expect(heap.used).toBe(100);
    // Measured again after the collection: garbage cleared does not count as growth.
    pace();
    expect(heap.collections).toBe(1);
  });

  it('counts from what is alive after a collection, so a heap that really grows is not collected at every look', () => {
    const { heap, gc, usedBytes } = fakeHeap(0);
    const pace = heapPacer({ gc, usedBytes, stepBytes: 10 });
    // The scan keeps 5 of every 10 it makes: a collection at each step of 10, from the new live size.
    for (let i = 1; i <= 100; i++) {
      heap.used += 1;
      if (i % 2 === 0) heap.alive += 1;
      pace();
    }
    expect(heap.collections).toBeGreaterThanOrEqual(9);
    expect(heap.collections).toBeLessThanOrEqual(20);
  });

  it('does nothing where the runtime gives no collector (the command line, node without --expose-gc)', () => {
    let looked = 0;
    const pace = heapPacer({
      gc: undefined,
      usedBytes: () => {
        looked++;
        return 10 * HEAP_STEP_BYTES;
      },
    });
    pace();
    expect(looked).toBe(0);
  });

  it("takes V8's own collector when node exposes it, as AWS Lambda's Node.js runtime does", () => {
    const exposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
    let collected = 0;
    const original = (globalThis as { gc?: () => void }).gc;
    (globalThis as { gc?: () => void }).gc = () => {
      collected++;
    };
    try {
      let used = 0;
      const pace = heapPacer({ usedBytes: () => used, stepBytes: 1 });
      used = 5;
      pace();
      expect(collected).toBe(1);
    } finally {
      if (exposed) (globalThis as { gc?: () => void }).gc = original;
      else delete (globalThis as { gc?: () => void }).gc;
    }
  });
});
