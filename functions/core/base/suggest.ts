/**
 * "Did you mean": the known name closest to a mistyped one. Optimal string alignment distance
 * (Levenshtein plus swapped neighbours, so `scna` is one edit from `scan`), or a known name that
 * starts with what was typed (`--dry` for `--dry-run`).
 */

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The known name closest to `given`, or undefined when none is close enough to be a likely typo:
 * within a third of its length in edits (at least 2), compared without regard to case, `-` or `_`.
 */
export function closest(given: string, known: readonly string[]): string | undefined {
  const fold = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  const typed = fold(given);
  if (!typed) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const candidate = fold(name);
    const distance = candidate.startsWith(typed) && typed.length >= 3 ? 0.5 : editDistance(typed, candidate);
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (!best) return undefined;
  const allowed = Math.max(2, Math.floor(Math.max(typed.length, fold(best.name).length) / 3));
  return best.distance <= allowed ? best.name : undefined;
}
