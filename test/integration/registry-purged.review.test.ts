import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inTodaysSample } from '../../functions/core/registry/sample';
import { registryOf } from '../../functions/simulator/registry';
import { runCli } from '../support/cli';
import { type RegistryWorld, startRegistryWorld } from '../support/registry-world';

/**
 * Review: a domain memory remembers in the registry's redemption period, that the registry then no
 * longer knows (HTTP 404: the redemption and pending-delete periods ran out and the registry purged
 * it), while the reseller still lists it as registered. The two sources do not agree; the domain is
 * gone. Yet the check counts a 404 as checked, names it in neither `views` nor `unconfirmed`
 * (functions/core/registry/registry-check.ts, lookUp), and memory announces the critical finding
 * as resolved: the all-clear comes on the day the domain is lost.
 */

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;

let world: RegistryWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

type Stateful = {
  findings: Array<{ domain_name?: string; kind: string; severity: string; change: string }>;
  resolved: Array<{ domain_name?: string; kind: string; reason: string }>;
  registry?: { unconfirmed: string[]; problems: Array<{ reason: string }> };
};

async function scanAt(at: number, ...flags: string[]) {
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
      '30',
      ...flags,
    ],
    w.env,
  );
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Stateful;
}

describe('scan --registry-check with memory, a registry that stops knowing a domain (review)', () => {
  it('does not resolve a remembered registry redemption when the registry answers 404 for the domain the reseller still lists', async () => {
    world = await startRegistryWorld({ now: NOW, domains: 120, scenarios: new Map() });
    const name = world.portfolio.domains
      .map((d) => String(d.domain_name))
      .find(
        (n) =>
          registryOf(n)?.name === 'gtld' &&
          !world?.portfolio.truth.findings.some((f) => f.key === n) &&
          !inTodaysSample(n, NOW + DAY, 30),
      ) as string;
    expect(name).toBeDefined();

    // Day 0: the registry has it in redemption while the reseller lists it as registered.
    world.registry.setScenario(name, 'redemption');
    const first = await scanAt(NOW, '--registry-days', '1');
    expect(first.findings.find((f) => f.domain_name === name)).toMatchObject({
      kind: 'registry_redemption',
      severity: 'critical',
      change: 'new',
    });

    // Day 1: the registry purged it (404); the reseller still lists it.
    world.registry.setScenario(name, 'unknown');
    const second = await scanAt(NOW + DAY);
    expect(world.registry.servers.gtld?.requests.filter((r) => r.name === name)).toHaveLength(2);
    expect(second.resolved.map((r) => r.domain_name)).not.toContain(name);
  });
});
