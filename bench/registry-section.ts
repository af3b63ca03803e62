import { join } from 'node:path';
import { RdapBootstrap } from '../functions/core/registry/bootstrap';
import { RdapClient } from '../functions/core/registry/rdap-client';
import { checkRegistry } from '../functions/core/registry/registry-check';
import { generatePortfolio } from '../functions/simulator/portfolio';
import { registryScenarios, startRegistrySimulator } from '../functions/simulator/registry';
import { type Simulator, startSimulator } from '../functions/simulator/server';

/**
 * The registry check's section of `npm run bench` (bench/scan.bench.ts): on `size` domains, a full
 * scan without it, then with it at the default budget (2 000) and at the budget that checks every
 * flagged domain and a 30th of the rest with a fifth to spare, the simulator's RDAP servers
 * answering in `rdapLatency` ms, each asked two lookups at a time.
 */

/** What one scan child reports, as far as this section reads it. */
interface ChildResult {
  wallMs: number;
  domainFindings: number;
  peakRssMb: number;
  error?: string;
  registry?: {
    queries: number;
    requests: number;
    checked: number;
    disagree: number;
    notChecked: Record<string, number>;
  };
}

export interface RegistrySectionInput {
  readonly measure: (sim: Simulator, mode: string, env?: Record<string, string>) => Promise<ChildResult>;
  readonly warm: (sim: Simulator, fullOnly?: boolean) => Promise<void>;
  readonly size: number;
  readonly latency: number;
  readonly rdapLatency: number;
  readonly perPage: number;
  readonly key: string;
  readonly now: string;
  /** A folder of the bench's own, for the bootstrap file. */
  readonly work: string;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const yes = (ok: boolean) => (ok ? 'yes' : 'NO');

/**
 * The check's own time when the one registry of every candidate is down (each place it leaves passes
 * to the next in line), in process, no network: at 20 000 and 200 000 candidates. Linear, the larger
 * takes some 10× the smaller; passed on from the front of an array (shift()), it took 100×.
 */
async function downRegistryScaling(now: number): Promise<void> {
  const bootstrap = RdapBootstrap.parse(
    JSON.stringify({ publication: '2026-11-20T00:00:00Z', services: [[['be'], ['https://down.example/']]] }),
    'bench',
  );
  const fetch = (async () => new Response('{}', { status: 503 })) as typeof globalThis.fetch;
  const time = async (n: number) => {
    const candidates = Array.from({ length: n }, (_, i) => ({
      domain_name: `d${i}.be`,
      date_expiry: now + 200 * 86_400_000,
      quarantine: false,
      auto_renew: true,
      registrant_handle: null,
      reason: 'sample' as const,
      rank: i,
    }));
    const client = new RdapClient({ fetch, sleep: async () => undefined, maxAttempts: 1 });
    const started = performance.now();
    await checkRegistry({
      candidates,
      bootstrap,
      client,
      now,
      budget: 2000,
      policy: { toleranceDays: 2, criticalDays: 7 },
    });
    return performance.now() - started;
  };
  await time(20_000); // warm-up
  const small = await time(20_000);
  const large = await time(200_000);
  console.log(
    `registry check, its one registry down: 20 000 candidates ${seconds(small)}, 200 000 ${seconds(large)}, ratio ${(large / small).toFixed(1)} (linear ≈ 10, quadratic ≈ 100)\n`,
  );
}

export async function registrySection(input: RegistrySectionInput): Promise<void> {
  const { size, measure } = input;
  await downRegistryScaling(Date.parse(input.now));
  const now = Date.parse(input.now);
  const portfolio = generatePortfolio({ domains: size, seed: 1, now });
  const sim = await startSimulator({
    portfolio,
    apiKey: input.key,
    latencyMs: input.latency,
    maxPerPage: input.perPage,
  });
  const { scenarios, truth } = registryScenarios(portfolio, now);
  const registry = await startRegistrySimulator({
    lookup: (name) => sim.domain(name),
    scenarios,
    now: () => now,
    latencyMs: input.rdapLatency,
  });
  const bootstrapFile = join(input.work, 'dns.json');
  registry.writeBootstrap(bootstrapFile);
  try {
    await input.warm(sim, true);
    const flagged = portfolio.truth.findings.filter(
      (f) => f.severity !== 'info' && !f.key.startsWith('C'),
    ).length;
    const covering = flagged + Math.ceil((size * 1.2) / 30);
    console.log(
      `registry check, ${size.toLocaleString('en')} domains (realistic portfolio, ${flagged} with a finding at warning or above), reseller latency ${input.latency} ms, RDAP ${input.rdapLatency} ms an answer, two lookups at a time per RDAP server (${Object.keys(registry.servers).length} servers, one of them down), full mode, 30-day cycle:\n`,
    );
    console.log(
      '| scan | wall time | added by the registry check | RDAP lookups (requests) | answered | registry findings | left for another day (budget) | peak RSS |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    const plain = await measure(sim, 'full');
    const rows: Array<[string, ChildResult]> = [['without the registry check', plain]];
    for (const budget of [2000, covering]) {
      const r = await measure(sim, 'full', {
        BENCH_RDAP_BOOTSTRAP: bootstrapFile,
        BENCH_RDAP_BUDGET: String(budget),
        BENCH_RDAP_DAYS: '30',
      });
      rows.push([`budget ${budget.toLocaleString('en')}`, r]);
    }
    for (const [label, r] of rows) {
      if (r.error) {
        console.log(`| ${label} | FAILED: ${r.error} | | | | | | ${r.peakRssMb.toFixed(0)} MB |`);
        continue;
      }
      const g = r.registry;
      console.log(
        `| ${label} | ${seconds(r.wallMs)} | ${g ? seconds(r.wallMs - plain.wallMs) : '—'} | ${g ? `${g.queries} (${g.requests})` : '—'} | ${g?.checked ?? '—'} | ${g?.disagree ?? '—'} | ${g?.notChecked.budget ?? '—'} | ${r.peakRssMb.toFixed(0)} MB |`,
      );
    }
    const sameReseller = rows.every(
      ([, r]) =>
        r.error === undefined && r.domainFindings - (r.registry?.disagree ?? 0) === plain.domainFindings,
    );
    console.log(
      `\nthe simulator planted ${truth.length} registry disagreements over the account (a day's sample meets about a 30th of them); the reseller's own findings the same with the check as without: ${yes(sameReseller)}\n`,
    );
  } finally {
    await Promise.all([sim.close(), registry.close()]);
  }
}
