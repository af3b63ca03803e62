import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import { settingsFromEnv } from '../../functions/core/scan/config';
import { createRestoreHandler } from '../../functions/handlers/restore-handler';

/**
 * Found by a review: HEAD must answer the header fields GET answers (RFC 9110 9.3.2). A program that
 * asks an acting link for JSON (Accept: application/json) gets application/json to GET, but its HEAD
 * was answered text/html: a monitor or client that checks the link with HEAD first is told the link
 * answers a page.
 */

const SIGNING_KEY = 'unit-signing-key-0123456789abcdef01234567';
const env = {
  RESELLER_BASE_URL: 'https://api.test',
  RESELLER_API_KEY: 'k-unit-restore-handler',
  LINK_SIGNING_KEY: SIGNING_KEY,
};

function event(method: string, sig?: string): APIGatewayProxyEvent {
  const url = new URL(
    signRestoreLink({
      baseUrl: 'https://x.test/',
      domain: 'example.nl',
      keys: parseSigningKeys(SIGNING_KEY),
      now: Date.now(),
    }),
  );
  if (sig) url.searchParams.set('sig', sig);
  return {
    httpMethod: method,
    path: url.pathname,
    pathParameters: { domain: 'example.nl' },
    queryStringParameters: Object.fromEntries(url.searchParams),
    headers: { Accept: 'application/json' },
    body: null,
    requestContext: { identity: { sourceIp: '203.0.113.9' } },
  } as unknown as APIGatewayProxyEvent;
}

const handler = createRestoreHandler({
  settings: () => settingsFromEnv(env),
  secrets: new EnvSecretSource(env),
  log: () => undefined,
  fetch: (async () =>
    new Response(
      JSON.stringify({
        data: [{ domain_name: 'example.nl', status: ['quarantine'], date_expiry: '2026-10-01T00:00:00Z' }],
        pagination: { current_page: 1, per_page: 100, total_pages: 1, total_results: 1 },
      }),
    )) as typeof fetch,
});

describe('HEAD of an acting link asked for JSON', () => {
  it('answers the Content-Type GET answers, for a valid link and a changed one', async () => {
    for (const sig of [undefined, 'A'.repeat(43)]) {
      const get = await handler(event('GET', sig));
      const head = await handler(event('HEAD', sig));
      expect(get.headers?.['Content-Type']).toBe('application/json; charset=utf-8');
      expect([head.statusCode, head.body]).toEqual([get.statusCode, '']);
      expect(head.headers).toEqual(get.headers);
    }
  });
});
