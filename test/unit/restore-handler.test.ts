import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createRestoreHandler, type RestoreLogEntry } from '../../functions/adapters/restore-handler';
import { EnvSecretSource } from '../../functions/adapters/secrets';
import { settingsFromEnv } from '../../functions/core/config';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links';
import { escapeHtml, renderConfirmPage } from '../../functions/core/restore-page';

const SIGNING_KEY = 'unit-signing-key-0123456789abcdef01234567';
const env = {
  RESELLER_BASE_URL: 'https://api.test',
  RESELLER_API_KEY: 'k-unit-restore-handler',
  LINK_SIGNING_KEY: SIGNING_KEY,
};

function event(
  method: string,
  domain = 'example.nl',
  headers: Record<string, string> = {},
): APIGatewayProxyEvent {
  const url = new URL(
    signRestoreLink({
      baseUrl: 'https://x.test/',
      domain,
      keys: parseSigningKeys(SIGNING_KEY),
      now: Date.now(),
    }),
  );
  return {
    httpMethod: method,
    path: url.pathname,
    pathParameters: { domain },
    queryStringParameters: Object.fromEntries(url.searchParams),
    headers,
    requestContext: { identity: { sourceIp: '203.0.113.9' } },
  } as unknown as APIGatewayProxyEvent;
}

/** A reseller whose list says example.nl is in quarantine, and whose restore answers `status` with `body`. */
function handlerAnswering(status: number, body: string, listStatus = 200) {
  const calls: string[] = [];
  const logs: RestoreLogEntry[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    calls.push(`${init?.method} ${url.pathname}`);
    if (init?.method === 'GET') {
      const listing = {
        data: [{ domain_name: 'example.nl', status: ['quarantine'], date_expiry: '2026-10-01T00:00:00Z' }],
        pagination: { current_page: 1, per_page: 100, total_pages: 1, total_results: 1 },
      };
      return new Response(listStatus === 200 ? JSON.stringify(listing) : body, { status: listStatus });
    }
    return new Response(status === 204 ? null : body, { status }); // a 204 carries no body
  }) as typeof globalThis.fetch;
  const handler = createRestoreHandler({
    settings: () => settingsFromEnv(env),
    secrets: new EnvSecretSource(env),
    log: (e) => logs.push(e),
    fetch,
  });
  return { handler, calls, logs };
}

describe('restore page escaping', () => {
  it('escapes every character that could open markup or an attribute', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&\``)).toBe(
      '&#60;a href=&#34;x&#34; onclick=&#39;y&#39;&#62;&#38;&#96;',
    );
  });

  it('escapes the values it puts into the confirmation page', () => {
    const html = renderConfirmPage({
      domain: '<b>x</b>',
      quarantinedSince: null,
      linkExpires: 0,
      formAction: '?a="><script>',
    });
    expect(html).not.toContain('<b>x</b>');
    expect(html).not.toContain('"><script>');
    expect(html).toContain('&#60;b&#62;x&#60;/b&#62;');
  });

  it('escapes what the reseller says when it refuses a restore', async () => {
    const { handler } = handlerAnswering(422, '{"error":"<script>alert(1)</script> not in quarantine"}');
    const res = await handler(event('POST'));
    expect(res.statusCode).toBe(409);
    expect(res.body).not.toContain('<script>alert(1)</script>');
    expect(res.body).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
  });
});

describe('createRestoreHandler', () => {
  it('answers 405 with Allow for other methods, without calling the reseller', async () => {
    const { handler, calls } = handlerAnswering(204, '');
    const res = await handler(event('PUT'));
    expect(res.statusCode).toBe(405);
    expect(res.headers?.Allow).toBe('GET, HEAD, POST');
    expect(calls).toEqual([]);
  });

  it('answers HEAD with headers only and no reseller call', async () => {
    const { handler, calls, logs } = handlerAnswering(204, '');
    const res = await handler(event('HEAD'));
    expect(res).toMatchObject({ statusCode: 200, body: '' });
    expect(res.headers?.['Cache-Control']).toBe('no-store');
    expect(calls).toEqual([]);
    expect(logs).toEqual([
      {
        domain: 'example.nl',
        method: 'HEAD',
        outcome: 'head',
        status: 200,
        sourceIp: '203.0.113.9',
        userAgent: undefined,
      },
    ]);
  });

  it('answers 502 and logs the authentication failure when the reseller refuses our key', async () => {
    const { handler, logs } = handlerAnswering(401, '{"error":"bad key"}', 401);
    const res = await handler(event('POST', 'example.nl', { Accept: 'application/json' }));
    expect(res.statusCode).toBe(502);
    expect(JSON.parse(res.body).outcome).toBe('reseller_auth_failed');
    expect(logs[0]?.detail).toMatch(/refused the API key \(HTTP 401\)/);
  });

  it('answers its own 502 page within its budget when the reseller never answers', async () => {
    const hanging = ((_url: string, init?: RequestInit) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
      )) as typeof fetch;
    const handler = createRestoreHandler({
      settings: () => settingsFromEnv(env),
      secrets: new EnvSecretSource(env),
      log: () => undefined,
      fetch: hanging,
      resellerBudgetMs: 300,
    });
    const res = await handler(event('GET', 'example.nl', { Accept: 'application/json' }));
    expect(res.statusCode).toBe(502);
    expect(JSON.parse(res.body).outcome).toBe('reseller_unreachable');
  });

  it('restores with one POST to the reseller', async () => {
    const { handler, calls } = handlerAnswering(204, '');
    const res = await handler(event('POST'));
    expect(res.statusCode).toBe(200);
    expect(calls).toEqual(['GET /v2/domains', 'POST /v2/domains/example.nl/restore']);
  });
});
