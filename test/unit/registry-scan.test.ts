import { describe, expect, it } from 'vitest';
import { SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import { registryDigestLines } from '../../functions/core/alerts/registry-words';
import { type DomainFinding, type Finding, isDomainFinding } from '../../functions/core/findings/classify';
import { type LoadedBootstrap, RdapBootstrap } from '../../functions/core/registry/bootstrap';
import { RdapClient } from '../../functions/core/registry/rdap-client';
import { ResellerClient } from '../../functions/core/reseller/client';
import type { Domain } from '../../functions/core/reseller/schemas';
import type { ResolvedPolicy } from '../../functions/core/scan/policies';
import { RegistryCandidates, runRegistryCheck } from '../../functions/core/scan/registry-scan';
import type { Report } from '../../functions/core/scan/scan';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;

const domain = (name: string): Domain =>
  ({
    domain_name: name,
    date_expiry: NOW + 200 * DAY,
    status: ['registered'],
    auto_renew: true,
    registrant_handle: 'C1',
  }) as unknown as Domain;

/** 40 TLDs, each its own RDAP server, every one of them down (and a ccTLD, for its 404s). */
const tlds = Array.from({ length: 40 }, (_, i) => `t${i}`);
const bootstrap = RdapBootstrap.parse(
  JSON.stringify({ services: [...tlds, 'nl'].map((t) => [[t], [`https://rdap.${t}.example/`]]) }),
  'test',
);
const down = (async () => new Response('{}', { status: 503 })) as typeof fetch;
const noReseller = {} as ResellerClient;

function candidatesOf(names: readonly string[]) {
  const candidates = new RegistryCandidates(NOW, 1);
  for (const name of names) candidates.consider(domain(name), null);
  return candidates;
}

/** The check of `names` with a bootstrap and client of the test's own (findings `findings`). */
const checkWith = (
  names: readonly string[],
  bootstrap: () => Promise<LoadedBootstrap>,
  client: RdapClient,
  findings: Finding[] = [],
) =>
  runRegistryCheck(findings, candidatesOf(names), {
    options: { bootstrap, client, budget: 10, days: 1, toleranceDays: 2 },
    reseller: noReseller,
    now: NOW,
    criticalDays: 7,
    registrants: new Map(),
  });

/** A check with memory's re-checks `recheck` (kinds all registry_hold), as the scan runs it. */
function recheckRun(
  candidates: RegistryCandidates,
  recheck: readonly string[] | undefined,
  how: {
    readonly registry?: typeof fetch;
    readonly budget?: number;
    readonly days?: number;
    readonly now?: number;
    readonly reseller?: ResellerClient;
    readonly told?: (names: readonly string[]) => void;
  } = {},
) {
  const now = how.now ?? NOW;
  return runRegistryCheck([], candidates, {
    options: {
      bootstrap: async () => ({ bootstrap, read_at: new Date(now).toISOString(), cached: false }),
      client: new RdapClient({ fetch: how.registry ?? down, maxAttempts: 1 }),
      budget: how.budget ?? 10_000,
      days: how.days ?? 1,
      toleranceDays: 2,
      ...(recheck
        ? {
            recheck: {
              names: async () => new Map(recheck.map((n) => [n, 'registry_hold' as const])),
              unconfirmed: how.told ?? (() => {}),
            },
          }
        : {}),
    },
    reseller: how.reseller ?? noReseller,
    now,
    criticalDays: 7,
    registrants: new Map(),
  });
}

const run = (
  candidates: RegistryCandidates,
  recheck?: string[],
  registry: typeof fetch = down,
  budget = 10_000,
) => recheckRun(candidates, recheck, { registry, budget });

describe('the report’s registry section', () => {
  it('keeps at most 20 server problems and one line counting the rest, when every RDAP server fails', async () => {
    const { registry } = await run(candidatesOf(tlds.map((t) => `shop.${t}`)));
    expect(registry.problems).toHaveLength(21);
    expect(registry.problems[20]).toEqual({
      server: '20 more servers',
      severity: 'info',
      reason: 'failed too; their domains are counted as not checked',
      domains_not_checked: 20,
    });
    expect(registry.not_checked.server_failed).toBe(40);
  });

  it('does not read a ccTLD registry that answers 404 for everything as domains checked and in order: the digest counts them as not checkable', async () => {
    const notFound = (async () => new Response('{}', { status: 404 })) as typeof fetch;
    const { registry } = await run(candidatesOf(['a.nl', 'b.nl', 'c.nl']), undefined, notFound, 10);
    expect(registry.not_checkable.not_found).toBe(3);
    const lines = registryDigestLines({ registry } as Report);
    expect(lines[1]).toBe(
      '  Not checkable: 0 in a TLD without RDAP, 0 whose registry publishes no expiry date, 3 the registry does not know (HTTP 404 or 410).',
    );
  });

  it('does not count domains answered 400 or 410 as at a failing RDAP server: the digest says the server answered for the name', async () => {
    const refusing = (async () => new Response('{}', { status: 400 })) as typeof fetch;
    const { registry } = await run(candidatesOf(['a.nl', 'b.nl', 'c.nl']), undefined, refusing, 10);
    expect(registry.not_checked).toEqual({ budget: 0, time: 0, server_failed: 0, name_refused: 3 });
    const lines = registryDigestLines({ registry } as Report);
    expect(lines[1]).toBe(
      '  Not checked this time: 0 beyond the query budget, 0 out of time, 0 at a failing RDAP server, 3 its RDAP server answered for the name alone (HTTP 400: it could not read the query).',
    );
  });

  it('lists at most 100 re-checks it could not do, and counts the rest', async () => {
    const names = Array.from({ length: 150 }, (_, i) => `d${i}.t${i % 40}`);
    const { registry } = await run(candidatesOf(names), names);
    expect(registry.unconfirmed).toHaveLength(100);
    expect(registry.unconfirmed_omitted).toBe(50);
  });

  it('leaves the findings as they were and says why when the bootstrap cannot be had', async () => {
    const outcome = await checkWith(
      ['a.t1', 'b.t2'],
      async () => {
        throw new Error('IANA is down');
      },
      new RdapClient({ fetch: down }),
    );
    expect(outcome.findings).toEqual([]);
    expect(outcome.registry.bootstrap).toBeNull();
    expect(outcome.registry.problems).toEqual([
      {
        server: 'bootstrap',
        severity: 'info',
        reason: 'no registry was checked: IANA is down',
        domains_not_checked: 2,
      },
    ]);
  });

  it('alerts the account findings all the same when the check itself fails, saying no registry was checked', async () => {
    const finding = {
      domain_name: 'a.t1',
      kind: 'expiring',
      severity: 'warning',
      date_expiry: new Date(NOW + 10 * 86_400_000).toISOString(),
    } as unknown as Finding;
    // A bootstrap that reads but holds nothing the check can use: the check throws a TypeError.
    const outcome = await checkWith(
      ['a.t1', 'b.t2'],
      async () => ({ bootstrap: null }) as unknown as LoadedBootstrap,
      new RdapClient({ fetch: down }),
      [finding],
    );
    expect(outcome.findings).toEqual([finding]);
    expect(outcome.summary).toEqual({ critical: 0, warning: 1, info: 0 });
    expect(outcome.registry.problems).toEqual([
      expect.objectContaining({
        server: 'registry check',
        reason: expect.stringMatching(/^no registry was checked: /),
        domains_not_checked: 2,
      }),
    ]);
  });

  it('lets a stop (Ctrl-C) end the scan instead of reading it as a failed check', async () => {
    const stop = new AbortController();
    stop.abort(new Error('interrupted by SIGINT'));
    // The stop lands while the check runs: here, as its bootstrap is read.
    const outcome = checkWith(
      ['a.t1'],
      async () => {
        throw stop.signal.reason;
      },
      new RdapClient({ fetch: down, maxAttempts: 1, signal: stop.signal }),
    );
    await expect(outcome).rejects.toThrow('interrupted by SIGINT');
  });

  it('names the policy of its domain on a finding the registry alone gives, as a reseller finding does', async () => {
    const vip = {
      policy: { name: 'vip', letLapse: true },
      classify: { expiryDays: 30, criticalDays: 7 },
      minSeverity: 'warning',
    } as unknown as ResolvedPolicy;
    const candidates = new RegistryCandidates(NOW, 1);
    candidates.consider(domain('held.t1'), null, vip);
    candidates.consider(domain('plain.t2'), null);
    // Both registries say the domain is on hold; the reseller says nothing is wrong.
    const onHold = (async (input: string | URL | Request) => {
      const name = decodeURIComponent(String(input).split('/domain/')[1] ?? '');
      return new Response(
        JSON.stringify({ objectClassName: 'domain', ldhName: name, status: ['client hold'] }),
        {
          status: 200,
          headers: { 'content-type': 'application/rdap+json' },
        },
      );
    }) as typeof fetch;
    const { findings } = await run(candidates, undefined, onHold);
    const byName = Object.fromEntries(
      findings
        .filter(isDomainFinding)
        .map((f) => [f.domain_name, { policy: f.policy, let_lapse: f.let_lapse }]),
    );
    expect(byName).toEqual({
      'held.t1': { policy: 'vip', let_lapse: true },
      'plain.t2': { policy: undefined, let_lapse: undefined },
    });
  });

  it('keeps an alert carrying the section, with every server failed, within SNS’s limit', async () => {
    const names = Array.from({ length: 150 }, (_, i) => `${'x'.repeat(60)}-${i}.t${i % 40}`);
    const { registry } = await run(candidatesOf(names), names);
    const report = {
      generated_at: new Date(NOW).toISOString(),
      now: new Date(NOW).toISOString(),
      source: { base_url: 'https://api.example', mode: 'full', read: 'full' },
      policy: { expiry_days: 30, critical_days: 7 },
      stats: { domains_scanned: 150, contacts_scanned: 0, requests: 2, duration_ms: 1 },
      summary: { critical: 0, warning: 0, info: 0 },
      findings: [],
      problems: [],
      registry,
    } as unknown as Report;
    const alert = buildAlertMessage(report);
    expect(Buffer.byteLength(alert.message)).toBeLessThan(SNS_MAX_BYTES / 4);
    expect(alert.message).toContain('REGISTRY CHECK');
  });
});

describe('memory’s re-checks the account search does not find again', () => {
  it('names a remembered registry finding unconfirmed when the reseller search no longer finds the domain read this scan', async () => {
    // The read listed the domain (memory names it); the search by name comes back empty.
    const reseller = { lookUpDomain: async () => null } as unknown as ResellerClient;
    const answers = (async () => new Response('{}', { status: 404 })) as typeof fetch;
    const outcome = await recheckRun(candidatesOf([]), ['held.t3'], {
      registry: answers,
      budget: 10,
      reseller,
    });
    // Not looked up at the registry: memory must keep the hold, not resolve it.
    expect(outcome.registry.queries).toBe(0);
    expect(outcome.registry.unconfirmed).toEqual(['held.t3']);
  });
});

describe('memory’s re-checks whose search by name throws', () => {
  it('leaves that re-check unconfirmed and checks the rest, when the search throws an error of no known kind', async () => {
    let searched = 0;
    const reseller = {
      lookUpDomain: async () => {
        searched++;
        throw new TypeError("Cannot read properties of undefined (reading 'data')");
      },
    } as unknown as ResellerClient;
    let told: readonly string[] = [];
    const outcome = await recheckRun(candidatesOf(['a.t1']), ['held.t3'], {
      budget: 10,
      reseller,
      told: (names) => {
        told = names;
      },
    });
    expect(searched).toBe(1);
    expect(told).toContain('held.t3');
    expect(outcome.registry.queries).toBe(1);
    expect(outcome.registry.problems).toContainEqual(
      expect.objectContaining({ server: 'reseller', reason: expect.stringContaining('held.t3') }),
    );
  });
});

describe('memory’s re-checks on a reseller that ignores domain_name', () => {
  it('stops looking names up once a search lists other domains, instead of reading the account per name and spelling', async () => {
    // 30 pages of 100, whatever domain_name says: five re-checks of names the account no longer
    // holds read the whole account once per name and spelling (some 450 requests), out of the
    // scan's time budget the registry's own lookups then lacked.
    const all = Array.from({ length: 3_000 }, (_, i) => `d${String(i).padStart(4, '0')}.t1`);
    let requests = 0;
    const fetch = (async (input: string | URL | Request) => {
      requests++;
      const n = Number(new URL(String(input)).searchParams.get('page') ?? '1');
      const data = all
        .slice((n - 1) * 100, n * 100)
        .map((d) => ({ domain_name: d, date_expiry: '2028-01-01T00:00:00Z', auto_renew: true }));
      return new Response(
        JSON.stringify({
          data,
          pagination: { current_page: n, per_page: 100, total_pages: 30, total_results: all.length },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    }) as typeof globalThis.fetch;
    const reseller = new ResellerClient({
      baseUrl: 'https://api.test',
      apiKey: 'k-registry-recheck',
      fetch,
      sleep: async () => undefined,
    });
    const names = ['a.t3', 'b.t3', 'c.t3', 'e.t3', 'f.t3'];
    const outcome = await recheckRun(candidatesOf([]), names, { budget: 10, reseller });
    // In the re-checks' rotating order: which of them is searched first changes with the day.
    expect([...outcome.registry.unconfirmed].sort()).toEqual(names);
    expect(requests).toBeLessThanOrEqual(2);
    expect(outcome.registry.problems).toContainEqual(
      expect.objectContaining({
        server: 'reseller',
        reason: expect.stringMatching(
          /^5 domains could not be read again for their registry re-check: the reseller does not search by domain_name/,
        ),
        domains_not_checked: 5,
      }),
    );
  });
});

describe('memory’s re-checks beyond the query budget', () => {
  it('searches the reseller for no more re-checks than the budget can look up, and counts the rest as beyond it', async () => {
    // A registry that put every domain of its TLD on hold for a month leaves memory with thousands
    // of registry findings: one reseller search each, one after another, before any RDAP lookup,
    // took the scan's time from the registries that are fine, for lookups the budget never makes.
    let searches = 0;
    const reseller = {
      lookUpDomain: async (name: string) => {
        searches++;
        return domain(name);
      },
    } as unknown as ResellerClient;
    const names = Array.from({ length: 50 }, (_, i) => `held-${i}.t3`);
    const outcome = await recheckRun(candidatesOf([]), names, { budget: 5, reseller });
    expect(searches).toBe(5);
    expect(outcome.registry.queries).toBeLessThanOrEqual(5);
    expect(outcome.registry.not_checked.budget).toBe(45);
    expect(outcome.registry.candidates.recheck).toBe(50);
    // None of them is an all-clear: memory keeps each.
    expect(outcome.registry.unconfirmed).toHaveLength(50);
  });
});

describe('memory’s re-checks beyond the report’s list of 100', () => {
  it('tells memory every re-check it could not confirm, while the report lists 100 of them', async () => {
    const names = Array.from({ length: 150 }, (_, i) => `d${i}.t${i % 40}`);
    let told: readonly string[] = [];
    const { registry } = await recheckRun(candidatesOf(names), names, {
      told: (all) => {
        told = all;
      },
    });
    expect(registry.unconfirmed).toHaveLength(100);
    expect([...told].sort()).toEqual([...names].sort());
  });
});

describe('memory’s re-checks when they outnumber the query budget', () => {
  /** An RDAP side that answers 404 for every domain and notes which were looked up. */
  const recording = (asked: string[]) =>
    (async (input: string | URL | Request) => {
      asked.push(decodeURIComponent(String(input).split('/domain/')[1] ?? ''));
      return new Response('{}', { status: 404 });
    }) as typeof fetch;
  const warning = { kind: 'expiring', severity: 'warning' } as unknown as DomainFinding;
  const flagged = Array.from({ length: 10 }, (_, i) => `flagged-${i}.t${i % 40}`);
  const remembered = Array.from({ length: 40 }, (_, i) => `held-${i}.t${(i + 7) % 40}`);

  /** One scan at `at`: the flagged domains and memory's (read in the account), a budget of 10. */
  async function scanOn(at: number, told: (names: readonly string[]) => void = () => {}) {
    const asked: string[] = [];
    const candidates = new RegistryCandidates(at, 30);
    for (const name of flagged) candidates.consider(domain(name), warning);
    // Read with the account (a sample of its day, or not picked at all): looked up by name if not.
    for (const name of remembered) candidates.consider(domain(name), null);
    const reseller = { lookUpDomain: async (name: string) => domain(name) } as unknown as ResellerClient;
    const outcome = await recheckRun(candidates, remembered, {
      registry: recording(asked),
      budget: 10,
      days: 30,
      now: at,
      reseller,
      told,
    });
    return { asked, outcome };
  }

  it('still looks up the flagged domains: the re-checks take half the budget', async () => {
    const { asked } = await scanOn(NOW);
    expect(asked).toHaveLength(10);
    expect(asked.filter((n) => flagged.includes(n))).toHaveLength(5);
    expect(asked.filter((n) => remembered.includes(n))).toHaveLength(5);
  });

  it('gives the re-checks the places the flagged domains and the sample leave unused', async () => {
    const few = flagged.slice(0, 2);
    const asked: string[] = [];
    const candidates = new RegistryCandidates(NOW, 1);
    for (const name of few) candidates.consider(domain(name), warning);
    for (const name of remembered) candidates.consider(domain(name), null);
    await recheckRun(candidates, remembered, { registry: recording(asked), budget: 10 });
    expect(asked.filter((n) => few.includes(n))).toHaveLength(2);
    expect(asked.filter((n) => remembered.includes(n))).toHaveLength(8);
  });

  it('looks up every remembered finding within the days docs/registry.md gives: re-checks over half the budget, rounded up', async () => {
    // 40 re-checks, 5 places a day: every one within 8 days, whichever day the cycle starts on.
    for (const start of [0, 3]) {
      const seen = new Set<string>();
      for (let d = start; d < start + Math.ceil(40 / 5); d++)
        for (const name of (await scanOn(NOW + d * DAY)).asked) if (remembered.includes(name)) seen.add(name);
      expect([...seen].sort()).toEqual([...remembered].sort());
    }
  });
});
