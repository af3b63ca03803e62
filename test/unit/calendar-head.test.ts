import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseSigningKeys, signLink } from '../../functions/core/links/links';
import { createViewHandler } from '../../functions/handlers/web-handler';
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
