import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');
const readJson = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8'));

interface Locked {
  readonly engines?: { readonly node?: string };
}

/** Every package the lockfile installs that declares the Node versions it runs on, and that range. */
function declared(): Array<[name: string, range: string]> {
  const lock = readJson('package-lock.json') as { packages: Record<string, Locked> };
  return Object.entries(lock.packages).flatMap(([path, entry]) =>
    path && entry.engines?.node ? [[path.replace(/^.*node_modules\//, ''), entry.engines.node]] : [],
  ) as Array<[string, string]>;
}

/** The packages whose declared Node versions leave out some of `ours`. */
function narrower(ours: string, packages: ReadonlyArray<readonly [string, string]>): string[] {
  return packages
    .filter(([, range]) => !semver.subset(ours, range))
    .map(([name, range]) => `${name} ${range}`);
}

describe('the Node versions package.json declares', () => {
  const ours = (readJson('package.json') as { engines: { node: string } }).engines.node;

  it('are Node versions every installed package runs on, so a dependency upgrade that drops one fails here', () => {
    // The AWS SDK announces that its releases after January 2027 need Node 22: an upgrade to one
    // must raise `engines` (and the docs that say Node 20) in the same change, not leave it to users.
    expect(semver.validRange(ours)).not.toBeNull();
    expect(narrower(ours, declared())).toEqual([]);
  });

  it('include the Node the Lambdas run on and the long-term releases the docs name', () => {
    for (const version of ['20.19.0', '22.13.0', '24.0.0'])
      expect(semver.satisfies(version, ours)).toBe(true);
  });

  it('the check names a package that needs a newer Node than ours', () => {
    expect(narrower(ours, [['@aws-sdk/client-sns', '>=22.0.0']])).toEqual(['@aws-sdk/client-sns >=22.0.0']);
  });
});
