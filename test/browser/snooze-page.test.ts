import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webAppForServe } from '../../bin/commands/serve';
import { EnvSecretSource } from '../../functions/aws/secrets';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { serveLocally } from '../../functions/local/local-server';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { closeBrowser, launchBrowser } from '../support/chromium';
import { runCli } from '../support/cli';
import { API_KEY, SIGNING_KEY } from '../support/restore-env';
import { startSnsEmulator } from '../support/sns-emulator';

const ARTIFACTS = join(process.cwd(), '.tmp', 'screenshots');
const HOUR = 3_600_000;
let browser: Browser;
let sim: Simulator;
let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let server: Awaited<ReturnType<typeof serveLocally>>;
let dir: string;
let env: Record<string, string>;
let queue: string;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'sentinel-snooze-browser-'));
  [browser, sim, emulator] = await Promise.all([
    launchBrowser(),
    startSimulator({
      portfolio: generatePortfolio({ domains: 100, seed: 71, now: Date.now() }),
      apiKey: API_KEY,
    }),
    startSnsEmulator(),
  ]);
  const topicArn = await emulator.topic('snooze-browser');
  queue = await emulator.queueSubscribedTo(topicArn, 'snooze-browser-mail');
  env = {
    ...emulator.sdkEnv,
    RESELLER_BASE_URL: sim.url,
    RESELLER_API_KEY: API_KEY,
    LINK_SIGNING_KEY: SIGNING_KEY,
    ALERT_TOPIC_ARN: topicArn,
    STATE: join(dir, 'state.json'),
  };
  server = await serveLocally(
    webAppForServe({ env, secrets: new EnvSecretSource(env), log: () => undefined }),
    { port: 0 },
  );
  env.LINK_BASE_URL = server.url;
});
afterAll(async () => {
  await closeBrowser(browser);
  await server?.close();
  await Promise.all([sim?.close(), emulator?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const scan = (now: number) =>
  runCli(['scan', '--json', '--now', new Date(now).toISOString()], env, { sns: emulator.snsClient });
const mails = async () =>
  (await emulator.drain(queue)).map((m) => (JSON.parse(m.Message) as { email: string }).email);

describe('snooze page in Chromium', () => {
  it('confirms, snoozes for the days chosen, and the next alert no longer names the domain while the report shows it snoozed', async () => {
    // The first scan ran 21 hours ago (a scan may not run ahead of the clock).
    const start = Date.now();
    const first = JSON.parse((await scan(start - 21 * HOUR)).stdout) as { findings: DomainFinding[] };
    const target = first.findings.find(
      (f) => f.kind === 'expiring' && f.severity === 'warning' && f.days_left >= 10,
    );
    if (!target?.actions?.snooze) throw new Error('the portfolio has no warning to snooze');
    expect((await mails())[0]).toContain(` ${target.domain_name}: `);

    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(target.actions.snooze);
    await expect(page.locator('h1').textContent()).resolves.toBe(`Snooze ${target.domain_name}?`);
    await expect(page.getByLabel('7 days').isChecked()).resolves.toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'snooze-confirm.png') });
    await page.getByLabel('30 days').check();
    await page.getByRole('button', { name: `Snooze ${target.domain_name}` }).click();
    await page.waitForLoadState();
    await expect(page.locator('h1').textContent()).resolves.toBe(`${target.domain_name} snoozed`);
    expect(violations).toEqual([]);

    const second = await scan(start);
    expect(second.code).toBe(0);
    const [mail] = await mails();
    expect(mail).toMatch(/CRITICAL/);
    expect(mail).not.toContain(target.domain_name);
    const report = JSON.parse(second.stdout) as { report_url: string; findings: DomainFinding[] };
    const shown = report.findings.find((f) => f.domain_name === target.domain_name);
    expect(Date.parse(shown?.snoozed_until ?? '') - start).toBeGreaterThan(29 * 24 * HOUR);

    await page.goto(report.report_url);
    const item = page.locator('ul.items li', {
      has: page.locator('strong', { hasText: target.domain_name }),
    });
    await expect(item.locator('.tag').textContent()).resolves.toMatch(/^snoozed until /);
    await page.screenshot({ path: join(ARTIFACTS, 'report-after-snooze.png') });
  });
});
