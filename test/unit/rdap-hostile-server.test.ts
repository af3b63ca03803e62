import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RdapBootstrap } from '../../functions/core/registry/bootstrap';
import { RdapClient, RdapDeadlineError } from '../../functions/core/registry/rdap-client';
import { RdapResponseError, RdapTimeoutError } from '../../functions/core/registry/rdap-errors';
import { checkRegistry, type RegistryCandidate } from '../../functions/core/registry/registry-check';

/**
 * The RDAP client against a real RDAP server on loopback that misbehaves: it holds a request open
 * (the scan's time runs out meanwhile), or sends the start of an answer and never ends it.
 */

const servers: Server[] = [];
const open = new Set<ServerResponse>();

afterEach(async () => {
  for (const res of open) res.destroy();
  open.clear();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** An RDAP server on 127.0.0.1, port 0; returns its base URL (ending in `/`). */
async function rdapServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    open.add(res);
    handle(req, res);
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const NOW = Date.parse('2026-11-22T06:00:00Z');
const candidate = (name: string): RegistryCandidate => ({
  domain_name: name,
  date_expiry: NOW + 200 * 86_400_000,
  quarantine: false,
  auto_renew: true,
  registrant_handle: null,
  reason: 'recheck',
  rank: 0,
});

describe('RdapClient against a hostile RDAP server on loopback', () => {
  it("says the scan's time ran out, not that the server timed out, when the deadline ends a request in flight", async () => {
    // The server holds the request; the per-request timeout (10 s) is far off, the deadline is not.
    const base = await rdapServer(() => undefined);
    const client = new RdapClient({ deadline: Date.now() + 300, timeoutMs: 10_000 });
    const failure = await client.lookupDomain(base, 'shop.com').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RdapDeadlineError);
    expect(client.requests).toBe(1);
  });

  it('counts a lookup the deadline cut short as out of time, with no line blaming the server', async () => {
    const base = await rdapServer(() => undefined);
    const bootstrap = RdapBootstrap.parse(JSON.stringify({ services: [[['com'], [base]]] }), 'test');
    const result = await checkRegistry({
      candidates: [candidate('held.com')],
      bootstrap,
      client: new RdapClient({ deadline: Date.now() + 300, timeoutMs: 10_000 }),
      now: NOW,
      budget: 10,
      policy: { toleranceDays: 2, criticalDays: 7 },
    });
    expect(result.counts.not_checked).toEqual({ budget: 0, time: 1, server_failed: 0, name_refused: 0 });
    expect(result.problems).toEqual([]);
    expect(result.unconfirmed).toEqual(['held.com']);
  });

  it('gives up on an answer whose body never ends, as a timeout, within the request timeout', async () => {
    const base = await rdapServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      res.write('{"objectClassName":"domain","ldhName":"shop.com","status":["act');
    });
    const client = new RdapClient({ timeoutMs: 300, maxAttempts: 1 });
    const failure = await client.lookupDomain(base, 'shop.com').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RdapTimeoutError);
    expect((failure as Error).message).toBe('no answer within 300 ms to the RDAP lookup of shop.com');
  });

  it('refuses an answer that names no domain: a canned hold, or an error object sent with 200, is not the registry speaking of the name asked', async () => {
    const bodies = [
      { objectClassName: 'domain', status: ['client hold'] },
      { errorCode: 500, title: 'Internal Server Error' },
    ];
    let served = 0;
    const base = await rdapServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      res.end(JSON.stringify(bodies[served++ % bodies.length]));
    });
    const bootstrap = RdapBootstrap.parse(JSON.stringify({ services: [[['com'], [base]]] }), 'test');
    const result = await checkRegistry({
      candidates: [
        { ...candidate('canned.com'), reason: 'flagged' },
        { ...candidate('error.com'), reason: 'flagged', rank: 1 },
      ],
      bootstrap,
      client: new RdapClient({ maxAttempts: 1 }),
      now: NOW,
      budget: 10,
      policy: { toleranceDays: 2, criticalDays: 7 },
      concurrency: 1,
      perServer: 1,
    });
    expect(result.views.size).toBe(0);
    expect(result.counts).toMatchObject({ checked: 0, not_checkable: { no_expiration: 0 } });
    expect(result.counts.not_checked.server_failed).toBe(2);
    expect(result.problems[0]?.reason).toBe(
      'a lookup: the answer names no domain (neither ldhName nor unicodeName)',
    );
    const client = new RdapClient({ maxAttempts: 1 });
    await expect(client.lookupDomain(base, 'again.com')).rejects.toThrow(RdapResponseError);
  });
});
