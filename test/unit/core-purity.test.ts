import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Lints `source` as if it were the file at `path`, with the project's own biome.json, in a scratch
 * copy of the layout (so no probe file ever appears in the real tree).
 */
function lintAs(path: string, source: string) {
  const root = mkdtempSync(join(tmpdir(), 'core-purity-'));
  try {
    copyFileSync(join(process.cwd(), 'biome.json'), join(root, 'biome.json'));
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), source);
    const biome = join(process.cwd(), 'node_modules', '.bin', 'biome');
    const run = spawnSync(biome, ['lint', path], { cwd: root, encoding: 'utf8' });
    return { code: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const FORBIDDEN = [
  "import { SNSClient } from '@aws-sdk/client-sns';\nexport const x = SNSClient;\n",
  "import { Logger } from '@aws-lambda-powertools/logger';\nexport const x = Logger;\n",
  "import type { Context } from 'aws-lambda';\nexport type X = Context;\n",
  "import { createServer } from 'node:http';\nexport const x = createServer;\n",
  "import { EnvSecretSource } from '../adapters/secrets';\nexport const x = EnvSecretSource;\n",
];

describe('the pure core (functions/core)', () => {
  it.each(FORBIDDEN)('fails lint on an import of the outside world: %s', (source) => {
    const run = lintAs('functions/core/probe.ts', source);
    expect(run.code).not.toBe(0);
    expect(run.output).toContain('noRestrictedImports');
  });

  it('allows the same imports in functions/adapters (the rule is scoped, not global)', () => {
    const run = lintAs('functions/adapters/probe.ts', FORBIDDEN[0] as string);
    expect(run.output).not.toContain('noRestrictedImports');
  });

  it('holds for every file in the core today', () => {
    const dir = join(process.cwd(), 'functions', 'core');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(text, file).not.toMatch(/from '(@aws-sdk\/|@aws-lambda-powertools\/|aws-lambda'|node:http')/);
    }
  });
});
