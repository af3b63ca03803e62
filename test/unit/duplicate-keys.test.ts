import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { duplicateKey } from '../../functions/core/base/json';
import { parsePoliciesText } from '../../functions/core/scan/policies';
import { readAccountsFile, readSettingsFile } from '../../lib/config';

/**
 * Found by a review: a JSON file with the same key twice is read by JSON.parse, which keeps the last value
 * and drops the first without a word (lib/config.ts readJsonObject, functions/core/scan/policies.ts
 * parsePoliciesText). A second "accounts" list pasted below the first leaves every account of the
 * first unscanned; a policy's second "alertEmails" drops the first recipients. Bad input should get
 * a clear error naming the problem, and nothing should be lost.
 */

const dir = mkdtempSync(join(tmpdir(), 'duplicate-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('JSON files with a key given twice', () => {
  it('refuses an accounts file whose "accounts" key appears twice, instead of scanning only the last list', () => {
    const path = join(dir, 'accounts.json');
    writeFileSync(
      path,
      `{
  "accounts": [
    { "name": "brand-a", "apiKeyEnv": "BRAND_A_KEY" },
    { "name": "brand-b", "apiKeyEnv": "BRAND_B_KEY" }
  ],
  "accounts": [
    { "name": "brand-c", "apiKeyEnv": "BRAND_C_KEY" }
  ]
}
`,
    );
    let read: unknown;
    let refused: unknown;
    try {
      read = readAccountsFile(path, dir);
    } catch (error) {
      refused = error;
    }
    expect(read, 'brand-a and brand-b were dropped without a word').toBeUndefined();
    expect(String(refused)).toMatch(/accounts.*(twice|duplicate|more than once)/i);
  });

  it('refuses a policies file whose policy gives "alertEmails" twice, instead of dropping the first recipients', () => {
    const text = `{
  "policies": [
    { "name": "vip", "match": { "tags": ["vip"] },
      "alertEmails": ["vip-desk@example.nl"],
      "alertEmails": ["cto@example.nl"] }
  ]
}`;
    expect(() => parsePoliciesText(text, 'policies file policies.json')).toThrow(
      /alertEmails.*(twice|duplicate|more than once)/i,
    );
  });
});

describe('duplicateKey', () => {
  it('names the path of a key given twice in one object, at any depth', () => {
    expect(duplicateKey('{"a": 1, "a": 2}')).toBe('a');
    expect(duplicateKey('{"p": [{"n": 1}, {"n": 2, "m": {"x": 1, "x": 2}}]}')).toBe('p[1].m.x');
    expect(duplicateKey('[{"k": 1}, [0, {"k": 1, "k": 2}]]')).toBe('[1][1].k');
  });

  it('takes the same key in sibling objects, and strings that look like keys, as they are', () => {
    expect(duplicateKey('{"a": {"k": 1}, "b": {"k": 1}, "c": [{"k": 1}, {"k": 2}]}')).toBeNull();
    expect(duplicateKey('{"a": "{\\"a\\": 1, \\"a\\": 2}", "b": ["a", "a"], "c\\"": 1, "c": 2}')).toBeNull();
    // Keys are compared as JSON reads them: an escaped spelling is the same key.
    expect(duplicateKey('{"\\u0061": 1, "a": 2}')).toBe('a');
  });

  it('is the whole refusal of a settings file, naming the file and the key', () => {
    const path = join(dir, 'settings.json');
    writeFileSync(path, '{"alertEmails": ["a@example.nl"], "alertEmails": ["b@example.nl"]}');
    expect(() => readSettingsFile(path, dir)).toThrow(
      `settings file ${path} gives the key alertEmails twice: JSON keeps only the last, and the first would be lost without a word; keep one`,
    );
  });
});
