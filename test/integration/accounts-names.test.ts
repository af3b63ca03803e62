import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';

/**
 * Account names where they become file and folder names (issue 33): a name is refused where it
 * could meet another's or a device's, and an account's state file never meets the lock file or the
 * reports folder of the state `--state` names.
 */

const NOW = '2026-11-22T06:00:00Z';
const LATER = '2026-11-22T07:00:00Z';
const KEY = 'sk_names_primary_0123456789abcdef';
const keyOf = (name: string) => `sk_names_${name}_0123456789abcdef`;

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 30, seed: 31, now: Date.parse(NOW) }),
    apiKey: KEY,
    accounts: ['lock', 'reports'].map((name, i) => ({
      apiKey: keyOf(name),
      portfolio: generatePortfolio({ domains: 30, seed: 32 + i, now: Date.parse(NOW) }),
    })),
  });
});
afterAll(async () => {
  await sim?.close();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function accountsFile(names: readonly string[]): string {
  dir = mkdtempSync(join(tmpdir(), 'sentinel-account-names-'));
  const file = join(dir, 'accounts.json');
  const accounts = names.map((name) => ({ name, apiKeyEnv: `${name.toUpperCase()}_KEY` }));
  writeFileSync(file, JSON.stringify({ accounts }));
  return file;
}

const env = () => ({
  RESELLER_BASE_URL: sim.url,
  RESELLER_API_KEY: KEY,
  LOCK_KEY: keyOf('lock'),
  REPORTS_KEY: keyOf('reports'),
});

describe('account names that could meet another name, a device or a path', () => {
  it.each([
    ['Brand-A', 'upper case: brand-a and Brand-A would be one file where case is ignored'],
    ['../x', 'a path'],
    ['brand_a', 'a character a name does not hold'],
    ['brändа', 'Unicode (with a Cyrillic а)'],
    ['a'.repeat(33), 'longer than 32'],
  ])('refuses %j (%s), naming the account and the rule, before reading any account', async (name) => {
    const run = await runCli(['scan', '--accounts', accountsFile([name]), '--dry-run', '--now', NOW], env());

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('(accounts[0]): name must be 1 to 32 of a-z, 0-9 and "-"');
  });

  it.each(['con', 'nul', 'com1', 'lpt9'])(
    'refuses %j, a name Windows keeps for a device (its report folder)',
    async (name) => {
      const before = sim.requests.length;

      const run = await runCli(
        ['scan', '--accounts', accountsFile([name]), '--dry-run', '--now', NOW],
        env(),
      );

      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `account "${name}" (accounts[0]): name must not be a name Windows keeps for a device`,
      );
      expect(sim.requests.length).toBe(before);
    },
  );
});

describe('an account’s state file beside `--state state` (a path without an extension)', () => {
  const scanAccounts = (file: string, now: string) =>
    runCli(
      [
        'scan',
        '--accounts',
        file,
        '--state',
        join(dir, 'state'),
        '--alert-to',
        join(dir, 'alerts.txt'),
        '--now',
        now,
      ],
      env(),
    );

  it('is never the lock file of that state: account "lock" keeps its memory when the state itself is scanned', async () => {
    const file = accountsFile(['lock']);
    const first = await scanAccounts(file, NOW);
    expect(first.code, first.stderr).toBe(0);
    // A minute later (a lock file that old is taken for a dead process's), the state `--state` names is scanned.
    const aMinuteAgo = new Date(Date.now() - 60_000);
    for (const name of readdirSync(dir)) utimesSync(join(dir, name), aMinuteAgo, aMinuteAgo);
    const own = await runCli(
      ['scan', '--state', join(dir, 'state'), '--alert-to', join(dir, 'alerts.txt'), '--now', NOW],
      env(),
    );
    expect(own.code, own.stderr).toBe(0);

    const second = await scanAccounts(file, LATER);

    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/no alert published: nothing new/);
  });

  it('is never the reports folder of that state: account "reports" scans and remembers', async () => {
    const file = accountsFile(['reports']);

    const first = await scanAccounts(file, NOW);
    const second = await scanAccounts(file, LATER);

    expect(first.code, first.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/no alert published: nothing new/);
  });
});
