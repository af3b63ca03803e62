import { describe, expect, it } from 'vitest';
import { decideWholeReport } from '../../functions/core/decisions/view-decision';
import { parseSigningKeys, signLink } from '../../functions/core/links/links';
import { reportLines } from '../../functions/core/memory/report-json';
import { generatedAtOf } from '../../functions/core/memory/report-store';
import { reportJsonUrl } from '../../functions/core/scan/report-links';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

const keys = parseSigningKeys('w'.repeat(40));
const NOW = Date.parse(NOW_ISO);
const reportUrl = signLink({ baseUrl: 'https://x.example/prod', action: 'report', keys, now: NOW });
const jsonUrl = new URL(reportJsonUrl(reportUrl, NOW_ISO));
const token = Object.fromEntries(jsonUrl.searchParams);
const stored = { generated_at: NOW_ISO, text: async (): Promise<string | null> => 'the stored text' };
const decide = (over: Partial<Parameters<typeof decideWholeReport>[0]> = {}) =>
  decideWholeReport({
    method: 'GET',
    token,
    now: NOW,
    signingKeys: async () => keys,
    whole: async () => stored,
    ...over,
  });

describe('report.json: the whole report behind the report link', () => {
  it('is the report link on report.json, naming its report', () => {
    expect(jsonUrl.pathname).toBe('/prod/report.json');
    expect(token.of).toBe(NOW_ISO);
    expect(token.sig).toBe(new URL(reportUrl).searchParams.get('sig'));
  });

  it('answers the report it names, its text or a redirect to where it is', async () => {
    await expect(decide()).resolves.toEqual({ kind: 'whole', status: 200, text: 'the stored text' });
    const remote = {
      generated_at: NOW_ISO,
      url: async () => 'https://bucket.s3.example/reports/x.json?X-Amz-Signature=abc',
    };
    await expect(decide({ whole: async () => remote })).resolves.toEqual({
      kind: 'whole',
      status: 303,
      url: 'https://bucket.s3.example/reports/x.json?X-Amz-Signature=abc',
    });
  });

  it('answers 410 when the report it named is no longer kept by the time its text or URL is made', async () => {
    for (const whole of [
      { generated_at: NOW_ISO, url: async () => null },
      { generated_at: NOW_ISO, text: async () => null },
    ])
      await expect(decide({ whole: async () => whole })).resolves.toMatchObject({
        kind: 'not_kept',
        status: 410,
        title: 'This report is no longer kept',
      });
    const failing = { generated_at: NOW_ISO, url: async () => Promise.reject(new Error('S3 is down')) };
    await expect(decide({ whole: async () => failing })).resolves.toMatchObject({
      kind: 'store_failed',
      status: 503,
    });
  });

  it('answers 410 once a newer scan replaced it, 404 before any, and refuses a changed link or a POST', async () => {
    await expect(
      decide({ whole: async () => ({ ...stored, generated_at: '2026-11-23T06:00:00.000Z' }) }),
    ).resolves.toMatchObject({
      kind: 'replaced',
      status: 410,
    });
    await expect(decide({ whole: async () => null })).resolves.toMatchObject({
      kind: 'no_report',
      status: 404,
    });
    await expect(decide({ token: { ...token, exp: String(Number(token.exp) + 1) } })).resolves.toMatchObject({
      status: 403,
    });
    await expect(decide({ method: 'POST' })).resolves.toMatchObject({ status: 405 });
  });

  it('finds a stored report’s time on its first line, and nothing in text that is not a report', () => {
    const text = [...reportLines(reportOf([domainFinding('a.nl', 'expired', 'critical', -1)]))].join('');
    expect(generatedAtOf(text.slice(0, text.indexOf('\n') + 1))).toBe(NOW_ISO);
    expect(generatedAtOf('{"hello":1}')).toBeNull();
    expect(generatedAtOf('not json at all')).toBeNull();
  });
});
