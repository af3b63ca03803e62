import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBrowser, launchBrowser } from '../support/chromium';
import {
  pinnedReportPage,
  pngSize,
  SCALE,
  SCREENSHOT_PATH,
  sha256,
  sourceOf,
  VIEWPORT,
  withSource,
} from '../support/report-screenshot';

/**
 * Takes the README's screenshot of the report page in real Chromium. `npm run docs:screenshot`
 * (SENTINEL_UPDATE_SCREENSHOT=1) writes it to docs/images/ with the hash of the HTML it shows;
 * test/docs/screenshot.test.ts fails when the page no longer renders that HTML.
 */

const UPDATE = process.env.SENTINEL_UPDATE_SCREENSHOT === '1';
const ARTIFACTS = join(process.cwd(), '.tmp', 'screenshots');
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => closeBrowser(browser));

describe('the report page’s screenshot', () => {
  it('is taken of the demo’s report page on a phone, styled by its own stylesheet under its own CSP', async () => {
    const { html, headers } = await pinnedReportPage();
    const context = await browser.newContext({
      viewport: VIEWPORT,
      deviceScaleFactor: SCALE,
      isMobile: true,
    });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    // Served with the page's real headers, as the web function serves it.
    await page.route('http://report.test/**', (route) => route.fulfill({ status: 200, headers, body: html }));
    await page.goto('http://report.test/report');
    const headings = await page.locator('h2').allTextContents();
    expect(headings).toContain('Expiries and restore deadlines in the next 90 days');
    // The picture shows what a person must act on first: the restore-by dates of the quarantined domains.
    expect(headings[0]).toBe('Restore deadlines (2)');
    await expect(page.getByText('restore by').first().isVisible()).resolves.toBe(true);
    const png = await page.screenshot({ type: 'png' });
    await context.close();

    expect(violations).toEqual([]);
    expect(pngSize(png)).toEqual({ width: VIEWPORT.width * SCALE, height: VIEWPORT.height * SCALE });
    // A picture of something: a blank page compresses to a few kilobytes.
    expect(png.length).toBeGreaterThan(40_000);
    const recorded = withSource(png, sha256(html));
    expect(sourceOf(recorded)).toBe(sha256(html));
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, 'report-page-readme.png'), recorded);
    if (UPDATE) {
      mkdirSync(dirname(SCREENSHOT_PATH), { recursive: true });
      writeFileSync(SCREENSHOT_PATH, recorded);
    }
  }, 60_000);
});
