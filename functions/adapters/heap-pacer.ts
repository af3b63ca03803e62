import { getHeapStatistics } from 'node:v8';

/**
 * Garbage collected at a long scan's own pace, where the runtime allows it.
 *
 * A stateful scan of a million domains keeps some 50–100 MB alive, but makes garbage by the
 * gigabyte: the account's pages, the state's query pages, the write batches of a first save. Much
 * of it lives across an await (a page being taken in, a batch in flight), so it outlives the young
 * generation and V8 lets the old one grow to several times what is alive before it collects:
 * measured, 535–607 MB of peak RSS for some 180 MB alive. A full collection whenever the heap grew
 * by {@link HEAP_STEP_BYTES} since the last one keeps the peak near what is alive.
 *
 * AWS Lambda's Node.js runtime starts node with `--expose-gc` (its bootstrap script), so in the
 * scan function `globalThis.gc` is there; elsewhere (the command line, tests) it usually is not and
 * this does nothing. A collection of a heap this size takes tens of milliseconds. The step is a
 * trade: 16 MB against 32 took a first scan of a million domains (exec wrapper in place) from
 * 389-415 MB to 368-380 MB, and its save from 24-40 s to 40-59 s (npm run bench, docs/performance.md).
 */
export const HEAP_STEP_BYTES = 16 * 2 ** 20;

export interface HeapPacerOptions {
  /** The collector. @default globalThis.gc (undefined unless node runs with --expose-gc) */
  readonly gc?: (() => void) | undefined;
  /** Bytes the heap holds now. @default v8.getHeapStatistics().used_heap_size */
  readonly usedBytes?: () => number;
  /** Growth that earns a collection. @default HEAP_STEP_BYTES */
  readonly stepBytes?: number;
}

/** A function to call at each pause (a page taken in, a batch written): it collects when the heap grew a step. */
export type HeapPacer = () => void;

/** The pacer where there is nothing to pace with: it does nothing. */
export const NO_PACE: HeapPacer = () => undefined;

export function heapPacer(options: HeapPacerOptions = {}): HeapPacer {
  const gc = 'gc' in options ? options.gc : (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') return NO_PACE;
  const usedBytes = options.usedBytes ?? (() => getHeapStatistics().used_heap_size);
  const step = options.stepBytes ?? HEAP_STEP_BYTES;
  let mark = usedBytes();
  return () => {
    if (usedBytes() - mark < step) return;
    gc();
    mark = usedBytes();
  };
}
