import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { REPORT_ENV } from '../../functions/core/memory/report-store';
import { ENV } from '../../functions/core/scan/config';
import { serveLocally } from '../../functions/local/local-server';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { noPositionals, parseNow, positiveInt, str, withoutSettings } from '../args';
import { type CliIo, EXIT, type ParsedArgs } from '../command';
import { untilAborted } from '../interrupt';
import { demo, LOCAL_LINK_PORT, LOCAL_LINK_URL } from './index';
import { logTo, webAppForServe } from './serve';

/**
 * `npm start`: the simulator on a free port and a real dry-run scan of it through the `scan`
 * command. In a terminal it then serves the links it printed (report page, restore) until
 * Ctrl-C, so they lead somewhere while someone looks at them; piped or in CI it exits after printing.
 */
export async function runDemo(args: ParsedArgs, io: CliIo): Promise<number> {
  noPositionals(demo, args);
  const now = parseNow(str(args.values.now));
  const apiKey = `demo-${randomBytes(12).toString('hex')}`;
  const sim = await startSimulator({
    portfolio: generatePortfolio({
      domains: positiveInt(str(args.values.domains), '--domains', 60),
      seed: positiveInt(str(args.values.seed), '--seed', 7),
      now,
    }),
    apiKey,
  });
  // The report the links show is the demo's own, kept in a folder that goes when the demo does.
  const reportDir = await mkdtemp(join(tmpdir(), 'sentinel-demo-'));
  // Its own simulator, key and report folder, and none of the settings of a real setup (a state,
  // a webhook, a heartbeat): the demo neither uses nor changes them, in its scan or its links.
  const env: NodeJS.ProcessEnv = {
    ...withoutSettings(io.env),
    [ENV.resellerBaseUrl]: sim.url,
    [ENV.resellerApiKey]: apiKey,
    [ENV.linkSigningKey]: io.env[ENV.linkSigningKey] ?? randomBytes(32).toString('hex'),
    [ENV.accountLabel]: io.env[ENV.accountLabel] ?? 'demo account',
    [REPORT_ENV.dir]: reportDir,
  };
  try {
    return await scanAndServe(sim, env, now, io);
  } finally {
    await sim.close();
    await rm(reportDir, { recursive: true, force: true });
  }
}

async function scanAndServe(sim: Simulator, env: NodeJS.ProcessEnv, now: number, io: CliIo): Promise<number> {
  // In a terminal the links server starts first, so the links carry the port it really got.
  const links = io.interactive ? await startLinks(env, io) : undefined;
  try {
    const scanEnv = { ...env, [ENV.linkBaseUrl]: links?.url ?? io.env[ENV.linkBaseUrl] ?? LOCAL_LINK_URL };
    io.stderr(`demo: reseller simulator on ${sim.url}; running: sentinel scan --dry-run\n\n`);
    const code = await (await import('./scan')).runScan(
      { values: { 'dry-run': true, now: new Date(now).toISOString() }, positionals: [] },
      { ...io, env: scanEnv },
    );
    if (!links || code !== EXIT.ok) {
      if (code === EXIT.ok)
        io.stderr(
          '\ndemo: output is not a terminal, so nothing serves these links now; run npm start in a terminal to open them\n',
        );
      return code;
    }
    io.stderr(
      `\ndemo: the links above are served on ${links.url} (report page, restore confirmation) until Ctrl-C\n`,
    );
    io.onListening?.(links.url);
    await untilAborted(io.signal);
    return EXIT.ok;
  } finally {
    await links?.close();
  }
}

/** `serve`'s app for the demo's links: on serve's usual port, or any free one when that is taken. */
async function startLinks(env: NodeJS.ProcessEnv, io: CliIo) {
  const app = webAppForServe({ env, secrets: new EnvSecretSource(env), log: logTo(io) });
  try {
    return await serveLocally(app, { port: LOCAL_LINK_PORT });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return serveLocally(app, { port: 0 });
  }
}
