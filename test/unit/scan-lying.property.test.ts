import { createServer } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { isDomainFinding } from '../../functions/core/findings/classify';
import { loadScanSettings, settingsFromEnv } from '../../functions/core/scan/config';
import type { Report } from '../../functions/core/scan/scan';
import { runScanJob } from '../../functions/use-cases/scan-job';
import { listenOnLoopback } from '../support/loopback';

/**
 * A reseller whose paging lies: totals that disagree with what its pages hold, pages that repeat or
 * skip records, pages served short or empty. Whatever it does, the scan fails loudly or marks its
 * report incomplete; a report marked complete names every domain of the account that needs a
 * finding.
 */

const NOW = Date.parse('2026-11-27T12:00:00Z');
const DAY = 86_400_000;
const KEY = 'lying-key-0123456789';

const LIES = [
  'none',
  'repeat-previous',
  'shift',
  'drop-last',
  'empty',
  'one-extra-total',
  'one-fewer-total',
] as const;
type Lie = (typeof LIES)[number];

interface World {
  readonly size: number;
  readonly perPage: number;
  /** The lie each page tells, by page number (1-based); past the end: none. */
  readonly lies: readonly Lie[];
  /** Totals page 1 states, off by this many records. */
  readonly totalsOff: number;
  /** The totals count from the records the server holds (not from a fixed number): recomputed per page. */
  readonly pagesFromTotals: boolean;
  /** The client asks this many more a page than the server serves. */
  readonly askMore: number;
  /** The per_page a page states: the size served, or the size asked (a server echoing the query). */
  readonly echoPerPage: boolean;
  /** The examples' name for current_page. */
  readonly pageField: 'current_page' | 'page';
}

const world: fc.Arbitrary<World> = fc.record({
  size: fc.integer({ min: 1, max: 16 }),
  perPage: fc.integer({ min: 1, max: 5 }),
  lies: fc.array(fc.constantFrom(...LIES), { minLength: 1, maxLength: 6 }),
  totalsOff: fc.constantFrom(0, 0, 0, -2, -1, 1, 2),
  pagesFromTotals: fc.boolean(),
  askMore: fc.constantFrom(0, 0, 1, 3),
  echoPerPage: fc.boolean(),
  pageField: fc.constantFrom('current_page', 'page'),
});

function recordsOf(size: number) {
  return Array.from({ length: size }, (_, i) => ({
    domain_name: `d${String(i).padStart(3, '0')}.nl`,
    status: i % 3 === 0 ? ['quarantine'] : ['registered'],
    date_expiry: new Date(NOW + (i % 3 === 1 ? -5 : 10) * DAY).toISOString(),
    date_deleted: i % 3 === 0 ? new Date(NOW - 5 * DAY).toISOString() : null,
    auto_renew: false,
  }));
}

/** Contacts, each pending validation: each one a finding. */
function contactsOf(size: number) {
  return Array.from({ length: size }, (_, i) => ({
    handle: `C${String(i).padStart(3, '0')}`,
    name: `Contact ${i}`,
    email: `c${i}@example.nl`,
    status: ['ok', 'pending_validation'],
  }));
}

type Rec = { readonly status: readonly string[] };

function answer(w: World, all: readonly Rec[], query: URLSearchParams) {
  const desc = query.get('sort')?.startsWith('-') ?? false;
  const status = query.getAll('status');
  let records = status.length ? all.filter((r) => r.status.some((s) => status.includes(s))) : [...all];
  if (desc) records = records.reverse();
  const page = Number(query.get('page') ?? 1);
  const asked = Number(query.get('per_page') ?? 50);
  const perPage = Math.min(asked, w.perPage);
  const lie: Lie = w.lies[page - 1] ?? 'none';
  const start = (page - 1) * perPage;
  let data = records.slice(start, start + perPage);
  if (lie === 'repeat-previous' && page > 1) data = records.slice(start - perPage, start);
  if (lie === 'shift') data = records.slice(start + 1, start + 1 + perPage);
  if (lie === 'drop-last') data = data.slice(0, -1);
  if (lie === 'empty') data = [];
  const unfiltered = status.length === 0;
  let total = records.length + (unfiltered ? w.totalsOff : 0);
  if (lie === 'one-extra-total') total++;
  if (lie === 'one-fewer-total') total--;
  total = Math.max(0, total);
  const pages = w.pagesFromTotals ? Math.ceil(total / perPage) : Math.ceil(records.length / perPage);
  return {
    data,
    pagination: {
      [w.pageField]: page,
      per_page: w.echoPerPage ? asked : perPage,
      total_pages: pages,
      total_results: total,
    },
  };
}

async function serve(w: World, all: readonly Rec[], contacts: readonly Rec[]) {
  const server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${KEY}`) {
      res.writeHead(401).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://lying');
    const body =
      url.pathname === '/v2/domains'
        ? answer(w, all, url.searchParams)
        : url.pathname === '/v2/contacts'
          ? answer(w, contacts, url.searchParams)
          : null;
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' }).end(JSON.stringify(body));
  });
  return listenOnLoopback(server);
}

async function scan(w: World, mode: string): Promise<Report | Error> {
  const all = recordsOf(w.size);
  const server = await serve(w, all, contactsOf(w.size));
  try {
    const settings = loadScanSettings(
      settingsFromEnv({
        RESELLER_BASE_URL: server.url,
        PER_PAGE: String(w.perPage + w.askMore),
        SCAN_MODE: mode,
      }),
    );
    return await runScanJob({ settings, secrets: new EnvSecretSource({ RESELLER_API_KEY: KEY }), now: NOW });
  } catch (error) {
    return error as Error;
  } finally {
    await server.close();
  }
}

describe('a scan of a reseller whose paging lies', () => {
  it('reads an honest server whole, whatever page size it serves or states', async () => {
    const honest = world.map((w) => ({ ...w, lies: ['none' as const], totalsOff: 0 }));
    await fc.assert(
      fc.asyncProperty(honest, fc.constantFrom('full', 'auto'), async (w, mode) => {
        const outcome = await scan(w, mode);
        if (outcome instanceof Error) throw outcome;
        expect(outcome.source.incomplete).toBeUndefined();
        const found = new Set(outcome.findings.map((f) => (isDomainFinding(f) ? f.domain_name : f.handle)));
        expect(recordsOf(w.size).filter((r) => !found.has(r.domain_name))).toEqual([]);
        expect(contactsOf(w.size).filter((c) => !found.has(c.handle))).toEqual([]);
        expect(outcome.problems).toEqual([]);
      }),
      {
        numRuns: Number(process.env.FUZZ_RUNS ?? 40),
        seed: Number(process.env.FUZZ_SEED ?? 20261127),
        endOnFailure: !process.env.FUZZ_RUNS,
      },
    );
  }, 60_000);

  it('fails loudly or reports incomplete, never a partial result marked complete', async () => {
    await fc.assert(
      fc.asyncProperty(world, fc.constantFrom('full', 'auto'), async (w, mode) => {
        // Totals cut to match records a page also dropped is a lie no reader can see: not asked.
        const hides = w.lies.some(
          (l) => l === 'drop-last' || l === 'empty' || l === 'shift' || l === 'one-fewer-total',
        );
        fc.pre(!(hides && w.totalsOff < 0));
        // Nor one page holding all its totals count, under a per_page it does not fill: an account of
        // one page (a capped window holds more than one page, other-end.ts cappedShort).
        const undercount = w.lies[0] === 'one-fewer-total' || w.totalsOff < 0;
        const onePageCut = undercount && w.size - 1 <= w.perPage && w.echoPerPage;
        fc.pre(!onePageCut);
        const outcome = await scan(w, mode);
        if (outcome instanceof Error) return;
        if (outcome.source.incomplete) return;
        const named = new Set([
          ...outcome.findings.map((f) => (isDomainFinding(f) ? f.domain_name : f.handle)),
          ...outcome.problems.map((p) => p.key),
        ]);
        // A contact list that cannot be read is one problem saying so: registrants go unnamed.
        const contactsUnread = outcome.problems.some((p) => p.resource === 'contact' && p.key === null);
        const contactsMissing = contactsOf(w.size)
          .map((c) => c.handle)
          .filter((h) => !named.has(h));
        if (!contactsUnread) expect(contactsMissing, 'a complete report lost contacts').toEqual([]);
        const missing = recordsOf(w.size)
          .map((r) => r.domain_name)
          .filter((n) => !named.has(n));
        expect(missing, 'a complete report lost domains').toEqual([]);
      }),
      {
        numRuns: Number(process.env.FUZZ_RUNS ?? 60),
        seed: Number(process.env.FUZZ_SEED ?? 20261127),
        endOnFailure: !process.env.FUZZ_RUNS,
      },
    );
  }, 60_000);
});
