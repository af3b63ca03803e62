import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePoliciesText } from '../../functions/core/scan/policies';
import { readAccountsFile } from '../../lib/config';

/**
 * Review: a JSON file with the same key twice is read by JSON.parse, which keeps the last value
 * and drops the first without a word (lib/config.ts readJsonObject, functions/core/scan/policies.ts
 * parsePoliciesText). A second "accounts" list pasted below the first leaves every account of the
 * first unscanned; a policy's second "alertEmails" drops the first recipients. Bad input should get
 * a clear error naming the problem, and nothing should be lost.
 */

const dir = mkdtempSync(join(tmpdir(), 'duplicate-keys-review-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('JSON files with a key given twice (review)', () => {
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
