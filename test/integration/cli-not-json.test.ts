import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';

/**
 * A key file named by mistake where a JSON file is expected: JSON.parse's own message quotes the
 * start of the text (`Unexpected token 's', "sk_live_ab"... is not valid JSON`), which is the key.
 */
const SECRET = 'sk_live_N0tJs0nS3cr3t';
const KEY = 'sk_not_json_0123456789';
let dir: string;
let keyFile: string;
let sim: Simulator;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sentinel-not-json-'));
  keyFile = join(dir, 'reseller.key');
  writeFileSync(keyFile, SECRET);
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 5, seed: 2, now: Date.parse('2026-11-22T06:00:00Z') }),
    apiKey: KEY,
  });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a file that is not JSON, given where JSON is expected', () => {
  it.each([
    ['--accounts', 'accounts file'],
    ['--policies', 'policies file'],
    ['--state', 'the state in'],
  ])('is refused without quoting a character of it (%s)', async (flag, what) => {
    const run = await runCli(['scan', '--dry-run', flag, keyFile], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(what);
    expect(run.stderr).toContain('not JSON (it does not parse as JSON)');
    for (const part of [SECRET, SECRET.slice(0, 10), SECRET.slice(-8)]) {
      expect(run.stderr).not.toContain(part);
      expect(run.stdout).not.toContain(part);
    }
  });
});
