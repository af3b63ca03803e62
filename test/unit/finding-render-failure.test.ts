import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseSigningKeys, signLinkQuery } from '../../functions/core/links/links';
import { FINDING_PAGE_HEADERS } from '../../functions/core/pages/finding-page';
import { createFindingHandler } from '../../functions/handlers/web-handler';

/**
 * Found by a review: the report page answers a kept report it cannot render with its 503 page
 * ("The latest report could not be read"), but the finding page let the error escape the handler:
 * the web Lambda failed (API Gateway's bare 502, no security headers, no log line) and `serve`
 * answered its generic 500. A finding whose `restore_by` is no date is one such report.
 */

const KEYS = parseSigningKeys('f'.repeat(40));
const NOW = Date.parse('2026-11-20T06:00:00Z');

describe('the finding page on a kept report it cannot render', () => {
  it('answers 503 with the security headers and logs why, as the report page does', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const finding = {
      domain_name: 'example.nl',
      kind: 'quarantine',
      severity: 'critical',
      date_expiry: '2026-10-01T00:00:00Z',
      days_left: -50,
      auto_renew: false,
      restore_by: 'soon',
    };
    const handler = createFindingHandler({
      secrets: { signingKeys: async () => KEYS } as never,
      reports: () =>
        ({
          view: async () => ({ findings: [finding], now: '2026-11-20T05:00:00Z', view: { omittedTotal: 0 } }),
        }) as never,
      silencing: async () => false,
      clock: () => NOW,
      log: (entry) => logged.push(entry),
    });
    const query = new URLSearchParams(
      signLinkQuery({ action: 'finding', subject: 'example.nl', keys: KEYS, now: NOW }),
    );
    const request = (httpMethod: string) =>
      handler({
        httpMethod,
        resource: '/finding/{domain}',
        pathParameters: { domain: 'example.nl' },
        queryStringParameters: Object.fromEntries(query),
        headers: {},
        requestContext: { identity: { sourceIp: '203.0.113.9' } },
      } as unknown as APIGatewayProxyEvent);
    const result = await request('GET');
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Content-Security-Policy']).toBeDefined();
    expect(result.headers?.['Cache-Control']).toBe(FINDING_PAGE_HEADERS['Cache-Control']);
    expect(result.body).toContain('The latest report could not be read');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ outcome: 'report_unreadable', status: 503 });
    expect(String(logged[0]?.detail)).toMatch(/rendering the finding failed: RangeError/);
    // HEAD is answered as GET would be: the same 503, not 200 from a page never rendered.
    const head = await request('HEAD');
    expect([head.statusCode, head.body, head.headers]).toEqual([503, '', result.headers]);
  });
});
