import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/docs';

/**
 * What `sentinel --help`, `sentinel scan --help` and every refusal of bad usage load: the compiled
 * entry and the chunk of main() (bin/cli.ts), with what they import statically. docs/performance.md
 * holds help to 4× a bare `node -e 0`, which the AWS SDK alone (some hundred files) breaks; a
 * command's own chunk loads it, only when that command runs.
 */

const DIST = join(ROOT, 'dist');

/** `import … from "x"` and `import "x"` of a compiled file: what loads with it (not `import("x")`). */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^import\s(?:[^"';]{0,2000}\sfrom\s)?["']([^"']{1,300})["']/gm)].map(
    (m) => m[1] as string,
  );
}

/** The packages (bare specifiers) loaded with `entries`, following their relative imports. */
function packagesLoadedWith(entries: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const queue = [...entries];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith('.')) queue.push(join(dirname(file), spec));
      else if (!spec.startsWith('node:')) packages.add(spec);
    }
  }
  return packages;
}

describe('the compiled command line, as help and usage errors load it', () => {
  it('loads no AWS SDK and no Powertools before a command runs', () => {
    const cli = readdirSync(join(DIST, 'chunks')).filter((f) => /^cli-[\w-]{1,40}\.js$/.test(f));
    expect(cli).toHaveLength(1);
    const packages = packagesLoadedWith([join(DIST, 'sentinel.js'), join(DIST, 'chunks', cli[0] as string)]);
    const heavy = [...packages].filter(
      (p) => p.startsWith('@aws-sdk/') || p.startsWith('@aws-lambda-powertools/'),
    );
    expect(heavy).toEqual([]);
  });
});
