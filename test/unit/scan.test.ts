import { describe, expect, it } from 'vitest';
import { AuthenticationError, IncompleteListingError } from '../../functions/core/base/errors';
import { DEFAULT_POLICY } from '../../functions/core/findings/classify';
import { ResellerClient } from '../../functions/core/reseller/client';
import type { OnMove } from '../../functions/core/reseller/paging';
import { incompleteScanError, onMove, rotation } from '../../functions/core/scan/moves';
import { type Report, scanAccount } from '../../functions/core/scan/scan';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200 });
const page = (data: unknown[], current: number, totalPages: number, total: number) =>
  json({
    data,
    pagination: { current_page: current, per_page: 2, total_pages: totalPages, total_results: total },
  });

const domains = [
  { domain_name: 'a.nl', date_expiry: '2026-11-25T00:00:00Z', auto_renew: false, registrant_handle: 'C1' },
  {
    domain_name: 'b.nl',
    date_expiry: '2026-10-01T00:00:00Z',
    status: ['quarantine'],
    date_deleted: '2026-10-02T00:00:00Z',
  },
  { domain_name: 'c.nl', date_expiry: '2028-01-01T00:00:00Z', auto_renew: true },
];
const contacts = [
  { handle: 'C1', name: 'Anna', company_name: 'Bloem BV', email: 'anna@example.nl', status: ['ok'] },
];

/**
 * A fake API whose domain list drops a record on page 2 the first `flaky` times it is read. It
 * ignores every search parameter, as some servers do.
 */
function apiFetch(flaky: number) {
  let reads = 0;
  return (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    const n = Number(url.searchParams.get('page'));
    if (url.pathname === '/v2/contacts') return page(contacts, 1, 1, 1);
    if (n === 1) reads++;
    const slice = domains.slice((n - 1) * 2, n * 2);
    return page(n === 2 && reads <= flaky ? [] : slice, n, 2, domains.length);
  }) as typeof globalThis.fetch;
}

function api(flaky: number) {
  return testClient(apiFetch(flaky));
}

/** A client of the fake API at https://api.test that never waits between retries; `options` add to it. */
const testClient = (
  fetch: typeof globalThis.fetch,
  options: Partial<ConstructorParameters<typeof ResellerClient>[0]> = {},
) =>
  new ResellerClient({
    baseUrl: 'https://api.test',
    apiKey: 'k-unit-scan',
    fetch,
    sleep: async () => undefined,
    ...options,
  });

/** The findings' names (a domain's, or a contact's handle), in the report's order. */
const namesOf = (report: Report) =>
  report.findings.map((f) => ('domain_name' in f ? f.domain_name : f.handle));

/** An answer of status `status` with a JSON error body. */
const jsonError = (status: number) =>
  new Response(JSON.stringify({ error: 'no domains found' }), {
    status,
    headers: { 'content-type': 'application/json' },
  });

/**
 * A full scan of apiFetch(0)'s account that remembers gone.nl, which it does not list: every search
 * by domain_name (the lookup of gone.nl, the check of a.nl) is answered by `search(name)`.
 */
const scanLookingUpGone = (search: (name: string) => Response) => {
  const whole = apiFetch(0);
  const fetch = (async (input: string | URL | Request) => {
    const name = new URL(String(input)).searchParams.get('domain_name');
    return name === null ? whole(input) : search(name);
  }) as typeof globalThis.fetch;
  return scanAccount({
    client: testClient(fetch),
    now: NOW,
    policy: DEFAULT_POLICY,
    mode: 'full',
    unlisted: async () => ['gone.nl'],
  });
};

describe('scanAccount', () => {
  it('reads the account once more when it changed under the scan, and counts every request', async () => {
    const client = api(1);
    const report = await scanAccount({ client, now: NOW, policy: DEFAULT_POLICY, mode: 'full' });
    expect(namesOf(report)).toEqual(['b.nl', 'a.nl']);
    expect(report.stats.requests).toBe(client.requests);
    // Two reads of two pages, the contact page of each, and the other end of the second read's
    // short last page (the first did not add up: no other end), which this fake answers in page 1's
    // order, so status=quarantine is counted too.
    expect(report.stats.requests).toBe(8);
  });

  it('alerts every domain when the contact list reports a runaway page count, with one problem saying so', async () => {
    const domainsOnly = apiFetch(0);
    const fetch = (async (input: string | URL | Request) =>
      new URL(String(input)).pathname === '/v2/contacts'
        ? page(contacts, 1, 1_000_000, 2_000_000)
        : domainsOnly(input)) as typeof globalThis.fetch;
    const report = await scanAccount({ client: testClient(fetch), now: NOW, policy: DEFAULT_POLICY });
    expect(namesOf(report)).toEqual(['b.nl', 'a.nl']);
    expect(report.problems).toEqual([
      expect.objectContaining({
        resource: 'contact',
        key: null,
        reason: expect.stringMatching(
          /^the contact list could not be read \(the reseller reports 1000000 pages/,
        ),
      }),
    ]);
  });

  it('reports what the second read held, marked incomplete, when the account is still inconsistent', async () => {
    const client = api(2);
    const report = await scanAccount({ client, now: NOW, policy: DEFAULT_POLICY, mode: 'full' });
    // Page 2 (c.nl) came back empty on both reads: a.nl and b.nl were read, and their findings stand.
    expect(namesOf(report)).toEqual(['b.nl', 'a.nl']);
    const moved =
      "the domain list changed while it was read (read 2 of 3 domains from /v2/domains: the pages held fewer records than total_results promised; the account changed while it was read, or the server's paging is inconsistent): the domains read were checked, but domains may be missing from what was read, so none is judged to have left the account";
    expect(report.problems).toEqual([{ resource: 'domain', key: null, page: 2, reason: moved }]);
    expect(report.source.incomplete).toBe(moved);
    const error = incompleteScanError(report);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error?.message).toBe(
      `the scan could not read the whole account (${moved}); the findings read were reported, marked incomplete; run the scan again, and if it repeats raise the time budget (scanTimeoutMinutes on AWS, up to Lambda's 15 minutes; --time-budget on the command line) or --concurrency, or scan when the account changes less`,
    );
    expect(incompleteScanError(await scanAccount({ client: api(1), now: NOW, policy: DEFAULT_POLICY }))).toBe(
      undefined,
    );
  });

  it('reads in full on its second read, whatever the mode, so a listing that moves again is read to its end', async () => {
    // Every read drops page 2: the counts of the filtered read's proof see page 1 only.
    const report = await scanAccount({
      client: api(100),
      now: NOW,
      policy: DEFAULT_POLICY,
      mode: 'filtered',
    });
    expect(report.source.read).toBe('full');
    expect(report.source.fallback_reason).toBe(
      'the first read could not be proven whole, as its pages did not match its totals (a listing that moved, or totals that fall short of the account)',
    );
    expect(report.source.incomplete).toMatch(/^the domain list changed while it was read/);
  });

  it('reads on and reports at once when a second read would not fit in the time left at the pace of the first', async () => {
    // Each request takes 10 s of a fake clock; the listing drops page 2 on every read.
    const run = async (budgetMs: number) => {
      let t = NOW;
      const inner = apiFetch(100);
      let pageOnes = 0;
      const fetch = (async (input: string | URL | Request) => {
        t += 10_000;
        const url = new URL(String(input));
        if (url.pathname === '/v2/domains' && url.searchParams.get('page') === '1') pageOnes++;
        return inner(input);
      }) as typeof globalThis.fetch;
      const clock = () => t;
      const client = testClient(fetch, {
        now: clock,
        deadline: NOW + budgetMs,
        concurrency: 1,
      });
      const report = await scanAccount({ client, now: NOW, policy: DEFAULT_POLICY, mode: 'full', clock });
      return { report, pageOnes };
    };
    // 30 s for a whole read, 30 s left of 60: no room for another (1.5 × 30 s): the first read is reported.
    const tight = await run(60_000);
    expect(tight.pageOnes).toBe(1);
    expect(tight.report.source.incomplete).toMatch(
      /^the domain list changed while it was read \(read 2 of 3/,
    );
    // With time to spare, it reads once more first.
    const ample = await run(600_000);
    expect(ample.pageOnes).toBe(2);
    expect(ample.report.source.incomplete).toMatch(/^the domain list changed while it was read/);
  });

  it('stops the domain read of a try the contact list failed before the next try starts', async () => {
    // The contact list moves on the first read (time to spare: read again); the domain pages of the
    // first read are slow and still arriving. None of them may reach observe once the second began.
    const many = Array.from({ length: 12 }, (_, i) => ({
      domain_name: `d${String(i).padStart(2, '0')}.nl`,
      date_expiry: '2028-01-01T00:00:00Z',
      auto_renew: true,
    }));
    let contactReads = 0;
    let domainReads = 0;
    const fetch = (async (input: string | URL | Request) => {
      const url = new URL(String(input));
      const n = Number(url.searchParams.get('page'));
      if (url.pathname === '/v2/contacts') {
        if (n === 1) contactReads++;
        return page(n === 1 ? contacts : [], n, 2, contactReads === 1 && n === 2 ? 3 : 2);
      }
      if (n === 1) domainReads++;
      if (domainReads === 1 && n > 1)
        for (let tick = 0; tick < 50; tick++) await new Promise((resolve) => setImmediate(resolve));
      return page(many.slice((n - 1) * 2, n * 2), n, 6, many.length);
    }) as typeof globalThis.fetch;
    const client = testClient(fetch, {
      concurrency: 2,
    });
    const attempts: number[] = [];
    await scanAccount({
      client,
      now: NOW,
      policy: DEFAULT_POLICY,
      mode: 'full',
      observe: (_domain, attempt) => attempts.push(attempt),
    });
    expect(contactReads).toBe(2);
    const second = attempts.indexOf(2);
    expect(second).toBeGreaterThan(-1);
    expect(attempts.slice(second).every((a) => a === 2)).toBe(true);
    expect(attempts.filter((a) => a === 2)).toHaveLength(many.length);
  });

  it('reports the last read marked incomplete when a remembered domain it did not list is found by name again', async () => {
    // Totals that hold while the pages slide (one domain left, one arrived): the lookup by name finds
    // a domain the read did not list, on both reads. What was read is still alerted.
    let lookups = 0;
    const report = await scanAccount({
      client: api(0),
      now: NOW,
      policy: DEFAULT_POLICY,
      mode: 'full',
      unlisted: async () => {
        lookups++;
        return ['c.nl'];
      },
    });
    expect(lookups).toBe(2);
    expect(namesOf(report)).toEqual(['b.nl', 'a.nl']);
    expect(report.source.incomplete).toMatch(/^c\.nl is in the account, but the pages read did not list it/);
    expect(report.problems).toEqual([
      { resource: 'domain', key: null, page: 0, reason: report.source.incomplete },
    ]);
    expect(incompleteScanError(report)).toBeInstanceOf(IncompleteListingError);
  });

  it('alerts what it read, marked incomplete, when the time budget runs out while remembered domains are looked up', async () => {
    // A server that ignores domain_name answers each lookup with the whole account: the lookups of
    // remembered names outlast the budget after a read that was whole. Each request takes a second.
    let t = 0;
    const ignoring = apiFetch(0);
    const fetch = (async (input: string | URL | Request) => {
      t += 1_000;
      return ignoring(input);
    }) as typeof globalThis.fetch;
    const report = await scanAccount({
      client: testClient(fetch, { now: () => t, deadline: 4_500 }),
      now: NOW,
      policy: DEFAULT_POLICY,
      mode: 'full',
      unlisted: async () => ['gone.nl'],
    });
    expect(namesOf(report)).toEqual(['b.nl', 'a.nl']);
    expect(report.source.incomplete).toMatch(
      /^the domains the read did not list could not be looked up within the scan's time budget \(the time budget ran out before domain list page \d\)/,
    );
    expect(incompleteScanError(report)).toBeInstanceOf(IncompleteListingError);
  });

  it('alerts what it read, marked incomplete, when a lookup of a remembered domain is refused', async () => {
    // Nothing says what the API answers a domain_name search without a hit: a 404 there failed the
    // scan after a whole read, every run, as the name stays remembered, and no domain was alerted.
    // Here the search for a.nl, which the read listed, is answered 404 too: the 404 says nothing.
    const report = await scanLookingUpGone(() => jsonError(404));
    expect(namesOf(report)).toEqual(['b.nl', 'a.nl']);
    expect(report.source.incomplete).toMatch(
      /^the domains the read did not list could not be looked up \(.*; a search for a\.nl, which the read listed, failed too/,
    );
    expect(incompleteScanError(report)).toBeInstanceOf(IncompleteListingError);
  });

  it('alerts what it read, marked incomplete, when a lookup counts a record it does not hand out', async () => {
    // The search for gone.nl says 1 result and holds none: its listing is not whole, the read was.
    const report = await scanLookingUpGone(() =>
      json({ data: [], pagination: { current_page: 1, per_page: 2, total_pages: 1, total_results: 1 } }),
    );
    expect(namesOf(report)).toEqual(['b.nl', 'a.nl']);
    expect(report.source.incomplete).toMatch(
      /^the domains the read did not list could not be looked up \(read 0 of 1/,
    );
  });

  it('fails with the refused key when the search that checks what a 404 means is refused', async () => {
    // gone.nl is answered 404; the search for a.nl (listed by the read) checks whether that means no
    // hit, and is answered 401: a refused key is never read as a lookup that settled nothing.
    await expect(
      scanLookingUpGone((name) => jsonError(name.startsWith('gone.nl') ? 404 : 401)),
    ).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('judges whether a second read fits by the pace of the domain pages, whichever list moved', async () => {
    // Each request takes 10 s; 10 domain pages, 2 contact pages whose second says the list grew.
    let t = NOW;
    let pageOnes = 0;
    const many = Array.from({ length: 20 }, (_, i) => ({
      domain_name: `d${String(i).padStart(2, '0')}.nl`,
      date_expiry: '2026-11-25T00:00:00Z',
      auto_renew: false,
    }));
    const fetch = (async (input: string | URL | Request) => {
      t += 10_000;
      const url = new URL(String(input));
      const n = Number(url.searchParams.get('page'));
      if (url.pathname === '/v2/contacts') return page(n === 1 ? contacts : [], n, 2, n === 1 ? 2 : 3);
      // page 1 as the read asks it (the other end's page 1, sorted -domain_name, is no new read)
      if (n === 1 && url.searchParams.get('sort') === 'domain_name' && !url.searchParams.has('status'))
        pageOnes++;
      return page(many.slice((n - 1) * 2, n * 2), n, 10, 20);
    }) as typeof globalThis.fetch;
    const clock = () => t;
    const client = testClient(fetch, {
      now: clock,
      deadline: NOW + 160_000,
      concurrency: 1,
    });
    // When the contact list moves (60 s in, 100 s left) its own pace says a whole read takes 60 s
    // and fits; the domain pages (2 of 10) say 300 s: it reads on instead, and is alerted in time.
    const report = await scanAccount({ client, now: NOW, policy: DEFAULT_POLICY, mode: 'full', clock });
    expect(pageOnes).toBe(1);
    expect(report.stats.domains_scanned).toBe(20);
    expect(report.source.incomplete).toMatch(/^the contact list changed while it was read/);
  });

  it('reads on when the clock went back since the read began: no pace can be judged', () => {
    const client = { remainingMs: 3_600_000 } as ResellerClient;
    const pace = { read: 0, pages: 0 };
    const decide = onMove(1, client, { started: NOW, clock: () => NOW - 60_000 }, pace) as Exclude<
      OnMove,
      string
    >;
    expect(decide({ read: 1, pages: 10 })).toBe('report');
    // The same move with the clock going forward: an hour left is ample for another read.
    const forward = onMove(1, client, { started: NOW, clock: () => NOW + 1_000 }, pace) as Exclude<
      OnMove,
      string
    >;
    expect(forward({ read: 1, pages: 10 })).toBe('fail');
    expect(onMove(2, client, { started: NOW, clock: () => NOW }, pace)).toBe('report');
  });

  it("fails at once, with the listing's own words, when reading again cannot help", async () => {
    const client = testClient(apiFetch(0), {
      maxPages: 1,
    });
    const error = await scanAccount({ client, now: NOW, policy: DEFAULT_POLICY, mode: 'full' }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.message).toMatch(
      /^the reseller reports 2 pages \(3 domains\) for .*, more than the limit of 1;/,
    );
    // Page 1 of the domains and the contact page, once: the account was not read again.
    expect(client.requests).toBe(2);
  });

  it('reads again from the start when pages appear while the listing runs, and reports the grown account', async () => {
    let total = 3;
    let reads = 0;
    const all = [...domains, { domain_name: 'd.nl', date_expiry: '2026-11-24T00:00:00Z', auto_renew: false }];
    const fetch = (async (input: string | URL | Request) => {
      const url = new URL(String(input));
      const n = Number(url.searchParams.get('page'));
      if (url.pathname === '/v2/contacts') return page(contacts, 1, 1, 1);
      // not the other end, nor the count of status=quarantine asked when it shows page 1's order
      if (n === 1 && url.searchParams.get('sort') === 'domain_name' && !url.searchParams.has('status'))
        reads++;
      if (n === 2 && reads === 1) total = 4; // a domain was registered while page 1 was read
      return page(all.slice(0, total).slice((n - 1) * 2, n * 2), n, Math.ceil(total / 2), total);
    }) as typeof globalThis.fetch;
    const client = testClient(fetch);
    const report = await scanAccount({ client, now: NOW, policy: DEFAULT_POLICY, mode: 'full' });
    expect(reads).toBe(2);
    expect(report.stats.domains_scanned).toBe(4);
    expect(namesOf(report)).toEqual(['b.nl', 'd.nl', 'a.nl']);
  });

  it('joins the registrant contact and signs restore links for quarantine findings only', async () => {
    const report = await scanAccount({
      client: api(0),
      now: NOW,
      policy: DEFAULT_POLICY,
      restoreLinkFor: (name) => `https://r.example/restore/${name}`,
    });
    const [quarantine, expiring] = report.findings;
    expect(quarantine).toMatchObject({
      domain_name: 'b.nl',
      kind: 'quarantine',
      restore_url: 'https://r.example/restore/b.nl',
    });
    expect(expiring).toMatchObject({
      domain_name: 'a.nl',
      registrant: { handle: 'C1', name: 'Anna', company_name: 'Bloem BV', email: 'anna@example.nl' },
    });
    expect(expiring).not.toHaveProperty('restore_url');
    expect(report.summary).toEqual({ critical: 2, warning: 0, info: 0 });
    expect(report.stats).toMatchObject({ domains_scanned: 3, contacts_scanned: 1 });
  });
});

describe('scanAccount modes', () => {
  it('auto: reads a small account in full without counting, starting from the page that measured it', async () => {
    const full = await scanAccount({ client: api(0), now: NOW, policy: DEFAULT_POLICY, mode: 'full' });
    const report = await scanAccount({ client: api(0), now: NOW, policy: DEFAULT_POLICY });
    expect(report.source).toEqual({
      base_url: 'https://api.test',
      mode: 'auto',
      read: 'full',
      fallback_reason:
        'the account fits in 2 pages: reading the rest of it costs no more requests than the 8 counts a filtered read starts with',
    });
    expect(report.findings).toEqual(full.findings);
    expect(report.problems).toEqual(full.problems);
    // Exactly full mode's requests: page 1 (which measured the account), page 2, the other end of
    // its short last page (this fake ignores sort: then status=quarantine is counted), the contact page.
    expect(report.stats.requests).toBe(full.stats.requests);
    expect(report.stats.requests).toBe(5);
  });

  it('filtered: reads in full when every count comes back as the whole account, and says why', async () => {
    const full = await scanAccount({ client: api(0), now: NOW, policy: DEFAULT_POLICY, mode: 'full' });
    const client = api(0); // ignores every search parameter
    const report = await scanAccount({ client, now: NOW, policy: DEFAULT_POLICY, mode: 'filtered' });
    expect(report.source).toEqual({
      base_url: 'https://api.test',
      mode: 'filtered',
      read: 'full',
      fallback_reason:
        'the filtered read could not be proven complete: searches on date_expiry counted 3 within the window + 3 beyond it + 3 without it = 9, but the account holds 3 domains (6 counted twice: the server may ignore a search parameter)',
      coverage: {
        all: 3,
        in_window: 3,
        beyond_window: 3,
        no_expiry: 3,
        beyond_renewing: 3,
        beyond_not_renewing: 3,
        beyond_renewal_unknown: 3,
        beyond_renewing_registered: 3,
        beyond_renewing_quarantined: 3,
      },
    });
    expect(report.findings).toEqual(full.findings);
    expect(full.source).toEqual({ base_url: 'https://api.test', mode: 'full', read: 'full' });
    // Page 1 (it measured the account), eight counts, then both pages afresh (the account may have
    // changed during the counts) and the other end of their short last page, and the count of
    // status=quarantine (this fake ignores sort); the contact page is read alongside.
    expect(report.stats.requests).toBe(1 + 8 + 2 + 1 + 1 + 1);
  });

  it('filtered: reads in full too when the counts do not add up, naming the check', async () => {
    const full = await scanAccount({ client: api(0), now: NOW, policy: DEFAULT_POLICY, mode: 'full' });
    const report = await scanAccount({ client: api(0), now: NOW, policy: DEFAULT_POLICY, mode: 'filtered' });
    expect(report.source).toMatchObject({ mode: 'filtered', read: 'full' });
    expect(report.source.fallback_reason).toMatch(
      /^the filtered read could not be proven complete: searches on date_expiry counted 3 within the window/,
    );
    expect(report.findings).toEqual(full.findings);
    expect(report.problems).toEqual(full.problems);
  });

  it('filtered: reads in full when the server refuses one of the searches', async () => {
    const inner = apiFetch(0);
    const fetch = (async (input: string | URL | Request) => {
      const url = new URL(String(input));
      if (url.searchParams.get('auto_renewal') === '')
        return new Response('{"error":"auto_renewal must be true or false"}', { status: 400 });
      return inner(input);
    }) as typeof globalThis.fetch;
    const client = new ResellerClient({ baseUrl: 'https://api.test', apiKey: 'k-unit-scan', fetch });
    const report = await scanAccount({ client, now: NOW, policy: DEFAULT_POLICY, mode: 'filtered' });
    expect(report.source).toMatchObject({
      read: 'full',
      fallback_reason:
        'the filtered read could not be proven complete: the server refused one of its searches (HTTP 400)',
    });
    expect(report.stats.domains_scanned).toBe(3);
  });
});

describe('a read the time budget cuts', () => {
  /**
   * 20 pages of 2 domains, each expiring without auto-renew (a finding each); every domain request
   * takes 50 ms of an injected clock, two at a time, and the budget reads about 14 of the 20 pages.
   * With `large: 'contact'`, the 20 pages are contacts pending validation, and no domain.
   */
  async function cutScan(now: number, large: 'domain' | 'contact' = 'domain') {
    let clock = 0;
    const all = Array.from({ length: 40 }, (_, i) =>
      large === 'domain'
        ? {
            domain_name: `d${String(i).padStart(2, '0')}.nl`,
            date_expiry: '2026-11-25T00:00:00Z',
            auto_renew: false,
          }
        : { handle: `C${String(i).padStart(2, '0')}`, status: ['pending_validation'] },
    );
    const fetch = (async (input: string | URL | Request) => {
      const url = new URL(String(input));
      if (url.pathname !== `/v2/${large}s`) return page([], 1, 1, 0);
      clock += 50;
      const n = Number(url.searchParams.get('page'));
      return page(all.slice((n - 1) * 2, n * 2), n, 20, all.length);
    }) as typeof globalThis.fetch;
    const client = testClient(fetch, {
      concurrency: 2,
      initialConcurrency: 2,
      now: () => clock,
      deadline: 850,
    });
    const report = await scanAccount({
      client,
      now,
      policy: DEFAULT_POLICY,
      mode: 'full',
      clock: () => clock,
    });
    return {
      report,
      names: namesOf(report),
    };
  }

  it('checks other domains in the next hour, so two runs together check every domain', async () => {
    const first = await cutScan(NOW);
    const second = await cutScan(NOW + 3_600_000);
    for (const run of [first, second]) {
      expect(run.report.source.incomplete).toMatch(
        /^the domain list could not be read whole within the scan's time budget \(\d+ of 40 domains read; not read: pages /,
      );
      expect(run.names.length).toBeLessThan(40);
    }
    expect(new Set([...first.names, ...second.names]).size).toBe(40);
  });

  it('checks other domains in a retry a minute later, so a cut run and its retry together check every domain', async () => {
    // Lambda retries a failed run (a cut read fails it) one to three minutes later, in the same hour.
    const first = await cutScan(NOW);
    const retry = await cutScan(NOW + 60_000);
    expect(retry.names.length).toBeLessThan(40);
    expect(new Set([...first.names, ...retry.names]).size).toBe(40);
  });

  it('checks other domains in the next hour when that run starts a minute later than this one', async () => {
    // A schedule at minute 0 can start at 0:59 one hour and 1:01 the next: the minute must not undo the hour step.
    const first = await cutScan(NOW);
    const next = await cutScan(NOW + 3_660_000);
    expect(new Set([...first.names, ...next.names]).size).toBe(40);
  });

  it('takes the minute of the hour from a --now before 1970 as 0 to 59, as the rotation reads it', () => {
    const client = testClient(globalThis.fetch);
    expect(rotation(client, Date.parse('1969-12-31T23:59:30Z'), Date.now).minute).toBe(59);
    expect(rotation(client, Date.parse('2026-11-22T06:07:30Z'), Date.now).minute).toBe(7);
  });

  it('checks other contacts in the next hour, so two runs together check every contact pending validation', async () => {
    const first = await cutScan(NOW, 'contact');
    const second = await cutScan(NOW + 3_600_000, 'contact');
    for (const run of [first, second]) {
      expect(run.report.source.incomplete).toMatch(
        /^the contact list could not be read whole within the scan's time budget \(\d+ of 40 contacts read; not read: pages /,
      );
      expect(run.names.length).toBeLessThan(40);
    }
    expect(new Set([...first.names, ...second.names]).size).toBe(40);
  });
});

describe('a domain record giving its registrant handle under both spellings the API documents', () => {
  const scanOf = (record: Record<string, unknown>) =>
    scanAccount({
      client: testClient((async (input: string | URL | Request) =>
        new URL(String(input)).pathname === '/v2/contacts'
          ? page(contacts, 1, 1, 1)
          : page([record], 1, 1, 1)) as typeof globalThis.fetch),
      now: NOW,
      policy: DEFAULT_POLICY,
      mode: 'full',
    });
  const expiring = { domain_name: 'a.nl', date_expiry: '2026-11-25T00:00:00Z', auto_renew: false };

  it('is checked, and named as a problem when the two disagree: which registrant holds it is unknown', async () => {
    const report = await scanOf({ ...expiring, registrant_handle: 'C1', registant_handle: 'C2' });
    expect(namesOf(report)).toEqual(['a.nl']);
    expect(report.problems).toEqual([
      {
        resource: 'domain',
        key: 'a.nl',
        page: 1,
        reason:
          'the record gives its registrant handle twice, and the two disagree: registrant_handle "C1", registant_handle "C2" (the documentation spells the one field both ways); the domain was checked, named by registrant_handle; look at its registrant in the reseller\'s control panel',
        // Marked as read and checked: counted as a record to look at, not an unreadable one (scan-problems.ts unreadable).
        registrant_conflict: true,
      },
    ]);
  });

  it('is no problem when the two agree, or one is absent', async () => {
    for (const handles of [
      { registrant_handle: 'C1', registant_handle: 'C1' },
      { registant_handle: 'C1' },
      { registrant_handle: 'C1', registant_handle: null },
    ]) {
      const report = await scanOf({ ...expiring, ...handles });
      expect(namesOf(report)).toEqual(['a.nl']);
      expect(report.problems).toEqual([]);
    }
  });
});
