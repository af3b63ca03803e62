import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { SECURITY_HEADERS } from '../../functions/core/pages/restore-page';
import { createAccountsWebApp } from '../../functions/handlers/accounts-web';
import { createWebHandler } from '../../functions/handlers/web-handler';
import { serveLocally } from '../../functions/local/local-server';

/**
 * A program asks an acting link for JSON (Accept: application/json) and reads `{outcome, message}`
 * (docs/links.md). The refusals made before any link's own handler runs must answer it in JSON too:
 * a route that does not exist, an account that is not one, and `sentinel serve`'s own answers.
 */

const JSON_ASKED = { Accept: 'application/json' };
const unreachable = async (): Promise<never> => {
  throw new Error('no handler should run');
};

const event = (
  resource: string,
  headers: Record<string, string>,
  pathParameters: Record<string, string> | null = null,
) =>
  ({
    httpMethod: 'POST',
    resource,
    path: resource,
    headers,
    pathParameters,
    queryStringParameters: null,
    body: null,
    requestContext: { identity: { sourceIp: '203.0.113.9' } },
  }) as unknown as APIGatewayProxyEvent;

function expectJson(
  result: { statusCode: number; headers?: Record<string, unknown>; body: string },
  status: number,
) {
  expect(result.statusCode).toBe(status);
  expect(result.headers?.['Content-Type']).toBe('application/json; charset=utf-8');
  expect(result.headers?.['Content-Security-Policy']).toBe(SECURITY_HEADERS['Content-Security-Policy']);
  const body = JSON.parse(result.body) as { outcome: unknown; message: unknown };
  expect(typeof body.outcome).toBe('string');
  expect(typeof body.message).toBe('string');
  return body;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('refusals before a link’s handler, to a program that asks for JSON', () => {
  const web = createWebHandler({
    restore: unreachable,
    action: unreachable,
    view: unreachable,
    whole: unreachable,
    finding: unreachable,
  });

  it('a resource the API does not have is a JSON 404, and HTML to a browser', async () => {
    expect(expectJson(await web(event('/nothing/{domain}', JSON_ASKED)), 404).outcome).toBe('not_found');
    const page = await web(event('/nothing/{domain}', { Accept: 'text/html' }));
    expect(page.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
  });

  it('an account that is not one is a JSON 403 worded as a changed link', async () => {
    const accounts = createAccountsWebApp({
      directory: async () => ({ accounts: [] }),
      appFor: () => unreachable,
      summaries: () => null,
      signingKeys: async () => [],
      fallback: unreachable,
      log: () => undefined,
    });
    const refused = expectJson(
      await accounts(
        event('/accounts/{account}/restore/{domain}', JSON_ASKED, {
          account: 'brand-x',
          domain: 'example.nl',
        }),
      ),
      403,
    );
    expect(refused.outcome).toBe('bad_signature');
  });

  it('sentinel serve answers a path it has no route for, and a body over its limit, in JSON', async () => {
    const server = await serveLocally(unreachable, { port: 0 });
    closers.push(server.close);
    const missing = await fetch(`${server.url}/nothing`, { headers: JSON_ASKED });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(((await missing.json()) as { outcome: string }).outcome).toBe('not_found');
    const large = await fetch(`${server.url}/restore/example.nl`, {
      method: 'POST',
      headers: JSON_ASKED,
      body: 'x'.repeat(100_000),
    });
    expect(large.status).toBe(413);
    expect(large.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(((await large.json()) as { outcome: string }).outcome).toBe('too_large');
  });
});
