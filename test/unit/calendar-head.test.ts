import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseSigningKeys, signLink } from '../../functions/core/links/links';
import { createViewHandler, createWholeReportHandler } from '../../functions/handlers/web-handler';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

/**
 * Found by a review: HEAD of the calendar feed must describe what GET answers (RFC 9110 9.3.2: the same header
 * fields). GET answers text/calendar; HEAD goes through the generic "message page" branch of
 * web-handler.ts render() and answers text/html. A calendar client or a monitoring probe that checks
 * the feed with HEAD is told it is an HTML page.
 */

const keys = parseSigningKeys('c'.repeat(40));
const NOW = Date.parse(NOW_ISO);
const report = reportOf([domainFinding('soon.nl', 'expiring', 'critical', 3)]);

function eventFor(method: string): APIGatewayProxyEvent {
  const url = new URL(signLink({ baseUrl: 'https://x.example/prod', action: 'calendar', keys, now: NOW }));
  return {
    httpMethod: method,
    resource: '/calendar.ics',
    path: '/calendar.ics',
    headers: {},
    queryStringParameters: Object.fromEntries(url.searchParams),
    requestContext: { identity: { sourceIp: '127.0.0.1' } },
  } as unknown as APIGatewayProxyEvent;
}

describe('HEAD of the calendar feed and the report page', () => {
  it('gives HEAD the Content-Type GET gives', async () => {
    const handler = createViewHandler({
      secrets: { signingKeys: async () => keys } as never,
      reports: () => ({ view: async () => report }) as never,
      log: () => undefined,
      clock: () => NOW,
    });
    const get = await handler('calendar', eventFor('GET'));
    expect(get.statusCode).toBe(200);
    expect(get.headers?.['Content-Type']).toBe('text/calendar; charset=utf-8');
    const head = await handler('calendar', eventFor('HEAD'));
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers).toEqual(get.headers);
  });

  it('gives HEAD of the report page the headers GET gives, its content security policy too', async () => {
    const handler = createViewHandler({
      secrets: { signingKeys: async () => keys } as never,
      reports: () => ({ view: async () => report }) as never,
      log: () => undefined,
      clock: () => NOW,
    });
    const url = new URL(signLink({ baseUrl: 'https://x.example/prod', action: 'report', keys, now: NOW }));
    const event = (method: string) =>
      ({
        ...eventFor(method),
        resource: '/report',
        path: '/report',
        queryStringParameters: Object.fromEntries(url.searchParams),
      }) as APIGatewayProxyEvent;
    const get = await handler('report', event('GET'));
    const head = await handler('report', event('HEAD'));
    expect(get.statusCode).toBe(200);
    expect([head.statusCode, head.body]).toEqual([200, '']);
    expect(head.headers).toEqual(get.headers);
  });
});

/**
 * Found by a review: HEAD answered 200 from the signature alone, while GET of the same link answered
 * 404 before the first report, 503 when the store could not be read, and 303 for report.json kept
 * in S3. A link checker (or a monitor probing the page with HEAD) was told all was well.
 */
describe('HEAD answers the status GET answers', () => {
  const pageEvent = (method: string, resource: string) => {
    const url = new URL(signLink({ baseUrl: 'https://x.example/prod', action: 'report', keys, now: NOW }));
    return {
      ...eventFor(method),
      resource,
      path: resource,
      queryStringParameters: Object.fromEntries(url.searchParams),
    } as APIGatewayProxyEvent;
  };
  const viewWith = (view: () => Promise<unknown>) =>
    createViewHandler({
      secrets: { signingKeys: async () => keys } as never,
      reports: () => ({ view }) as never,
      log: () => undefined,
      clock: () => NOW,
    });

  it('for the report page and the feed: 404 before the first report, 503 when the store fails', async () => {
    for (const [view, status] of [
      [async () => null, 404],
      [async () => Promise.reject(new Error('S3 is down')), 503],
    ] as const) {
      const handler = viewWith(view);
      for (const action of ['report', 'calendar'] as const) {
        const event = (m: string) => (action === 'report' ? pageEvent(m, '/report') : eventFor(m));
        const get = await handler(action, event('GET'));
        const head = await handler(action, event('HEAD'));
        expect([get.statusCode, head.statusCode, head.body]).toEqual([status, status, '']);
        expect(head.headers).toEqual(get.headers);
      }
    }
  });

  it('for the report page: the 503 GET answers for a kept report it cannot render', async () => {
    const unrenderable = reportOf([
      { ...domainFinding('lost.nl', 'quarantine', 'critical', -50), date_expiry: 'soon' } as never,
    ]);
    const handler = viewWith(async () => unrenderable);
    const get = await handler('report', pageEvent('GET', '/report'));
    const head = await handler('report', pageEvent('HEAD', '/report'));
    expect([get.statusCode, head.statusCode, head.body]).toEqual([503, 503, '']);
    expect(head.headers).toEqual(get.headers);
  });

  it('for report.json: the redirect GET answers, or its headers without the text', async () => {
    let texts = 0;
    const whole = (url?: string) =>
      createWholeReportHandler({
        secrets: { signingKeys: async () => keys } as never,
        reports: () =>
          ({
            whole: async () => ({
              generated_at: NOW_ISO,
              ...(url
                ? { url: async () => url }
                : {
                    text: async () => {
                      texts++;
                      return '{"findings":[]}';
                    },
                  }),
            }),
          }) as never,
        log: () => undefined,
        clock: () => NOW,
      });
    const s3 = whole('https://bucket.s3.example/report?X-Amz-Signature=x');
    const [get, head] = [
      await s3(pageEvent('GET', '/report.json')),
      await s3(pageEvent('HEAD', '/report.json')),
    ];
    expect([get.statusCode, head.statusCode]).toEqual([303, 303]);
    expect(head.headers).toEqual(get.headers);
    const folder = whole();
    const local = await folder(pageEvent('HEAD', '/report.json'));
    expect([local.statusCode, local.body, texts]).toEqual([200, '', 0]);
    expect(local.headers).toEqual((await folder(pageEvent('GET', '/report.json'))).headers);
    const none = createWholeReportHandler({
      secrets: { signingKeys: async () => keys } as never,
      reports: () => ({ whole: async () => null }) as never,
      log: () => undefined,
      clock: () => NOW,
    });
    expect((await none(pageEvent('HEAD', '/report.json'))).statusCode).toBe(404);
  });
});

/**
 * At one SEQUENCE (always 0), a calendar following RFC 5546 takes the copy of an event with the
 * later DTSTAMP as the newer: a feed whose DTSTAMP went back (a report made by a scan whose clock
 * ran back) read as older than the one before, and its changes were ignored.
 */
describe("the calendar feed's DTSTAMP", () => {
  it('never goes back when the scan that made the report had a clock behind the last one', async () => {
    const HOUR = 3_600_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    const first = { ...report, generated_at: iso(NOW + 2 * HOUR), now: iso(NOW + 2 * HOUR) };
    // The next scan's clock ran back an hour: its report reads as made before the first.
    const next = { ...report, generated_at: iso(NOW + HOUR), now: iso(NOW + HOUR) };
    let served = first;
    let at = NOW + 3 * HOUR;
    const handler = createViewHandler({
      secrets: { signingKeys: async () => keys } as never,
      reports: () => ({ view: async () => served }) as never,
      log: () => undefined,
      clock: () => at,
    });
    const stampOf = (ics: string) => /\r\nDTSTAMP:(\d{8}T\d{6}Z)\r\n/.exec(ics)?.[1] ?? '';
    const before = stampOf((await handler('calendar', eventFor('GET'))).body);
    served = next;
    at = NOW + 4 * HOUR;
    const after = stampOf((await handler('calendar', eventFor('GET'))).body);
    expect(before).toMatch(/^\d{8}T\d{6}Z$/);
    expect(after > before).toBe(true);
  });
});
