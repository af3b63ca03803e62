import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli, startCliServer } from '../support/cli';
import { SIGNING_KEY } from '../support/restore-env';

/**
 * The web surface of several accounts (issue 22): each account's links under /accounts/<name>/,
 * signed for that account, served with its own key, state and report; the overview at /accounts.
 */

const NOW = Date.now();
const KEY_A = 'sk_live_web_brand_a_0123456789ab';
const KEY_B = 'sk_live_web_brand_b_0123456789ab';
const ACCOUNTS = {
  accounts: [
    { name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' },
    { name: 'brand-b', apiKeyEnv: 'BRAND_B_KEY', accountLabel: 'Brand <B>' },
  ],
};

type Report = {
  source: { account: string };
  findings: DomainFinding[];
  report_url: string;
  calendar_url: string;
};

let sim: Simulator;
let server: Awaited<ReturnType<typeof startCliServer>>;
let dir: string;
let reports: Record<string, Report>;
let overview: string;
let file: string;
let linked: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 80, seed: 21, now: NOW }),
    apiKey: KEY_A,
    accounts: [{ apiKey: KEY_B, portfolio: generatePortfolio({ domains: 50, seed: 22, now: NOW }) }],
  });
  dir = mkdtempSync(join(tmpdir(), 'sentinel-accounts-web-'));
  file = join(dir, 'accounts.json');
  writeFileSync(file, JSON.stringify(ACCOUNTS));
  const env = {
    RESELLER_BASE_URL: sim.url,
    BRAND_A_KEY: KEY_A,
    BRAND_B_KEY: KEY_B,
    LINK_SIGNING_KEY: SIGNING_KEY,
    REPORT_DIR: join(dir, 'reports'),
  };
  const state = join(dir, 'state.json');
  server = await startCliServer(['serve', '--port', '0', '--accounts', file, '--state', state], env);
  linked = { ...env, LINK_BASE_URL: server.url };
  const scan = await runCli(
    ['scan', '--accounts', file, '--state', state, '--alert-to', join(dir, 'alerts.txt')],
    linked,
  );
  expect(scan.code, scan.stderr).toBe(0);
  overview = /^Overview of every account: (\S+)$/m.exec(scan.stdout)?.[1] ?? '';
  const json = await runCli(['scan', '--accounts', file, '--json', '--dry-run'], linked);
  reports = Object.fromEntries(
    (JSON.parse(json.stdout).accounts as Report[]).map((r) => [r.source.account, r]),
  );
});
afterAll(async () => {
  await server?.stop();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

const send = (url: string, init: RequestInit = {}) => fetch(url, { redirect: 'manual', ...init });
const a = () => reports['brand-a'] as Report;
const b = () => reports['brand-b'] as Report;

describe('links of several accounts, each signed for its account', () => {
  it('puts every link of an account under its own path', () => {
    expect(a().report_url.startsWith(`${server.url}/accounts/brand-a/report?exp=`)).toBe(true);
    expect(b().calendar_url.startsWith(`${server.url}/accounts/brand-b/calendar.ics?exp=`)).toBe(true);
    const restore = a().findings.find((f) => f.actions?.restore)?.actions?.restore ?? '';
    expect(restore.startsWith(`${server.url}/accounts/brand-a/restore/`)).toBe(true);
  });

  it('opens each account’s own report, and refuses an account’s link moved to another account', async () => {
    const pageA = await (await send(a().report_url)).text();
    const onlyInA = a().findings.find(
      (f) => f.domain_name && !b().findings.some((g) => g.domain_name === f.domain_name),
    )?.domain_name;
    expect(pageA).toContain(`<strong>${onlyInA}</strong>`);
    expect(pageA).toContain('domain-sentinel (brand-a)');
    const pageB = await (await send(b().report_url)).text();
    expect(pageB).toContain('domain-sentinel (Brand &#60;B&#62;)');
    expect(pageB).not.toContain(`<strong>${onlyInA}</strong>`);

    const moved = await send(a().report_url.replace('/accounts/brand-a/', '/accounts/brand-b/'));
    expect(moved.status).toBe(403);
    expect(await moved.text()).not.toContain(String(onlyInA));
    expect((await send(a().calendar_url.replace('/accounts/brand-a/', '/accounts/brand-b/'))).status).toBe(
      403,
    );
    // Nor is it one of an account that does not exist.
    expect((await send(a().report_url.replace('/accounts/brand-a/', '/accounts/brand-x/'))).status).toBe(403);
  });

  it('restores through an account’s link at that account’s reseller with its key, never another’s', async () => {
    const quarantined = b().findings.find((f) => f.actions?.restore);
    const restore = quarantined?.actions?.restore ?? '';
    const moved = await send(restore.replace('/accounts/brand-b/', '/accounts/brand-a/'), {
      method: 'POST',
      headers: { accept: 'application/json' },
    });
    expect(moved.status).toBe(403);
    const answer = await send(restore, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: `confirm_domain=${encodeURIComponent(quarantined?.domain_name ?? '')}&registrant_consent=yes`,
    });
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(sim.account(KEY_B)?.restoreCalls).toEqual([quarantined?.domain_name]);
    expect(sim.restoreCalls).toEqual([]);
  });

  it('shows one line per account on the overview, each linking to its own report', async () => {
    expect(overview.startsWith(`${server.url}/accounts?exp=`)).toBe(true);
    const answer = await send(overview);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'sha256-/);
    const html = await answer.text();
    const rows = [...html.matchAll(/<tr><td>(.*?)<\/tr>/g)].map((m) => m[1] as string);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^brand-a<\/td><td class="n( critical)?">\d+<\/td>/);
    expect(rows[1]).toContain('Brand &#60;B&#62; <span class="name">brand-b</span>');
    const hrefs = [...html.matchAll(/href="([^"]+)"/g)].map((m) => (m[1] as string).replaceAll('&#38;', '&'));
    for (const [index, name] of ['brand-a', 'brand-b'].entries()) {
      const href = new URL(hrefs[index] as string, overview).toString();
      expect(href.startsWith(`${server.url}/accounts/${name}/report?`)).toBe(true);
      expect((await send(href)).status).toBe(200);
    }
    // The overview's signature is its own: an account's report link does not open it, nor it an account's report.
    expect((await send(a().report_url.replace('/accounts/brand-a/report', '/accounts'))).status).toBe(403);
    expect((await send(overview.replace('/accounts?', '/accounts/brand-a/report?'))).status).toBe(403);
  });
});

describe('the deployment own routes once it serves several accounts', () => {
  it('answers each of them 410 as the web function in AWS does, reading and changing nothing', async () => {
    const restore = a().findings.find((f) => f.actions?.restore)?.actions?.restore ?? '';
    const own = (url: string) => url.replace('/accounts/brand-a/', '/');
    const calls = sim.restoreCalls.length;
    for (const url of [own(a().report_url), own(a().calendar_url), own(restore)]) {
      const page = await send(url);
      expect(page.status, url).toBe(410);
      expect(await page.text()).toContain('This link is no longer served');
    }
    const posted = await send(own(restore), {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'confirm_domain=x.nl&registrant_consent=yes',
    });
    expect(posted.status).toBe(410);
    expect((await posted.json()).outcome).toBe('link_retired');
    expect(sim.restoreCalls).toHaveLength(calls);
    expect(server.output().stderr).toContain('"outcome":"link_retired","status":410');
  });

  it('prints with sentinel link --account the link the account serves, refused on another path', async () => {
    const domain = a().findings.find((f) => f.actions?.restore)?.domain_name ?? '';
    const printed = await runCli(['link', domain, '--account', 'brand-a', '--accounts', file], linked);
    expect(printed.code, printed.stderr).toBe(0);
    const url = printed.stdout.trim();
    expect(url.startsWith(`${server.url}/accounts/brand-a/restore/${domain}?exp=`)).toBe(true);
    const page = await send(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`Restore <code>${domain}</code>`);
    expect((await send(url.replace('/accounts/brand-a/', '/accounts/brand-b/'))).status).toBe(403);
    // Without --account the link is of the deployment own routes, which it no longer serves.
    const root = await runCli(['link', domain], linked);
    expect(root.code, root.stderr).toBe(0);
    expect((await send(root.stdout.trim())).status).toBe(410);
    const alone = await runCli(['link', domain, '--account', 'brand-a'], linked);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--account brand-a goes with --accounts FILE');
  });

  it('names the routes it serves when it starts', () => {
    const started = server.output().stderr.split('\n')[0];
    expect(started).toContain("under /accounts/<name>/ each account's finding/<domain>, restore/<domain>");
    expect(started).toContain("the deployment's own routes (/restore/<domain>, /report, …) answer 410");
  });
});
