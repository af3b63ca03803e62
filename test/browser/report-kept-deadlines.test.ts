import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viewOf } from '../../functions/core/memory/report-view';
import { REPORT_PAGE_HEADERS, renderReportPage } from '../../functions/core/pages/report-page';
import type { Problem } from '../../functions/core/reseller/client';
import { closeBrowser, launchBrowser } from '../support/chromium';
import { domainFinding, reportOf } from '../support/report';
import { servePageHtml } from '../support/served-page';

/**
 * Every domain with a restore deadline is on the report page, with its deadline and next step, and
 * on its timeline: a quarantine read as such, one memory keeps while its record reads expired
 * (`remembered`), and one memory keeps while its record gives no finding at all (a problem record
 * marked `kept_quarantine`), as the calendar feed has their restore-by events.
 */

const read = domainFinding('read.nl', 'quarantine', 'critical', -30, {
  restore_by: '2026-12-02T06:00:00.000Z',
  days_to_restore: 10,
});
const expiredKept = domainFinding('expired-kept.nl', 'expired', 'critical', -20, {
  remembered: {
    kind: 'quarantine',
    severity: 'critical',
    restore_by: '2026-11-25T06:00:00.000Z',
    days_to_restore: 3,
    because: 'status_undocumented',
  },
});
const keptRecord: Problem = {
  resource: 'domain',
  key: 'renewed-kept.nl',
  page: 1,
  reason:
    'status clientFrozen is not documented; read by its dates only; last read in quarantine, restore by 2026-11-27 06:00 UTC (days left: 5)',
  severity: 'critical',
  dates_only: true,
  kept_quarantine: true,
  restore_by: '2026-11-27T06:00:00.000Z',
};
const report = reportOf([expiredKept, read], [keptRecord]);

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => closeBrowser(browser));

describe('restore deadlines kept by memory on the report page in Chromium', () => {
  it.each([
    ['the report whole', report],
    ['the view of the stored report', viewOf(report, { purpose: 'page' })],
  ])('lists each with its deadline and next step, and marks it on the timeline (%s)', async (_how, shown) => {
    const page = await browser.newPage();
    await servePageHtml(page, renderReportPage({ report: shown, token: {} }), REPORT_PAGE_HEADERS);
    await page.goto('http://pages.test/report');
    const heading = await page.locator('h2').first().textContent();
    const items = await page.locator('ul.deadlines li').allInnerTexts();
    const marks = await page.locator('svg.timeline g.tl-restore title').allTextContents();
    await page.close();

    expect(heading).toBe('Restore deadlines (3)');
    // Soonest first.
    expect(items.map((text) => text.split(':')[0])).toEqual([
      'expired-kept.nl',
      'renewed-kept.nl',
      'read.nl',
    ]);
    expect(items[0]).toMatch(/restore by 25 Nov 2026 06:00 UTC, 3 days left/);
    expect(items[0]).toMatch(
      /Next: Check it in the reseller.s control panel now: it was last read in quarantine/,
    );
    expect(items[1]).toMatch(/restore by 27 Nov 2026 06:00 UTC, 5 days left/);
    expect(items[1]).toMatch(/Next: Check it in the reseller.s control panel.*restore it there by/);
    expect(items[2]).toMatch(/restore by 2 Dec 2026 06:00 UTC, 10 days left/);
    expect(items[2]).toMatch(/Next: /);
    expect(marks.map((title) => title.split(':')[0])).toEqual([
      'expired-kept.nl',
      'renewed-kept.nl',
      'read.nl',
    ]);
  });
});
