import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { renderActionConfirmPage } from '../../functions/core/pages/action-page';
import { FINDING_PAGE_HEADERS, renderFindingPage } from '../../functions/core/pages/finding-page';
import {
  renderConfirmPage,
  renderMessagePage,
  SECURITY_HEADERS,
} from '../../functions/core/pages/restore-page';
import { closeBrowser, launchBrowser } from '../support/chromium';
import { servePageHtml } from '../support/served-page';

/**
 * A domain name may be 253 characters with no space in it: on a phone, the pages that ask to type
 * it and press a button must still show the whole name and the button within the screen.
 */

const LABEL = 'a'.repeat(63);
const LONG = `${LABEL}.${LABEL}.${LABEL}.${'b'.repeat(57)}.nl`;
const NOW = Date.parse('2026-11-22T06:00:00Z');
const finding = {
  domain_name: LONG,
  kind: 'expiring',
  severity: 'warning',
  date_expiry: '2026-12-01T00:00:00Z',
  days_left: 9,
  auto_renew: false,
  registrant: { handle: 'C1', name: 'N'.repeat(120), email: `${'e'.repeat(120)}@example.nl` },
} as unknown as DomainFinding;

const PAGES: Record<string, { html: string; headers: Readonly<Record<string, string>> }> = {
  restore: {
    html: renderConfirmPage({
      domain: LONG,
      quarantinedSince: NOW,
      linkExpires: NOW,
      formAction: '?exp=1',
      consentRequired: true,
    }),
    headers: SECURITY_HEADERS,
  },
  message: {
    html: renderMessagePage({
      title: `${LONG} was not restored`,
      message: `Type the domain name (${LONG}) into the confirmation field to restore it.`,
      ok: false,
    }),
    headers: SECURITY_HEADERS,
  },
  snooze: {
    html: renderActionConfirmPage(
      LONG,
      {
        action: 'snooze',
        finding,
        linkExpires: NOW,
        formAction: '?exp=1',
        days: { choices: [1, 7], chosen: 7 },
      },
      NOW,
    ),
    headers: SECURITY_HEADERS,
  },
  finding: {
    html: renderFindingPage({
      kind: 'show',
      status: 200,
      finding,
      reportNow: '2026-11-22T06:00:00Z',
      links: { snooze: '../snooze/x', acknowledge: '../acknowledge/x' },
      linksExpire: NOW,
    }),
    headers: FINDING_PAGE_HEADERS,
  },
};

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => closeBrowser(browser));

describe('pages with a 253-character domain name on a phone', () => {
  it.each(Object.keys(PAGES))('the %s page fits the screen, its button too', async (name) => {
    const { html, headers } = PAGES[name] as (typeof PAGES)[string];
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    // Served with the page's own headers, as the web function serves it: its CSP allows its styles.
    await servePageHtml(page, html, headers);
    await page.goto(`http://pages.test/${name}`);
    const measured = await page.evaluate(() => ({
      width: document.documentElement.scrollWidth,
      screen: window.innerWidth,
      controls: Array.from(document.querySelectorAll('button, a, input[type=text]')).map(
        (el) => el.getBoundingClientRect().right,
      ),
      text: document.body.innerText,
    }));
    await context.close();

    expect(violations).toEqual([]);
    expect(measured.width).toBeLessThanOrEqual(measured.screen);
    for (const right of measured.controls) expect(right).toBeLessThanOrEqual(measured.screen);
    // The whole name is on the page (wrapped, not cut), so it can be read and typed.
    expect(measured.text.replace(/\s/g, '')).toContain(LONG);
  });
});
