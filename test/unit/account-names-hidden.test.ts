import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseSigningKeys, signLinkQuery } from '../../functions/core/links/links';
import type { SecretSource } from '../../functions/core/links/secrets';
import { accountSigningKeys } from '../../functions/core/scan/accounts';
import {
  type AccountEntry,
  accountWebApp,
  createAccountsWebApp,
} from '../../functions/handlers/accounts-web';

/**
 * Whether a name is one of the deployment's accounts is not told to whoever guesses names
 * (functions/handlers/accounts-web.ts): a request under `/accounts/<guess>/` must be answered
 * exactly as the same request under an account that exists, whatever it carries.
 */

const KEYS = parseSigningKeys('account-names-hidden-key-0123456789abcdef');
const NOW = Date.parse('2026-11-22T06:00:00Z');
const logs: Array<Record<string, unknown>> = [];

const secrets: SecretSource = {
  apiKey: async () => 'sk_live_names_hidden_0123456789',
  signingKeys: async () => KEYS,
  hasSigningKeys: () => true,
};

const web = createAccountsWebApp<AccountEntry>({
  directory: async () => ({
    accounts: [
      { account: 'brand-a', settings: {} },
      { account: 'brand-b', settings: {} },
    ],
  }),
  appFor: (input) =>
    accountWebApp(input, {
      env: { RESELLER_BASE_URL: 'https://api.reseller.test' },
      secrets: () => secrets,
      actions: () => null,
      reports: () => null,
      audit: () => null,
      log: (message, entry) => logs.push({ message, ...entry }),
      clock: () => NOW,
      fetch: async () => {
        throw new Error('no reseller call may be made');
      },
    }),
  summaries: () => null,
  signingKeys: async () => KEYS,
  fallback: async () => {
    throw new Error('no deployment route here');
  },
  log: (message, entry) => logs.push({ message, ...entry }),
  clock: () => NOW,
});

const request = (
  method: string,
  account: string,
  route: string,
  query: Record<string, string> | null,
  domain?: string,
) =>
  ({
    httpMethod: method,
    resource: `/accounts/{account}/${route}`,
    path: `/accounts/${account}/${route}`,
    headers: { 'User-Agent': 'guesser' },
    pathParameters: domain === undefined ? { account } : { account, domain },
    queryStringParameters: query,
    body: null,
    isBase64Encoded: false,
    requestContext: { identity: { sourceIp: '203.0.113.9' } },
  }) as unknown as APIGatewayProxyEvent;

const forged = { exp: '9999999999', kid: '00000000', sig: 'A'.repeat(43) };
/** A genuine link of brand-a's, as its alert carries it. */
const brandA = (action: 'restore' | 'report', subject?: string) =>
  Object.fromEntries(
    new URLSearchParams(
      signLinkQuery({
        action,
        ...(subject ? { subject } : {}),
        keys: accountSigningKeys(KEYS, 'brand-a'),
        now: NOW,
      }),
    ),
  );

const shape = (result: APIGatewayProxyResult) => ({
  status: result.statusCode,
  headers: result.headers,
  body: result.body,
});

describe('an account name guessed under /accounts/', () => {
  it.each([
    ['OPTIONS on a restore link', () => ['OPTIONS', 'restore/{domain}', forged, 'example.nl'] as const],
    [
      'a restore link for a name that is not a domain',
      () => ['GET', 'restore/{domain}', forged, 'EXAMPLE.nl'] as const,
    ],
    ['a report link signed with a key id nobody holds', () => ['GET', 'report', forged, undefined] as const],
    ['a snooze link without a signature', () => ['POST', 'snooze/{domain}', null, 'example.nl'] as const],
    [
      'brand-a’s own restore link',
      () => ['GET', 'restore/{domain}', brandA('restore', 'example.nl'), 'example.nl'] as const,
    ],
    ['brand-a’s own report link', () => ['HEAD', 'report', brandA('report'), undefined] as const],
  ])('answers %s exactly as under an account that exists', async (_name, made) => {
    const [method, route, query, domain] = made();
    const existing = await web(request(method, 'brand-b', route, query, domain));
    const guessed = await web(request(method, 'brand-x', route, query, domain));
    expect(shape(guessed)).toEqual(shape(existing));
    expect(existing.statusCode).toBeGreaterThanOrEqual(400);
  });

  it('never lets a link of an account that is gone act, under its own name or another', async () => {
    const gone = Object.fromEntries(
      new URLSearchParams(
        signLinkQuery({
          action: 'restore',
          subject: 'example.nl',
          keys: accountSigningKeys(KEYS, 'brand-old'),
          now: NOW,
        }),
      ),
    );
    const result = await web(request('GET', 'brand-old', 'restore/{domain}', gone, 'example.nl'));
    expect(result.statusCode).toBe(403);
    expect(result.body).toContain('This link is not valid');
  });
});
