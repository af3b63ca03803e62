import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { domainToUnicode } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayDomain } from '../../functions/core/base/text';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { closeBrowser, launchBrowser } from '../support/chromium';
import { runCli } from '../support/cli';
import { startWebStack } from '../support/web-env';

/** Screenshots are kept as test artifacts (CI uploads .tmp/). */
const ARTIFACTS = join(process.cwd(), '.tmp', 'screenshots');
const DAY = 86_400_000;

let browser: Browser;
let stack: Awaited<ReturnType<typeof startWebStack>>;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchBrowser();
  stack = await startWebStack({ domains: 150, seed: 52 });
});
afterAll(async () => {
  await closeBrowser(browser);
  await stack?.close();
});

describe('report page in Chromium', () => {
  it('opens from a scan’s report_url on a phone, shows restore-by dates and the expiring domains on the timeline, and filters', async () => {
    const scan = await runCli(['scan', '--json', '--dry-run'], stack.env);
    expect(scan.code).toBe(0);
    const report = JSON.parse(scan.stdout) as { report_url: string; now: string; findings: DomainFinding[] };
    const now = Date.parse(report.now);
    const expiring = report.findings
      .filter((f) => 'domain_name' in f && f.kind !== 'quarantine')
      .filter((f) => Date.parse(f.date_expiry) >= now && Date.parse(f.date_expiry) <= now + 90 * DAY)
      .map((f) => f.domain_name);
    expect(expiring.length).toBeGreaterThan(2);

    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const answer = await page.goto(report.report_url);
    expect(answer?.status()).toBe(200);
    await page.screenshot({ path: join(ARTIFACTS, 'report-page-phone.png') });
    await page.screenshot({ path: join(ARTIFACTS, 'report-page-phone-full.png'), fullPage: true });

    // The first screen of a phone shows when each quarantined domain must be restored by.
    const quarantined = report.findings.filter((f) => f.kind === 'quarantine' && f.restore_by);
    expect(quarantined.length).toBeGreaterThan(0);
    const deadline = page.locator('ul.deadlines li').first();
    await expect(deadline.textContent()).resolves.toMatch(
      new RegExp(
        `^${displayDomain(quarantined[0]?.domain_name ?? '')}: (LAST DAYS: )?restore by \\d{1,2} \\w{3} \\d{4} \\d{2}:\\d{2} UTC, \\d+ days? leftNext: .+$`,
      ),
    );
    const box = await deadline.boundingBox();
    expect((box?.y ?? Number.POSITIVE_INFINITY) + (box?.height ?? 0)).toBeLessThanOrEqual(844);
    await expect(page.locator('svg.timeline g.tl-restore rect').count()).resolves.toBe(quarantined.length);

    const onTimeline = await page.locator('svg.timeline g:not(.tl-restore) text').allTextContents();
    expect(onTimeline.slice(0, expiring.length).sort()).toEqual(
      expiring
        .slice(0, 60)
        .map((n) => domainToUnicode(n)) // an IDN as its customers write it, whole
        .sort(),
    );
    // Styled by its hashed stylesheet (a strict CSP that still renders), and no sideways scrolling on a phone.
    const markColour = await page
      .locator('svg.timeline g.tl-critical circle, svg.timeline g.tl-warning circle')
      .first()
      .evaluate((el) => getComputedStyle(el).fill);
    expect(['rgb(164, 14, 38)', 'rgb(179, 92, 0)']).toContain(markColour);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await expect(page.locator('h2').allTextContents()).resolves.toContain(
      'Expiries and restore deadlines in the next 90 days',
    );

    const wanted = expiring.find((n) => !n.includes('xn--')) ?? '';
    await page.getByRole('searchbox', { name: 'Filter findings' }).fill(wanted);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/q=/);
    const listed = await page.locator('ul.items:not(.deadlines) li > strong').allTextContents();
    expect(listed).toEqual([wanted]);
    expect(new URL(page.url()).searchParams.get('sig')).toBe(
      new URL(report.report_url).searchParams.get('sig'),
    );
    expect(violations).toEqual([]);
    await context.close();
  });

  it('starts with the action: on a 390×844 phone the most urgent finding and its link are on the first screen, and its page offers the action there too', async () => {
    const scan = await runCli(['scan', '--json', '--dry-run'], stack.env);
    const report = JSON.parse(scan.stdout) as { report_url: string; findings: DomainFinding[] };
    const urgent = report.findings[0] as DomainFinding;
    expect(urgent.severity).toBe('critical');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const page = await context.newPage();
    await page.goto(report.report_url);
    const act = page.locator('.first a.act');
    await expect(act.textContent()).resolves.toBe(`Act on ${displayDomain(urgent.domain_name)}`);
    await expect(act.getAttribute('href')).resolves.toBe(urgent.actions?.page);
    const box = await act.boundingBox();
    expect(box).not.toBeNull();
    expect((box?.y ?? Number.POSITIVE_INFINITY) + (box?.height ?? 0)).toBeLessThanOrEqual(844);
    await expect(page.locator('.first').textContent()).resolves.toContain(
      `Most urgent: ${displayDomain(urgent.domain_name)}`,
    );
    // The page links its JSON, and the JSON is the report the page shows.
    const json = await page.locator('.toplinks a', { hasText: 'JSON' }).getAttribute('href');
    const fetched = await page.request.get(new URL(json ?? '', report.report_url).toString());
    expect(fetched.status()).toBe(200);
    expect((await fetched.json()).findings[0].domain_name).toBe(urgent.domain_name);

    // The finding's own page: on the same phone, its next step and first action on the first screen.
    await act.click();
    await page.waitForURL(/\/finding\//);
    await page.screenshot({ path: join(ARTIFACTS, 'finding-page-phone.png') });
    const first = page.locator('ul.acts a').first();
    const firstBox = await first.boundingBox();
    expect((firstBox?.y ?? Number.POSITIVE_INFINITY) + (firstBox?.height ?? 0)).toBeLessThanOrEqual(844);
    await expect(page.locator('p.next').textContent()).resolves.toMatch(/^Next step: /);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await context.close();
  });

  it('at 1 280 px draws the timeline’s labels no larger than the body text, with a legend for its marks', async () => {
    const scan = await runCli(['scan', '--json', '--dry-run'], stack.env);
    const report = JSON.parse(scan.stdout) as { report_url: string };
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(report.report_url);
    await page.locator('svg.timeline').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, 'report-page-1280.png'), fullPage: true });
    const sizes = await page.evaluate(() => {
      const svg = document.querySelector('svg.timeline') as SVGSVGElement;
      const label = svg.querySelector('g text') as SVGTextElement;
      const scale = (svg.getScreenCTM() as DOMMatrix).a;
      return {
        label: Number.parseFloat(getComputedStyle(label).fontSize) * scale,
        rendered: label.getBoundingClientRect().height,
        body: Number.parseFloat(getComputedStyle(document.body).fontSize),
      };
    });
    expect(sizes.label).toBeGreaterThan(8);
    expect(sizes.label).toBeLessThanOrEqual(sizes.body);
    expect(sizes.rendered).toBeLessThanOrEqual(sizes.body * 1.25);
    await expect(page.locator('ul.legend li').allTextContents()).resolves.toEqual([
      'expiry date',
      'restore-by day (quarantine)',
      'critical',
      'warning',
      'info',
    ]);
    await context.close();
  });
});
