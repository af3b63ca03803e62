import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { restorableRecord } from '../support/fixed-reseller';

/**
 * Issue 33, item 5: a named account's key rotation, end to end through the command line, on the
 * file store and on DynamoDB (dynalite). The scan refuses the rotated key with the exact command
 * that rebinds the account's state; that command, run as printed, lets the next scan go on with
 * its memory; and state, snooze, ack, audit and restore with --account act in that account's
 * state only.
 */

const DAY = 86_400_000;
const KEYS = {
  a: 'sk_live_rotation_brand_a_0123456789',
  aRotated: 'sk_live_rotation_brand_a_rotated_987',
  b: 'sk_live_rotation_brand_b_0123456789',
};

/** One account's portfolio: a domain that expires in 20 days without auto-renew, one in quarantine. */
function portfolio(prefix: string, now = Date.now()): Portfolio {
  return {
    domains: [
      {
        domain_name: `${prefix}-late.com`,
        status: ['registered'],
        date_expiry: new Date(now + 20 * DAY).toISOString(),
        auto_renew: false,
        registrant_handle: 'C1',
      },
      restorableRecord(`${prefix}-lost.com`, now),
    ],
    contacts: [],
    truth: { findings: [], problems: [] },
  };
}

let dynalite: Awaited<ReturnType<typeof startDynalite>>;
beforeAll(async () => {
  dynalite = await startDynalite();
});
afterAll(async () => {
  await dynalite?.close();
});

let sim: Simulator | undefined;
let dir: string | undefined;
afterEach(async () => {
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  sim = undefined;
  dir = undefined;
});

interface Finding {
  readonly domain_name?: string;
  readonly acknowledged?: boolean;
  readonly snoozed_until?: string;
}

describe.each([
  ['the file store', 'file'],
  ['DynamoDB', 'dynamodb'],
] as const)('a named account’s key rotation on %s', (_, store) => {
  it('is refused with the exact command, which rebinds the account’s state; --account acts in that account only', async () => {
    // Prepare: one reseller, two accounts; brand-a without a base URL of its own, brand-b with one.
    sim = await startSimulator({
      portfolio: portfolio('a'),
      apiKey: KEYS.a,
      accounts: [{ apiKey: KEYS.b, portfolio: portfolio('b') }],
    });
    dir = await mkdtemp(join(tmpdir(), 'sentinel-rotation-'));
    const file = join(dir, 'accounts.json');
    await writeFile(
      file,
      JSON.stringify({
        accounts: [
          { name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' },
          { name: 'brand-b', apiKeyEnv: 'BRAND_B_KEY', resellerBaseUrl: sim.url },
        ],
      }),
    );
    const table = `rotation-${Math.random().toString(36).slice(2, 10)}`;
    const state = store === 'file' ? join(dir, 'state.json') : `dynamodb:${table}`;
    const env: Record<string, string> = {
      RESELLER_BASE_URL: sim.url,
      BRAND_A_KEY: KEYS.a,
      BRAND_B_KEY: KEYS.b,
      REPORT_DIR: join(dir, 'reports'),
      ...dynalite.sdkEnv,
    };
    if (store === 'dynamodb') expect((await runCli(['state', 'init', state], env)).code).toBe(0);
    const named = (name: string) => ['--account', name, '--accounts', file, '--state', state];
    const scan = async (name: string) => {
      const run = await runCli(
        ['scan', ...named(name), '--json', '--alert-to', join(dir as string, `alerts-${name}.txt`)],
        env,
      );
      const report = run.code === 0 ? JSON.parse(run.stdout).accounts[0] : undefined;
      const finding = (domain: string): Finding | undefined =>
        report?.findings.find((f: Finding) => f.domain_name === domain);
      return { ...run, report, finding };
    };
    const audit = async (extra: string[]) => {
      const run = await runCli(['audit', '--json', ...extra], env);
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout).entries.map((e: { domain: string }) => e.domain);
    };

    // Each account's first scan, then an ack and a snooze made with --account.
    expect((await scan('brand-a')).code).toBe(0);
    expect((await scan('brand-b')).code).toBe(0);
    const ack = await runCli(['ack', 'a-late.com', ...named('brand-a')], env);
    expect(ack.code, ack.stderr).toBe(0);
    const snooze = await runCli(['snooze', 'b-late.com', '--days', '3', ...named('brand-b')], env);
    expect(snooze.code, snooze.stderr).toBe(0);
    // Each account's domain exists for its own key only: brand-a cannot silence brand-b's domain.
    const foreign = await runCli(['ack', 'b-late.com', ...named('brand-a')], env);
    expect([foreign.code, foreign.stderr]).toEqual([
      1,
      expect.stringContaining('not in this reseller account'),
    ]);

    const restored = await runCli(['restore', 'a-lost.com', '--yes', ...named('brand-a')], env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(sim.restoreCalls).toEqual(['a-lost.com']);
    expect(await audit(named('brand-a'))).toEqual(['a-lost.com']);
    expect(await audit(named('brand-b'))).toEqual([]);
    // The reseller's own state (no account) holds nothing of brand-a's.
    expect(await audit(['--state', state])).toEqual([]);

    // brand-a's next scan sees its ack (and not brand-b's snooze); brand-b's sees its snooze only.
    const seenA = await scan('brand-a');
    expect(seenA.finding('a-late.com')?.acknowledged).toBe(true);
    const seenB = await scan('brand-b');
    expect(seenB.finding('b-late.com')?.snoozed_until).toBeTruthy();
    expect(seenB.finding('b-late.com')?.acknowledged).toBeUndefined();

    // Act: brand-a's key is rotated at the reseller and in the variable its apiKeyEnv names.
    sim.rotateKey(KEYS.a, KEYS.aRotated);
    env.BRAND_A_KEY = KEYS.aRotated;
    const refused = await scan('brand-a');
    expect(refused.code).toBe(1);
    const expected = `sentinel state rebind ${state} --account brand-a --accounts ${file} --base-url ${sim.url} --yes`;
    const own = store === 'file' ? join(dir, 'state.brand-a.json') : state;
    expect(refused.stderr).toContain(
      `sentinel: account brand-a could not be read: the state in ${own} (account brand-a at ${sim.url}) was bound to another API key than account brand-a's; if its key was rotated: ${expected}\n`,
    );
    expect(refused.stderr).not.toContain(KEYS.aRotated);
    // The exact command, as printed, run as it is.
    const command = (refused.stderr.match(/: (sentinel state rebind [^\n]*--yes)/) ?? [])[1] as string;
    expect(command).toBe(expected);
    const rebind = await runCli(command.split(' ').slice(1), env);
    expect(rebind.code, rebind.stderr).toBe(0);
    expect(rebind.stdout).toMatch(
      /now belongs to account brand-a \(the key in BRAND_A_KEY\); its memory is kept/,
    );

    // Assert: brand-a scans again with its memory (its ack and its audit trail kept, nothing new).
    const after = await scan('brand-a');
    expect(after.code, after.stderr).toBe(0);
    expect(after.finding('a-late.com')?.acknowledged).toBe(true);
    expect(after.report.changes).toEqual([]);
    expect(await audit(named('brand-a'))).toEqual(['a-lost.com']);
    // brand-b was never touched: its key still opens its state, its snooze stands.
    expect((await scan('brand-b')).finding('b-late.com')?.snoozed_until).toBeTruthy();

    // state reset --account forgets brand-a's state only.
    const reset = await runCli(
      ['state', 'reset', state, '--account', 'brand-a', '--accounts', file, '--yes'],
      env,
    );
    expect(reset.code, reset.stderr).toBe(0);
    if (store === 'file') {
      expect(existsSync(join(dir, 'state.brand-a.json'))).toBe(false);
      expect(existsSync(join(dir, 'state.brand-b.json'))).toBe(true);
    }
    expect(await audit(named('brand-a'))).toEqual([]);
    const first = await scan('brand-a');
    expect(first.code, first.stderr).toBe(0);
    expect(first.finding('a-late.com')?.acknowledged).toBeUndefined();
    const kept = await scan('brand-b');
    expect(kept.finding('b-late.com')?.snoozed_until).toBeTruthy();
    expect(kept.report.changes).toEqual([]);
  });
});

describe('--account of a command that takes a state', () => {
  it('needs --accounts, names a missing account, and is refused by state init', async () => {
    dir = await mkdtemp(join(tmpdir(), 'sentinel-rotation-'));
    const file = join(dir, 'accounts.json');
    await writeFile(file, JSON.stringify({ accounts: [{ name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' }] }));
    const env = { RESELLER_BASE_URL: 'http://127.0.0.1:9', BRAND_A_KEY: KEYS.a };
    const state = join(dir, 'state.json');
    const alone = await runCli(['state', 'rebind', state, '--account', 'brand-a', '--yes'], env);
    expect([alone.code, alone.stderr]).toEqual([2, expect.stringContaining('goes with --accounts FILE')]);
    const noName = await runCli(['audit', '--state', state, '--accounts', file], env);
    expect([noName.code, noName.stderr]).toEqual([2, expect.stringContaining('--account NAME')]);
    const typo = await runCli(['audit', '--state', state, '--accounts', file, '--account', 'brand-b'], env);
    expect([typo.code, typo.stderr]).toEqual([2, expect.stringContaining('did you mean brand-a?')]);
    const init = await runCli(['state', 'init', 'dynamodb:some-table', '--account', 'brand-a'], env);
    expect([init.code, init.stderr]).toEqual([2, expect.stringContaining('takes no --account')]);
    // A state never written is not bound by a rebind (nothing is made where nothing was).
    const nothing = await runCli(
      ['state', 'rebind', state, '--account', 'brand-a', '--accounts', file, '--yes'],
      env,
    );
    expect([nothing.code, nothing.stderr]).toEqual([2, expect.stringContaining('nothing to rebind')]);
    expect(existsSync(join(dir, 'state.brand-a.json'))).toBe(false);
  });
});
