// The command line, compiled: bin/sentinel.ts and what it imports, bundled by esbuild into dist/
// (one small entry, and a chunk per command that only that command loads), so `sentinel` starts as
// plain JavaScript instead of transpiling some hundred TypeScript files at every start. `npm ci`
// builds it (package.json's `prepare`); bin/sentinel.js builds it again when a source it was built
// from changed since, so a clone never runs stale code. Plain JavaScript, because it runs before
// anything could compile it.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the compiled command line goes (ignored by git). */
export const DIST = join(ROOT, 'dist');
/** What the build was made from and when: the sources bin/sentinel.js checks for changes. */
const MANIFEST = join(DIST, 'build.json');
/** The compiled entry, as bin/sentinel.js imports it. */
export const ENTRY = join(DIST, 'sentinel.js');

/**
 * Builds dist/ from the sources. Every file is written beside its place and renamed into it, the
 * entry last, so a `sentinel` starting meanwhile runs the old build or the new one, never half.
 * @returns the sources it was built from, relative to the root
 */
export async function buildCli() {
  const startedAt = Date.now();
  // Imported here: a start that finds dist/ fresh never loads esbuild.
  const { build } = await import('esbuild').catch((error) => {
    throw new Error(
      'the command line is compiled by esbuild, a dev dependency: run npm ci (not --omit=dev)',
      {
        cause: error,
      },
    );
  });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { sentinel: 'bin/sentinel.ts' },
    outdir: DIST,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: externalPackages(),
    chunkNames: 'chunks/[name]-[hash]',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const written = new Set();
  const entry = result.outputFiles.find((f) => f.path === ENTRY);
  for (const file of [...result.outputFiles.filter((f) => f !== entry), entry]) {
    if (!file) throw new Error('esbuild wrote no dist/sentinel.js');
    mkdirSync(dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents, { mode: file === entry ? 0o755 : 0o644 });
    renameSync(temporary, file.path);
    written.add(file.path);
  }
  const inputs = Object.keys(result.metafile.inputs).sort();
  const manifest = `${JSON.stringify({ builtAt: startedAt, inputs }, null, 2)}\n`;
  writeFileSync(`${MANIFEST}.${process.pid}.tmp`, manifest);
  renameSync(`${MANIFEST}.${process.pid}.tmp`, MANIFEST);
  written.add(MANIFEST);
  removeOthers(DIST, written);
  return inputs;
}

/**
 * The packages loaded from node_modules as they are (the AWS SDK, Powertools, fauxqs, …: only the
 * commands that use them load them). All but zod: help reads the settings table, whose schemas are
 * zod's, and zod bundled and tree-shaken into one file loads in a fraction of the time its some
 * hundred files of node_modules take.
 */
function externalPackages() {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((n) => n !== 'zod');
  return names.flatMap((name) => [name, `${name}/*`]);
}

/** Chunks of earlier builds go: only what this build wrote stays in dist/. */
function removeOthers(dir, keep) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) removeOthers(path, keep);
    else if (!keep.has(path) && !path.endsWith('.tmp')) rmSync(path, { force: true });
  }
}

/**
 * Why dist/ must be built again, or undefined when it is up to date: it is missing, or a source it
 * was built from changed (or went) since. A hundred stats: about a millisecond.
 */
export function staleBecause() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
    statSync(ENTRY);
  } catch {
    return 'dist/ has not been built';
  }
  for (const input of manifest.inputs) {
    let changed;
    try {
      changed = statSync(join(ROOT, input)).mtimeMs;
    } catch {
      return `${input} is gone`;
    }
    if (changed >= manifest.builtAt) return `${input} changed`;
  }
  return undefined;
}

/** dist/ as the sources are now: built again when it is stale. */
export async function freshBuild() {
  const why = staleBecause();
  if (why !== undefined) {
    process.stderr.write(`sentinel: compiling the command line into dist/ (${why} since it was built)\n`);
    await buildCli();
  }
  return ENTRY;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const inputs = await buildCli();
  process.stdout.write(`built ${relative(ROOT, ENTRY)} from ${inputs.length} sources\n`);
}
