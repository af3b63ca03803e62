import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generatePortfolio, type Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { parseSentinelSettings } from '../../lib/config';
import { findingKeys, runCli } from '../support/cli';

/**
 * An accounts file that works on a laptop (issue 33): each account at its own reseller, a simulator
 * on its own port over plain http to 127.0.0.1, and no RESELLER_BASE_URL at all. http is accepted
 * for an account exactly where RESELLER_BASE_URL accepts it (to this machine), by the same rule;
 * a deployment asks https of both.
 */

const NOW = '2026-11-22T06:00:00Z';
const NAMES = ['shop-a', 'shop-b', 'shop-c'] as const;
const keyOf = (name: string) => `sk_laptop_${name}_0123456789abcdef`;
const portfolios: Portfolio[] = NAMES.map((_, i) =>
  generatePortfolio({ domains: 40 + 20 * i, seed: 21 + i, now: Date.parse(NOW) }),
);
const truthKeys = (p: Portfolio) => p.truth.findings.map((f) => `${f.key} ${f.kind} ${f.severity}`).sort();

let sims: Simulator[] = [];
let dir: string;

beforeAll(async () => {
  sims = await Promise.all(
    NAMES.map((name, i) => startSimulator({ portfolio: portfolios[i] as Portfolio, apiKey: keyOf(name) })),
  );
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.close()));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function accountsFile(accounts: unknown[]): string {
  dir = mkdtempSync(join(tmpdir(), 'sentinel-accounts-laptop-'));
  const file = join(dir, 'accounts.json');
  writeFileSync(file, JSON.stringify({ accounts }));
  return file;
}

/** Each account at its own simulator, its key in its own variable. */
const ownResellers = () =>
  NAMES.map((name, i) => ({
    name,
    apiKeyEnv: `${name.toUpperCase().replace('-', '_')}_KEY`,
    resellerBaseUrl: (sims[i] as Simulator).url,
  }));
const keysEnv = () =>
  Object.fromEntries(NAMES.map((name) => [`${name.toUpperCase().replace('-', '_')}_KEY`, keyOf(name)]));

describe('scan --accounts with three simulators on three ports', () => {
  it('scans each account at its own http://127.0.0.1 reseller, with no RESELLER_BASE_URL set', async () => {
    const file = accountsFile(ownResellers());
    const state = join(dir, 'state.json');

    const run = await runCli(
      [
        'scan',
        '--accounts',
        file,
        '--json',
        '--now',
        NOW,
        '--state',
        state,
        '--alert-to',
        join(dir, 'alerts.txt'),
      ],
      { ...keysEnv(), REPORT_DIR: join(dir, 'reports') },
    );

    expect(run.code, run.stderr).toBe(0);
    const { accounts } = JSON.parse(run.stdout) as {
      accounts: Array<{
        source: { account: string; base_url: string };
        findings: Array<Record<string, unknown>>;
      }>;
    };
    expect(accounts.map((r) => [r.source.account, r.source.base_url])).toEqual(
      NAMES.map((name, i) => [name, (sims[i] as Simulator).url]),
    );
    for (const [i, report] of accounts.entries())
      expect(findingKeys(report)).toEqual(truthKeys(portfolios[i] as Portfolio));
    // Each simulator was asked, and each only with its own account's key (any other is a 401).
    for (const sim of sims) expect(sim.requests.length).toBeGreaterThan(0);
    expect(
      readdirSync(dir)
        .filter((f) => f.startsWith('state.'))
        .sort(),
    ).toEqual(NAMES.map((name) => `state.${name}.json`));
  });

  it('still needs RESELLER_BASE_URL when one account names no reseller of its own', async () => {
    const [first, second, third] = ownResellers();
    const file = accountsFile([first, second, { ...third, resellerBaseUrl: undefined }]);

    const run = await runCli(['scan', '--accounts', file, '--dry-run', '--now', NOW], keysEnv());

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^sentinel: RESELLER_BASE_URL \(--base-url\) is required/m);
  });

  it('refuses http to another machine for an account, as for RESELLER_BASE_URL: the key would travel in clear', async () => {
    const [first, second, third] = ownResellers();
    const file = accountsFile([first, second, { ...third, resellerBaseUrl: 'http://reseller.example' }]);
    const asked = () => sims.map((sim) => sim.requests.length);
    const before = asked();

    const account = await runCli(['scan', '--accounts', file, '--dry-run', '--now', NOW], keysEnv());
    const global = await runCli(['scan', '--dry-run', '--now', NOW], {
      RESELLER_BASE_URL: 'http://reseller.example',
      RESELLER_API_KEY: keyOf('shop-a'),
    });

    const rule = 'must be an https URL (http only to 127.0.0.1, [::1] or localhost)';
    expect(account.code).toBe(2);
    expect(account.stderr).toContain(`account "shop-c" (accounts[2]): resellerBaseUrl ${rule}`);
    expect(global.code).toBe(2);
    expect(global.stderr).toContain(`RESELLER_BASE_URL (--base-url) ${rule}`);
    // Refused before any account was read: no key went anywhere.
    expect(asked()).toEqual(before);
  });
});

describe('a deployment of the same accounts file', () => {
  it('asks https of every account’s resellerBaseUrl, as of its own: a Lambda has no simulator on its loopback', () => {
    const accounts = accountsFile(
      ownResellers().map((a) => ({ ...a, apiKeyParameter: `/ds/${a.name}/key` })),
    );
    const props = {
      resellerBaseUrl: 'https://api.reseller.example',
      accounts,
      alertEmails: ['ops@example.com'],
    };

    expect(() => parseSentinelSettings(props)).toThrow(
      /account shop-a: resellerBaseUrl must be an https URL: the API key travels in its requests/,
    );
    expect(() => parseSentinelSettings({ ...props, resellerBaseUrl: sims[0]?.url })).toThrow(
      /resellerBaseUrl must be an https URL/,
    );
  });

  it('refuses an account whose apiKeyParameter is a secret of the deployment: the scan would send it to the reseller', () => {
    const props = {
      resellerBaseUrl: 'https://api.reseller.example',
      alertEmails: ['ops@example.com'],
      heartbeatUrlParameterName: '/ds/heartbeat-url',
    };
    const account = { name: 'brand-x', alertEmails: ['x@example.com'] };
    for (const parameter of ['/domain-sentinel/link-signing-key', '/ds/heartbeat-url']) {
      expect(() =>
        parseSentinelSettings({ ...props, accounts: [{ ...account, apiKeyParameter: parameter }] }),
      ).toThrow(
        `invalid DomainSentinel props: account brand-x: apiKeyParameter ${parameter} is the deployment's own secret`,
      );
    }
    // An account's own parameter is taken.
    expect(
      parseSentinelSettings({ ...props, accounts: [{ ...account, apiKeyParameter: '/ds/brand-x/key' }] })
        .accounts,
    ).toHaveLength(1);
  });
});
