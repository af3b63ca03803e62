import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderConfirmPage, SECURITY_HEADERS } from '../../functions/core/pages/restore-page';
import { closeBrowser, launchBrowser } from '../support/chromium';
import { servePageHtml } from '../support/served-page';

/**
 * Found by the pages review: on the restore page of an IDN, Chromium kept the button inert for the
 * name typed in Unicode capitals (`BÜCHER.NL`), which the server takes, and the page named the
 * domain only in punycode. Served with the page's own headers, with no script, as the web function
 * serves it.
 */

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => closeBrowser(browser));

describe('the restore page of an IDN in Chromium', () => {
  it('names it in both forms and lets the button come alive for the name typed in any case', async () => {
    const html = renderConfirmPage({
      domain: 'xn--bcher-kva.nl',
      quarantinedSince: null,
      linkExpires: 0,
      formAction: '?exp=1',
      consentRequired: true,
    });
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|pattern/i.test(m.text())) violations.push(m.text());
    });
    await servePageHtml(page, html, SECURITY_HEADERS);
    await page.goto('http://pages.test/restore/xn--bcher-kva.nl');
    await expect(page.locator('h1').textContent()).resolves.toBe(
      'Restore xn--bcher-kva.nl (bücher.nl) from quarantine?',
    );
    await page.getByRole('checkbox').check();
    const button = page.getByRole('button', { name: 'Restore xn--bcher-kva.nl (bücher.nl)' });
    const pointer = () => button.evaluate((b) => getComputedStyle(b).pointerEvents);
    const field = page.locator('#confirm_domain');
    const valid = () => field.evaluate((el) => (el as HTMLInputElement).validity.valid);
    // Decomposed (u and U+0308, as some keyboards and pastes send it) the server takes it too.
    for (const typed of [
      'bücher.nl',
      'BÜCHER.NL',
      'Bücher.Nl',
      'XN--BCHER-KVA.NL',
      'bu\u0308cher.nl',
      'BU\u0308CHER.NL',
    ]) {
      await field.fill(typed);
      await expect(valid(), typed).resolves.toBe(true);
      await expect(pointer(), typed).resolves.toBe('auto');
    }
    for (const typed of ['bucher.nl', 'BÜCHER.NL.EVIL']) {
      await field.fill(typed);
      await expect(pointer(), typed).resolves.toBe('none');
    }
    await page.close();
    expect(violations).toEqual([]);
  });
});
