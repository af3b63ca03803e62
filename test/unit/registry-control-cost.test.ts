import { describe, expect, it } from 'vitest';
import { RdapBootstrap } from '../../functions/core/registry/bootstrap';
import { type AnswerRuns, freshRuns, takeControl } from '../../functions/core/registry/left-alone';
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

describe('takeControl', () => {
  const ask = (name: string, reason: RegistryCandidate['reason'], expiry = NOW + 200 * DAY) => ({
    candidate: {
      domain_name: name,
      date_expiry: expiry,
      quarantine: false,
      auto_renew: true,
      registrant_handle: null,
      reason,
    },
  });
  const runs = (): AnswerRuns => ({ ...freshRuns(), known: 1, answered: true, unexplainedNotFound: 10 });

  it('asks the sample first, then the others in queue order, a domain queued since among them, searching on where it stopped', () => {
    const expired = NOW - DAY;
    const state = {
      ...runs(),
      head: 0,
      items: [
        ask('x1.com', 'flagged', expired),
        ask('f1.com', 'flagged'),
        ask('x2.com', 'flagged', expired),
        ask('s1.com', 'sample'),
        ask('x3.com', 'sample', expired),
        ask('s2.com', 'sample'),
        ask('f2.com', 'recheck'),
      ],
    };
    const controls: string[] = [];
    const next = () => {
      const before = state.controlsAsked;
      takeControl({ now: NOW }, state);
      if (state.controlsAsked > before) controls.push(state.items[state.head++]?.candidate.domain_name ?? '');
    };
    for (let i = 0; i < 3; i++) next();
    state.items.push(ask('s3.com', 'sample')); // queued since (a place another server left)
    next();
    next();
    expect(controls).toEqual(['s1.com', 's2.com', 'f1.com', 's3.com', 'f2.com']);
    next(); // none left: a server that knew some is out of doubt
    expect(state.unexplainedNotFound).toBe(0);
    expect(state.items.slice(state.head).map((i) => i.candidate.domain_name)).toEqual([
      'x1.com',
      'x2.com',
      'x3.com',
    ]);
  });
});
