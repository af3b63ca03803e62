import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import { type AuditEntry, type AuditTrail, MemoryRestoreClaims } from '../../functions/core/memory/audit';
import { escapeHtml, renderConfirmPage, typedNamePattern } from '../../functions/core/pages/restore-page';
import { settingsFromEnv } from '../../functions/core/scan/config';
import { createRestoreHandler, type RestoreLogEntry } from '../../functions/handlers/restore-handler';

const SIGNING_KEY = 'unit-signing-key-0123456789abcdef01234567';
const env = {
  RESELLER_BASE_URL: 'https://api.test',
  RESELLER_API_KEY: 'k-unit-restore-handler',
  LINK_SIGNING_KEY: SIGNING_KEY,
};

/**
 * A request to a signed link; a POST carries the confirmation page's form filled in (the typed
 * name and the .nl consent) unless `body` says otherwise.
 */
function event(
  method: string,
  domain = 'example.nl',
  headers: Record<string, string> = {},
  body: string | null = method === 'POST' ? `confirm_domain=${domain}&registrant_consent=yes` : null,
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
    headers: body === null ? headers : { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body,
    requestContext: { identity: { sourceIp: '203.0.113.9' } },
  } as unknown as APIGatewayProxyEvent;
}

/** A reseller whose list says example.nl is in quarantine, and whose restore answers `status` with `body`. */
function handlerAnswering(status: number, body: string, listStatus = 200, audit?: AuditTrail) {
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
    ...(audit ? { audit: () => audit } : {}),
  });
  return { handler, calls, logs };
}

/** An audit trail in memory, or one whose outcome writes fail (the write-ahead still works). */
function memoryTrail(fails = false) {
  const entries: AuditEntry[] = [];
  const claims = new MemoryRestoreClaims();
  const trail: AuditTrail = {
    location: 'memory',
    recordAudit: async (entry) => {
      if (fails) throw new Error('the table is gone');
      entries.unshift(entry);
    },
    beginAudit: async (entry) => {
      entries.unshift({ ...entry, id: `ahead-${entries.length}` });
      return `ahead-${entries.length - 1}`;
    },
    completeAudit: async (ref, entry) => {
      if (fails) throw new Error('the table is gone');
      entries.splice(
        entries.findIndex((e) => e.id === ref),
        1,
        entry,
      );
    },
    listAudit: async () => [...entries],
    claimRestore: (domain, claim, now) => claims.claimRestore(domain, claim, now),
    releaseRestore: (domain, owner) => claims.releaseRestore(domain, owner),
  };
  return { trail, entries };
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

  it('builds a pattern the browser compiles (v flag) that takes the name in either form and any case', () => {
    const compiled = (domain: string) => new RegExp(`^(?:${typedNamePattern(domain)})$`, 'v');
    const plain = compiled('my-shop.nl');
    for (const typed of ['my-shop.nl', 'MY-Shop.NL', ' my-shop.nl. '])
      expect(plain.test(typed), typed).toBe(true);
    for (const typed of ['myxshop.nl', 'my-shop.com', 'my-shop.nl.evil', ''])
      expect(plain.test(typed), typed).toBe(false);
    const idn = compiled('xn--bcher-kva.de');
    expect(idn.test('bücher.de')).toBe(true);
    expect(idn.test('XN--BCHER-KVA.de')).toBe(true);
  });

  it('shows the restore-by date, says the restore is paid, and asks for consent only where the registry needs it', () => {
    const base = { quarantinedSince: null, linkExpires: 0, formAction: '?a=1' };
    const nl = renderConfirmPage({
      ...base,
      domain: 'shop.nl',
      deadline: { known: true, restore_by: '2026-12-02T06:00:00.000Z', days_to_restore: 5 },
      consentRequired: true,
    });
    expect(nl).toContain('<dt>Restore by</dt><dd>2026-12-02 06:00 UTC (5 days left, LAST DAYS)</dd>');
    expect(nl).toContain(
      'A restore is a paid action: the reseller charges for it, and its API does not state the price.',
    );
    expect(nl).toContain('<input type="text" id="confirm_domain" name="confirm_domain" required pattern=');
    expect(nl).toContain('<input type="checkbox" name="registrant_consent" value="yes" required>');
    const com = renderConfirmPage({
      ...base,
      domain: 'shop.com',
      deadline: { known: false, reason: 'no quarantine period is known for .com' },
    });
    expect(com).toContain('<dt>Restore by</dt><dd>unknown: no quarantine period is known for .com</dd>');
    expect(com).not.toContain('registrant_consent');
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

  it('answers JSON to an Accept header whose media type is spelt in another case (media types ignore case)', async () => {
    const { handler } = handlerAnswering(204, '');
    for (const accept of ['Application/JSON', 'APPLICATION/JSON; charset=utf-8']) {
      const res = await handler(event('POST', 'example.nl', { Accept: accept }, ''));
      expect(res.statusCode).toBe(422);
      expect(res.headers?.['Content-Type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(res.body).outcome).toBe('confirmation_missing');
    }
    const html = await handler(event('POST', 'example.nl', { Accept: 'application/json, TEXT/HTML' }, ''));
    expect(html.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
  });

  it('restores with one POST to the reseller', async () => {
    const { handler, calls } = handlerAnswering(204, '');
    const res = await handler(event('POST'));
    expect(res.statusCode).toBe(200);
    expect(calls).toEqual(['GET /v2/domains', 'POST /v2/domains/example.nl/restore']);
  });

  it('refuses a POST without the typed name with 422, calling nothing at all', async () => {
    const { handler, calls, logs } = handlerAnswering(204, '');
    const res = await handler(event('POST', 'example.nl', { Accept: 'application/json' }, ''));
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(res.body).outcome).toBe('confirmation_missing');
    expect(calls).toEqual([]);
    expect(logs[0]).toMatchObject({ outcome: 'confirmation_missing', status: 422 });
  });

  it('refuses a POST whose typed name is another domain, calling nothing', async () => {
    const { handler, calls } = handlerAnswering(204, '');
    const res = await handler(
      event('POST', 'example.nl', {}, 'confirm_domain=example.com&registrant_consent=yes'),
    );
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('was not restored');
    expect(calls).toEqual([]);
  });

  it('refuses a .nl restore without the registrant’s consent, calling nothing', async () => {
    const { handler, calls } = handlerAnswering(204, '');
    const res = await handler(
      event('POST', 'example.nl', { Accept: 'application/json' }, 'confirm_domain=example.nl'),
    );
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(res.body)).toMatchObject({ outcome: 'consent_missing' });
    expect(calls).toEqual([]);
  });

  it('takes the typed name and consent as JSON from a program, in any case and with a trailing dot', async () => {
    const { handler, calls } = handlerAnswering(204, '');
    const res = await handler(
      event(
        'POST',
        'example.nl',
        { Accept: 'application/json', 'Content-Type': 'application/json' },
        JSON.stringify({ confirm_domain: ' Example.NL. ', registrant_consent: true }),
      ),
    );
    expect(res.statusCode).toBe(200);
    expect(calls).toEqual(['GET /v2/domains', 'POST /v2/domains/example.nl/restore']);
  });

  it('refuses an oversized form with 413 and JSON that does not parse with 400, calling and keeping nothing', async () => {
    const { trail, entries } = memoryTrail();
    const { handler, calls, logs } = handlerAnswering(204, '', 200, trail);
    const padding = 'x'.repeat(20_000);
    const big = await handler(
      event(
        'POST',
        'example.nl',
        { Accept: 'application/json' },
        `pad=${padding}&confirm_domain=example.nl&registrant_consent=yes`,
      ),
    );
    expect(big.statusCode).toBe(413);
    expect(JSON.parse(big.body)).toMatchObject({
      outcome: 'bad_form',
      message: expect.stringMatching(/larger than 16384 characters/),
    });
    const broken = await handler(
      event(
        'POST',
        'example.nl',
        { Accept: 'application/json', 'Content-Type': 'application/json' },
        '{"confirm_domain": "example.nl",}',
      ),
    );
    expect(broken.statusCode).toBe(400);
    expect(JSON.parse(broken.body).message).toMatch(/labelled application\/json but is not JSON/);
    const page = await handler(
      event('POST', 'example.nl', { Accept: 'text/html', 'Content-Type': 'application/json' }, '[1]'),
    );
    expect([page.statusCode, page.body.includes('The form is not a JSON object')]).toEqual([400, true]);
    expect(calls).toEqual([]);
    expect(entries).toEqual([]);
    expect(logs.map((l) => [l.outcome, l.status])).toEqual([
      ['bad_form', 413],
      ['bad_form', 400],
      ['bad_form', 400],
    ]);
  });

  it('refuses a form in an encoding it does not read (multipart, plain text) with 415 naming the two it reads, not a 422 that says to type the name', async () => {
    const { trail, entries } = memoryTrail();
    const { handler, calls } = handlerAnswering(204, '', 200, trail);
    const boundary = 'XyZ';
    const multipart = [
      `--${boundary}`,
      'Content-Disposition: form-data; name="confirm_domain"',
      '',
      'example.nl',
      `--${boundary}`,
      'Content-Disposition: form-data; name="registrant_consent"',
      '',
      'yes',
      `--${boundary}--`,
      '',
    ].join('\r\n');
    const answer = await handler(
      event(
        'POST',
        'example.nl',
        { Accept: 'application/json', 'Content-Type': `multipart/form-data; boundary=${boundary}` },
        multipart,
      ),
    );
    expect(answer.statusCode).toBe(415);
    expect(JSON.parse(answer.body)).toMatchObject({
      outcome: 'bad_form',
      message: expect.stringMatching(
        /application\/x-www-form-urlencoded.*application\/json.*Nothing was changed/,
      ),
    });
    const plain = await handler(
      event('POST', 'example.nl', { 'Content-Type': 'text/plain' }, 'confirm_domain=example.nl'),
    );
    expect(plain.statusCode).toBe(415);
    // A form as a page posts it, with its charset named, and a program that names no type are read as before.
    const form = await handler(
      event(
        'POST',
        'example.nl',
        { Accept: 'application/json', 'Content-Type': 'Application/X-WWW-Form-Urlencoded; charset=UTF-8' },
        'confirm_domain=example.nl&registrant_consent=yes',
      ),
    );
    expect(form.statusCode).toBe(200);
    expect(calls).toEqual(['GET /v2/domains', 'POST /v2/domains/example.nl/restore']);
    expect(entries.map((e) => e.outcome)).toEqual(['restored']);
  });

  it('keeps every POST on a valid link in the audit trail with its outcome, never the signature', async () => {
    const { trail, entries } = memoryTrail();
    const { handler } = handlerAnswering(204, '', 200, trail);
    await handler(event('GET'));
    await handler(event('POST', 'example.nl', { 'User-Agent': 'Mozilla/5.0 test' }, ''));
    const signed = event('POST', 'example.nl', { 'User-Agent': 'Mozilla/5.0 test' });
    await handler(signed);
    expect(entries.map((e) => [e.domain, e.outcome, e.status])).toEqual([
      ['example.nl', 'restored', 200],
      ['example.nl', 'confirmation_missing', 422],
    ]);
    expect(entries[0]).toMatchObject({
      action: 'restore',
      via: 'web',
      key_id: signed.queryStringParameters?.kid,
      client_ip: '203.0.113.9',
      user_agent: 'Mozilla/5.0 test',
    });
    expect(JSON.stringify(entries)).not.toContain(String(signed.queryStringParameters?.sig));
  });

  it('keeps no entry for a POST whose signature is wrong (anyone could send those)', async () => {
    const { trail, entries } = memoryTrail();
    const { handler } = handlerAnswering(204, '', 200, trail);
    const tampered = event('POST');
    tampered.queryStringParameters = { ...tampered.queryStringParameters, sig: 'AAAA' };
    const res = await handler(tampered);
    expect(res.statusCode).toBe(403);
    expect(entries).toEqual([]);
  });

  it('answers the restore’s own outcome when its outcome cannot be written to the audit trail, and logs that at error level', async () => {
    const { trail } = memoryTrail(true);
    const { handler, logs } = handlerAnswering(204, '', 200, trail);
    const res = await handler(event('POST'));
    expect(res.statusCode).toBe(200);
    expect(logs.map((l) => [l.outcome, l.status])).toEqual([
      ['restored', 200],
      ['audit_failed', 500],
    ]);
    expect(logs[1]?.detail).toMatch(
      /could not be kept in the audit trail \(it stays there as sent, outcome unknown\): Error: the table is gone/,
    );
  });
});
