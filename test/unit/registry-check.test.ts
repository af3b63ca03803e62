import { describe, expect, it } from 'vitest';
import { RdapBootstrap } from '../../functions/core/registry/bootstrap';
import { RdapClient } from '../../functions/core/registry/rdap-client';
import { checkRegistry, type RegistryCandidate } from '../../functions/core/registry/registry-check';
import { farCandidate } from '../support/rdap-answers';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const EXPIRY = NOW + 200 * DAY;
const bootstrap = RdapBootstrap.parse(
  JSON.stringify({
    publication: '2026-11-20T00:00:00Z',
    services: [
      [['com'], ['https://good.example/']],
      [['be'], ['https://down.example/']],
      [['nl', 'xn--p1ai'], ['https://good.example/']],
    ],
  }),
  'test',
);

const candidate = farCandidate;

/** RDAP servers in one fetch: good.example agrees except for stale.com; down.example answers 503. */
function servers() {
  const asked: string[] = [];
  const fetch = (async (url: string | URL | Request) => {
    const u = new URL(String(url));
    const name = u.pathname.split('/').pop() as string;
    asked.push(`${u.host}:${name}`);
    if (u.host === 'down.example') return new Response('{}', { status: 503 });
    const expiration = name === 'stale.com' ? EXPIRY - 365 * DAY : EXPIRY;
    return new Response(
      JSON.stringify({
        objectClassName: 'domain',
        ldhName: name,
        status: ['active'],
        events: [{ eventAction: 'expiration', eventDate: new Date(expiration).toISOString() }],
      }),
      { status: 200 },
    );
  }) as typeof globalThis.fetch;
  return { fetch, asked };
}

/** A registry answering each lookup by the name it asks for. */
const answeringByName = (answer: (name: string) => Response) =>
  (async (url: string | URL | Request) =>
    answer(new URL(String(url)).pathname.split('/').pop() as string)) as typeof globalThis.fetch;
/** An RDAP domain object for `name`, with `extra` (a status, events). */
const domainObject = (name: string, extra: Record<string, unknown>) =>
  new Response(JSON.stringify({ objectClassName: 'domain', ldhName: name, ...extra }), { status: 200 });

/** A registry that knows the names starting with `prefix` (agreeing with the reseller) and answers 404 for the rest. */
const knowing = (prefix: string) =>
  answeringByName((name) =>
    name.startsWith(prefix)
      ? domainObject(name, {
          status: ['active'],
          events: [{ eventAction: 'expiration', eventDate: new Date(EXPIRY).toISOString() }],
        })
      : new Response('{"errorCode":404}', { status: 404 }),
  );
const client = (fetch: typeof globalThis.fetch) =>
  new RdapClient({ fetch, sleep: async () => undefined, maxAttempts: 1 });
const POLICY = { toleranceDays: 2, criticalDays: 7 };

/** One check of `candidates` at the registries `fetch` answers for, with the test's clock and policy. */
const checkAt = (
  fetch: typeof globalThis.fetch,
  candidates: readonly RegistryCandidate[],
  limits: { readonly budget: number; readonly perServer: number },
) => checkRegistry({ candidates, bootstrap, client: client(fetch), now: NOW, policy: POLICY, ...limits });

describe('checkRegistry', () => {
  it('spends the budget on re-checks first, then flagged domains, then the sample by rank', async () => {
    const { fetch, asked } = servers();
    const result = await checkRegistry({
      candidates: [
        candidate('s2.com', 'sample', 2),
        candidate('s1.com', 'sample', 1),
        candidate('f.com', 'flagged'),
        candidate('r.com', 'recheck'),
      ],
      bootstrap,
      client: client(fetch),
      now: NOW,
      budget: 3,
      policy: POLICY,
      concurrency: 1,
    });
    expect(asked).toEqual(['good.example:r.com', 'good.example:f.com', 'good.example:s1.com']);
    expect(result.counts).toMatchObject({
      candidates: { recheck: 1, flagged: 1, sample: 2 },
      queries: 3,
      checked: 3,
      agree: 3,
      not_checked: { budget: 1, time: 0, server_failed: 0, name_refused: 0 },
    });
  });

  it('counts a TLD without RDAP as not checkable without spending the budget on it', async () => {
    const { fetch, asked } = servers();
    const result = await checkRegistry({
      candidates: [
        candidate('a.de', 'flagged'),
        candidate('b.eu', 'flagged'),
        candidate('stale.com', 'sample'),
      ],
      bootstrap,
      client: client(fetch),
      now: NOW,
      budget: 1,
      policy: POLICY,
    });
    expect(asked).toEqual(['good.example:stale.com']);
    expect(result.counts.not_checkable.no_rdap_service).toBe(2);
    expect(result.views.get('stale.com')).toMatchObject({
      kind: 'registry_expiry_mismatch',
      server: 'https://good.example',
    });
  });

  it("leaves memory's re-check unconfirmed when the bootstrap no longer names its TLD's server: that is no all-clear", async () => {
    // A bootstrap without .de (dropped, or one that lists nothing): the remembered finding on r.de cannot be re-checked.
    const { fetch, asked } = servers();
    const result = await checkRegistry({
      candidates: [candidate('r.de', 'recheck'), candidate('s.de', 'sample')],
      bootstrap,
      client: client(fetch),
      now: NOW,
      budget: 10,
      policy: POLICY,
    });
    expect(asked).toEqual([]);
    expect(result.counts.not_checkable.no_rdap_service).toBe(2);
    expect(result.unconfirmed).toEqual(['r.de']);
  });

  it('leaves a remembered expiry mismatch unconfirmed when the registry answers statuses but no date: a date it no longer shows is no agreement', async () => {
    const fetch = answeringByName((name) => domainObject(name, { status: ['active'] }));
    const result = await checkRegistry({
      candidates: [
        { ...candidate('mismatch-r.com', 'recheck'), remembered: 'registry_expiry_mismatch' },
        { ...candidate('hold-r.com', 'recheck'), remembered: 'registry_hold' },
      ],
      bootstrap,
      client: client(fetch),
      now: NOW,
      budget: 10,
      policy: POLICY,
      concurrency: 1,
    });
    // The hold is over (its statuses say so); whether the dates agree now, nothing says.
    expect(result.unconfirmed).toEqual(['mismatch-r.com']);
    expect(result.views.size).toBe(0);
  });

  it('leaves a failing server alone after three failures in a row: one info problem, its domains counted', async () => {
    const { fetch, asked } = servers();
    const names = Array.from({ length: 20 }, (_, i) => candidate(`d${i}.be`, 'sample', i));
    const result = await checkRegistry({
      candidates: [...names, candidate('ok.com', 'flagged'), candidate('r.be', 'recheck')],
      bootstrap,
      client: client(fetch),
      now: NOW,
      budget: 100,
      policy: POLICY,
      perServer: 1,
    });
    expect(asked.filter((a) => a.startsWith('down.example'))).toHaveLength(3);
    expect(result.counts.not_checked.server_failed).toBe(21);
    expect(result.counts.agree).toBe(1);
    expect(result.problems).toEqual([
      {
        server: 'https://down.example',
        severity: 'info',
        reason: expect.stringMatching(
          /^the RDAP server failed \(HTTP 503\) on a lookup; left alone for the rest of this scan after 3 failed lookups in a row$/,
        ),
        domains_not_checked: 21,
      },
    ]);
    // Memory's re-check that could not be done is named, so memory keeps what it knew.
    expect(result.unconfirmed).toEqual(['r.be']);
  });

  it('gives the places of a server left alone to the next domains in line: a registry that is down does not spend the budget of the others', async () => {
    const { fetch, asked } = servers();
    // Flagged at the dead server first, then the sample at the good one: a budget of 10 spent
    // 3 lookups at the dead server and left its 7 other places empty, while 7 domains of a
    // registry that answers were counted beyond the budget.
    const dead = Array.from({ length: 10 }, (_, i) => candidate(`d${i}.be`, 'flagged', i));
    const good = Array.from({ length: 10 }, (_, i) => candidate(`g${i}.com`, 'sample', i));
    const result = await checkRegistry({
      candidates: [...dead, ...good, candidate('late.be', 'sample', 99), candidate('r.com', 'sample', 98)],
      bootstrap,
      client: client(fetch),
      now: NOW,
      budget: 10,
      policy: POLICY,
      perServer: 1,
    });
    expect(asked.filter((a) => a.startsWith('down.example'))).toHaveLength(3);
    expect(result.counts.queries).toBe(10);
    expect(result.counts.agree).toBe(7);
    expect(asked.filter((a) => a.startsWith('good.example'))).toEqual(
      Array.from({ length: 7 }, (_, i) => `good.example:g${i}.com`),
    );
    expect(result.counts.not_checked).toEqual({ budget: 5, time: 0, server_failed: 10, name_refused: 0 });
  });

  it('names the ccTLD domains a registry does not know, at info, without a finding', async () => {
    const fetch = (async () => new Response('{"errorCode":404}', { status: 404 })) as typeof globalThis.fetch;
    const result = await checkRegistry({
      candidates: [candidate('gone.nl', 'flagged'), candidate('gone.xn--p1ai', 'sample')],
      bootstrap,
      client: client(fetch),
      now: NOW,
      budget: 10,
      policy: POLICY,
      concurrency: 1,
    });
    expect(result.views.size).toBe(0);
    expect(result.counts.not_checkable.not_found).toBe(2);
    expect(result.problems[0]?.reason).toMatch(
      /does not know 2 domains the reseller lists \(HTTP 404 or 410\), e\.g\. gone\.nl, gone\.xn--p1ai/,
    );
  });

  it('finds a gTLD domain the registry does not know: a finding, not an info line', async () => {
    const soon = { ...candidate('lapsed.com', 'flagged'), date_expiry: NOW - DAY };
    const result = await checkRegistry({
      candidates: [
        candidate('gone.com', 'sample'),
        soon,
        { ...candidate('held.com', 'sample'), quarantine: true },
        candidate('known1.com', 'sample'),
        candidate('known2.com', 'sample'),
      ],
      bootstrap,
      client: client(knowing('known')),
      now: NOW,
      budget: 10,
      policy: POLICY,
    });
    expect(result.views.get('gone.com')).toEqual({
      kind: 'registry_unknown',
      severity: 'warning',
      date_expiry: null,
      days_left: null,
      status: [],
      server: 'https://good.example',
    });
    expect(result.views.get('lapsed.com')?.severity).toBe('critical');
    expect(result.views.has('held.com')).toBe(false);
    expect(result.counts).toMatchObject({ checked: 5, disagree: 2, not_checkable: { not_found: 1 } });
    expect(result.problems.map((p) => p.reason)).toEqual([
      expect.stringMatching(
        /does not know 1 domain the reseller lists \(HTTP 404 or 410\), e\.g\. held\.com:/,
      ),
    ]);
  });

  it("leaves memory's re-check unconfirmed when the registry says nothing of it: 404 of a ccTLD, or neither a status nor a date", async () => {
    // gone: 404; bare: a domain object and nothing else; nl-style: statuses but no date (SIDN).
    const fetch = answeringByName((name) =>
      name.startsWith('gone')
        ? new Response('{"errorCode":404}', { status: 404 })
        : domainObject(name, name.startsWith('bare') ? {} : { status: ['active'] }),
    );
    const result = await checkRegistry({
      candidates: [
        candidate('gone-r.nl', 'recheck'),
        candidate('bare-r.com', 'recheck'),
        candidate('lifted-r.com', 'recheck'),
        candidate('gone-f.nl', 'flagged'),
        candidate('bare-s.com', 'sample'),
      ],
      bootstrap,
      client: client(fetch),
      now: NOW,
      budget: 10,
      policy: POLICY,
      concurrency: 1,
    });
    // A remembered hold whose registry shows statuses without it is over, date or not: it resolves.
    expect(result.unconfirmed).toEqual(['gone-r.nl', 'bare-r.com']);
    expect(result.views.size).toBe(0);
    expect(result.counts).toMatchObject({
      checked: 5,
      not_checkable: { not_found: 2, no_expiration: 3 },
      not_checked: { budget: 0, time: 0, server_failed: 0, name_refused: 0 },
    });
  });

  it('turns a remembered registry finding of a gTLD that now answers 404 into registry_unknown only when that is critical: no finding falls in severity', async () => {
    const remembered = (name: string, kind: RegistryCandidate['remembered'], date_expiry = EXPIRY) => ({
      ...candidate(name, 'recheck'),
      remembered: kind,
      date_expiry,
    });
    const result = await checkRegistry({
      candidates: [
        remembered('far-redemption.com', 'registry_redemption'),
        remembered('near-redemption.com', 'registry_redemption', NOW + DAY),
        remembered('far-unknown.com', 'registry_unknown'),
        candidate('known1.com', 'sample'),
        candidate('known2.com', 'sample'),
      ],
      bootstrap,
      client: client(knowing('known')),
      now: NOW,
      budget: 10,
      policy: POLICY,
      concurrency: 1,
    });
    expect(result.unconfirmed).toEqual(['far-redemption.com']);
    expect([...result.views].map(([n, v]) => `${n} ${v.kind} ${v.severity}`)).toEqual([
      'near-redemption.com registry_unknown critical',
      'far-unknown.com registry_unknown warning',
    ]);
  });

  it('takes no 404 of a gTLD server that knows fewer of the domains asked than it does not as a finding: an info line, memory kept', async () => {
    // A misconfigured server answering 404 for everything would turn a whole sample into warnings.
    const result = await checkRegistry({
      candidates: [
        candidate('gone1.com', 'sample'),
        candidate('gone2.com', 'flagged'),
        { ...candidate('gone3.com', 'recheck'), remembered: 'registry_unknown' as const },
        candidate('known1.com', 'sample'),
      ],
      bootstrap,
      client: client(knowing('known')),
      now: NOW,
      budget: 10,
      policy: POLICY,
      concurrency: 1,
    });
    expect(result.views.size).toBe(0);
    expect(result.unconfirmed).toEqual(['gone3.com']);
    expect(result.counts).toMatchObject({ checked: 4, disagree: 0, not_checkable: { not_found: 3 } });
    expect(result.problems.map((p) => p.reason)).toEqual([
      expect.stringMatching(
        /does not know 3 domains .*its server knew 1 of the domains asked, so its 404s are not taken as findings/,
      ),
    ]);
  });

  it('leaves a server alone that answered 404 or 410 to ten lookups and three controls and knew none: its places go to a registry that answers', async () => {
    // A server answering 404 (or 410) to everything knows none of the domains asked, so none of its
    // 404s is believed (judgeUnknown): asking it the rest spent the budget of the registries that answer.
    // Three controls after the ten (left-alone.ts) tell it from a registry whose first ten were deleted.
    const asked: string[] = [];
    const fetch = (async (url: string | URL | Request) => {
      const u = new URL(String(url));
      const name = u.pathname.split('/').pop() as string;
      asked.push(`${u.host}:${name}`);
      if (u.host === 'down.example') return new Response('{"errorCode":410}', { status: 410 });
      return domainObject(name, {
        status: ['active'],
        events: [{ eventAction: 'expiration', eventDate: new Date(EXPIRY).toISOString() }],
      });
    }) as typeof globalThis.fetch;
    const gone = Array.from({ length: 30 }, (_, i) => candidate(`d${i}.be`, 'flagged', i));
    const good = Array.from({ length: 30 }, (_, i) => candidate(`g${i}.com`, 'sample', i));
    const result = await checkAt(fetch, [...gone, ...good], { budget: 40, perServer: 1 });
    expect(asked.filter((a) => a.startsWith('down.example'))).toHaveLength(13);
    expect(asked.filter((a) => a.startsWith('good.example'))).toHaveLength(27);
    expect(result.counts.agree).toBe(27);
    expect(result.views.size).toBe(0);
    expect(result.problems.map((p) => p.reason)).toContainEqual(
      'it answered 13 lookups with HTTP 404 or 410 and knew none of the domains asked, not even 3 the reseller lists as active asked to confirm it: its 404s say nothing of them; left alone for the rest of this scan',
    );
  });

  it('does not leave a server alone for 404s its domains explain (in quarantine, added within a day): the sample after them is asked', async () => {
    // A reseller's flagged domains go first, and a quarantine's is a 404 a healthy gTLD registry
    // gives (it purged the name); so may a registration of minutes ago. Ten of them said nothing of
    // the server, yet left .com alone: its sample unchecked, a domain it no longer knows unfound.
    const fetch = knowing('g');
    const quarantined = Array.from({ length: 6 }, (_, i) => ({
      ...candidate(`q${i}.com`, 'flagged', i),
      quarantine: true,
    }));
    const added = Array.from({ length: 6 }, (_, i) => ({
      ...candidate(`n${i}.com`, 'flagged', 10 + i),
      date_created: NOW - 3_600_000,
    }));
    const sample = Array.from({ length: 20 }, (_, i) => candidate(`g${i}.com`, 'sample', i));
    const result = await checkAt(
      fetch,
      [...quarantined, ...added, ...sample, candidate('x-deleted.com', 'sample', 99)],
      { budget: 100, perServer: 1 },
    );
    expect(result.counts.agree).toBe(20);
    expect(result.counts.not_checked.server_failed).toBe(0);
    expect(result.views.get('x-deleted.com')?.kind).toBe('registry_unknown');
  });

  it("does not leave a server alone for the 404s memory's re-checks expect (a domain it no longer knew, one in redemption)", async () => {
    // Re-checks go first: a registry that dropped ten of the account's domains (believed last scan)
    // answers them 404 again, which says nothing against it; left alone, the sample after them went
    // unchecked every scan while memory kept the ten, and a further deletion was never found.
    const gone = Array.from({ length: 12 }, (_, i) => ({
      ...candidate(`x${i}.com`, 'recheck', i),
      remembered: i % 2 ? ('registry_unknown' as const) : ('registry_redemption' as const),
    }));
    const sample = Array.from({ length: 20 }, (_, i) => candidate(`g${i}.com`, 'sample', i));
    const result = await checkAt(
      knowing('g'),
      [...gone, ...sample, candidate('y-deleted.com', 'sample', 99)],
      { budget: 100, perServer: 1 },
    );
    expect(result.counts.agree).toBe(20);
    expect(result.counts.not_checked.server_failed).toBe(0);
    expect(result.views.get('y-deleted.com')?.kind).toBe('registry_unknown');
  });

  it('asks the controls of a server in doubt one at a time, after the lookup in flight when the tenth 404 came', async () => {
    let n = 0;
    const fetch = (async () => {
      n++;
      return new Response('{"errorCode":404}', { status: 404 });
    }) as typeof globalThis.fetch;
    const result = await checkAt(
      fetch,
      Array.from({ length: 20 }, (_, i) => candidate(`d${i}.be`, 'sample', i)),
      { budget: 20, perServer: 2 },
    );
    expect(n).toBe(14); // ten, the eleventh in flight (no control), then three controls
    expect(result.counts.not_checked.server_failed).toBe(6);
    expect(result.problems.map((p) => p.reason)).toContainEqual(
      'it answered 14 lookups with HTTP 404 or 410 and knew none of the domains asked, not even 3 the reseller lists as active asked to confirm it: its 404s say nothing of them; left alone for the rest of this scan',
    );
  });

  it("leaves only the server alone whose Retry-After ends past the scan's time: the others are still asked", async () => {
    const asked: string[] = [];
    const fetch = (async (url: string | URL | Request) => {
      const u = new URL(String(url));
      asked.push(`${u.host}:${u.pathname.split('/').pop()}`);
      if (u.host === 'down.example')
        return new Response('{}', { status: 429, headers: { 'retry-after': '20' } });
      return domainObject(u.pathname.split('/').pop() as string, {
        status: ['active'],
        events: [{ eventAction: 'expiration', eventDate: new Date(EXPIRY).toISOString() }],
      });
    }) as typeof globalThis.fetch;
    const result = await checkRegistry({
      candidates: [
        candidate('r.be', 'recheck'),
        candidate('x.be', 'sample', 0),
        candidate('a.com', 'sample', 1),
      ],
      bootstrap,
      // 20 s asked for, 10 s left: that server cannot be asked again in time; good.example can.
      client: new RdapClient({ fetch, sleep: async () => undefined, deadline: Date.now() + 10_000 }),
      now: NOW,
      budget: 100,
      policy: POLICY,
      concurrency: 1,
    });
    expect(asked).toEqual(['down.example:r.be', 'good.example:a.com']);
    expect(result.counts.agree).toBe(1);
    expect(result.counts.not_checked).toEqual({ budget: 0, time: 0, server_failed: 2, name_refused: 0 });
    expect(result.problems).toEqual([
      {
        server: 'https://down.example',
        severity: 'info',
        reason:
          'the RDAP server asked to wait 20 s (Retry-After) before a lookup, longer than the scan has left; it is not asked again in this scan',
        domains_not_checked: 2,
      },
    ]);
    expect(result.unconfirmed).toEqual(['r.be']);
  });
});

describe('checkRegistry on names the reseller lists that are no DNS name', () => {
  it('does not send a name with a lone surrogate or a megabyte label, and still judges the other domains', async () => {
    const { fetch, asked } = servers();
    const result = await checkRegistry({
      candidates: [
        candidate('a\ud800b.com', 'flagged', 0),
        candidate(`${'x'.repeat(1_000_000)}.com`, 'flagged', 1),
        candidate('stale.com', 'flagged', 2),
      ],
      bootstrap,
      client: client(fetch),
      now: NOW,
      budget: 10,
      policy: POLICY,
      concurrency: 1,
    });
    expect(asked).toEqual(['good.example:stale.com']);
    expect(result.views.get('stale.com')?.kind).toBe('registry_expiry_mismatch');
    expect(result.counts.not_checkable.no_rdap_service).toBe(2);
    expect(result.problems).toEqual([]);
  });
});

describe('checkRegistry at the size of a large account', () => {
  it('passes every place of a registry that is down on to the next domain in line, 200 000 of them', async () => {
    // 200 000 candidates (a million domains, a sample over five days), all at one registry that is
    // down: each place it leaves goes to the next in line, which is at the same registry. Its time
    // (linear; taken from the front of an array it was quadratic, some 15 s) is measured by
    // `npm run bench -- --sections registry`, not here.
    const candidates = Array.from({ length: 200_000 }, (_, i) => candidate(`d${i}.be`, 'sample', i));
    const result = await checkRegistry({
      candidates,
      bootstrap,
      client: client(servers().fetch),
      now: NOW,
      budget: 2000,
      policy: POLICY,
    });
    expect(result.counts.queries).toBe(3);
    expect(result.counts.not_checked).toEqual({
      budget: 0,
      time: 0,
      server_failed: 200_000,
      name_refused: 0,
    });
  }, 60_000);
});
