import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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
 * The README's screenshot of the report page is current: it was taken of the very HTML the page
 * renders now (compared by hash, so no font or Chromium build can make it flaky), at the phone size
 * the README shows. When the page changes, `npm run docs:screenshot` takes it again.
 */
describe('docs/images/report-page.png', () => {
  it('shows the report page as it renders now (if this fails: npm run docs:screenshot)', async () => {
    expect(existsSync(SCREENSHOT_PATH)).toBe(true);
    const png = readFileSync(SCREENSHOT_PATH);
    expect(pngSize(png)).toEqual({ width: VIEWPORT.width * SCALE, height: VIEWPORT.height * SCALE });
    const { html } = await pinnedReportPage();
    expect(sourceOf(png), 'the report page changed since its screenshot: run npm run docs:screenshot').toBe(
      sha256(html),
    );
  }, 60_000);

  it('renders the same HTML twice, and tells a changed page from the same one (the check itself)', async () => {
    const [a, b] = [await pinnedReportPage(), await pinnedReportPage()];
    expect(a.html).toBe(b.html);
    const png = readFileSync(SCREENSHOT_PATH);
    const bare = Buffer.concat([
      png.subarray(0, 33),
      png.subarray(33 + 12 + 'source-sha256'.length + 1 + 64),
    ]);
    expect(sourceOf(bare)).toBeUndefined();
    expect(sourceOf(withSource(bare, sha256(`${a.html} `)))).not.toBe(sha256(a.html));
  }, 60_000);
});
