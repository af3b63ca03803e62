import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINDING_PAGE_HEADERS, renderFindingPage } from '../../functions/core/pages/finding-page';
import { REPORT_PAGE_HEADERS, renderReportPage } from '../../functions/core/pages/report-page';
import { renderConfirmPage, SECURITY_HEADERS } from '../../functions/core/pages/restore-page';
import { closeBrowser, launchBrowser } from '../support/chromium';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';
import { servePageHtml } from '../support/served-page';

/**
 * The pages review: a page of another site must not frame a page with a button that acts (a
 * restore is paid) or with signed links, to lay its own over it (clickjacking). Checked in
 * Chromium, with each page served with its own headers, rather than by reading the headers.
 */

const finding = domainFinding('shop.nl', 'quarantine', 'critical', -3);
const PAGES: Record<string, { html: string; headers: Readonly<Record<string, string>> }> = {
  restore: {
    html: renderConfirmPage({
      domain: 'shop.nl',
      quarantinedSince: null,
      linkExpires: 0,
      formAction: '?exp=1',
    }),
    headers: SECURITY_HEADERS,
  },
  finding: {
    html: renderFindingPage({
      kind: 'show',
      status: 200,
      finding,
      reportNow: NOW_ISO,
      links: { restore: '../restore/shop.nl?exp=1' },
      linksExpire: 0,
    }),
    headers: FINDING_PAGE_HEADERS,
  },
  report: {
    html: renderReportPage({ report: reportOf([finding]), token: {} }),
    headers: REPORT_PAGE_HEADERS,
  },
};

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => closeBrowser(browser));

describe('the pages in a frame of another site', () => {
  it.each(Object.keys(PAGES))('the %s page refuses to be framed', async (name) => {
    const { html, headers } = PAGES[name] as (typeof PAGES)[string];
    const page = await browser.newPage();
    await servePageHtml(page, html, headers);
    await page.route('http://attacker.test/**', (route) =>
      route.fulfill({
        status: 200,
        headers: { 'Content-Type': 'text/html; charset=utf-8' },
        body: `<iframe src="http://pages.test/${name}" width="600" height="600"></iframe>`,
      }),
    );
    // The same page opened on its own renders (so a blocked frame is the headers' doing).
    await page.goto(`http://pages.test/${name}`);
    await expect(page.locator('h1').count()).resolves.toBe(1);
    await page.goto('http://attacker.test/');
    const frame = page.frames().find((f) => f !== page.mainFrame());
    await frame?.waitForLoadState().catch(() => undefined);
    const framed = await frame
      ?.evaluate(() => ({ url: location.href, headings: document.querySelectorAll('h1').length }))
      .catch(() => null);
    await page.close();
    // Blocked: Chromium shows its own error document in the frame, never the page.
    expect(framed?.headings ?? 0).toBe(0);
    expect(framed?.url ?? '').not.toBe(`http://pages.test/${name}`);
  });
});
