import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvSecretSource } from '../../functions/aws/secrets';
import type { ActionStore } from '../../functions/core/memory/actions';
import type { AuditTrail } from '../../functions/core/memory/audit';
import { settingsFromEnv } from '../../functions/core/scan/config';
import { createWebApp } from '../../functions/handlers/web-app';
import { FolderReportStore } from '../../functions/local/folder-report-store';
import { serveLocally } from '../../functions/local/local-server';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { startSimulator } from '../../functions/simulator/server';
import { MemoryActionStore } from './memory-action-store';
import { API_KEY, SIGNING_KEY } from './restore-env';

/**
 * The simulator plus the web app on a local server, wired as `sentinel serve` wires them: a report
 * folder the scan writes and the page reads, and an action store (in memory unless one is given).
 */
export async function startWebStack(
  options: {
    domains?: number;
    seed?: number;
    actions?: ActionStore;
    audit?: AuditTrail;
    /** More settings for the web app, read at each request (a test may change them between requests). */
    settings?: Record<string, string>;
  } = {},
) {
  const now = Date.now();
  const portfolio = generatePortfolio({ domains: options.domains ?? 120, seed: options.seed ?? 41, now });
  const sim = await startSimulator({ portfolio, apiKey: API_KEY });
  const reportDir = mkdtempSync(join(tmpdir(), 'sentinel-web-'));
  const actions = options.actions ?? new MemoryActionStore();
  const logs: Array<Record<string, unknown>> = [];
  const env: Record<string, string> = {
    RESELLER_BASE_URL: sim.url,
    RESELLER_API_KEY: API_KEY,
    LINK_SIGNING_KEY: SIGNING_KEY,
    REPORT_DIR: reportDir,
  };
  const app = createWebApp({
    settings: () => settingsFromEnv({ ...env, ...options.settings }),
    secrets: new EnvSecretSource(env),
    actions: () => actions,
    reports: () => new FolderReportStore(reportDir),
    ...(options.audit ? { audit: () => options.audit ?? null } : {}),
    log: (message, entry) => logs.push({ message, ...entry }),
  });
  const server = await serveLocally(app, { port: 0 });
  return {
    sim,
    server,
    actions,
    logs,
    portfolio,
    reportDir,
    env: { ...env, LINK_BASE_URL: server.url },
    close: async () => {
      await server.close();
      await sim.close();
      rmSync(reportDir, { recursive: true, force: true });
    },
  };
}
