import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  prettyReportJson,
  type ReportList,
  ReportTextError,
  readReportText,
  reportLines,
  withNextSteps,
} from '../../functions/core/memory/report-json';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, reportOf } from '../support/report';

/** Reads text (cut into pieces at the given places) back into a plain object. */
async function readBack(text: string, cuts: number[] = []): Promise<Record<string, unknown>> {
  const pieces: string[] = [];
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    pieces.push(text.slice(at, Math.max(at, cut)));
    at = Math.max(at, cut);
  }
  pieces.push(text.slice(at));
  const out: Record<string, unknown> = {};
  const lists: Record<string, unknown[]> = {};
  await readReportText(
    (async function* () {
      yield* pieces;
    })(),
    {
      head: (value) => Object.assign(out, value),
      open: (list: ReportList) => {
        lists[list] = [];
      },
      element: (list: ReportList, value) => {
        lists[list]?.push(value);
      },
    },
  );
  return { ...out, ...lists };
}

const sample = (): Report & { changes: unknown[]; resolved: unknown[] } => ({
  ...reportOf([
    domainFinding('a.nl', 'expiring', 'critical', 3),
    domainFinding('"quoted"\nname.nl', 'auto_renew_off', 'info', 200),
  ]),
  problems: [{ resource: 'domain', key: null, page: 2, reason: 'line\nbreak, and ]} inside' }],
  changes: [],
  resolved: [{ domain_name: 'b.nl', kind: 'expired', severity: 'critical', reason: 'renewed', now: null }],
});

describe('the report as JSON in pieces', () => {
  it('prints exactly what JSON.stringify(report, null, 2) prints, lists and all', () => {
    for (const report of [sample(), reportOf([]), { ...sample(), findings: [] }]) {
      // Each finding and change with its next step last, as every JSON form of the report carries it.
      expect([...prettyReportJson(report)].join('')).toBe(JSON.stringify(withNextSteps(report), null, 2));
    }
  });

  it('stores one element a line and reads it back the same, however the text is cut', async () => {
    const report = sample();
    const text = [...reportLines(report)].join('');
    const stored = withNextSteps(report);
    expect(JSON.parse(text)).toEqual(stored);
    expect(text.split('\n')[1]).toBe(`${JSON.stringify(stored.findings[0])},`);
    expect((stored.findings[0] as { next_step?: string }).next_step).toBe(
      "Renew it, or turn auto-renew on, in the reseller's control panel before 25 Nov 2026.",
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: text.length }), { maxLength: 8 }), async (cuts) => {
        expect(await readBack(text, cuts)).toEqual(stored);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses text that is cut short, not JSON, or has something after the end', async () => {
    const text = [...reportLines(sample())].join('');
    await expect(readBack(text.slice(0, text.length - 4))).rejects.toThrow(ReportTextError);
    await expect(readBack(text.replace('"a.nl"', '"a.nl'))).rejects.toThrow(/line 2 is not JSON/);
    await expect(readBack(`${text}{}\n`)).rejects.toThrow(/follows the end of the report/);
    await expect(readBack('not json')).rejects.toThrow(/it is not JSON/);
    await expect(readBack('[1,2]')).rejects.toThrow(/not an object/);
  });
});
