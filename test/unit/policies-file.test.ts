import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withPoliciesFile } from '../../bin/policies-file';
import { POLICIES_MAX_CHARS } from '../../functions/core/scan/policies';

/** `scan --policies FILE` (bin/policies-file.ts): a file a scan cannot take is refused naming the file. */

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('a policies file', () => {
  it('too long for a scan to take is refused naming the file and its length, not POLICIES', () => {
    dir = mkdtempSync(join(tmpdir(), 'policies-file-'));
    // Valid by every rule of the schema (50 policies of 100 patterns), yet 81 254 characters.
    const policies = Array.from({ length: 50 }, (_, i) => ({
      name: `p${i}`,
      match: { names: Array.from({ length: 100 }, (_, j) => `*.n${j}.example`) },
    }));
    const text = JSON.stringify({ policies });
    expect(text.length).toBeGreaterThan(POLICIES_MAX_CHARS);
    writeFileSync(join(dir, 'p.json'), text);
    expect(() => withPoliciesFile({ policiesFile: 'p.json' }, { cwd: dir })).toThrow(
      `policies file p.json is ${text.length} characters, more than the ${POLICIES_MAX_CHARS} a scan takes`,
    );
    const fits = JSON.stringify({ policies: policies.slice(0, 10) });
    writeFileSync(join(dir, 'p.json'), fits);
    expect(withPoliciesFile({ policiesFile: 'p.json' }, { cwd: dir }).policies).toBe(fits);
  });
});
