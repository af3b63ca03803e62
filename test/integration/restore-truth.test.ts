import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import { settingsFromEnv } from '../../functions/core/scan/config';
import { createRestoreHandler, type RestoreLogEntry } from '../../functions/handlers/restore-handler';
import { serveLocally } from '../../functions/local/local-server';
import { confirmedPost } from '../support/restore-env';

const KEY = 'sk_restore_truth_9d1f2a';
const SIGNING_KEY = 'restore-truth-signing-key-0123456789abcdef';
const DOMAIN = 'garden-6.co.uk';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function listen(handler: Handler) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface State {
  restored: boolean;
  /** Look-ups answer 500 from now on. */
  lookupFails: boolean;
}

/**
 * A reseller whose list shows DOMAIN in quarantine until a restore succeeds, and whose restore
 * endpoint answers as `restore` says. Every request is recorded.
 */
async function reseller(restore: (res: ServerResponse, state: State, req: IncomingMessage) => void) {
  const state: State = { restored: false, lookupFails: false };
  const calls: string[] = [];
  const url = await listen((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    calls.push(`${req.method} ${path}`);
    if (req.method === 'GET' && path === '/v2/domains') {
      if (state.lookupFails) {
        res.writeHead(500).end();
        return;
      }
      const record = {
        domain_name: DOMAIN,
        status: [state.restored ? 'registered' : 'quarantine'],
        date_expiry: '2026-10-01T00:00:00Z',
        date_deleted: '2026-10-02T00:00:00Z',
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          data: [record],
          pagination: { current_page: 1, per_page: 100, total_pages: 1, total_results: 1 },
        }),
      );
      return;
    }
    if (req.method === 'POST' && path === `/v2/domains/${DOMAIN}/restore`) return restore(res, state, req);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Login</html>');
  });
  return { url, calls, state };
}

/** `sentinel serve`'s server in front of the reseller, and a signed link for DOMAIN. */
async function restoreEndpoint(resellerUrl: string, resellerBudgetMs?: number) {
  const env = { RESELLER_BASE_URL: resellerUrl, RESELLER_API_KEY: KEY, LINK_SIGNING_KEY: SIGNING_KEY };
  const logs: RestoreLogEntry[] = [];
  const handler = createRestoreHandler({
    settings: () => settingsFromEnv(env),
    secrets: new EnvSecretSource(env),
    log: (e) => logs.push(e),
    ...(resellerBudgetMs ? { resellerBudgetMs } : {}),
  });
  const server = await serveLocally(handler, { port: 0 });
  closers.push(server.close);
  const link = signRestoreLink({
    baseUrl: server.url,
    domain: DOMAIN,
    keys: parseSigningKeys(SIGNING_KEY),
    now: Date.now(),
  });
  const post = async () => {
    const res = await fetch(link, confirmedPost(DOMAIN, { Accept: 'application/json' }));
    return { status: res.status, body: (await res.json()) as { outcome: string; message: string } };
  };
  return { link, post, logs, url: server.url };
}

describe('restore tells the truth', () => {
  it('answers 502 NOT restored when the reseller redirects restore to a login page (302)', async () => {
    const api = await reseller((res) => {
      res.writeHead(302, { location: '/login' }).end();
    });
    const endpoint = await restoreEndpoint(api.url);
    const { status, body } = await endpoint.post();
    expect(status).toBe(502);
    expect(body.message).toMatch(
      /^The reseller answered unexpectedly \(HTTP 302\); the domain was NOT restored\./,
    );
    expect(api.calls).toEqual(['GET /v2/domains', `POST /v2/domains/${DOMAIN}/restore`]); // never followed
  });

  it('answers 502 NOT restored for a 307 to another origin, which never sees the request or the key', async () => {
    const elsewhere: Array<string | undefined> = [];
    const other = await listen((req, res) => {
      elsewhere.push(req.headers.authorization);
      res.writeHead(204).end();
    });
    const api = await reseller((res) => {
      res.writeHead(307, { location: `${other}/v2/domains/${DOMAIN}/restore` }).end();
    });
    const endpoint = await restoreEndpoint(api.url);
    const { status, body } = await endpoint.post();
    expect(status).toBe(502);
    expect(body.message).toContain('(HTTP 307); the domain was NOT restored');
    expect(elsewhere).toEqual([]);
  });

  it('answers 504 "outcome unknown" when restore does not answer in time, and logs the same', async () => {
    const api = await reseller(() => undefined); // never answers
    const endpoint = await restoreEndpoint(api.url, 600);
    const { status, body } = await endpoint.post();
    expect(status).toBe(504);
    expect(body.outcome).toBe('outcome_unknown');
    expect(body.message).toMatch(
      /may or may not have been restored\. Check the domain’s status .* before trying again/,
    );
    expect(endpoint.logs.at(-1)).toMatchObject({ outcome: 'outcome_unknown', status: 504 });
    expect(endpoint.logs.at(-1)?.detail).toMatch(/^outcome unknown: /);
  });

  it('restores once; a replayed POST gets 409 "in progress or done" (its claim) or, once that lapsed, "not in quarantine (already restored?)", with no second restore call', async () => {
    const api = await reseller((res, state) => {
      state.restored = true;
      res.writeHead(204).end();
    });
    const endpoint = await restoreEndpoint(api.url);
    expect(await endpoint.post()).toEqual({
      status: 200,
      body: { outcome: 'restored', message: `${DOMAIN} has been restored from quarantine.` },
    });
    const again = await endpoint.post();
    expect(again.status).toBe(409);
    expect(again.body.outcome).toBe('restore_claimed');
    expect(again.body.message).toContain(`A restore of ${DOMAIN} is in progress or done`);
    // Another server without the first one's claims (as after the claim lapsed): the look-up says why.
    const later = await (await restoreEndpoint(api.url)).post();
    expect(later.status).toBe(409);
    expect(later.body.message).toContain('not in quarantine (already restored?)');
    expect(api.calls.filter((c) => c.startsWith('POST'))).toHaveLength(1);
  });

  it('says the outcome is unknown, not NOT restored, when the connection breaks after the restore was sent and the re-check fails', async () => {
    const api = await reseller((_res, state, req) => {
      state.lookupFails = true;
      req.socket.destroy(); // reset once the whole request arrived
    });
    const endpoint = await restoreEndpoint(api.url, 1_500);
    const { status, body } = await endpoint.post();
    expect(status).toBe(504);
    expect(body.outcome).toBe('outcome_unknown');
    expect(body.message).toMatch(/may or may not have been restored\. Check the domain’s status/);
    expect(api.calls.filter((c) => c.startsWith('POST'))).toHaveLength(1);
  });

  it('answers a reset restore that leaves the domain in quarantine as unknown, and a second click sends nothing', async () => {
    const api = await reseller((_res, _state, req) => {
      req.socket.destroy(); // the reseller may have taken the restore before the connection broke
    });
    const endpoint = await restoreEndpoint(api.url);
    const first = await endpoint.post();
    expect(first).toEqual({
      status: 504,
      body: {
        outcome: 'outcome_unknown',
        message: `The reseller answered the restore of ${DOMAIN} with a broken connection, so ${DOMAIN} may or may not have been restored. Check the domain’s status in the reseller’s control panel before trying again.`,
      },
    });
    const second = await endpoint.post();
    expect(second.status).toBe(409);
    expect(second.body.outcome).toBe('restore_claimed');
    expect(api.calls.filter((c) => c.startsWith('POST'))).toHaveLength(1);
  });

  it('answers restored when a reset restore left quarantine after all', async () => {
    const api = await reseller((_res, state, req) => {
      state.restored = true;
      req.socket.destroy();
    });
    const { status, body } = await (await restoreEndpoint(api.url)).post();
    expect({ status, body }).toEqual({
      status: 200,
      body: {
        outcome: 'restored',
        message: `${DOMAIN} has been restored from quarantine (confirmed by a fresh look-up of its status).`,
      },
    });
  });

  it('answers a 500 as unknown after one POST, never "after retries", and sends nothing on the next click', async () => {
    const api = await reseller((res) => {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal"}');
    });
    const endpoint = await restoreEndpoint(api.url);
    const { status, body } = await endpoint.post();
    expect(status).toBe(504);
    expect(body.message).toContain(`answered the restore of ${DOMAIN} with HTTP 500`);
    expect(body.message).not.toContain('NOT restored');
    expect(`${body.message} ${endpoint.logs.at(-1)?.detail}`).not.toMatch(/retries/);
    // The reseller may have taken the restore before it failed: a second click pays for nothing twice.
    const again = await endpoint.post();
    expect(again.status).toBe(409);
    expect(api.calls.filter((c) => c.startsWith('POST'))).toHaveLength(1);
  });

  it('re-checks a 202 and a 200 carrying an error: restored only when the domain left quarantine', async () => {
    const accepted = await reseller((res, state) => {
      state.restored = true; // the job ran by the time of the look-up
      res.writeHead(202).end();
    });
    const one = await (await restoreEndpoint(accepted.url)).post();
    expect(one.status).toBe(200);
    expect(one.body.message).toContain('confirmed by a fresh look-up');

    const failed = await reseller((res) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"error":"domain not restorable","success":false}');
    });
    const two = await (await restoreEndpoint(failed.url)).post();
    expect(two.status).toBe(502);
    expect(two.body.message).toContain(
      'NOT restored: the reseller answered the restore with HTTP 200 with a body',
    );
  });

  it('tells the loser of two restores that reached the reseller at once (two servers sharing no claims) "not in quarantine (already restored?)", not "refused"', async () => {
    let pending = 0;
    const waiting: Array<() => void> = [];
    const api = await reseller((res, state) => {
      pending++;
      // Both restores are in before either answers: the first wins, the second is refused.
      waiting.push(() => {
        if (!state.restored) {
          state.restored = true;
          res.writeHead(204).end();
        } else {
          res
            .writeHead(422, { 'content-type': 'application/json' })
            .end('{"error":"domain is not in quarantine"}');
        }
      });
      if (pending === 2) for (const answer of waiting) answer();
    });
    const [one, two] = await Promise.all([restoreEndpoint(api.url), restoreEndpoint(api.url)]);
    const results = await Promise.all([one.post(), two.post()]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const loser = results.find((r) => r.status === 409);
    expect(loser?.body.outcome).toBe('not_in_quarantine');
    expect(loser?.body.message).toContain('not in quarantine (already restored?)');
  });

  it('serve answers a body over its limit with 413 and the usual security headers', async () => {
    const api = await reseller((res) => res.writeHead(204).end());
    const endpoint = await restoreEndpoint(api.url);
    const res = await fetch(endpoint.link, { method: 'POST', body: 'x'.repeat(100_000) });
    expect(res.status).toBe(413);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(await res.text()).toContain('Request too large');
    // The same for a chunked body that declares no length and only grows past the limit as it streams.
    const chunked = await new Promise<{ status?: number; csp?: string }>((resolve, reject) => {
      const req = request(
        endpoint.link,
        { method: 'POST', headers: { 'transfer-encoding': 'chunked' } },
        (r) => {
          r.resume();
          resolve({ status: r.statusCode, csp: r.headers['content-security-policy'] as string });
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 4; i++) req.write('y'.repeat(10_000));
      req.end();
    });
    expect(chunked.status).toBe(413);
    expect(chunked.csp).toContain("default-src 'none'");
    expect(api.calls).toEqual([]);
  });
});
