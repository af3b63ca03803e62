import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINDING_PAGE_HEADERS, renderFindingPage } from '../../functions/core/pages/finding-page';
import { REPORT_PAGE_HEADERS, renderReportPage } from '../../functions/core/pages/report-page';
import { closeBrowser, launchBrowser } from '../support/chromium';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';
import { servePageHtml } from '../support/served-page';

/**
 * The pages review: names and registrants as a hostile reseller API may send them, in Chromium.
 * Markup stays text, nothing runs, and a bidi override or a zero-width character is shown as a
 * visible escape instead of reordering or hiding what follows.
 */

const registrant = {
  handle: 'H"<b>x</b>',
  name: '</script><img src=x onerror=alert(1)>\u202Eevil',
  company_name: '"><svg onload=alert(2)>',
  email: 'a"@b<c>',
};
const NAMES = [
  'x</script><img src=x onerror=alert(3)>.com',
  'a"><script>alert(4)</script>.nl',
  'evil\u202Egnp.exe.nl',
  'pay\u200Bpal.com',
];
const findings = NAMES.map((name) => domainFinding(name, 'expiring', 'warning', 3, { registrant }));

const PAGES: Record<string, { html: string; headers: Readonly<Record<string, string>> }> = {
  report: { html: renderReportPage({ report: reportOf(findings), token: {} }), headers: REPORT_PAGE_HEADERS },
  finding: {
    html: renderFindingPage({
      kind: 'show',
      status: 200,
      finding: findings[2] as (typeof findings)[number],
      reportNow: NOW_ISO,
      links: {},
      linksExpire: 0,
    }),
    headers: FINDING_PAGE_HEADERS,
  },
};

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => closeBrowser(browser));

describe('hostile names on the pages in Chromium', () => {
  it.each(Object.keys(PAGES))('the %s page shows them as inert text', async (name) => {
    const { html, headers } = PAGES[name] as (typeof PAGES)[string];
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await servePageHtml(page, html, headers);
    await page.goto(`http://pages.test/${name}`);
    const seen = await page.evaluate(() => ({
      elements: document.querySelectorAll('script, img, [onload], [onerror]').length,
      text: document.body.innerText,
    }));
    await page.close();
    expect(dialogs).toEqual([]);
    expect(seen.elements).toBe(0);
    // Shown as the characters they are, the override and the zero-width space as visible escapes.
    expect(seen.text).toContain('evil\\u202egnp.exe.nl');
    expect(seen.text).not.toContain('\u202E');
    expect(seen.text).not.toContain('\u200B');
    expect(seen.text).toContain('</script><img src=x onerror=alert(1)>\\u202eevil');
    if (name === 'report') {
      expect(seen.text).toContain('pay\\u200bpal.com');
      expect(seen.text).toContain('x</script><img src=x onerror=alert(3)>.com');
    }
  });
});
