import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeadlineError, IncompleteListingError, NotFoundError } from '../../functions/core/base/errors';
import { normalizeDomainName } from '../../functions/core/base/text';
import { type ListPage, paginate } from '../../functions/core/reseller/paging';

interface Rec {
  readonly name: string;
}

/** A page function over `names` with `perPage` a page; `tweak` may rewrite any page. */
function pages(names: readonly string[], perPage: number, tweak?: (p: ListPage<Rec>) => ListPage<Rec>) {
  const asked: number[] = [];
  const fetchPage = async (page: number): Promise<ListPage<Rec>> => {
    asked.push(page);
    const base: ListPage<Rec> = {
      page,
      records: names.slice((page - 1) * perPage, page * perPage).map((name) => ({ name })),
      problems: [],
      totalResults: names.length,
      totalPages: Math.ceil(names.length / perPage),
    };
    return tweak ? tweak(base) : base;
  };
  return { fetchPage, asked };
}

/** Pages as the cut problem names them: `pages 4 to 9, 12`. */
function pageRanges(list: readonly number[]): string {
  const ranges: string[] = [];
  for (let i = 0; i < list.length; ) {
    let j = i;
    while (j + 1 < list.length && list[j + 1] === (list[j] ?? 0) + 1) j++;
    ranges.push(i === j ? `${list[i]}` : `${list[i]} to ${list[j]}`);
    i = j + 1;
  }
  return `${list.length === 1 ? 'page' : 'pages'} ${ranges.join(', ')}`;
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `d${String(i).padStart(4, '0')}.nl`);

async function collect(it: AsyncIterable<ListPage<Rec>>) {
  const records: string[] = [];
  const problems: string[] = [];
  for await (const page of it) {
    records.push(...page.records.map((r) => r.name));
    problems.push(...page.problems.map((p) => p.reason));
  }
  return { records, problems };
}

/** paginate wants the answer first and the parsing on demand; these fakes parse nothing. */
const options = (fetchPage: (page: number) => Promise<ListPage<Rec>>) => ({
  fetchPage: async (page: number) => {
    const read = await fetchPage(page);
    return () => read;
  },
  keyOf: (r: Rec) => r.name,
  foldKey: normalizeDomainName,
  resource: 'domain' as const,
  source: '/v2/domains',
});

describe('paginate', () => {
  it('reads page 1, then every other page page 1 promised, at most `concurrency` at once', async () => {
    let inFlight = 0;
    let most = 0;
    const api = pages(names(95), 10);
    const slow = async (page: number) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      return api.fetchPage(page);
    };
    const { records } = await collect(paginate({ ...options(slow), concurrency: 3 }));
    expect(records).toHaveLength(95);
    expect(api.asked.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(most).toBe(3);
  });

  it('fails, saying what changed, when total_results shrinks after page 1 (300 in 3 pages, then 100)', async () => {
    const api = pages(names(300), 100, (p) =>
      p.page === 1 ? p : { ...p, records: [], totalResults: 100, totalPages: 1 },
    );
    const error = await collect(paginate(options(api.fetchPage))).catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(
      'total_results changed from 300 to 100 while domain list pages were read',
    );
  });

  it('fails when the account loses domains after page 1 and the offsets shift', async () => {
    let lost = false;
    const all = names(300);
    const fetchPage = async (page: number): Promise<ListPage<Rec>> => {
      const now = lost ? all.slice(100) : all;
      if (page === 1) lost = true; // 100 domains leave the account right after page 1 is read
      return {
        page,
        records: now.slice((page - 1) * 100, page * 100).map((name) => ({ name })),
        problems: [],
        totalResults: now.length,
        totalPages: Math.ceil(now.length / 100),
      };
    };
    await expect(collect(paginate(options(fetchPage)))).rejects.toThrow(
      /total_results changed from 300 to 200/,
    );
  });

  it('never reads past the page count page 1 promised, even when every page reports one more', async () => {
    const api = pages(names(30), 10, (p) => ({ ...p, totalPages: p.page + 2, totalResults: 30 }));
    const error = await collect(paginate({ ...options(api.fetchPage), concurrency: 1 })).catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.message).toContain('total_pages changed from 3 to 4');
    // Page 3 left when page 2 arrived, before page 2's totals were read; nothing past page 1's count.
    expect(api.asked).toEqual([1, 2, 3]);
    const wide = pages(names(30), 10, (p) => ({ ...p, totalPages: p.page + 2, totalResults: 30 }));
    await collect(paginate({ ...options(wide.fetchPage), concurrency: 8 })).catch(() => undefined);
    expect(wide.asked.sort((a, b) => a - b)).toEqual([1, 2, 3]);
  });

  it.each([3, 4])(
    'fails the listing, sending nothing more, when fetchPage throws instead of rejecting (page %i)',
    async (throwing) => {
      const api = pages(names(100), 10);
      const fetchPage = (page: number) => {
        if (page === throwing) throw new Error(`sync ${page}`);
        return options(api.fetchPage).fetchPage(page);
      };
      const listing = paginate({ ...options(api.fetchPage), fetchPage, concurrency: 2 });
      await expect(collect(listing)).rejects.toThrow(`sync ${throwing}`);
      const sent = api.asked.length;
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(api.asked).toHaveLength(sent);
      expect(Math.max(...api.asked)).toBeLessThan(throwing + 2);
    },
  );

  it('sends the next request when an answer arrives, before that page is parsed', async () => {
    const events: string[] = [];
    const api = pages(names(40), 10);
    const fetchPage = async (page: number) => {
      events.push(`send ${page}`);
      const read = await api.fetchPage(page);
      await new Promise((resolve) => setImmediate(resolve));
      return () => {
        events.push(`parse ${page}`);
        return read;
      };
    };
    const { records } = await collect(paginate({ ...options(api.fetchPage), fetchPage, concurrency: 1 }));
    expect(records).toHaveLength(40);
    expect(events).toEqual([
      'send 1',
      'parse 1',
      'send 2',
      'send 3',
      'parse 2',
      'send 4',
      'parse 3',
      'parse 4',
    ]);
  });

  it('holds back sending while the reader is busy: no request leaves while `concurrency` pages wait', async () => {
    const api = pages(names(200), 10);
    const listing = paginate({ ...options(api.fetchPage), concurrency: 2 })[Symbol.asyncIterator]();
    await listing.next(); // page 1
    await listing.next(); // one of pages 2…3; the reader then stops pulling for a while
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    // The two pages read, and read-ahead of at most twice `concurrency` (two that arrived stop the
    // sending; two in flight then may still land): not the 20 pages a free-running listing sends.
    const sent = api.asked.length;
    expect(sent).toBeGreaterThan(2);
    expect(sent).toBeLessThanOrEqual(2 + 2 * 2);
    await listing.return?.(undefined);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(api.asked).toHaveLength(sent); // a reader that stopped sends nothing more
  });

  it('sends nothing more once the reader stops, even as answers in flight still land', async () => {
    const api = pages(names(200), 10);
    // Pages after 2 are answered only when the test says so: they are in flight when the reader stops.
    const held: Array<() => void> = [];
    const fetchPage = (page: number) =>
      page <= 2
        ? api.fetchPage(page)
        : new Promise<ListPage<Rec>>((resolve) => held.push(() => resolve(api.fetchPage(page))));
    const listing = paginate({ ...options(fetchPage), concurrency: 2 })[Symbol.asyncIterator]();
    await listing.next(); // page 1
    await listing.next(); // page 2, with page 3 and 4 sent and unanswered
    expect(held).toHaveLength(2);
    await listing.return?.(undefined);
    for (const answer of held.splice(0)) answer();
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    // Each answer that lands would send the next request of a listing still open.
    expect(held).toHaveLength(0);
    expect(api.asked).toEqual([1, 2, 3, 4]);
  });

  it('fails when the pages hold fewer records than total_results promised, with unchanged totals', async () => {
    const api = pages(names(30), 10, (p) => (p.page === 3 ? { ...p, records: [] } : p));
    await expect(collect(paginate(options(api.fetchPage)))).rejects.toThrow(
      /read 20 of 30 domains from \/v2\/domains: the pages held fewer records/,
    );
  });

  it('fails when more records arrive than total_results promised', async () => {
    const api = pages(names(20), 10, (p) => ({ ...p, totalResults: 15 }));
    await expect(collect(paginate(options(api.fetchPage)))).rejects.toThrow(/read 20 of 15 domains/);
  });

  it('reads a record that shifted onto the next page once, and the totals still match', async () => {
    const all = names(20);
    const api = pages(all, 10, (p) =>
      p.page === 2 ? { ...p, records: [{ name: all[9] as string }, ...p.records] } : p,
    );
    const { records, problems } = await collect(paginate(options(api.fetchPage)));
    expect(records).toEqual(all);
    expect(problems).toEqual([]);
  });

  it('fails when a record changed and shifted onto the next page stands in for one the shift skipped', async () => {
    // Page 2 starts with d0009.nl again, changed since page 1, and so ends at d0018.nl: d0019.nl is
    // never listed, and the totals stay at 30.
    const all = names(30);
    const changed = { name: all[9] as string, changed: true } as Rec;
    const api = pages(all, 10, (p) =>
      p.page === 2 ? { ...p, records: [changed, ...p.records.slice(0, 9)] } : p,
    );
    await expect(collect(paginate(options(api.fetchPage)))).rejects.toThrow(
      /read 29 of 30 domains from \/v2\/domains: the pages held fewer records/,
    );
    const read = await collect(paginate({ ...options(api.fetchPage), onMove: 'report' }));
    expect(read.records).toEqual(all.filter((name) => name !== 'd0019.nl'));
    expect(read.problems[0]).toContain('a second domain record named "d0009.nl" with different content');
    expect(read.problems.at(-1)).toContain('read 29 of 30 domains');
  });

  it('fails when a page repeating the one before hides records behind totals that promise more pages than records', async () => {
    // 6 domains, 2 a page; page 2 repeats page 1 verbatim (read once, uncounted), and page 1 says 4
    // domains in 3 pages: pages 1 and 3 add up to the 4 promised, and d0002.nl, d0003.nl were never read.
    const all = names(6);
    const api = pages(all, 2, (p) => ({
      ...p,
      records: p.page === 2 ? all.slice(0, 2).map((name) => ({ name })) : p.records,
      totalResults: 4,
      totalPages: 3,
    }));
    await expect(collect(paginate(options(api.fetchPage)))).rejects.toThrow(
      /3 pages for 4 domains at 2 a page/,
    );
    const read = await collect(paginate({ ...options(api.fetchPage), onMove: 'report' }));
    expect(read.problems.at(-1)).toContain('3 pages for 4 domains at 2 a page');
  });

  it('reads whole a server that counts one page too many and serves it empty', async () => {
    // 4 domains, 2 a page, and total_pages 3 (a server that adds one for the remainder even when
    // there is none): no record repeats, so the empty third page hides nothing.
    const all = names(4);
    const api = pages(all, 2, (p) => ({ ...p, records: p.page === 3 ? [] : p.records, totalPages: 3 }));
    const read = await collect(paginate(options(api.fetchPage)));
    expect(read.records).toEqual(all);
    expect(read.problems).toEqual([]);
  });

  it('says which name came twice when the count falls short by the second records it did not count', async () => {
    // An account listing d0009.nl twice, changed, on pages 1 and 2 (30 rows): the read falls one
    // short of its totals, and the message must point at the name, not only at a moving account.
    const all = [...names(30).slice(0, 10), 'd0009.nl', ...names(30).slice(10, 29)];
    const api = pages(all, 10, (p) =>
      p.page === 2
        ? { ...p, records: p.records.map((r, i) => (i === 0 ? ({ ...r, other: 1 } as Rec) : r)) }
        : p,
    );
    await expect(collect(paginate(options(api.fetchPage)))).rejects.toThrow(
      /read 29 of 30 domains from \/v2\/domains: the pages held fewer records than total_results promised, and 1 second record of a name read on another page \("d0009\.nl"\) was not counted/,
    );
  });

  it('counts a second record of a name on the page of its first toward the total: no shift puts one there', async () => {
    const api = pages(['a.nl', 'b.nl', 'b.nl', 'c.nl'], 4, (p) => ({
      ...p,
      records: p.records.map((r, i) => (i === 2 ? ({ ...r, other: 1 } as Rec) : r)),
    }));
    const { records, problems } = await collect(paginate(options(api.fetchPage)));
    expect(records).toEqual(['a.nl', 'b.nl', 'c.nl']);
    expect(problems).toEqual([
      'a second domain record named "b.nl" with different content; only the first was checked',
    ]);
  });

  it('makes a name differing only in case one problem record, counted toward the total', async () => {
    const api = pages(['a.nl', 'B.nl', 'b.nl', 'c.nl'], 2);
    const { records, problems } = await collect(paginate(options(api.fetchPage)));
    expect(records).toEqual(['a.nl', 'B.nl', 'c.nl']);
    expect(problems).toEqual([
      'duplicate domain name differing only in case: "B.nl" and "b.nl"; only the first was checked',
    ]);
  });

  it('keeps names differing in case apart where keys are case-sensitive (contact handles)', async () => {
    const api = pages(['h1', 'H1'], 2);
    const { records } = await collect(paginate({ ...options(api.fetchPage), foldKey: undefined }));
    expect(records).toEqual(['h1', 'H1']);
  });

  it('refuses a runaway page count before reading page 2', async () => {
    const api = pages(names(1), 1, (p) => ({ ...p, totalPages: 1e9, totalResults: 1e9 }));
    const error = await collect(paginate({ ...options(api.fetchPage), maxPages: 1000 })).catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListingError);
    expect(error.retryable).toBe(false);
    expect(api.asked).toEqual([1]);
  });

  describe("onMove: 'report' (the last read a scan tries)", () => {
    it('reads on to the pages that grew, keeps every record read, and ends with one problem saying it moved', async () => {
      // 25 domains in 3 pages; a registration after page 1 makes it 31 in 4: the new name sorts first,
      // so each later page starts one record on, and the 4th page is read too.
      const all = names(30);
      let grown = false;
      const fetchPage = async (page: number): Promise<ListPage<Rec>> => {
        const now = grown ? ['d.nl', ...all] : all.slice(0, 25);
        if (page === 1) grown = true;
        return {
          page,
          records: now.slice((page - 1) * 10, page * 10).map((name) => ({ name })),
          problems: [],
          totalResults: now.length,
          totalPages: Math.ceil(now.length / 10),
        };
      };
      const seen: ListPage<Rec>[] = [];
      for await (const page of paginate({ ...options(fetchPage), onMove: 'report', concurrency: 1 }))
        seen.push(page);
      const records = seen.flatMap((p) => p.records.map((r) => r.name));
      // d0009.nl shifted onto page 2 and is read once; page 4 holds what the growth pushed past page 3.
      expect(records).toEqual(all);
      const last = seen.at(-1) as ListPage<Rec>;
      expect(last.records).toEqual([]);
      expect(last.problems).toEqual([
        {
          resource: 'domain',
          key: null,
          page: 2,
          reason:
            'the domain list changed while it was read (total_results changed from 25 to 31 while domain list pages were read (page 2): the account changed during the scan): the domains read were checked, but domains may be missing from what was read, so none is judged to have left the account',
        },
      ]);
      expect(last.incomplete).toBe(last.problems[0]?.reason);
      expect(seen.slice(0, -1).every((p) => p.incomplete === undefined)).toBe(true);
    });

    it('reads the page the last page reveals: growth seen only when nothing else is in flight', async () => {
      // 30 domains; a registration lands as page 3 is read, which says 31 in 4 pages.
      const all = names(31);
      const api = pages(all, 10, (p) => (p.page < 3 ? { ...p, totalResults: 30, totalPages: 3 } : p));
      const seen: ListPage<Rec>[] = [];
      for await (const page of paginate({ ...options(api.fetchPage), onMove: 'report', concurrency: 1 }))
        seen.push(page);
      expect(api.asked).toEqual([1, 2, 3, 4]);
      expect(seen.flatMap((p) => p.records.map((r) => r.name))).toEqual(all);
      expect(seen.at(-1)?.incomplete).toContain('total_results changed from 30 to 31');
    });

    it('reports a count that does not add up, on the last page, instead of failing', async () => {
      const api = pages(names(30), 10, (p) => (p.page === 3 ? { ...p, records: [] } : p));
      const seen: ListPage<Rec>[] = [];
      for await (const page of paginate({ ...options(api.fetchPage), onMove: 'report' })) seen.push(page);
      expect(seen.flatMap((p) => p.records)).toHaveLength(20);
      expect(seen.at(-1)?.incomplete).toMatch(
        /^the domain list changed while it was read \(read 20 of 30 domains/,
      );
      expect(seen.at(-1)?.problems[0]?.page).toBe(3);
    });

    it('reads no runaway: a server whose every page reports more pages is read a tenth further at most', async () => {
      const api = pages(names(300), 10, (p) => (p.page === 1 ? p : { ...p, totalPages: 30 + p.page }));
      const seen: ListPage<Rec>[] = [];
      for await (const page of paginate({ ...options(api.fetchPage), onMove: 'report' })) seen.push(page);
      // Page 1 promised 30 pages: 30 and a tenth (3) are read, however many more the pages claim.
      expect(api.asked.sort((x, y) => x - y)).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
      expect(seen.at(-1)?.incomplete).toContain('total_pages changed from 30 to 32');
    });

    it('ends with the move when a page past the count page 1 promised cannot be read', async () => {
      // 30 domains in 3 pages; page 2 says 4 pages, but the account shrank back: page 4 answers 404,
      // or (a server that clamps the page) another page. What was read is still reported.
      for (const beyond of ['404', 'clamped'] as const) {
        const api = pages(names(30), 10, (p) =>
          p.page === 2 ? { ...p, totalResults: 31, totalPages: 4 } : p,
        );
        const fetchPage = async (page: number): Promise<() => ListPage<Rec>> => {
          if (page <= 3) {
            const read = await api.fetchPage(page);
            return () => read;
          }
          if (beyond === '404')
            throw new NotFoundError('not found (HTTP 404) on domain list page 4', {
              status: 404,
              url: 'https://api.test',
            });
          return () => {
            throw new IncompleteListingError(
              'the reseller answered domain list page 4 with page 3 (current_page)',
              { retryable: true },
            );
          };
        };
        const seen: ListPage<Rec>[] = [];
        for await (const page of paginate({
          ...options(api.fetchPage),
          fetchPage,
          onMove: 'report',
          concurrency: 1,
        }))
          seen.push(page);
        expect(seen.flatMap((p) => p.records.map((r) => r.name))).toEqual(names(30));
        expect(seen.at(-1)?.incomplete).toContain('total_results changed from 30 to 31');
        expect(seen.flatMap((p) => p.problems.map((x) => x.reason)).join('\n')).toContain('page 4');
      }
    });

    it('yields no extra page when the listing kept its promise', async () => {
      const api = pages(names(30), 10);
      const seen: ListPage<Rec>[] = [];
      for await (const page of paginate({ ...options(api.fetchPage), onMove: 'report' })) seen.push(page);
      expect(seen.map((p) => p.page)).toEqual([1, 2, 3]);
      expect(seen.every((p) => p.incomplete === undefined && p.problems.length === 0)).toBe(true);
    });
  });

  it('ends with one problem saying how far it got when the time budget runs out, with onDeadline: report', async () => {
    const api = pages(names(50), 10);
    const fetchPage = async (page: number) => {
      if (page >= 4) throw new DeadlineError('the time budget ran out before domain list page 4');
      return api.fetchPage(page);
    };
    const seen: ListPage<Rec>[] = [];
    for await (const page of paginate({ ...options(fetchPage), onDeadline: 'report', concurrency: 1 }))
      seen.push(page);
    expect(seen.flatMap((p) => p.records)).toHaveLength(30);
    expect(seen.at(-1)?.incomplete).toBe(
      "the domain list could not be read whole within the scan's time budget (30 of 50 domains read; not read: pages 4 to 5; the time budget ran out before domain list page 4): the domains read were checked, but the others were not, so none is judged to have left the account",
    );
    expect(seen.at(-1)?.problems).toEqual([
      expect.objectContaining({ key: null, page: 0, reason: seen.at(-1)?.incomplete }),
    ]);
    // Without it, the deadline fails the listing, as before.
    await expect(collect(paginate({ ...options(fetchPage), concurrency: 1 }))).rejects.toBeInstanceOf(
      DeadlineError,
    );
  });

  describe('rotation (a read the time budget will cut)', () => {
    const hour = Math.floor(Date.parse('2026-11-27T06:00:00Z') / 3_600_000);
    /**
     * 20 pages of 10, two in flight, each request 50 ms of an injected clock (or `answerMs`, charged
     * when the answer arrives); the transport's deadline refuses a request once `budgetMs` has
     * passed. Returns the pages read, in order.
     */
    async function run(runIndex: number, budgetMs: number, answerMs?: (page: number) => number) {
      const api = pages(names(200), 10);
      let now = 0;
      const fetchPage = async (page: number) => {
        if (now >= budgetMs)
          throw new DeadlineError(`the time budget ran out before domain list page ${page}`);
        if (!answerMs) now += 50;
        await Promise.resolve();
        now += answerMs?.(page) ?? 0;
        return api.fetchPage(page);
      };
      const seen: ListPage<Rec>[] = [];
      for await (const page of paginate({
        ...options(fetchPage),
        onDeadline: 'report',
        concurrency: 2,
        rotation: { run: runIndex, clock: () => now, remainingMs: () => budgetMs - now },
      }))
        seen.push(page);
      const read = seen.filter((p) => p.records.length > 0).map((p) => p.page);
      return { read, asked: api.asked, last: seen.at(-1) };
    }

    it('cuts other pages at another hour with the same budget, and two runs read every page', async () => {
      const first = await run(hour, 800);
      const second = await run(hour + 1, 800);
      for (const one of [first, second]) {
        expect(one.read.length).toBeGreaterThan(10);
        expect(one.read.length).toBeLessThan(20);
        expect(one.last?.incomplete).toMatch(
          /^the domain list could not be read whole within the scan's time budget \(\d+ of 200 domains read; not read: pages? \d+/,
        );
      }
      const unread = (read: number[]) =>
        Array.from({ length: 20 }, (_, i) => i + 1).filter((p) => !read.includes(p));
      expect(unread(first.read)).not.toEqual(unread(second.read));
      // Each cut says which pages it did not read (one range in each of these runs).
      for (const one of [first, second]) {
        const skipped = unread(one.read);
        expect(skipped.at(-1) ?? 0).toBe((skipped[0] ?? 0) + skipped.length - 1);
        expect(one.last?.incomplete).toContain(`; not read: pages ${skipped[0]} to ${skipped.at(-1)};`);
      }
      expect(new Set([...first.read, ...second.read]).size).toBe(20);
      // Page 1 and the first round are read first, whatever the hour.
      expect(first.read.slice(0, 3)).toEqual([1, 2, 3]);
      expect(second.read.slice(0, 3)).toEqual([1, 2, 3]);
    });

    it('turns a read whose pages get slow after the first round, so runs an hour apart cut other pages', async () => {
      // The first round (pages 2 and 3) comes at a pace that fits; every page after it takes 100 ms.
      const slowsDown = (page: number) => (page <= 3 ? 10 : 100);
      const runs = await Promise.all([0, 1, 2, 3, 4, 5].map((h) => run(hour + h, 800, slowsDown)));
      const unread = (read: number[]) =>
        Array.from({ length: 20 }, (_, i) => i + 1).filter((p) => !read.includes(p));
      for (const one of runs) {
        // Page 1 and the first round in order; each page asked once, the order turned once at most.
        expect(one.read.slice(0, 3)).toEqual([1, 2, 3]);
        expect(new Set(one.asked).size).toBe(one.asked.length);
        expect(one.asked.filter((page, i) => page < (one.asked[i - 1] ?? 0)).length).toBeLessThanOrEqual(1);
        expect(one.read.length).toBeLessThan(20);
        expect(one.last?.incomplete).toContain(`; not read: ${pageRanges(unread(one.read))};`);
      }
      // Turned after the first round, which is not the pages 1 to k of the order 1 to N.
      expect(runs[0]?.asked).not.toEqual(runs[0]?.asked.map((_, i) => i + 1));
      expect(unread(runs[0]?.read ?? [])).not.toEqual(unread(runs[1]?.read ?? []));
      // A few hours read every page between them.
      expect(new Set(runs.flatMap((one) => one.read)).size).toBe(20);
    });

    it('keeps the order 1 to N when one answer in the middle is slow but the read still fits', async () => {
      // 10 ms a page and one of 200 ms: some 400 ms in all, with 1 000 ms left.
      const fits = await run(hour + 1, 1000, (page) => (page === 8 ? 200 : 10));
      expect(fits.asked).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(fits.last?.incomplete).toBeUndefined();
    });

    it('keeps the order 1 to N when the read fits, and turns it only when it does not', async () => {
      const fits = await run(hour + 1, 10_000);
      expect(fits.asked).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(fits.read).toEqual(fits.asked);
      expect(fits.last?.incomplete).toBeUndefined();
      // The same hour with too little time does not read in order.
      const late = await run(hour + 1, 800);
      expect(late.asked).not.toEqual([...late.asked].sort((a, b) => a - b));
    });

    it('reads every page once and keeps the promise of page 1 when a turned read completes', async () => {
      // Projected not to fit (the budget is checked after the first round), yet the pages come faster.
      const api = pages(names(200), 10);
      let now = 0;
      const fetchPage = async (page: number) => {
        now += page <= 3 ? 50 : 1;
        return api.fetchPage(page);
      };
      const result = await collect(
        paginate({
          ...options(fetchPage),
          onDeadline: 'report',
          concurrency: 2,
          rotation: { run: hour + 1, clock: () => now, remainingMs: () => 400 - now },
        }),
      );
      expect(api.asked).not.toEqual([...api.asked].sort((a, b) => a - b));
      expect([...api.asked].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(result.problems).toEqual([]);
      expect([...result.records].sort()).toEqual(names(200));
    });

    it('reads every page in order when the run is not a finite number', async () => {
      for (const runIndex of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        const api = pages(names(200), 10);
        let now = 0;
        const fetchPage = async (page: number) => {
          now += 50;
          return api.fetchPage(page);
        };
        const result = await collect(
          paginate({
            ...options(fetchPage),
            concurrency: 2,
            rotation: { run: runIndex, clock: () => now, remainingMs: () => 1 },
          }),
        );
        expect(api.asked).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        expect(result.problems).toEqual([]);
        expect(result.records).toEqual(names(200));
      }
    });

    it('reads exactly the records and problems of a read in order when a turned read completes, whatever the pages, pace, slowdown, budget and run', async () => {
      // Reads that turned after the first round: the property must cover a late turn, not only the first.
      let lateTurns = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 300 }),
          fc.integer({ min: 1, max: 30 }),
          fc.integer({ min: 1, max: 8 }),
          fc.integer({ min: -1e9, max: 1e9 }),
          fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 40 }),
          // The API slows down by `slowMs` a page after `slowAfter` requests; the time left is `budgetMs`.
          fc.record({
            slowAfter: fc.integer({ min: 0, max: 40 }),
            slowMs: fc.integer({ min: 0, max: 200 }),
            budgetMs: fc.integer({ min: 0, max: 3000 }),
          }),
          async (count, perPage, concurrency, runIndex, delays, { slowAfter, slowMs, budgetMs }) => {
            // A repeated name on another page, so the registry's dedupe and its problem are in play.
            const all = [...names(count), ...(count > 3 ? ['D0001.nl'] : [])];
            const read = async (rotate: boolean) => {
              const api = pages(all, perPage);
              let now = 0;
              let call = 0;
              const requested: number[] = [];
              const fetchPage = async (page: number) => {
                requested.push(page);
                const ticks = delays[call % delays.length] ?? 0;
                const slow = call++ >= slowAfter ? slowMs : 0;
                for (let i = 0; i < ticks; i++) await Promise.resolve();
                now += 10 + ticks + slow;
                return api.fetchPage(page);
              };
              const rotation = { run: runIndex, clock: () => now, remainingMs: () => budgetMs - now };
              const result = await collect(
                paginate({ ...options(fetchPage), concurrency, ...(rotate ? { rotation } : {}) }),
              );
              return { ...result, asked: requested };
            };
            const ordered = await read(false);
            const turned = await read(true);
            expect(turned.problems.length).toBe(ordered.problems.length);
            expect([...turned.records].sort()).toEqual([...ordered.records].sort());
            expect(turned.records.length + turned.problems.length).toBe(all.length);
            // Each page asked once, and the order turned once at most: one step back at most.
            expect([...turned.asked].sort((a, b) => a - b)).toEqual(ordered.asked);
            expect(ordered.asked).toEqual(Array.from({ length: ordered.asked.length }, (_, i) => i + 1));
            const back = turned.asked.findIndex((page, i) => page < (turned.asked[i - 1] ?? 0));
            expect(
              turned.asked.filter((page, i) => page < (turned.asked[i - 1] ?? 0)).length,
            ).toBeLessThanOrEqual(1);
            const skip = turned.asked.findIndex(
              (page, i) => i > 0 && page !== (turned.asked[i - 1] ?? 0) + 1,
            );
            // Page 1 and the first round ask 2 × concurrency pages at most before the first judgement.
            if (back > 0 && skip > 2 * concurrency) lateTurns++;
          },
        ),
        { numRuns: 200 },
      );
      expect(lateTurns).toBeGreaterThan(0);
    });
  });

  it('reads an empty listing with one request', async () => {
    const api = pages([], 10);
    expect(await collect(paginate(options(api.fetchPage)))).toEqual({ records: [], problems: [] });
    expect(api.asked).toEqual([1]);
  });
});
