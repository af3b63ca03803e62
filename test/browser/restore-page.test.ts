import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBrowser, launchBrowser } from '../support/chromium';
import { runCli } from '../support/cli';
import { startRestoreStack } from '../support/restore-env';

let browser: Browser;
let stack: Awaited<ReturnType<typeof startRestoreStack>>;
const screenshots = mkdtempSync(join(tmpdir(), 'sentinel-restore-'));

beforeAll(async () => {
  browser = await launchBrowser();
  stack = await startRestoreStack({ domains: 200, seed: 33 });
});
afterAll(async () => {
  await closeBrowser(browser);
  await stack?.close();
  rmSync(screenshots, { recursive: true, force: true });
});

describe('restore page in Chromium', () => {
  it('opens the link from a scan report, confirms, restores on the button, and the simulator shows it restored', async () => {
    const scan = await runCli(['scan', '--json', '--dry-run'], stack.env);
    const finding = JSON.parse(scan.stdout).findings.find((f: { kind: string }) => f.kind === 'quarantine');
    const domain: string = finding.domain_name;
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });

    await page.goto(finding.restore_url);
    await expect(page.locator('h1').textContent()).resolves.toBe(`Restore ${domain} from quarantine?`);
    expect(stack.sim.domain(domain)?.status).toEqual(['quarantine']);
    await page.screenshot({ path: join(screenshots, 'confirm.png') });

    await page.getByRole('button', { name: `Restore ${domain}` }).click();
    await page.waitForLoadState();
    await expect(page.locator('h1').textContent()).resolves.toBe(`${domain} restored`);
    expect(stack.sim.domain(domain)?.status).toEqual(['registered']);
    expect(stack.sim.restoreCalls).toEqual([domain]);
    // The stylesheet is allowed by its hash: a strict CSP that still renders the page as designed.
    const headingColour = await page.locator('h1').evaluate((el) => getComputedStyle(el).color);
    expect(headingColour).toBe('rgb(17, 99, 41)');
    await expect(page.locator('form').count()).resolves.toBe(0);
    expect(violations).toEqual([]);
  });
});
