import { RdapBootstrap } from '../../functions/core/registry/bootstrap';
import { RdapClient } from '../../functions/core/registry/rdap-client';
import { checkRegistry, type RegistryCandidate } from '../../functions/core/registry/registry-check';

/**
 * One RDAP server scripted name by name, and a registry check of a few `.com` candidates against
 * it: what the tests of RDAP's answers (rdap-answers.test.ts, rdap-reask-unconfirmed.test.ts) share.
 */

export const NOW = Date.parse('2026-11-22T06:00:00Z');
export const DAY = 86_400_000;
/** Near expiry: a registry_unknown would be critical. */
export const EXPIRY = NOW + 3 * DAY;
export const bootstrap = RdapBootstrap.parse(
  JSON.stringify({ services: [[['com', 'nl'], ['https://rdap.example/']]] }),
  'test',
);

export const candidate = (name: string, rank: number): RegistryCandidate => ({
  domain_name: name,
  date_expiry: EXPIRY,
  quarantine: false,
  auto_renew: true,
  registrant_handle: null,
  reason: 'sample',
  rank,
});
/** A candidate far from expiry (a 404 for it is news, not explained by a near date), for the ten-404 rule's tests. */
export const farCandidate = (
  name: string,
  reason: RegistryCandidate['reason'],
  rank = 0,
  extra: Partial<RegistryCandidate> = {},
): RegistryCandidate => ({ ...candidate(name, rank), date_expiry: NOW + 200 * DAY, reason, ...extra });
export const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}.com`);

/** The registry's record of `name`: active, expiring when the reseller says. */
export const record = (name: string) =>
  new Response(
    JSON.stringify({
      objectClassName: 'domain',
      ldhName: name,
      status: ['active'],
      events: [{ eventAction: 'expiration', eventDate: new Date(EXPIRY).toISOString() }],
    }),
    { status: 200 },
  );
export const status = (code: number) => new Response(`{"errorCode":${code}}`, { status: code });

/** One RDAP server answering each request by its name and how often that name was asked. */
export function server(answer: (name: string, times: number) => Response) {
  const asked: string[] = [];
  const fetch = (async (url: string | URL | Request) => {
    const name = new URL(String(url)).pathname.split('/').pop() as string;
    asked.push(name);
    return answer(name, asked.filter((n) => n === name).length);
  }) as typeof globalThis.fetch;
  return { fetch, asked };
}

/** The registry check of `domains` (in that order of importance) through `fetch`, one lookup at a time. */
export async function checkAt(
  domains: readonly string[],
  fetch: typeof globalThis.fetch,
  client = new RdapClient({ fetch, sleep: async () => undefined, maxAttempts: 1 }),
) {
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
