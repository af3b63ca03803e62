import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseSigningKeys, signLink } from '../../functions/core/links/links';
import { createFindingHandler } from '../../functions/handlers/web-handler';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

/**
 * Found by a review: HEAD of a finding link must answer the header fields its GET answers (RFC 9110
 * 9.3.2), as the report page and the calendar feed already do. GET answers the finding page's own
 * content security policy (its stylesheet allowed by hash); HEAD went through the message page's
 * headers and answered another policy.
 */

const keys = parseSigningKeys('g'.repeat(40));
const NOW = Date.parse(NOW_ISO);
const report = reportOf([domainFinding('soon.nl', 'expiring', 'critical', 3)]);

/** GET and HEAD of one signed finding link, against a report store whose view is `view`. */
async function getAndHead(view: () => Promise<unknown>) {
  const handler = createFindingHandler({
    secrets: { signingKeys: async () => keys } as never,
    reports: () => ({ view }) as never,
    silencing: async () => true,
    clock: () => NOW,
    log: () => undefined,
  });
  const url = new URL(
    signLink({ baseUrl: 'https://x.example/prod', action: 'finding', subject: 'soon.nl', keys, now: NOW }),
  );
  const event = (method: string) =>
    ({
      httpMethod: method,
      resource: '/finding/{domain}',
      pathParameters: { domain: 'soon.nl' },
      queryStringParameters: Object.fromEntries(url.searchParams),
      headers: {},
      requestContext: { identity: { sourceIp: '127.0.0.1' } },
    }) as unknown as APIGatewayProxyEvent;
  return { get: await handler(event('GET')), head: await handler(event('HEAD')) };
}

describe('HEAD of a finding link', () => {
  it('answers the headers GET answers', async () => {
    const { get, head } = await getAndHead(async () => report);
    expect(get.statusCode).toBe(200);
    expect(get.body).toContain('soon.nl');
    expect([head.statusCode, head.body]).toEqual([200, '']);
    expect(head.headers).toEqual(get.headers);
  });

  it('answers the 503 GET answers when the report cannot be read, not 200', async () => {
    const { get, head } = await getAndHead(async () => Promise.reject(new Error('S3 is down')));
    expect([get.statusCode, head.statusCode, head.body]).toEqual([503, 503, '']);
    expect(head.headers).toEqual(get.headers);
  });
});
