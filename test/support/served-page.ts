import type { Page } from 'playwright-core';

/** Where {@link servePageHtml} serves a page: a host no test reaches for anything else. */
export const PAGES_ORIGIN = 'http://pages.test';

/**
 * Answers every request to {@link PAGES_ORIGIN} with `html` and the page's own `headers`, as the web
 * function serves it (its CSP and framing rules included), with the HTML content type.
 */
export async function servePageHtml(
  page: Page,
  html: string,
  headers: Readonly<Record<string, string>>,
): Promise<void> {
  await page.route(`${PAGES_ORIGIN}/**`, (route) =>
    route.fulfill({
      status: 200,
      headers: { ...headers, 'Content-Type': 'text/html; charset=utf-8' },
      body: html,
    }),
  );
}
