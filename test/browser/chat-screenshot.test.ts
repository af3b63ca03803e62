import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADAPTIVE_CARDS_SCRIPT,
  CHAT_PICTURE_PATH,
  CHAT_VIEWPORT,
  chatPicture,
  chatPictureSource,
  TEAMS_HOST_CONFIG,
} from '../support/chat-picture';
import { closeBrowser, launchBrowser } from '../support/chromium';
import { pngSize, sourceOf, withSource } from '../support/report-screenshot';

/**
 * Takes docs/chat.md's picture of one alert in Slack, Teams and Amazon Q Developer in real
 * Chromium; the Teams card is drawn by Microsoft's Adaptive Cards library. `npm run docs:screenshot`
 * writes it with the hash of what it shows; test/docs/chat-picture.test.ts checks it is current.
 */

const UPDATE = process.env.SENTINEL_UPDATE_SCREENSHOT === '1';
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => closeBrowser(browser));

describe('the chat picture', () => {
  it('shows the Slack blocks, the Teams card (rendered by the Adaptive Cards library) and the custom notification, names as data', async () => {
    const picture = chatPicture();
    const version = JSON.parse(
      readFileSync(join(dirname(ADAPTIVE_CARDS_SCRIPT), '..', 'package.json'), 'utf8'),
    ).version;
    const context = await browser.newContext({ viewport: CHAT_VIEWPORT, deviceScaleFactor: 1 });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.setContent(picture.html);
    await page.addScriptTag({ path: ADAPTIVE_CARDS_SCRIPT });
    const rendered = await page.evaluate((hostConfig) => {
      const AC = (window as unknown as { AdaptiveCards: typeof import('adaptivecards') }).AdaptiveCards;
      const card = new AC.AdaptiveCard();
      card.hostConfig = new AC.HostConfig(hostConfig);
      card.parse(JSON.parse(document.getElementById('card')?.textContent ?? '{}'));
      const element = card.render();
      if (element) document.getElementById('teams')?.appendChild(element);
      return document.getElementById('teams')?.innerText ?? '';
    }, TEAMS_HOST_CONFIG);
    expect(errors).toEqual([]);
    // The card as the library drew it: the heading, the items, their one link each (restore links
    // here: the picture's report carries no finding pages), the name as data.
    expect(rendered).toContain('domain-sentinel (Bloem Hosting): 3 critical, 2 warning');
    expect(rendered).toContain('bakkerij-devries.nl');
    expect(rendered).toContain('\\u003c\\u0021channel\\u003e-promo.nl');
    expect(rendered).not.toContain('<!channel>');
    expect(
      await page
        .locator('#teams .ac-textRun')
        .filter({ hasText: /^Act on it$/ })
        .count(),
    ).toBe(2);
    expect(await page.getByText('Open the full report').count()).toBeGreaterThanOrEqual(2);
    // In the Slack and Q columns the hostile name is shown escaped, inside code.
    expect(await page.locator('code', { hasText: '\\u003c\\u0021channel' }).count()).toBe(2);
    const png = await page.screenshot({ type: 'png', fullPage: false });
    await context.close();
    expect(pngSize(png)).toEqual(CHAT_VIEWPORT);
    expect(png.length).toBeGreaterThan(60_000);
    const recorded = withSource(png, chatPictureSource(picture, version));
    mkdirSync(join(process.cwd(), '.tmp', 'screenshots'), { recursive: true });
    writeFileSync(join(process.cwd(), '.tmp', 'screenshots', 'chat-message.png'), recorded);
    if (UPDATE) {
      mkdirSync(dirname(CHAT_PICTURE_PATH), { recursive: true });
      writeFileSync(CHAT_PICTURE_PATH, recorded);
    }
    expect(sourceOf(recorded)).toBe(chatPictureSource(picture, version));
  }, 60_000);
});
