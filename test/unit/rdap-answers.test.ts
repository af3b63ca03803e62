import { describe, expect, it } from 'vitest';
import { RdapBootstrap, shownSource } from '../../functions/core/registry/bootstrap';
import { RdapClient } from '../../functions/core/registry/rdap-client';
import { RdapError } from '../../functions/core/registry/rdap-errors';
import { checkRegistry, type RegistryCandidate } from '../../functions/core/registry/registry-check';
import type { RawRecord } from '../../functions/simulator/portfolio';
import { startRegistrySimulator } from '../../functions/simulator/registry';

/**
 * What an RDAP server answers besides a record and a 404 (RFC 7480 §5): a 400 or a 410 speaks of
 * one name, a 403 of the client; and a 404 that a server does not repeat (one broken backend behind
 * a load balancer) is no finding.
 */

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const EXPIRY = NOW + 3 * DAY; // near expiry: a registry_unknown would be critical
const bootstrap = RdapBootstrap.parse(
  JSON.stringify({ services: [[['com'], ['https://rdap.example/']]] }),
  'test',
);

const candidate = (name: string, rank: number): RegistryCandidate => ({
  domain_name: name,
  date_expiry: EXPIRY,
  quarantine: false,
  auto_renew: true,
  registrant_handle: null,
  reason: 'sample',
  rank,
});
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}.com`);

const record = (name: string) =>
  new Response(
    JSON.stringify({
      objectClassName: 'domain',
      ldhName: name,
      status: ['active'],
      events: [{ eventAction: 'expiration', eventDate: new Date(EXPIRY).toISOString() }],
    }),
    { status: 200 },
  );
const status = (code: number) => new Response(`{"errorCode":${code}}`, { status: code });

/** One RDAP server answering each request by its name and how often that name was asked. */
function server(answer: (name: string, times: number) => Response) {
  const asked: string[] = [];
  const fetch = (async (url: string | URL | Request) => {
    const name = new URL(String(url)).pathname.split('/').pop() as string;
    asked.push(name);
    return answer(name, asked.filter((n) => n === name).length);
  }) as typeof globalThis.fetch;
  return { fetch, asked };
}

async function check(domains: readonly string[], fetch: typeof globalThis.fetch) {
  const client = new RdapClient({ fetch, sleep: async () => undefined, maxAttempts: 1 });
  const result = await checkRegistry({
    candidates: domains.map((d, i) => candidate(d, i)),
    bootstrap,
    client,
    now: NOW,
    budget: 100,
    policy: { toleranceDays: 2, criticalDays: 7 },
    concurrency: 1,
  });
  return { result, requests: client.requests };
}

describe('secrets in the bootstrap and server URLs', () => {
  it('hides a token in the bootstrap URL path, its userinfo and its query', () => {
    const shown = shownSource('https://user:pw@cdn.example/rdap/tok_9f8e7d6c5b4a39281706/dns.json?sig=abc');
    expect(shown).toBe('https://cdn.example/rdap/…/dns.json?…');
    expect(shownSource('https://cdn.example/k=secretvalue/dns.json')).toBe('https://cdn.example/…/dns.json');
    expect(shownSource('https://data.iana.org/rdap/dns.json')).toBe('https://data.iana.org/rdap/dns.json');
  });

  it('keeps a token in the path of an RDAP server base URL out of the error it throws', async () => {
    const token = 'a1b2c3d4e5f6a7b8c9d0e1f2';
    const tokenBootstrap = RdapBootstrap.parse(
      JSON.stringify({ services: [[['com'], [`https://rdap.example/${token}/`]]] }),
      'test',
    );
    const client = new RdapClient({ fetch: (async () => status(500)) as typeof fetch, maxAttempts: 1 });
    const base = tokenBootstrap.serviceFor('x.com')?.baseUrl as string;
    const error = await client.lookupDomain(base, 'x.com').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RdapError);
    expect(JSON.stringify({ ...(error as RdapError), message: (error as Error).message })).not.toContain(
      token,
    );
  });
});
