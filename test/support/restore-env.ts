import { EnvSecretSource } from '../../functions/aws/secrets';
import { settingsFromEnv } from '../../functions/core/scan/config';
import { createRestoreHandler, type RestoreLogEntry } from '../../functions/handlers/restore-handler';
import { serveLocally } from '../../functions/local/local-server';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { startSimulator } from '../../functions/simulator/server';

export const API_KEY = 'sk_restore_flow_51f0c2d9e8';
export const SIGNING_KEY = 'restore-signing-key-0123456789abcdef0123';

/** The simulator plus `sentinel serve`'s server, wired as on a laptop; logs collected. */
export async function startRestoreStack(options: { domains?: number; seed?: number } = {}) {
  const portfolio = generatePortfolio({
    domains: options.domains ?? 80,
    seed: options.seed ?? 21,
    now: Date.now(),
    profile: 'stress', // every test takes its own quarantined domains
  });
  const sim = await startSimulator({ portfolio, apiKey: API_KEY });
  const logs: RestoreLogEntry[] = [];
  const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: API_KEY, LINK_SIGNING_KEY: SIGNING_KEY };
  const handler = createRestoreHandler({
    settings: () => settingsFromEnv(env),
    secrets: new EnvSecretSource(env),
    log: (e) => logs.push(e),
  });
  const server = await serveLocally(handler, { port: 0 });
  const quarantined = portfolio.truth.findings.filter((f) => f.kind === 'quarantine').map((f) => f.key);
  return {
    sim,
    server,
    logs,
    quarantined,
    env: { ...env, LINK_BASE_URL: server.url },
    close: async () => {
      await server.close();
      await sim.close();
    },
  };
}

/**
 * The confirmation page's POST as a person sends it: the domain name typed and (where the registry
 * needs it, as for .nl) the registrant's consent checked. Merge into `fetch`'s init.
 */
export function confirmedPost(domain: string, headers: Record<string, string> = {}): RequestInit {
  return {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ confirm_domain: domain, registrant_consent: 'yes' }).toString(),
  };
}
