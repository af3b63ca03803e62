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
  "import { EnvSecretSource } from '../aws/secrets';\nexport const x = EnvSecretSource;\n",
  "import { FileStateStore } from '../../local/file-state-store';\nexport const x = FileStateStore;\n",
];

describe('the pure core (functions/core)', () => {
  it.each(FORBIDDEN)('fails lint on an import of the outside world: %s', (source) => {
    const run = lintAs('functions/core/probe.ts', source);
    expect(run.code).not.toBe(0);
    expect(run.output).toContain('noRestrictedImports');
  });

  it('allows the same imports in functions/aws (the rule is scoped, not global)', () => {
    const run = lintAs('functions/aws/probe.ts', FORBIDDEN[0] as string);
    expect(run.output).not.toContain('noRestrictedImports');
  });

  it.each([
    [
      'functions/use-cases/probe.ts',
      "import { SsmSecretSource } from '../aws/secrets';\nexport const x = SsmSecretSource;\n",
    ],
    [
      'functions/use-cases/probe.ts',
      "import type { ProxyHandler } from '../handlers/http-answer';\nexport type X = ProxyHandler;\n",
    ],
    [
      'functions/aws/probe.ts',
      "import { FileStateStore } from '../local/file-state-store';\nexport const x = FileStateStore;\n",
    ],
    [
      'functions/handlers/probe.ts',
      "import type { FileStateStore } from '../local/file-state-store';\nexport type X = FileStateStore;\n",
    ],
  ])('keeps the folders in their roles: %s may not %s', (path, source) => {
    const run = lintAs(path, source);
    expect(run.code).not.toBe(0);
    expect(run.output).toContain('noRestrictedImports');
  });

  it('lets a handler and a local adapter use an AWS adapter', () => {
    const local = lintAs(
      'functions/local/probe.ts',
      "import { SsmSecretSource } from '../aws/secrets';\nexport const x = SsmSecretSource;\n",
    );
    expect(local.output).not.toContain('noRestrictedImports');
    const handler = lintAs(
      'functions/handlers/probe.ts',
      "import { SsmSecretSource } from '../aws/secrets';\nexport const x = SsmSecretSource;\n",
    );
    expect(handler.output).not.toContain('noRestrictedImports');
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

/** The core's groups, lowest first: each may import only from those before it (docs/contributing.md). */
const GROUPS = [
  'base',
  'reseller',
  'findings',
  'registry',
  'links',
  'scan',
  'memory',
  'alerts',
  'decisions',
  'pages',
];

/** Lints a scratch tree of `files` (path → source) with the project's biome.json, in one run. */
function lintTree(files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'core-layers-'));
  try {
    copyFileSync(join(process.cwd(), 'biome.json'), join(root, 'biome.json'));
    for (const [path, source] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), source);
    }
    const biome = join(process.cwd(), 'node_modules', '.bin', 'biome');
    const run = spawnSync(biome, ['lint', '--max-diagnostics=none', 'functions'], {
      cwd: root,
      encoding: 'utf8',
    });
    const output = `${run.stdout}${run.stderr}`;
    // The files a noRestrictedImports diagnostic names.
    const flagged = new Set(
      [...output.matchAll(/^(functions\/\S+\.ts):\d+:\d+ lint\/style\/noRestrictedImports/gm)].map(
        (m) => m[1],
      ),
    );
    return { flagged, output };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('the core’s groups, in order (functions/core/<group>)', () => {
  it('keeps every file of the core in a group, and every group in the order', () => {
    const dir = join(process.cwd(), 'functions', 'core');
    const entries = readdirSync(dir, { withFileTypes: true });
    expect(entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => e.name)).toEqual([]);
    expect(
      entries
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort(),
    ).toEqual([...GROUPS].sort());
  });

  it('fails lint on an import from a higher group, and allows one from a lower group or its own', () => {
    const probes: Record<string, { readonly source: string; readonly upward: boolean }> = {};
    GROUPS.forEach((group, i) => {
      GROUPS.forEach((other, j) => {
        probes[`functions/core/${group}/probe-${other}.ts`] = {
          source: `import { x } from '../${other}/thing';\nexport const y = x;\n`,
          upward: j > i,
        };
      });
    });
    const { flagged, output } = lintTree(
      Object.fromEntries(Object.entries(probes).map(([path, p]) => [path, p.source])),
    );
    const upward = Object.keys(probes).filter((path) => probes[path]?.upward);
    expect(upward.length).toBe((GROUPS.length * (GROUPS.length - 1)) / 2);
    expect([...flagged].sort(), output).toEqual(upward.sort());
  });

  it('keeps every group pure: the outside world is refused in each, whatever its own rule says', () => {
    const probes = Object.fromEntries(
      GROUPS.map((group) => [
        `functions/core/${group}/probe.ts`,
        "import { SNSClient } from '@aws-sdk/client-sns';\nexport const x = SNSClient;\n",
      ]),
    );
    const { flagged, output } = lintTree(probes);
    expect([...flagged].sort(), output).toEqual(Object.keys(probes).sort());
  });
});
