import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { ScanMemory } from '../../functions/core/memory/scan-memory';
import { inTodaysSample } from '../../functions/core/registry/sample';
import { loadScanSettings, settingsFromEnv } from '../../functions/core/scan/config';
import { FileStateStore } from '../../functions/local/file-state-store';
import { registryOf } from '../../functions/simulator/registry';
import type { Lease, StateStore } from '../../functions/use-cases/state-store';
import { runStatefulScan } from '../../functions/use-cases/stateful-scan';
import { runCli } from '../support/cli';
import { type RegistryWorld, startRegistryWorld, WORLD_KEY } from '../support/registry-world';
import { DEFAULT_STATE_POLICY } from '../support/whole-state';

/**
 * The registry check with memory (a state file): a registry finding is announced once, escalates
 * like any other finding, is checked again every scan (not only on its sample day), is kept as it
 * was while its RDAP server cannot answer, and resolves when the registry and the reseller agree.
 */

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;

let world: RegistryWorld | undefined;

/** A .com domain without a finding of its own, outside the registry check's sample on each of `days`. */
const quietGtld = (w: RegistryWorld, days: readonly number[]): string =>
  w.portfolio.domains
    .map((d) => String(d.domain_name))
    .find(
      (n) =>
        registryOf(n)?.name === 'gtld' &&
        !w.portfolio.truth.findings.some((f) => f.key === n) &&
        days.every((at) => !inTodaysSample(n, at, 30)),
    ) as string;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

type Stateful = {
  findings: Array<{ domain_name?: string; kind: string; severity: string; change: string }>;
  resolved: Array<{ domain_name?: string; kind: string; reason: string }>;
  registry?: {
    unconfirmed: string[];
    unconfirmed_omitted?: number;
    problems: Array<{ reason: string }>;
    queries: number;
  };
};

/** A scan with memory at `at` (`registryDays` its registry sample), its alert appended to a file of the world's folder. */
async function scanAt(at: number, registryDays = '30', more: readonly string[] = []) {
  const w = world as RegistryWorld;
  const run = await runCli(
    [
      'scan',
      '--json',
      '--state',
      join(w.dir, 'state.json'),
      '--alert-to',
      join(w.dir, 'alerts.txt'),
      '--now',
      new Date(at).toISOString(),
      '--allow-clock-skew',
      '--registry-check',
      '--registry-days',
      registryDays,
      ...more,
    ],
    w.env,
  );
  expect(run.code, run.stderr).toBe(0);
  return { report: JSON.parse(run.stdout) as Stateful, said: run.stderr };
}

const about = (report: Stateful, name: string) => report.findings.find((f) => f.domain_name === name);

describe('scan --registry-check with memory', () => {
  it('announces a renewal that has not reached the registry once, escalates it, keeps it while the server is down, and resolves it when they agree', async () => {
    world = await startRegistryWorld({ now: NOW, domains: 120, scenarios: new Map() });
    // A .com domain without a finding of its own, outside the sample of every day of the test.
    const days = [0, 1, 4, 5, 6].map((d) => NOW + d * DAY);
    const name = quietGtld(world, days);
    expect(name).toBeDefined();
    // The reseller says renewed until NOW + 375 days; the registry still ends it 10 days from NOW.
    world.sim.updateDomain(name, { date_expiry: new Date(NOW + 375 * DAY).toISOString() });
    world.registry.setScenario(name, 'stale_renewal');

    // Day 0: all domains checked once (the sample of one day), the mismatch is new: a warning.
    const first = await scanAt(NOW, '1');
    expect(about(first.report, name)).toMatchObject({
      kind: 'registry_expiry_mismatch',
      severity: 'warning',
      change: 'new',
    });
    expect(first.said).toMatch(/delivered|appended/);

    // Day 1: outside its sample, yet checked again because memory remembers it: ongoing, not news.
    const second = await scanAt(NOW + DAY);
    expect(about(second.report, name)).toMatchObject({ severity: 'warning', change: 'ongoing' });
    expect(world.registry.servers.gtld?.requests.filter((r) => r.name === name)).toHaveLength(2);

    // Day 4: the registry's date is 6 days away, within CRITICAL_DAYS: escalated.
    const third = await scanAt(NOW + 4 * DAY);
    expect(about(third.report, name)).toMatchObject({ severity: 'critical', change: 'escalated' });

    // Day 5: the server is down: nothing is known, so nothing is resolved; memory keeps the finding.
    world.registry.injectFault('gtld', { kind: 'status', status: 503 }, 1000);
    const fourth = await scanAt(NOW + 5 * DAY);
    expect(about(fourth.report, name)).toBeUndefined();
    expect(fourth.report.resolved.map((r) => r.domain_name)).not.toContain(name);
    expect(fourth.report.registry?.unconfirmed).toContain(name);

    // Day 6: the server is back and the renewal reached the registry: resolved, once.
    world.registry.clearFaults();
    world.registry.setScenario(name, 'agree');
    const fifth = await scanAt(NOW + 6 * DAY);
    expect(about(fifth.report, name)).toBeUndefined();
    expect(fifth.report.resolved).toContainEqual(
      expect.objectContaining({ domain_name: name, kind: 'registry_expiry_mismatch' }),
    );
  });
});

describe('scan --registry-check with memory, a gTLD registry that does not know a domain', () => {
  it('finds it, keeps it while the registry answers 404 again, and resolves it once the registry knows the domain', async () => {
    world = await startRegistryWorld({ now: NOW, domains: 120, scenarios: new Map() });
    const name = quietGtld(world, [NOW + DAY, NOW + 2 * DAY]);
    world.registry.setScenario(name, 'unknown');
    const { report: first } = await scanAt(NOW, '1');
    expect(about(first, name)).toMatchObject({
      kind: 'registry_unknown',
      severity: 'warning',
      change: 'new',
    });

    // Day 1, outside its sample: re-checked, the registry still does not know it: kept, not unconfirmed.
    const { report: second } = await scanAt(NOW + DAY);
    expect(about(second, name)).toMatchObject({ kind: 'registry_unknown', change: 'ongoing' });
    expect(second.resolved.map((r) => r.domain_name)).not.toContain(name);
    expect(second.registry?.unconfirmed).toEqual([]);

    // Day 2: the registry knows it again and agrees: resolved.
    world.registry.setScenario(name, 'agree');
    const { report: third } = await scanAt(NOW + 2 * DAY);
    expect(about(third, name)).toBeUndefined();
    expect(third.resolved).toContainEqual(
      expect.objectContaining({ domain_name: name, kind: 'registry_unknown' }),
    );
  });
});

/**
 * A domain memory remembers in the registry's redemption period, that the registry then no longer
 * knows (HTTP 404: the redemption and pending-delete periods ran out and the registry purged it),
 * while the reseller still lists it as registered. The domain is gone: an all-clear that day would
 * be the worst news told as good. A registry answering a domain object with neither a status nor an
 * expiration says as little. Either way the check names the domain unconfirmed, and memory keeps
 * the critical finding as it was.
 */
describe('scan --registry-check with memory, a registry that stops saying anything of a domain', () => {
  it.each([
    ['answers 404 for', 'unknown'],
    ['answers neither a status nor an expiration for', 'bare'],
  ] as const)(
    'does not resolve a remembered registry redemption when the registry %s the domain the reseller still lists',
    async (_, scenario) => {
      world = await startRegistryWorld({ now: NOW, domains: 120, scenarios: new Map() });
      const name = quietGtld(world, [NOW + DAY]);
      expect(name).toBeDefined();

      // Day 0: the registry has it in redemption while the reseller lists it as registered.
      world.registry.setScenario(name, 'redemption');
      const { report: first } = await scanAt(NOW, '1');
      expect(first.findings.find((f) => f.domain_name === name)).toMatchObject({
        kind: 'registry_redemption',
        severity: 'critical',
        change: 'new',
      });

      // Day 1: the registry purged it (404), or answers nothing to judge by; the reseller still lists it.
      world.registry.setScenario(name, scenario);
      const { report: second } = await scanAt(NOW + DAY);
      expect(world.registry.servers.gtld?.requests.filter((r) => r.name === name)).toHaveLength(2);
      expect(second.resolved.map((r) => r.domain_name)).not.toContain(name);
      // Unconfirmed, as when its server is down: memory keeps the finding as it was.
      expect(second.registry?.unconfirmed).toEqual([name]);

      // Day 2: the registry has it in order again (the reseller restored it): now it resolves.
      world.registry.setScenario(name, 'agree');
      const { report: third } = await scanAt(NOW + 2 * DAY);
      expect(third.resolved).toContainEqual(
        expect.objectContaining({ domain_name: name, kind: 'registry_redemption' }),
      );
      expect(third.registry?.unconfirmed).toEqual([]);
    },
  );
});

/**
 * A remembered registry finding that cannot be checked this time keeps its memory, but must not
 * hide what the reseller says meanwhile: a reseller finding more severe than the one remembered is
 * an escalation, whatever the registry does that day.
 */
describe('scan --registry-check with memory, a registry down while the reseller side worsens', () => {
  it('escalates a reseller finding more severe than the remembered registry finding although its RDAP server is down', async () => {
    world = await startRegistryWorld({ now: NOW, domains: 120, scenarios: new Map() });
    const name = quietGtld(world, [NOW + DAY]);
    expect(name).toBeDefined();
    // Day 0: the renewal has not reached the registry (its date 10 days away): a warning.
    world.sim.updateDomain(name, { date_expiry: new Date(NOW + 375 * DAY).toISOString() });
    world.registry.setScenario(name, 'stale_renewal');
    const { report: first } = await scanAt(NOW, '1');
    expect(about(first, name)).toMatchObject({ kind: 'registry_expiry_mismatch', severity: 'warning' });

    // Day 1: the registry is down, and the reseller now lists the domain as expired: critical news.
    world.registry.injectFault('gtld', { kind: 'status', status: 503 }, 1000);
    world.sim.updateDomain(name, { date_expiry: new Date(NOW + DAY - 3_600_000).toISOString() });
    const { report: second } = await scanAt(NOW + DAY);
    expect(second.registry?.unconfirmed).toContain(name);
    expect(about(second, name)).toMatchObject({ kind: 'expired', severity: 'critical', change: 'escalated' });
  });
});

/**
 * One registry that put a whole TLD on hold on a large account leaves memory with more registry
 * findings than the query budget and the report's list of 100 unconfirmed names together. Memory
 * learns every re-check the scan could not confirm from the scan itself, not from that list, so the
 * ones the registry now agrees on resolve; the rest are kept, and come round on later days.
 */
describe('scan --registry-check with memory, more remembered registry findings than the budget and the report hold', () => {
  it('resolves the remembered findings the registry now agrees on and keeps the others', async () => {
    world = await startRegistryWorld({ now: NOW, domains: 800, scenarios: new Map() });
    const w = world;
    const held = w.portfolio.domains
      .map((d) => String(d.domain_name))
      .filter((n) => registryOf(n)?.name === 'gtld' && !w.portfolio.truth.findings.some((f) => f.key === n))
      .slice(0, 135);
    for (const name of held) w.registry.setScenario(name, 'client_hold');
    // Day 0: every domain checked once (the sample of one day): a hold each, new.
    const { report: first } = await scanAt(NOW, '1');
    const holds = first.findings.filter((f) => f.kind === 'registry_hold').map((f) => f.domain_name);
    expect(holds.length).toBeGreaterThan(120 + 5);

    // Day 1: the registry lifted them all; a budget of 20 checks some, more than 100 stay unconfirmed.
    for (const name of held) w.registry.setScenario(name, 'agree');
    const { report: second } = await scanAt(NOW + DAY, '30', ['--rdap-budget', '20']);
    const registry = second.registry as NonNullable<Stateful['registry']>;
    expect(registry.unconfirmed).toHaveLength(100);
    const resolved = second.resolved.filter((r) => r.kind === 'registry_hold').map((r) => r.domain_name);
    expect(resolved.length).toBeGreaterThanOrEqual(10);
    expect(resolved.length + 100 + (registry.unconfirmed_omitted ?? 0)).toBe(holds.length);
    for (const name of registry.unconfirmed) expect(resolved).not.toContain(name);
    // Those not confirmed are not news either way: kept, not announced again.
    expect(second.findings.filter((f) => f.kind === 'registry_hold')).toEqual([]);
  });
});

/**
 * Two scans at once: this one read the state before the other saved a registry finding, and its
 * own registry check never asked about that domain (outside its sample, not yet remembered). Once it
 * reads the state again after the conflict, the finding is in memory but this scan knows nothing of
 * it from the registry: it keeps it, and does not call it resolved.
 */
describe('scan --registry-check with memory, a registry finding another scan saved meanwhile', () => {
  it('keeps a remembered registry finding this scan never checked, rather than resolve it', async () => {
    world = await startRegistryWorld({ now: NOW, domains: 120, scenarios: new Map() });
    const w = world;
    const name = quietGtld(w, [NOW + DAY]);
    expect(name).toBeDefined();
    w.sim.updateDomain(name, { date_expiry: new Date(NOW + 375 * DAY).toISOString() });
    w.registry.setScenario(name, 'stale_renewal');
    const job = (now: number, days: string) => ({
      settings: loadScanSettings(
        settingsFromEnv({ ...w.env, REGISTRY_CHECK: 'true', REGISTRY_CHECK_DAYS: days }),
      ),
      secrets: new EnvSecretSource({ RESELLER_API_KEY: WORLD_KEY }),
      now,
    });
    const publish = async () => ({ messageId: 'm-1', findingsCut: 0 });
    const store = new FileStateStore(join(w.dir, 'state.json'));
    let raced = false;
    const racing: StateStore = Object.assign(Object.create(store) as StateStore, {
      claim: async (generation: number, lease: Lease) => {
        if (!raced) {
          raced = true;
          // The other scan, of an earlier instant and checking every domain, saves first.
          const other = await runStatefulScan({
            job: job(NOW, '1'),
            store,
            policy: DEFAULT_STATE_POLICY,
            publish,
          });
          expect(about(other.result.report as unknown as Stateful, name)).toMatchObject({ change: 'new' });
        }
        return store.claim(generation, lease);
      },
    });
    const outcome = await runStatefulScan({
      job: job(NOW + DAY, '30'),
      store: racing,
      policy: DEFAULT_STATE_POLICY,
      publish,
    });
    expect(outcome).toMatchObject({ saved: true, conflicts: 1 });
    expect(w.registry.servers.gtld?.requests.filter((r) => r.name === name)).toHaveLength(1);
    expect(
      outcome.result.report.resolved.map((r) => ('domain_name' in r ? r.domain_name : null)),
    ).not.toContain(name);
    const kept = new ScanMemory();
    await store.read(await store.open(w.sim.url), kept);
    expect(kept.prior.get(name)?.finding?.kind).toBe('registry_expiry_mismatch');
  });
});
