import { describe, expect, it } from 'vitest';
import { RdapBootstrap, shownSource } from '../../functions/core/registry/bootstrap';
import { RdapClient } from '../../functions/core/registry/rdap-client';
import { RdapError } from '../../functions/core/registry/rdap-errors';
import { checkRegistry, type RegistryCounts } from '../../functions/core/registry/registry-check';
import type { RawRecord } from '../../functions/simulator/portfolio';
import { startRegistrySimulator } from '../../functions/simulator/registry';
import { candidate, checkAt, EXPIRY, NOW, names, record, server, status } from '../support/rdap-answers';

/**
 * What an RDAP server answers besides a record and a 404 (RFC 7480 §5): a 400 or a 410 speaks of
 * one name, a 403 of the client; and a 404 that a server does not repeat (one broken backend behind
 * a load balancer) is no finding.
 */

/** Every candidate is checked, not checkable or not checked, once (the report's sum rule). */
const accounted = (c: RegistryCounts) =>
  c.checked +
  c.not_checkable.no_rdap_service +
  c.not_checked.budget +
  c.not_checked.time +
  c.not_checked.server_failed +
  c.not_checked.name_refused;

const check = checkAt;

describe('RDAP answers about one name (RFC 7480): 400, and 410 taken as 404', () => {
  it('does not leave a server alone for answering 400 to three names in a row: they are its answers for those names', async () => {
    const bad = names('bad', 3);
    const { fetch, asked } = server((name) => (name.startsWith('bad') ? status(400) : record(name)));
    const { result } = await check(['ok0.com', ...bad, ...names('ok', 4).slice(1)], fetch);
    expect(asked).toHaveLength(7);
    expect(result.counts).toMatchObject({ checked: 4, agree: 4, disagree: 0 });
    expect(result.counts.not_checked).toEqual({ budget: 0, time: 0, server_failed: 0, name_refused: 3 });
    expect(result.views.size).toBe(0);
    expect(result.problems.map((p) => p.reason).join('\n')).not.toMatch(/left alone/);
    expect(result.problems.map((p) => p.reason).join('\n')).toMatch(/HTTP 400.*bad0\.com/);
  });

  it('takes a 410 (Gone) repeated as a 404: a finding that the registry does not know the domain, the server not left alone', async () => {
    const gone = names('gone', 3);
    const { fetch, asked } = server((name) => (name.startsWith('gone') ? status(410) : record(name)));
    const { result } = await check(['ok0.com', ...gone, 'ok1.com', 'ok2.com'], fetch);
    // Each 410 asked twice, as a 404 that would be a finding is.
    expect(asked).toHaveLength(9);
    expect(result.counts).toMatchObject({ checked: 6, agree: 3, disagree: 3 });
    expect(result.counts.not_checked.name_refused).toBe(0);
    expect([...result.views.values()].map((v) => v.kind)).toEqual([
      'registry_unknown',
      'registry_unknown',
      'registry_unknown',
    ]);
    expect(result.problems.map((p) => p.reason).join('\n')).not.toMatch(/left alone/);
  });

  it('makes no finding of a 410 the server does not repeat, nor of a ccTLD 410: the info line a 404 gets', async () => {
    const { fetch } = server((name, times) =>
      name === 'flaky.com'
        ? times === 1
          ? status(410)
          : record(name)
        : name === 'x.nl'
          ? status(410)
          : record(name),
    );
    const { result } = await check([...names('ok', 3), 'flaky.com', 'x.nl'], fetch);
    expect(result.views.size).toBe(0);
    expect(result.counts.not_checkable.not_found).toBe(1);
    expect(result.problems.map((p) => p.reason).join('\n')).toMatch(
      /does not know 1 domain .*HTTP 404 or 410.*x\.nl/,
    );
  });

  it('leaves a server alone that answers 400 to its first three lookups and nothing else: it reads no query of ours', async () => {
    const { fetch, asked } = server(() => status(400));
    const { result } = await check(names('a', 10), fetch);
    expect(asked).toHaveLength(3);
    expect(result.views.size).toBe(0);
    // The three it answered are counted apart from the seven it was not asked: it answered them.
    expect(result.counts.not_checked).toEqual({ budget: 0, time: 0, server_failed: 7, name_refused: 3 });
    expect(accounted(result.counts)).toBe(10);
  });

  it('leaves a server alone that answered once and then answers 400 to every lookup, after ten in a row, saying so once', async () => {
    const { fetch, asked } = server((name) => (name === 'a0.com' ? record(name) : status(400)));
    const { result } = await check(names('a', 40), fetch);
    expect(asked).toHaveLength(11);
    expect(result.counts.not_checked).toEqual({ budget: 0, time: 0, server_failed: 29, name_refused: 10 });
    expect(accounted(result.counts)).toBe(40);
    const left = result.problems.filter((p) => /left alone/.test(p.reason));
    expect(left).toHaveLength(1);
    expect(left[0]?.reason).toMatch(/answered 10 lookups in a row with HTTP 400 after/);
    expect(left[0]?.domains_not_checked).toBe(29);
    expect(result.views.size).toBe(0);
  });

  it('keeps asking a server whose run of 400 answers a record or a 404 breaks', async () => {
    // A record, nine 400s, a 404 (a ccTLD: no finding), nine 400s, and so on: never ten in a row.
    const { fetch, asked } = server((name) => {
      const n = Number(name.slice(1, -3)) % 20;
      if (n === 0) return record(name);
      if (n === 10) return status(404);
      return status(400);
    });
    const domains = names('a', 60).map((d) => d.replace('.com', '.nl'));
    const { result } = await check(domains, fetch);
    expect(asked).toHaveLength(60);
    expect(result.counts.not_checked).toEqual({ budget: 0, time: 0, server_failed: 0, name_refused: 54 });
    expect(accounted(result.counts)).toBe(60);
    expect(result.problems.map((p) => p.reason).join('\n')).not.toMatch(/left alone/);
  });

  it('leaves a server alone that answers 403 to everything, after three lookups, without a finding', async () => {
    const { fetch, asked } = server(() => status(403));
    const { result } = await check(names('a', 10), fetch);
    expect(asked).toHaveLength(3);
    expect(result.views.size).toBe(0);
    expect(result.counts.not_checked).toEqual({ budget: 0, time: 0, server_failed: 10, name_refused: 0 });
    expect(result.problems[0]?.reason).toMatch(/refused .*HTTP 403.*left alone/);
  });

  it('leaves a server alone at once whose 403 asks to wait longer than the check waits: rate limiting, by its own word', async () => {
    const { fetch, asked } = server(
      () => new Response('{}', { status: 403, headers: { 'retry-after': '3600' } }),
    );
    const { result } = await check(names('a', 10), fetch);
    expect(asked).toHaveLength(1);
    expect(result.counts.not_checked).toEqual({ budget: 0, time: 0, server_failed: 10, name_refused: 0 });
    expect(result.problems[0]?.reason).toMatch(/asked to wait 3600 s \(Retry-After\).*not asked again/);
  });
});

describe('a 404 the server does not repeat', () => {
  it('makes no finding of a server that answers 404 to every other request (one broken backend of two)', async () => {
    let n = 0;
    const { fetch } = server((name) => (++n % 2 === 1 ? status(404) : record(name)));
    const { result } = await check(names('d', 10), fetch);
    expect(result.views.size).toBe(0);
    expect(result.counts.disagree).toBe(0);
    expect(result.problems.map((p) => p.reason).join('\n')).toMatch(/answered .* when asked again/);
  });

  it('distrusts every 404 of a server once one of them is not repeated, even those that were', async () => {
    // flaky0 is known on the second ask; flaky1 and flaky2 answer 404 twice (and would be believed alone).
    const { fetch } = server((name, times) =>
      name.startsWith('known') || (name === 'flaky0.com' && times > 1) ? record(name) : status(404),
    );
    const { result } = await check([...names('known', 6), ...names('flaky', 3)], fetch);
    expect(result.views.size).toBe(0);
    expect(result.counts.disagree).toBe(0);
  });

  it('still finds a gTLD domain its registry does not know, asking it once more: one extra request', async () => {
    const { fetch, asked } = server((name) => (name === 'lost.com' ? status(404) : record(name)));
    const { result, requests } = await check([...names('known', 4), 'lost.com'], fetch);
    expect(result.views.get('lost.com')).toMatchObject({ kind: 'registry_unknown', severity: 'critical' });
    expect(asked.filter((n) => n === 'lost.com')).toHaveLength(2);
    expect(requests).toBe(6);
    expect(result.counts).toMatchObject({ queries: 5, requests: 6 });
  });
});

describe('the simulator with one broken backend of two (flakyEvery)', () => {
  it('makes no finding of its 404s, and asks each once more at most', async () => {
    const sim = await startRegistrySimulator({
      lookup: (name) =>
        ({ domain_name: name, date_expiry: new Date(EXPIRY).toISOString(), status: ['active'] }) as RawRecord,
      registries: [{ name: 'gtld', tlds: ['com'], publishesExpiry: true, flakyEvery: 2 }],
      now: () => NOW,
    });
    try {
      const simBootstrap = RdapBootstrap.parse(JSON.stringify(sim.bootstrap), 'test');
      const client = new RdapClient({ sleep: async () => undefined, maxAttempts: 1 });
      const result = await checkRegistry({
        candidates: names('d', 10).map((d, i) => candidate(d, i)),
        bootstrap: simBootstrap,
        client,
        now: NOW,
        budget: 100,
        policy: { toleranceDays: 2, criticalDays: 7 },
        concurrency: 1,
        perServer: 1,
      });
      expect(result.views.size).toBe(0);
      expect(result.counts.disagree).toBe(0);
      expect(client.requests).toBeLessThanOrEqual(15);
    } finally {
      await sim.close();
    }
  });
});

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
