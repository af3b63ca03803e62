import { describe, expect, it } from 'vitest';
import { RdapBootstrap } from '../../functions/core/registry/bootstrap';
import { RdapClient } from '../../functions/core/registry/rdap-client';
import { checkRegistry, type RegistryCandidate } from '../../functions/core/registry/registry-check';

/**
 * What the search for control lookups costs (left-alone.ts takeControl): each doubt must not scan
 * the whole rest of a server's queue again, or a large account's run of expired domains (404s at a
 * registry that deleted them, none of them a control) makes the check quadratic in the budget.
 */

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const bootstrap = RdapBootstrap.parse(
  JSON.stringify({ publication: '2026-11-20T00:00:00Z', services: [[['com'], ['https://reg.example/']]] }),
  'test',
);

/** A candidate that counts how often the check reads whether it is in quarantine (`reads`). */
function counted(name: string, rank: number, expiry: number, reads: { n: number }): RegistryCandidate {
  const c = {
    domain_name: name,
    date_expiry: expiry,
    auto_renew: true,
    registrant_handle: null,
    reason: 'flagged' as const,
    rank,
    get quarantine() {
      reads.n++;
      return false;
    },
  };
  return c;
}

/** A registry that knows the names starting `kept` and answers 404 for the rest. */
const fetch = (async (url: string | URL | Request) => {
  const name = new URL(String(url)).pathname.split('/').pop() as string;
  if (!name.startsWith('kept')) return new Response('{"errorCode":404}', { status: 404 });
  const expiration = new Date(NOW + 200 * DAY).toISOString();
  return new Response(
    JSON.stringify({
      objectClassName: 'domain',
      ldhName: name,
      status: ['active'],
      events: [{ eventAction: 'expiration', eventDate: expiration }],
    }),
    { status: 200 },
  );
}) as typeof globalThis.fetch;

describe('checkRegistry control lookups', () => {
  it('reads each domain of a long run of expired 404s a bounded number of times, not once per doubt', async () => {
    const reads = { n: 0 };
    const known = Array.from({ length: 20 }, (_, i) => counted(`kept${i}.com`, i, NOW + 200 * DAY, reads));
    const expired = Array.from({ length: 4000 }, (_, i) =>
      counted(`gone${i}.com`, 20 + i, NOW - 3 * DAY, reads),
    );
    const result = await checkRegistry({
      candidates: [...known, ...expired],
      bootstrap,
      client: new RdapClient({ fetch, sleep: async () => undefined, maxAttempts: 1 }),
      now: NOW,
      budget: 10_000,
      policy: { toleranceDays: 2, criticalDays: 7 },
    });
    expect(result.counts.queries).toBe(4020);
    expect(reads.n).toBeLessThan(20 * 4020);
  });
});
