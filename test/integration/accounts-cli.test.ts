import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { accountScope } from '../../functions/core/scan/accounts';
import { FileStateStore } from '../../functions/local/file-state-store';
import { generatePortfolio, type Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { findingKeys, runCli, startCliServer } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { type SnsEnvelope, sqsVariant, startSnsEmulator } from '../support/sns-emulator';
import { loadState } from '../support/whole-state';

/**
 * `scan --accounts FILE` (issue 22): three accounts of one reseller (one simulator, one key each),
 * one of them with a key the reseller refuses.
 */

const NOW = '2026-11-22T06:00:00Z';
const KEYS = {
  a: 'sk_live_brand_a_0123456789abcdef',
  b: 'sk_live_brand_b_0123456789abcdef',
  c: 'sk_live_brand_c_0123456789abcdef',
};
const portfolios: Record<'a' | 'b' | 'c', Portfolio> = {
  a: generatePortfolio({ domains: 120, seed: 11, now: Date.parse(NOW) }),
  b: generatePortfolio({ domains: 90, seed: 12, now: Date.parse(NOW) }),
  c: generatePortfolio({ domains: 60, seed: 13, now: Date.parse(NOW) }),
};
const truthKeys = (p: Portfolio) => p.truth.findings.map((f) => `${f.key} ${f.kind} ${f.severity}`).sort();
/** The names of a portfolio's domains that parse (a state remembers those). */
const domainNames = (p: Portfolio) =>
  p.domains
    .map((d) => String(d.domain_name))
    .filter((n) => !p.truth.problems.includes(n))
    .sort();
const ACCOUNTS = {
  accounts: [
    { name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' },
    { name: 'brand-b', apiKeyEnv: 'BRAND_B_KEY', accountLabel: 'Brand B (live)' },
    { name: 'brand-c', apiKeyEnv: 'BRAND_C_KEY' },
  ],
};

let sim: Simulator;
let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let dir: string;
let file: string;

beforeAll(async () => {
  emulator = await startSnsEmulator();
  sim = await startSimulator({
    portfolio: portfolios.a,
    apiKey: KEYS.a,
    accounts: [
      { apiKey: KEYS.b, portfolio: portfolios.b },
      { apiKey: KEYS.c, portfolio: portfolios.c },
    ],
  });
});
afterAll(async () => {
  await sim?.close();
  await emulator?.close();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function accountsFile(content: unknown = ACCOUNTS): string {
  dir = mkdtempSync(join(tmpdir(), 'sentinel-accounts-'));
  file = join(dir, 'accounts.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

const env = (overrides: Record<string, string> = {}) => ({
  RESELLER_BASE_URL: sim.url,
  BRAND_A_KEY: KEYS.a,
  BRAND_B_KEY: KEYS.b,
  // The reseller does not know this one.
  BRAND_C_KEY: 'sk_live_wrong_key_0123456789abcdef',
  REPORT_DIR: join(dir, 'reports'),
  ...overrides,
});

const attribute = (m: SnsEnvelope, name: string) => m.MessageAttributes[name]?.Value;

describe('scan --accounts: several accounts, one run', () => {
  it('reports two accounts exactly, carries the third one’s error, publishes per account, and exits 1', async () => {
    const topicArn = await emulator.topic('accounts-cli');
    const brandA = await emulator.queueSubscribedTo(topicArn, 'accounts-cli-brand-a', {
      account: ['brand-a'],
    });
    const everything = await emulator.queueSubscribedTo(topicArn, 'accounts-cli-all');
    const chatArn = await emulator.topic('accounts-cli-chat');
    const chatB = await emulator.queueSubscribedTo(chatArn, 'accounts-cli-chat-brand-b', {
      account: ['brand-b'],
    });
    const run = await runCli(
      ['scan', '--accounts', accountsFile(), '--json', '--now', NOW, '--expiry-days', '30'],
      env({ ALERT_TOPIC_ARN: topicArn, CHAT_TOPIC_ARN: chatArn }),
      { sns: emulator.snsClient },
    );
    expect(run.code).toBe(1);
    const { accounts } = JSON.parse(run.stdout);
    expect(accounts.map((r: { source: { account: string } }) => r.source.account)).toEqual([
      'brand-a',
      'brand-b',
      'brand-c',
    ]);
    const [a, b, c] = accounts;
    expect(findingKeys(a)).toEqual(truthKeys(portfolios.a));
    expect(findingKeys(b)).toEqual(truthKeys(portfolios.b));
    expect(a.problems.map((p: { key: string }) => p.key)).toEqual(portfolios.a.truth.problems);
    expect(c).toEqual({
      source: { account: 'brand-c', base_url: sim.url },
      error: { name: 'AuthenticationError', message: expect.stringMatching(/HTTP 401/) },
    });
    expect(run.stderr).toMatch(/^sentinel: account brand-c could not be read: .*HTTP 401/m);
    expect(run.stderr).not.toContain(KEYS.a);
    expect(run.stderr).not.toContain('sk_live_wrong_key');

    // One message per account that could be read, each naming its account; a filter on one gets only its own.
    const all = await emulator.drain(everything);
    expect(all.map((m) => attribute(m, 'account')).sort()).toEqual(['brand-a', 'brand-b']);
    const onlyA = await emulator.drain(brandA);
    expect(onlyA.map((m) => attribute(m, 'account'))).toEqual(['brand-a']);
    expect(onlyA[0]?.Subject).toMatch(/^domain-sentinel \[brand-a\]: /);
    expect(JSON.parse(sqsVariant(onlyA[0] as SnsEnvelope)).source.account).toBe('brand-a');
    const fromB = all.find((m) => attribute(m, 'account') === 'brand-b') as SnsEnvelope;
    expect(fromB.Subject).toMatch(/^domain-sentinel \[Brand B \(live\)\]: /);
    expect(JSON.parse(fromB.Message).sms).toMatch(/^Brand B \(live\): /);
    // The chat message names its account too, and a channel of one account gets only its own.
    const chat = await emulator.drain(chatB);
    expect(chat.map((m) => attribute(m, 'account'))).toEqual(['brand-b']);
    expect(JSON.parse(chat[0]?.Message as string).content.title).toContain('Brand B (live)');
  });

  it('says in the digest which account could not be read, and picks one account with --account', async () => {
    const path = accountsFile();
    const run = await runCli(['scan', '--accounts', path, '--dry-run', '--now', NOW], env());
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('== account brand-a ==\n');
    expect(run.stdout).toMatch(
      /^ {2}brand-c: COULD NOT BE READ: the reseller API refused the API key \(HTTP 401\)/m,
    );
    expect(run.stdout).toMatch(/^ {2}brand-a: \d+ critical/m);

    // brand-b's own expiryDays wins over the flag every account shares.
    const own = accountsFile({
      accounts: [
        ...ACCOUNTS.accounts.filter((a) => a.name !== 'brand-b'),
        { ...ACCOUNTS.accounts[1], expiryDays: 45 },
      ],
    });
    const one = await runCli(
      [
        'scan',
        '--accounts',
        own,
        '--account',
        'brand-b',
        '--json',
        '--dry-run',
        '--now',
        NOW,
        '--expiry-days',
        '30',
      ],
      env(),
    );
    expect(one.code, one.stderr).toBe(0);
    const { accounts } = JSON.parse(one.stdout);
    expect(accounts.map((r: { source: { account: string } }) => r.source.account)).toEqual(['brand-b']);
    expect(accounts[0].policy.expiry_days).toBe(45);
    const typo = await runCli(['scan', '--accounts', path, '--account', 'brand-bb', '--dry-run'], env());
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      `sentinel: --account brand-bb: no account of that name in ${path}; did you mean brand-b?\n`,
    );
  });

  it('names the variable of the refused account’s own key, not RESELLER_API_KEY, which it never read', async () => {
    const run = await runCli(
      ['scan', '--accounts', accountsFile(), '--json', '--dry-run', '--now', NOW],
      env({ RESELLER_API_KEY: KEYS.a }),
    );
    expect(run.code).toBe(1);
    const c = JSON.parse(run.stdout).accounts[2];
    expect(c.error.message).toMatch(/HTTP 401\) for domain list page 1 \(.*\); check BRAND_C_KEY \(/);
    expect(c.error.message).not.toContain('RESELLER_API_KEY');
    expect(run.stderr).toMatch(/^sentinel: account brand-c could not be read: .*; check BRAND_C_KEY \(/m);
    expect(run.stderr).not.toContain('sk_live_wrong_key');
  });

  it('refuses the second account that reads the same reseller account with the same key, scanning the first', async () => {
    const path = accountsFile({
      accounts: [...ACCOUNTS.accounts.slice(0, 2), { name: 'brand-a-copy', apiKeyEnv: 'BRAND_A_COPY_KEY' }],
    });
    // The same key in another variable, as a pasted line carries it (a trailing newline).
    const run = await runCli(
      ['scan', '--accounts', path, '--json', '--dry-run', '--now', NOW],
      env({ BRAND_A_COPY_KEY: `${KEYS.a}\n` }),
    );
    expect(run.code).toBe(1);
    const [a, b, copy] = JSON.parse(run.stdout).accounts;
    expect(findingKeys(a)).toEqual(truthKeys(portfolios.a));
    expect(findingKeys(b)).toEqual(truthKeys(portfolios.b));
    expect(copy).toEqual({
      source: { account: 'brand-a-copy', base_url: sim.url },
      error: {
        name: 'ConfigError',
        message: `BRAND_A_COPY_KEY holds the same API key as BRAND_A_KEY of account brand-a, at the same reseller (${sim.url}): account brand-a-copy would scan and alert brand-a's domains again; give each account its own key, or remove one of them from ${path}`,
      },
    });
    expect(run.stdout + run.stderr).not.toContain(KEYS.a);
  });

  it('refuses the account --account picks when it holds the key of an earlier account of the file, before a request', async () => {
    const path = accountsFile({
      accounts: [...ACCOUNTS.accounts.slice(0, 2), { name: 'brand-a-copy', apiKeyEnv: 'BRAND_A_COPY_KEY' }],
    });
    const before = sim.requests.length;
    const run = await runCli(
      ['scan', '--accounts', path, '--account', 'brand-a-copy', '--json', '--dry-run', '--now', NOW],
      env({ BRAND_A_COPY_KEY: KEYS.a }),
    );
    expect(run.code).toBe(1);
    const [copy] = JSON.parse(run.stdout).accounts;
    expect(copy.error.message).toMatch(
      /^BRAND_A_COPY_KEY holds the same API key as BRAND_A_KEY of account brand-a, at the same reseller/,
    );
    expect(sim.requests.length).toBe(before);
  });

  it('names the account’s own key variable when restore or snooze --account is refused its key', async () => {
    const path = accountsFile();
    const domain = 'example.nl';
    for (const argv of [
      ['restore', domain, '--yes'],
      ['snooze', domain, '--state', join(dir, 'state.json')],
    ]) {
      const run = await runCli([...argv, '--accounts', path, '--account', 'brand-c'], env());
      expect(run.code, `${argv[0]}: ${run.stderr}`).toBe(1);
      expect(run.stderr).toMatch(
        /^sentinel: the reseller API refused the API key \(HTTP 401\) .*; check BRAND_C_KEY \(/,
      );
      expect(run.stderr).not.toContain('RESELLER_API_KEY');
    }
  });

  it('refuses an apiKeyEnv that names a secret of its own or of AWS: its value would go to the reseller', async () => {
    // A reseller that notes the bearer it is sent, as any host an account names could.
    const bearers: string[] = [];
    const spy = createServer((req, res) => {
      bearers.push(String(req.headers.authorization));
      res.writeHead(401).end();
    });
    await new Promise<void>((done) => spy.listen(0, '127.0.0.1', done));
    const resellerBaseUrl = `http://127.0.0.1:${(spy.address() as AddressInfo).port}`;
    const signingKey = 'cli-signing-key-0123456789abcdef0123456789';
    try {
      for (const apiKeyEnv of ['LINK_SIGNING_KEY', 'AWS_SECRET_ACCESS_KEY']) {
        const path = accountsFile({ accounts: [{ name: 'brand-x', apiKeyEnv, resellerBaseUrl }] });
        const run = await runCli(
          ['scan', '--accounts', path, '--dry-run', '--now', NOW],
          env({ LINK_SIGNING_KEY: signingKey, AWS_SECRET_ACCESS_KEY: 'aws-secret-0123456789abcdef' }),
        );
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(
          /^sentinel: accounts file .*: account "brand-x" \(accounts\[0\]\): apiKeyEnv must name a variable of the account's key alone/,
        );
        rmSync(dir, { recursive: true, force: true });
      }
      expect(bearers).toEqual([]);
    } finally {
      await new Promise((done) => spy.close(done));
    }
  });

  it('refuses an accounts file with an unknown key, naming the closest known one', async () => {
    const path = accountsFile({ accounts: [{ name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY', expiryDay: 10 }] });
    const run = await runCli(['scan', '--accounts', path, '--dry-run'], env());
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `sentinel: accounts file ${path}: account "brand-a" (accounts[0]): unknown setting expiryDay; did you mean expiryDays?\n`,
    );
  });
});

describe('scan --accounts with memory: state per account', () => {
  const good = {
    accounts: [
      { name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' },
      { name: 'brand-b', apiKeyEnv: 'BRAND_B_KEY' },
      { name: 'brand-c', apiKeyEnv: 'BRAND_C_KEY' },
    ],
  };
  const goodEnv = () => env({ BRAND_C_KEY: KEYS.c });

  it('keeps each account’s state in its own file: a second run is quiet for all three', async () => {
    const path = accountsFile(good);
    const state = join(dir, 'state.json');
    const first = await runCli(
      ['scan', '--accounts', path, '--state', state, '--alert-to', join(dir, 'alerts.txt'), '--now', NOW],
      goodEnv(),
    );
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.match(/appended the alert to/g)).toHaveLength(3);
    expect(
      readdirSync(dir)
        .filter((f) => f.startsWith('state.'))
        .sort(),
    ).toEqual(['state.brand-a.json', 'state.brand-b.json', 'state.brand-c.json']);
    const second = await runCli(
      [
        'scan',
        '--accounts',
        path,
        '--state',
        state,
        '--alert-to',
        join(dir, 'alerts.txt'),
        '--now',
        '2026-11-22T07:00:00Z',
      ],
      goodEnv(),
    );
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.match(/no alert published: nothing new/g)).toHaveLength(3);
    for (const [name, key] of [
      ['brand-a', 'a'],
      ['brand-b', 'b'],
      ['brand-c', 'c'],
    ] as const) {
      const { state: s } = await loadState(
        new FileStateStore(join(dir, `state.${name}.json`)),
        accountScope(sim.url, name),
      );
      expect(s.scope).toBe(accountScope(sim.url, name));
      // Exactly its own account's domains: none of another account's.
      expect(Object.keys(s.domains).sort()).toEqual(domainNames(portfolios[key]));
    }
  });

  it('keeps each account under its own scope in one table; no account’s domains appear in another’s', async () => {
    const dynalite = await startDynalite();
    try {
      const path = accountsFile(good);
      const ddb = {
        AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'x',
        AWS_SECRET_ACCESS_KEY: 'x',
      };
      expect((await runCli(['state', 'init', 'dynamodb:accounts-state'], ddb)).code).toBe(0);
      const args = [
        'scan',
        '--accounts',
        path,
        '--state',
        'dynamodb:accounts-state',
        '--alert-to',
        join(dir, 'alerts.txt'),
      ];
      const first = await runCli([...args, '--now', NOW], { ...goodEnv(), ...ddb });
      expect(first.code, first.stderr).toBe(0);
      const second = await runCli([...args, '--now', '2026-11-22T07:00:00Z'], { ...goodEnv(), ...ddb });
      expect(second.stdout.match(/no alert published: nothing new/g)).toHaveLength(3);
      for (const [name, key] of [
        ['brand-a', 'a'],
        ['brand-b', 'b'],
        ['brand-c', 'c'],
      ] as const) {
        const store = new DynamoDbStateStore({
          client: dynalite.client(),
          tableName: 'accounts-state',
          scope: accountScope(sim.url, name),
        });
        expect(
          Object.keys((await loadState(store, accountScope(sim.url, name))).state.domains).sort(),
        ).toEqual(domainNames(portfolios[key]));
      }
      // The reseller's own scope (a run without accounts) holds nothing of theirs.
      const plain = await loadState(
        new DynamoDbStateStore({ client: dynalite.client(), tableName: 'accounts-state', scope: sim.url }),
        sim.url,
      );
      expect(Object.keys(plain.state.domains)).toEqual([]);
    } finally {
      await dynalite.close();
    }
  });
});

describe('simulate --accounts: several accounts on a laptop', () => {
  it('serves one portfolio per account, each behind its own key, and prints the keys it made up', async () => {
    const path = accountsFile();
    const server = await startCliServer(['simulate', '--port', '0', '--domains', '30', '--accounts', path], {
      BRAND_A_KEY: KEYS.a,
    });
    try {
      const { stdout } = server.output();
      // brand-a's key came from the environment: never echoed.
      expect(stdout).not.toContain('BRAND_A_KEY');
      const exports = Object.fromEntries(
        [...stdout.matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]),
      );
      expect(Object.keys(exports).sort()).toEqual([
        'BRAND_B_KEY',
        'BRAND_C_KEY',
        'RDAP_BOOTSTRAP_URL',
        'RESELLER_API_KEY',
        'RESELLER_BASE_URL',
      ]);
      // The registry side's bootstrap, on the same server (scan --registry-check reads it).
      expect(exports.RDAP_BOOTSTRAP_URL).toBe(`${exports.RESELLER_BASE_URL}/rdap/dns.json`);
      const run = await runCli(['scan', '--accounts', path, '--json', '--dry-run'], {
        ...exports,
        BRAND_A_KEY: KEYS.a,
        REPORT_DIR: join(dir, 'reports'),
      });
      expect(run.code, run.stderr).toBe(0);
      const reports = JSON.parse(run.stdout).accounts as Array<{ findings: Array<{ domain_name?: string }> }>;
      expect(reports).toHaveLength(3);
      // Three portfolios, not one served three times.
      const names = reports.map((r) => JSON.stringify(r.findings.map((f) => f.domain_name).sort()));
      expect(new Set(names).size).toBe(3);
    } finally {
      await server.stop();
    }
  });
});

describe('scan --accounts refuses what no account could do, before reading any', () => {
  it('exits 2 when there is nowhere to deliver, or links without a signing key', async () => {
    const path = accountsFile();
    const requestsBefore = sim.requests.length;
    const nowhere = await runCli(['scan', '--accounts', path], env());
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toMatch(/^sentinel: ALERT_TOPIC_ARN is not set; /);
    const unsigned = await runCli(
      ['scan', '--accounts', path, '--dry-run'],
      env({ LINK_BASE_URL: 'https://links.example' }),
    );
    expect(unsigned.code).toBe(2);
    expect(unsigned.stderr).toMatch(/^sentinel: LINK_SIGNING_KEY is not set; /);
    expect(sim.requests).toHaveLength(requestsBefore);
  });
});
