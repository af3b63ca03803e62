import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withPoliciesFile } from '../../bin/policies-file';
import { readAccountsFile, readSettingsFile } from '../../lib/config';

/**
 * A JSON file saved by an editor that writes UTF-8 with a byte order mark (Windows Notepad,
 * PowerShell 5's Set-Content -Encoding UTF8) looks like any other, yet JSON.parse refuses the mark:
 * the message said only that it does not parse, of a file that looks right.
 */

const BOM = '\uFEFF';
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const saved = (name: string, text: string): string => {
  dir ??= mkdtempSync(join(tmpdir(), 'config-bom-'));
  writeFileSync(join(dir, name), `${BOM}${text}`, 'utf8');
  return dir;
};

describe('a config file that starts with a UTF-8 byte order mark', () => {
  it('reads as the same file without it: accounts, settings and policies files', () => {
    const accounts = '{"accounts": [{"name": "brand-a", "apiKeyEnv": "BRAND_A_KEY"}]}';
    expect(readAccountsFile('a.json', saved('a.json', accounts))).toEqual([
      { name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' },
    ]);
    const settings = '{"stackName": "DomainSentinel"}';
    expect(readSettingsFile('s.json', saved('s.json', settings))).toEqual({ stackName: 'DomainSentinel' });
    const policies = '{"policies": [{"name": "vip", "match": {"tags": ["vip"]}, "criticalDays": 30}]}';
    expect(withPoliciesFile({ policiesFile: 'p.json' }, { cwd: saved('p.json', policies) }).policies).toBe(
      policies,
    );
  });
});
