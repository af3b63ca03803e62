import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { renderDigest } from '../../functions/core/alerts/digest';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import { normalizeDomainName } from '../../functions/core/base/text';
import { isDomainFinding } from '../../functions/core/findings/classify';
import { loadScanSettings, settingsFromEnv } from '../../functions/core/scan/config';
import type { Report } from '../../functions/core/scan/scan';
import type { RawRecord } from '../../functions/simulator/portfolio';
import { startSimulator } from '../../functions/simulator/server';
import { runScanJob } from '../../functions/use-cases/scan-job';

/**
 * Hostile accounts served by the simulator on loopback (honest paging, any page size), scanned by
 * the real use case: every good record that needs a finding has it, with the right kind; every
 * record that cannot be parsed is a problem, named when it has a readable name; no record makes
 * the scan throw; and the digest names every critical finding or says how many more there are.
 */

const NOW = Date.parse('2026-11-27T12:00:00Z');
const DAY = 86_400_000;
const KEY = 'fuzz-key-0123456789';

type Expect =
  | { readonly finding: 'quarantine' | 'expired' | 'expiring' | 'auto_renew_off' | null }
  | { readonly problem: true }
  | { readonly twin: true };

function twinName(name: string, form: string): string {
  if (form === 'upper') return name.toUpperCase();
  if (form === 'dot') return `${name}.`;
  if (form === 'puny')
    return normalizeDomainName(name) === name ? `${name.toUpperCase()}.` : normalizeDomainName(name);
  return name;
}

/** Dates in odd but valid RFC 3339 forms. */
function oddDate(ms: number, form: number): string {
  const iso = new Date(ms).toISOString();
  switch (form % 5) {
    case 0:
      return iso;
    case 1:
      return iso.replace('T', 't').replace('Z', 'z');
    case 2: {
      // The same instant two hours ahead.
      const shifted = new Date(ms + 2 * 3_600_000).toISOString().slice(0, 19);
      return `${shifted}+02:00`;
    }
    case 3:
      return `${iso.slice(0, 19)}.123456789Z`;
    default:
      return iso.replace('T', ' ');
  }
}

const BAD_DATES: readonly unknown[] = [
  '2026-02-30T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '27/11/2026',
  '',
  12345,
  null,
  true,
  [],
  {},
  'x'.repeat(100_000),
];

/** Auto-renew under either documented name, as a boolean or a PHP-style string. */
function renewField(on: boolean, alias: number): RawRecord {
  // Both names, disagreeing: read as off (a false alarm is cheaper than a lost domain).
  if (alias === 4) return { auto_renew: on, auto_renewal: !on };
  const value = alias % 2 === 0 ? on : String(on);
  return alias < 2 ? { auto_renew: value } : { auto_renewal: value };
}

const good = fc.record({
  kind: fc.constantFrom('quarantine', 'expired', 'expiring', 'auto_renew_off', 'healthy'),
  dateForm: fc.nat(4),
  alias: fc.nat(4),
  statusForm: fc.nat(3),
  idn: fc.boolean(),
  hugeHandle: fc.boolean(),
  extraStatus: fc.constantFrom(null, null, null, 'pendingDelete', 'redemption'),
});

const bad = fc.record({
  fault: fc.constantFrom(
    'date',
    'missing-date',
    'status-type',
    'auto-renew-type',
    'name-type',
    'name-missing',
    'deleted-date',
    'null-record',
  ),
  badDate: fc.nat(BAD_DATES.length - 1),
  quarantined: fc.boolean(),
});

/** A second record of an earlier good one's name: another letter case, a trailing dot, punycode. */
const twin = fc.record({
  of: fc.nat(20),
  form: fc.constantFrom('upper', 'dot', 'puny', 'same'),
  quarantined: fc.boolean(),
});

const entry = fc.oneof(
  { weight: 3, arbitrary: good.map((g) => ({ good: g })) },
  { weight: 1, arbitrary: bad.map((b) => ({ bad: b })) },
  { weight: 1, arbitrary: twin.map((t) => ({ twin: t })) },
);

interface Built {
  /** The record holds a status the API does not document: a problem names it. */
  readonly undocumented?: boolean;
  /** auto_renew and auto_renewal disagree. */
  readonly contradicts?: boolean;
  readonly raw: unknown;
  readonly name: string | null;
  readonly expect: Expect;
}

function statusOf(form: number, value: string, extra: string | null): unknown {
  const values = extra ? [value, extra] : [value];
  if (form === 0) return values;
  if (form === 1) return values.map((v) => v.toUpperCase());
  if (form === 2) return values.join(',');
  return values.map((v) => ` ${v} `);
}

function buildGood(g: GoodSpec, i: number): Built {
  const name = g.idn ? `bücher-${i}.nl` : `d${i}.nl`;
  const expiry =
    g.kind === 'quarantine' || g.kind === 'expired'
      ? NOW - 40 * DAY
      : g.kind === 'expiring'
        ? NOW + 10 * DAY
        : NOW + 200 * DAY;
  const status = g.kind === 'quarantine' ? 'quarantine' : 'registered';
  const raw: RawRecord = {
    domain_name: name,
    status: statusOf(g.statusForm, status, g.extraStatus),
    date_expiry: oddDate(expiry, g.dateForm),
    ...renewField(g.kind === 'healthy' || (g.kind === 'expiring' && g.alias === 0), g.alias),
    ...(g.kind === 'quarantine' ? { date_deleted: oddDate(NOW - 10 * DAY, g.dateForm) } : {}),
    registrant_handle: g.hugeHandle ? 'H'.repeat(200_000) : `h${i}`,
    tags: g.hugeHandle ? ['t'.repeat(300_000)] : null,
    transfer_lock: null,
  };
  const finding = g.kind === 'healthy' ? (g.alias === 4 ? 'auto_renew_off' : null) : g.kind;
  return { raw, name, expect: { finding }, undocumented: g.extraStatus !== null, contradicts: g.alias === 4 };
}

interface GoodSpec {
  readonly kind: 'quarantine' | 'expired' | 'expiring' | 'auto_renew_off' | 'healthy';
  readonly dateForm: number;
  readonly alias: number;
  readonly statusForm: number;
  readonly idn: boolean;
  readonly hugeHandle: boolean;
  readonly extraStatus: string | null;
}

interface BadSpec {
  readonly fault: string;
  readonly badDate: number;
  readonly quarantined: boolean;
}

function buildBad(b: BadSpec, i: number): Built {
  const name = `bad${i}.nl`;
  const raw: RawRecord = {
    domain_name: name,
    status: [b.quarantined ? 'quarantine' : 'registered'],
    date_expiry: new Date(NOW - DAY).toISOString(),
    auto_renew: false,
  };
  switch (b.fault) {
    case 'date':
      raw.date_expiry = BAD_DATES[b.badDate];
      break;
    case 'missing-date':
      delete raw.date_expiry;
      break;
    case 'status-type':
      raw.status = 42;
      break;
    case 'auto-renew-type':
      raw.auto_renew = 'yes';
      break;
    case 'name-type':
      raw.domain_name = 7 as unknown as string;
      return { raw, name: null, expect: { problem: true } };
    case 'name-missing':
      delete raw.domain_name;
      return { raw, name: null, expect: { problem: true } };
    case 'deleted-date':
      raw.date_deleted = BAD_DATES[b.badDate] ?? 'nope';
      if (raw.date_deleted === null) raw.date_deleted = 'nope';
      break;
    default:
      return { raw: null, name: null, expect: { problem: true } };
  }
  return { raw, name, expect: { problem: true } };
}

/** `n` healthy domains: auto-renewed, a year from expiry. */
const fillerOf = (n: number): RawRecord[] =>
  Array.from({ length: n }, (_, i) => ({
    domain_name: `fill${i}.nl`,
    status: ['registered'],
    date_expiry: new Date(NOW + 365 * DAY).toISOString(),
    auto_renew: true,
  }));

/** The e-mail part of the one SNS message the scan publishes. */
const emailOf = (report: Report): string =>
  (JSON.parse(buildAlertMessage(report).message) as { email: string }).email;

const account = fc.record({
  entries: fc.array(entry, { minLength: 1, maxLength: Number(process.env.FUZZ_SIZE ?? 14) }),
  maxPerPage: fc.integer({ min: 1, max: 6 }),
  /** Healthy domains around the hostile ones: enough of them and auto mode reads only the parts that can give a finding. */
  filler: fc.constantFrom(0, 0, Number(process.env.FUZZ_FILLER ?? 300)),
  mode: fc.constantFrom('full', 'auto'),
});

async function scan(records: unknown[], maxPerPage: number, mode: string): Promise<Report> {
  const sim = await startSimulator({
    portfolio: { domains: records as RawRecord[], contacts: [], truth: { findings: [], problems: [] } },
    apiKey: KEY,
    maxPerPage,
    ...(process.env.FUZZ_SEMANTICS
      ? { searchSemantics: process.env.FUZZ_SEMANTICS as 'or' | 'and' | 'ignore' }
      : {}),
  });
  try {
    const settings = loadScanSettings(
      settingsFromEnv({ RESELLER_BASE_URL: sim.url, PER_PAGE: String(maxPerPage), SCAN_MODE: mode }),
    );
    return await runScanJob({ settings, secrets: new EnvSecretSource({ RESELLER_API_KEY: KEY }), now: NOW });
  } finally {
    await sim.close();
  }
}

describe('a scan of a hostile account, honestly paged', () => {
  it('finds every good record, names every bad one, and never throws', async () => {
    await fc.assert(
      fc.asyncProperty(account, async ({ entries, maxPerPage, mode, filler }) => {
        const built: Built[] = [];
        const twins: Array<{ readonly names: string[]; readonly quarantined: boolean }> = [];
        entries.forEach((e, i) => {
          if ('good' in e) built.push(buildGood(e.good as GoodSpec, i));
          else if ('bad' in e) built.push(buildBad(e.bad, i));
          else {
            const goods = built.filter((b) => 'finding' in b.expect);
            const first = goods[e.twin.of % Math.max(1, goods.length)];
            if (!first?.name) return;
            const name = twinName(first.name, e.twin.form);
            // The very same name twice is the 'same' form's alone (a second 'same' repeats it verbatim).
            if (e.twin.form !== 'same' && built.some((b) => b.name === name)) return;
            const raw = {
              ...(first.raw as RawRecord),
              domain_name: name,
              status: [e.twin.quarantined ? 'quarantine' : 'registered'],
              date_expiry: new Date(NOW - 40 * DAY).toISOString(),
              date_deleted: new Date(NOW - 5 * DAY).toISOString(),
            };
            built.push({ raw, name, expect: { twin: true } });
            const quarantined =
              e.twin.quarantined || (first.expect as { finding?: string }).finding === 'quarantine';
            twins.push({ names: [first.name, name], quarantined });
          }
        });
        const report = await scan([...built.map((b) => b.raw), ...fillerOf(filler)], maxPerPage, mode);
        // One name listed twice with other content on another page cannot be told from a record
        // that changed and shifted while the pages were read: reported incomplete (the run fails).
        const sameName = entries.some((e) => 'twin' in e && e.twin.form === 'same');
        if (!sameName) expect(report.source.incomplete).toBeUndefined();
        const findings = new Map(
          report.findings.filter(isDomainFinding).map((f) => [f.domain_name, f.kind] as const),
        );
        const named = new Set(report.problems.map((p) => p.key));
        // A name listed twice: whichever record was checked, a quarantine among them is never silent.
        const twinned = new Set(twins.flatMap((t) => t.names.map(normalizeDomainName)));
        for (const t of twins) {
          if (!t.quarantined) continue;
          const norm = normalizeDomainName(t.names[0] as string);
          const found = report.findings.some(
            (f) =>
              isDomainFinding(f) && normalizeDomainName(f.domain_name) === norm && f.kind === 'quarantine',
          );
          const flagged = report.problems.some(
            (p) => p.key !== null && normalizeDomainName(p.key) === norm && p.severity === 'critical',
          );
          expect(found || flagged, `quarantine of ${t.names.join(' / ')} silent`).toBe(true);
        }
        for (const b of built) {
          if ('twin' in b.expect) continue;
          if (b.name && twinned.has(normalizeDomainName(b.name))) continue;
          // A filtered read leaves healthy auto-renewed registered domains unread, and a server may
          // count one holding registered beside an undocumented status among them (scan.ts, `mixed`):
          // only a full read is sure to see such a status.
          const unreadPart =
            report.source.read === 'filtered' && 'finding' in b.expect && b.expect.finding === null;
          if (b.undocumented && !unreadPart)
            expect(named.has((b.name as string).toLowerCase()), `status of ${b.name}`).toBe(true);
          if ('finding' in b.expect) {
            const got = findings.get((b.name as string).toLowerCase()) ?? null;
            // auto_renew true beside auto_renewal false reads as off, but the server's search may
            // count it as renewing, in the part a filtered read leaves unread: an info finding only
            // a full read is sure to make.
            const selfContradicting = b.contradicts === true && report.source.read === 'filtered';
            if (!(selfContradicting && got === null)) expect(got, b.name as string).toBe(b.expect.finding);
          } else if (b.name !== null) {
            expect(named.has(b.name), `problem named ${b.name}`).toBe(true);
          }
        }
        const nameless = built.filter((b) => 'problem' in b.expect && b.name === null).length;
        const namelessProblems = report.problems.filter((p) => p.key === null && p.resource === 'domain');
        expect(namelessProblems.length).toBeGreaterThanOrEqual(nameless);
        for (const digest of [renderDigest(report), emailOf(report)]) {
          const more = /\d+ more/.test(digest);
          for (const f of report.findings.filter(isDomainFinding)) {
            if (f.severity !== 'critical') continue;
            expect(digest.includes(f.domain_name) || more, `digest names ${f.domain_name}`).toBe(true);
          }
          // A record saying quarantine that could not be checked is a critical item too.
          for (const p of report.problems) {
            if (p.severity !== 'critical' || p.key === null) continue;
            expect(digest.includes(p.key) || more, `digest names the problem ${p.key}`).toBe(true);
          }
        }
      }),
      {
        numRuns: Number(process.env.FUZZ_RUNS ?? 40),
        seed: Number(process.env.FUZZ_SEED ?? 20261127),
        endOnFailure: !process.env.FUZZ_RUNS,
      },
    );
  }, 60_000);
});
