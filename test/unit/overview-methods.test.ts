import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseSigningKeys, signLinkQuery } from '../../functions/core/links/links';
import { overviewSigningKeys } from '../../functions/core/scan/accounts';
import { type AccountEntry, createAccountsWebApp } from '../../functions/handlers/accounts-web';

/**
 * Found by a hostile review: the overview of several accounts answers a method it does not serve
 * (`sentinel serve` passes every one) with 405 and, as every other link does, the `Allow` header
 * RFC 9110 15.5.6 requires; its read-only methods keep the page's own headers.
 */

const KEYS = parseSigningKeys('overview-methods-key-0123456789abcdef0123');
const NOW = Date.parse('2026-11-22T06:00:00Z');

const web = createAccountsWebApp<AccountEntry>({
  directory: async () => ({ accounts: [{ account: 'brand-a', settings: {} }] }),
  appFor: () => async () => ({ statusCode: 500, body: '' }),
  summaries: () => null,
  signingKeys: async () => KEYS,
  fallback: async () => ({ statusCode: 500, body: '' }),
  log: () => undefined,
  clock: () => NOW,
});

const token = Object.fromEntries(
  new URLSearchParams(signLinkQuery({ action: 'report', keys: overviewSigningKeys(KEYS), now: NOW })),
);

const request = (method: string) =>
  ({
    httpMethod: method,
    resource: '/accounts',
    path: '/accounts',
    headers: {},
    pathParameters: null,
    queryStringParameters: token,
    body: null,
    isBase64Encoded: false,
    requestContext: { identity: { sourceIp: '203.0.113.9' } },
  }) as unknown as APIGatewayProxyEvent;

describe('the overview of several accounts and its methods', () => {
  it.each(['POST', 'PUT', 'DELETE', 'OPTIONS'])(
    'answers %s with 405 naming the methods it allows',
    async (method) => {
      const res = await web(request(method));
      expect(res.statusCode).toBe(405);
      expect(res.headers?.Allow).toBe('GET, HEAD');
      expect(res.headers?.['Cache-Control']).toBe('no-store');
    },
  );

  it('answers HEAD as GET, without the body', async () => {
    const [get, head] = [await web(request('GET')), await web(request('HEAD'))];
    expect([get.statusCode, head.statusCode]).toEqual([200, 200]);
    expect(head.headers).toEqual(get.headers);
    expect(head.body).toBe('');
    expect(get.body).toContain('brand-a');
  });
});
