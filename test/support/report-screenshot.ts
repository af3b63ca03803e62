import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { REPORT_PAGE_HEADERS, renderReportPage } from '../../functions/core/pages/report-page';
import type { Report } from '../../functions/core/scan/scan';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { startSimulator } from '../../functions/simulator/server';
import { NOW, ROOT, TRY_SIGNING_KEY } from '../../scripts/docs';
import { runCli } from './cli';

/**
 * The README's picture of the report page: the page of the demo's report (the portfolio `npm start`
 * scans, pinned to the docs' instant and keys), rendered by the page's own code, so the HTML is the
 * same on every run. The screenshot (test/browser/report-screenshot.test.ts) records the SHA-256 of
 * the HTML it was taken of in a tEXt chunk; test/docs/screenshot.test.ts compares that with the page
 * as it renders now, which fails on drift without depending on how one Chromium build draws fonts.
 */

export const SCREENSHOT_PATH = join(ROOT, 'docs', 'images', 'report-page.png');
/** A phone, as the page is laid out for one; twice the pixels, so the picture is sharp. */
export const VIEWPORT = { width: 390, height: 844 } as const;
export const SCALE = 2;
const SOURCE_KEYWORD = 'source-sha256';
const LINK_BASE = 'http://127.0.0.1:8787';

/** The demo's report page as HTML, with what differs from run to run (time taken, port) pinned. */
export async function pinnedReportPage(): Promise<{ html: string; headers: Record<string, string> }> {
  const sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 60, seed: 7, now: Date.parse(NOW) }),
    apiKey: 'screenshot-key-not-a-secret',
  });
  try {
    const run = await runCli(['scan', '--json', '--dry-run', '--now', NOW], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: 'screenshot-key-not-a-secret',
      LINK_BASE_URL: LINK_BASE,
      LINK_SIGNING_KEY: TRY_SIGNING_KEY,
      REPORT_DIR: join(ROOT, '.tmp', 'screenshot-report'),
    });
    if (run.code !== 0) throw new Error(`the scan for the screenshot failed: ${run.stderr}`);
    const scanned = JSON.parse(run.stdout) as Report & { report_url: string };
    const report = {
      ...scanned,
      generated_at: scanned.now,
      source: { ...scanned.source, base_url: 'http://127.0.0.1:8080' },
      stats: { ...scanned.stats, duration_ms: 0 },
    } as Report;
    const token = Object.fromEntries(new URL(scanned.report_url).searchParams);
    return {
      html: renderReportPage({ report, token, accountLabel: 'demo account' }),
      headers: { ...REPORT_PAGE_HEADERS, 'Content-Type': 'text/html; charset=utf-8' },
    };
  } finally {
    await sim.close();
  }
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Width and height from a PNG's IHDR. */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.subarray(1, 4).toString('latin1') !== 'PNG' || png.subarray(12, 16).toString('latin1') !== 'IHDR')
    throw new Error('not a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

function* chunks(png: Buffer) {
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString('latin1');
    yield { at, type, data: png.subarray(at + 8, at + 8 + length), end: at + 12 + length };
    at += 12 + length;
  }
}

/** The SHA-256 of the HTML a screenshot was taken of, as {@link withSource} recorded it; undefined without one. */
export function sourceOf(png: Buffer): string | undefined {
  for (const chunk of chunks(png)) {
    if (chunk.type !== 'tEXt') continue;
    const [keyword, text] = chunk.data.toString('latin1').split('\0');
    if (keyword === SOURCE_KEYWORD) return text;
  }
  return undefined;
}

/** The PNG with a tEXt chunk right after IHDR recording the SHA-256 of its source HTML. */
export function withSource(png: Buffer, hash: string): Buffer {
  const data = Buffer.from(`${SOURCE_KEYWORD}\0${hash}`, 'latin1');
  const typeAndData = Buffer.concat([Buffer.from('tEXt', 'latin1'), data]);
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  typeAndData.copy(chunk, 4);
  chunk.writeUInt32BE(crc32(typeAndData), 8 + data.length);
  const ihdrEnd = chunks(png).next().value?.end as number;
  return Buffer.concat([png.subarray(0, ihdrEnd), chunk, png.subarray(ihdrEnd)]);
}
