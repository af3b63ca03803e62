import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  accountCost,
  costRegions,
  deploymentCost,
  LARGE,
  memoryUse,
  reportBytes,
  SIZES,
  SMALL,
  total,
  usdRange,
} from '../../scripts/cost-model';
import { docFiles, ROOT } from '../../scripts/docs';

/**
 * The cost model (scripts/cost-model.ts) against the mistakes the documents once made, and the
 * documents against it: no dollar figure stands outside a region `npm run docs` writes from it.
 */

const GENERATED = /<!-- generated:([\w-]+) -->[\s\S]*?<!-- \/generated -->/g;

describe('the cost model', () => {
  it('keeps 30 days of reports once: an hourly scan of 100 000 domains holds 720 reports, ~6.6 GB', () => {
    const reportsKept = LARGE.scansPerDay * SIZES.reportKeptDays;
    expect(reportsKept).toBe(720);
    // 720 reports of ~9 MB (the latest and its view besides): not 720 × 30 days, which was 150 GB.
    expect(reportBytes(LARGE) / 1e9).toBeGreaterThan(6);
    expect(reportBytes(LARGE) / 1e9).toBeLessThan(7);
    const s3 = deploymentCost(LARGE).find((l) => l.what.startsWith('S3')) ?? { usd: [0, 0], how: '' };
    expect(s3.how).toContain('720 reports of 9.1 MB kept: 6.6 GB');
    expect(s3.usd[0]).toBeLessThan(0.2);
  });

  it('reads the whole memory once a scan, the same in every table: 7 053 reads for 100 000 domains', () => {
    const daily = memoryUse({ domains: 100_000, scansPerDay: 1 });
    const hourly = memoryUse({ domains: 100_000, scansPerDay: 24 });
    expect(daily.readsPerScan).toBe(hourly.readsPerScan);
    // Strongly consistent: 4 KB a read unit, over ~289 bytes a domain.
    expect(daily.readsPerScan).toBe(Math.ceil(daily.stored / 4096));
    expect(hourly.readsAMonth).toBe(24 * daily.readsAMonth);
    const dynamo = deploymentCost(LARGE).find((l) => l.what.startsWith('DynamoDB'));
    expect(dynamo?.how).toContain(
      `${daily.readsPerScan.toLocaleString('en-US').replace(',', ' ')} reads a scan`,
    );
  });

  it('adds up: each total is the sum of its lines, the dashboard the only range', () => {
    for (const lines of [deploymentCost(SMALL), deploymentCost(LARGE), accountCost(SMALL)]) {
      const [low, high] = total(lines);
      expect(low).toBeCloseTo(
        lines.reduce((t, l) => t + l.usd[0], 0),
        10,
      );
      expect(high - low).toBeCloseTo(lines.some((l) => l.what.includes('dashboard')) ? 3 : 0, 10);
    }
    expect(usdRange([2.2199, 5.2199])).toBe('$2.22–5.22');
    expect(usdRange([0.004, 0.004])).toBe('< $0.01');
  });

  it('is the only source of the documents’ dollar figures: none outside a generated region', () => {
    const stray = docFiles().flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .replace(GENERATED, '')
        .split('\n')
        .flatMap((line, i) => (/\$\s?\d/.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(stray).toEqual([]);
  });

  it('has every cost region the documents use, and the documents use every one', () => {
    const used = new Set(
      docFiles().flatMap((file) =>
        [...readFileSync(join(ROOT, file), 'utf8').matchAll(GENERATED)].map((m) => m[1] as string),
      ),
    );
    expect(Object.keys(costRegions()).filter((name) => !used.has(name))).toEqual([]);
  });
});
