import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayDomain } from '../../functions/core/base/text';
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
  it('opens the link from a scan report, keeps the button inert until the name is typed (and consent given), then restores', async () => {
    const scan = await runCli(['scan', '--json', '--dry-run'], stack.env);
    const finding = JSON.parse(scan.stdout).findings.find(
      (f: { kind: string; domain_name: string }) => f.kind === 'quarantine' && f.domain_name.endsWith('.nl'),
    );
    const domain: string = finding.domain_name;
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|pattern/i.test(message.text())) violations.push(message.text());
    });

    await page.goto(finding.restore_url);
    await expect(page.locator('h1').textContent()).resolves.toBe(
      `Restore ${displayDomain(domain)} from quarantine?`,
    );
    await expect(page.locator('dd').nth(2).textContent()).resolves.toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC \(\d+ days? left(, LAST DAYS)?\)$/,
    );
    await expect(page.locator('.paid').textContent()).resolves.toContain('its API does not state the price');
    const button = page.getByRole('button', { name: `Restore ${domain}` });
    const pointer = () => button.evaluate((b) => getComputedStyle(b).pointerEvents);
    // Inert: the form is invalid, so the button takes no pointer and a submit is blocked by the browser.
    await expect(pointer()).resolves.toBe('none');
    await button.click({ force: true });
    await page.locator('#confirm_domain').press('Enter');
    // The registrant's consent (.nl) alone is not enough, nor a name one letter off.
    await page.getByRole('checkbox').check();
    await expect(pointer()).resolves.toBe('none');
    await page.locator('#confirm_domain').fill(domain.replace(/.$/, 'x'));
    await expect(pointer()).resolves.toBe('none');
    await page.locator('#confirm_domain').press('Enter');
    expect(stack.sim.restoreCalls).toEqual([]);
    expect(stack.sim.domain(domain)?.status).toEqual(['quarantine']);
    await page.screenshot({ path: join(screenshots, 'confirm.png') });

    // Typed as people type it (any case): the button comes alive; without consent it would not.
    await page.locator('#confirm_domain').fill(domain.toUpperCase());
    await page.getByRole('checkbox').uncheck();
    await expect(pointer()).resolves.toBe('none');
    await page.getByRole('checkbox').check();
    await expect(pointer()).resolves.toBe('auto');
    await button.click();
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
