import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePortfolio, type Portfolio } from '../../functions/simulator/portfolio';
import {
  type RegistryScenario,
  type RegistrySimulator,
  registryScenarios,
  type SimulatedRegistry,
  startRegistrySimulator,
} from '../../functions/simulator/registry';
import { type Simulator, startSimulator } from '../../functions/simulator/server';

/**
 * The reseller simulator with its registry side, and the bootstrap written as a file in a folder of
 * the test's own: everything a registry-check test runs against, offline.
 */
export interface RegistryWorld {
  readonly portfolio: Portfolio;
  readonly sim: Simulator;
  readonly registry: RegistrySimulator;
  /** Ground truth of the registry side (docs: functions/simulator/registry.ts). */
  readonly registryTruth: ReturnType<typeof registryScenarios>['truth'];
  /** The test's own folder, holding `dns.json`. */
  readonly dir: string;
  /** RESELLER_BASE_URL, RESELLER_API_KEY and RDAP_BOOTSTRAP_URL (the file). */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

export const WORLD_KEY = 'registry-world-key-5c1d9e';

export async function startRegistryWorld(options: {
  readonly now: number;
  readonly domains?: number;
  readonly seed?: number;
  readonly registries?: readonly SimulatedRegistry[];
  readonly scenarios?: ReadonlyMap<string, RegistryScenario>;
}): Promise<RegistryWorld> {
  const portfolio = generatePortfolio({
    domains: options.domains ?? 200,
    seed: options.seed ?? 1,
    now: options.now,
  });
  const sim = await startSimulator({ portfolio, apiKey: WORLD_KEY });
  const planned = registryScenarios(portfolio, options.now, options.registries);
  const registry = await startRegistrySimulator({
    lookup: (name) => sim.domain(name),
    scenarios: options.scenarios ?? planned.scenarios,
    now: () => options.now,
    ...(options.registries ? { registries: options.registries } : {}),
  });
  const dir = mkdtempSync(join(tmpdir(), 'registry-world-'));
  registry.writeBootstrap(join(dir, 'dns.json'));
  return {
    portfolio,
    sim,
    registry,
    registryTruth: planned.truth,
    dir,
    env: {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: WORLD_KEY,
      RDAP_BOOTSTRAP_URL: join(dir, 'dns.json'),
    },
    close: async () => {
      await Promise.all([sim.close(), registry.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
