import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webAppForServe } from '../../bin/commands/serve';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { DEFAULT_POLICY, type DomainFinding } from '../../functions/core/findings/classify';
import { parseSigningKeys, signLink, signRestoreLink } from '../../functions/core/links/links';
import { ResellerClient } from '../../functions/core/reseller/client';
import { settingsFromEnv } from '../../functions/core/scan/config';
import { scanAccount } from '../../functions/core/scan/scan';
import { createRestoreHandler } from '../../functions/handlers/restore-handler';
import { serveLocally } from '../../functions/local/local-server';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { confirmedPost } from '../support/restore-env';

const API_KEY = 'sk_test_idn_restore_7a1c';
const SIGNING_KEY = 'idn-restore-signing-key-0123456789abcdef0123';
const NOW = Date.now();
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const keys = parseSigningKeys(SIGNING_KEY);

/**
 * The account may hold a domain under its Unicode spelling or with a trailing dot, as
 * reseller-api.md allows (`domain_name`: "Full domain name"; `idn_language` exists). The scan signs
 * its links under the normalised name (punycode, no trailing dot), and a reseller that matches
 * `domain_name` as it holds the name (the embedded simulator does, case aside) finds nothing by that
 * name: the web links must search the account's other spellings, or the restore link in the alert
 * answers 404 "not in this reseller account" for a domain in its last days.
 */
let sim: Simulator;
let dir: string;
const env: Record<string, string> = { RESELLER_API_KEY: API_KEY, LINK_SIGNING_KEY: SIGNING_KEY };
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sentinel-idn-links-'));
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 5, seed: 3, now: NOW }),
    apiKey: API_KEY,
  });
  env.RESELLER_BASE_URL = sim.url;
  for (const name of ['ørsted-review.dk', 'trailing-review.dk.', 'ærø-cli.dk'])
    sim.updateDomain(name, {
      status: ['quarantine'],
      date_expiry: iso(NOW - 40 * DAY),
      date_deleted: iso(NOW - 10 * DAY),
      auto_renew: false,
    });
  for (const name of ['ålesund-ack.no', 'trailing-ack.no.', 'trailing-cli.no.'])
    sim.updateDomain(name, { status: ['registered'], date_expiry: iso(NOW + 5 * DAY), auto_renew: false });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The account's findings, as a scan reads them (links are signed by the callers). */
async function findingOf(
  held: string,
  restoreBase = 'http://127.0.0.1/',
): Promise<DomainFinding | undefined> {
  const report = await scanAccount({
    client: new ResellerClient({ baseUrl: sim.url, apiKey: API_KEY }),
    now: NOW,
    policy: DEFAULT_POLICY,
    restoreLinkFor: (domain) => signRestoreLink({ baseUrl: restoreBase, domain, keys, now: NOW }),
  });
  return report.findings.find((f): f is DomainFinding => 'domain_name' in f && f.domain_name === held);
}

describe('the restore link of a quarantined domain the account spells in Unicode', () => {
  let server: Awaited<ReturnType<typeof serveLocally>>;
  beforeAll(async () => {
    const handler = createRestoreHandler({
      settings: () => settingsFromEnv(env),
      secrets: new EnvSecretSource(env),
      log: () => undefined,
    });
    server = await serveLocally(handler, { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['ørsted-review.dk', 'xn--rsted-review-ujb.dk'],
    ['trailing-review.dk.', 'trailing-review.dk'],
  ])('restores %s through the link its scan finding carries', async (held, signed) => {
    const finding = await findingOf(held, server.url);
    expect(finding?.kind).toBe('quarantine');
    expect(finding?.restore_url).toContain(`/restore/${signed}?`);

    const post = await fetch(
      finding?.restore_url as string,
      confirmedPost(signed, { Accept: 'application/json' }),
    );
    expect(await post.json()).toMatchObject({ outcome: 'restored' });
    expect(sim.domain(held)?.status).toEqual(['registered']);
  });
});

describe('the acknowledge link of a domain the account spells in Unicode', () => {
  let server: Awaited<ReturnType<typeof serveLocally>>;
  beforeAll(async () => {
    const appEnv = { ...env, STATE: join(dir, 'state.json') };
    server = await serveLocally(
      webAppForServe({ env: appEnv, secrets: new EnvSecretSource(appEnv), log: () => undefined }),
      { port: 0 },
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['ålesund-ack.no', 'xn--lesund-ack-05a.no'],
    ['trailing-ack.no.', 'trailing-ack.no'],
  ])('acknowledges %s through the link signed under its normalised name', async (held, signed) => {
    const finding = await findingOf(held);
    expect(finding?.kind).toBe('expiring');
    const link = signLink({
      baseUrl: server.url,
      action: 'acknowledge',
      subject: signed,
      finding: finding as DomainFinding,
      keys,
      now: NOW,
    });
    expect(link).toContain(`/acknowledge/${signed}?`);
    const post = await fetch(link, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect([post.status, await post.json()]).toMatchObject([200, { outcome: 'acknowledged' }]);
  });
});

describe('the command line, given a domain the account spells in Unicode or with a trailing dot', () => {
  it('restores it by any spelling and acknowledges it by its normalised name', async () => {
    const state = join(dir, 'cli-state.json');
    const restored = await runCli(['restore', 'ÆRØ-CLI.DK.', '--yes', '--state', state], env);
    expect([restored.code, restored.stdout]).toEqual([0, expect.stringMatching(/^restored ærø-cli\.dk$/m)]);
    expect(sim.restoreCalls).toContain('ærø-cli.dk');
    expect(sim.domain('ærø-cli.dk')?.status).toEqual(['registered']);

    const acked = await runCli(['ack', 'trailing-cli.no', '--state', state], env);
    expect([acked.code, acked.stderr]).toEqual([0, '']);
  });
});

/**
 * A reseller that answers a search without a hit with 404 (the documentation leaves it open; the
 * simulator's notFoundWithoutHit) answers the first spelling of a name the account holds in
 * Unicode, the punycode the link carries, with 404. The next spellings must still be searched: the
 * domain is in the account, in quarantine, and a link that says it may have left the account and
 * restores nothing loses it.
 */
describe('the restore link of a Unicode name at a reseller whose search answers 404 without a hit', () => {
  let strict: Simulator;
  let server: Awaited<ReturnType<typeof serveLocally>>;
  beforeAll(async () => {
    strict = await startSimulator({
      portfolio: generatePortfolio({ domains: 3, seed: 5, now: NOW }),
      apiKey: API_KEY,
      notFoundWithoutHit: true,
    });
    strict.updateDomain('ærø-strict.dk', {
      status: ['quarantine'],
      date_expiry: iso(NOW - 40 * DAY),
      date_deleted: iso(NOW - 10 * DAY),
      auto_renew: false,
    });
    const strictEnv = { ...env, RESELLER_BASE_URL: strict.url };
    const handler = createRestoreHandler({
      settings: () => settingsFromEnv(strictEnv),
      secrets: new EnvSecretSource(strictEnv),
      log: () => undefined,
    });
    server = await serveLocally(handler, { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await strict?.close();
  });

  it('finds it under its Unicode spelling and restores it', async () => {
    const signed = 'xn--r-strict-i0a5p.dk';
    const link = signRestoreLink({ baseUrl: server.url, domain: signed, keys, now: NOW });
    const post = await fetch(link, confirmedPost(signed, { Accept: 'application/json' }));
    expect([post.status, await post.json()]).toMatchObject([200, { outcome: 'restored' }]);
    expect(strict.restoreCalls).toEqual(['ærø-strict.dk']);
  });

  it('still says the search answered 404 when no spelling finds the name, and restores nothing', async () => {
    const link = signRestoreLink({ baseUrl: server.url, domain: 'gone-strict.dk', keys, now: NOW });
    const post = await fetch(link, confirmedPost('gone-strict.dk', { Accept: 'application/json' }));
    expect([post.status, await post.json()]).toMatchObject([502, { outcome: 'lookup_not_found' }]);
    expect(strict.restoreCalls).not.toContain('gone-strict.dk');
  });

  it('says so at the command line too, in the words of the link, and restores nothing', async () => {
    const cli = await runCli(['restore', 'gone-strict.dk', '--yes'], {
      ...env,
      RESELLER_BASE_URL: strict.url,
    });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(
      /^sentinel: gone-strict\.dk was NOT restored: the reseller’s search answered 404 \(not found\) for gone-strict\.dk: it may have left the account\. Check the domain’s status in the reseller’s control panel before trying again\.\n/,
    );
    expect(strict.restoreCalls).not.toContain('gone-strict.dk');
  });
});
