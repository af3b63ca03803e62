import { randomBytes } from 'node:crypto';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { serveLocally } from '../functions/adapters/local-server';
import { createRestoreHandler } from '../functions/adapters/restore-handler';
import { deliverAlert, runScanJob } from '../functions/adapters/scan-job';
import { EnvSecretSource } from '../functions/adapters/secrets';
import { renderDigest, renderSms } from '../functions/core/alert';
import { anyAtOrAbove, SEVERITIES, type Severity } from '../functions/core/classify';
import {
  ENV,
  loadScanSettings,
  type RawSettings,
  requireEnv,
  settingsFromEnv,
} from '../functions/core/config';
import { ConfigError, SentinelError } from '../functions/core/errors';
import {
  DEFAULT_LINK_TTL_SECONDS,
  domainNameProblem,
  parseSigningKeys,
  signRestoreLink,
} from '../functions/core/links';
import { ResellerClient } from '../functions/core/reseller-client';
import { parseRfc3339 } from '../functions/core/schemas';
import { STATE_ENV } from '../functions/core/state-config';
import { generatePortfolio } from '../functions/simulator/portfolio';
import { type Fault, startSimulator } from '../functions/simulator/server';
import { scanWithState, stateCommand, stateLocationText } from './cli-state';

/** Where the CLI writes and what it reads; tests pass their own. */
export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Resolves when the process should stop (SIGINT/SIGTERM); long-running commands wait for it. */
  readonly untilStopped?: Promise<void>;
  /** Called with the address of a server once it listens (simulate, serve). */
  readonly onListening?: (url: string) => void;
  /** The SNS client to publish with. @default a client configured by the AWS SDK's environment */
  readonly sns?: () => SNSClient;
  /** The DynamoDB client for `--state dynamodb:TABLE`. @default configured from `env` */
  readonly dynamodb?: () => DynamoDBClient;
  /** Asks the person at the terminal; absent when stdin is not a terminal. */
  readonly ask?: (question: string) => Promise<string>;
}

/** Exit statuses, as DESIGN.md sets them. */
export const EXIT = { ok: 0, failed: 1, usage: 2, failOn: 3 } as const;

class UsageError extends SentinelError {
  override readonly name: string = 'UsageError';
}

const USAGE = `usage: sentinel <command> [options]

commands:
  scan      one scan of the account: report, digest, alert
            [--json] [--dry-run] [--now ISO] [--expiry-days N] [--critical-days N]
            [--mode full|filtered] [--per-page N] [--concurrency N] [--fail-on LEVEL]
            [--min-severity LEVEL] [--time-zone TZ] [--time-budget SECONDS] [--base-url URL]
            [--state PATH|dynamodb:TABLE]  (memory between scans: alert on change; forces full mode)
  state     init dynamodb:TABLE: create the state table with the stack's definition
            reset PATH|dynamodb:TABLE --yes: forget this account's state (the next scan is a first run)
  simulate  the embedded reseller simulator   [--port N] [--domains N] [--seed S] [--now ISO]
            [--latency MS] [--max-per-page N] [--faults 429,500,hang,malformed]
  demo      simulator + a real dry-run scan against it (what npm start runs)
  serve     the restore endpoint on a local HTTP server, through the Lambda's own handler  [--port N]
  link      print a signed restore link                    <domain> [--ttl-days N]
  restore   restore a domain from quarantine now          <domain> [--yes]

configuration comes from the environment, flags override: ${ENV.resellerBaseUrl}, ${ENV.resellerApiKey},
${ENV.linkBaseUrl}, ${ENV.linkSigningKey}, ${ENV.alertTopicArn}, ${ENV.expiryDays}, ${ENV.criticalDays}, ${ENV.minSeverity},
${ENV.timeZone}, ${ENV.scanMode}, ${STATE_ENV.state}, and the AWS SDK's own (AWS_REGION, AWS_ENDPOINT_URL_SNS, …).

exit status: 0 scan completed, 1 it could not complete, 2 bad usage, 3 --fail-on level reached`;

/** Runs one CLI command; returns the exit status. Never throws. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'scan':
        return await scanCommand(rest, io);
      case 'simulate':
        return await simulateCommand(rest, io);
      case 'demo':
        return await demoCommand(rest, io);
      case 'serve':
        return await serveCommand(rest, io);
      case 'link':
        return await linkCommand(rest, io);
      case 'restore':
        return await restoreCommand(rest, io);
      case 'state':
        await stateCommand(rest, io);
        return EXIT.ok;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.stdout(`${USAGE}\n`);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}; try: sentinel help`);
    }
  } catch (error) {
    return reportError(error, io);
  }
}

function reportError(error: unknown, io: CliIo): number {
  const message = error instanceof Error ? error.message : String(error);
  io.stderr(`sentinel: ${message.split('\n')[0]}\n`);
  if (error instanceof UsageError || error instanceof ConfigError) return EXIT.usage;
  return EXIT.failed;
}

function parse<const O extends NonNullable<ParseArgsConfig['options']>>(args: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function parseNow(text: string | undefined, flag = '--now'): number {
  if (text === undefined) return Date.now();
  const ms = parseRfc3339(text);
  if (Number.isNaN(ms))
    throw new UsageError(`${flag} must be an RFC 3339 date-time such as 2026-11-22T06:00:00Z`);
  return ms;
}

/** A TCP port; 0 asks for any free one. */
function portNumber(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) > 65_535)
    throw new UsageError('--port must be a whole number from 0 to 65535 (0: any free port)');
  return Number(text);
}

function positiveInt(text: string | undefined, flag: string, fallback: number, max = 1_000_000): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw new UsageError(`${flag} must be a whole number from 1 to ${max}`);
  }
  return Number(text);
}

async function scanCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    json: { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
    now: { type: 'string' },
    'expiry-days': { type: 'string' },
    'critical-days': { type: 'string' },
    mode: { type: 'string' },
    'per-page': { type: 'string' },
    concurrency: { type: 'string' },
    'fail-on': { type: 'string' },
    'min-severity': { type: 'string' },
    'time-zone': { type: 'string' },
    'time-budget': { type: 'string' },
    'base-url': { type: 'string' },
    state: { type: 'string' },
  });
  if (positionals.length) throw new UsageError(`scan takes no arguments (got ${positionals.join(' ')})`);
  const failOn = values['fail-on'];
  if (failOn !== undefined && !SEVERITIES.includes(failOn as Severity)) {
    throw new UsageError(`--fail-on must be one of ${SEVERITIES.join(', ')}`);
  }
  const raw: RawSettings = {
    ...settingsFromEnv(io.env),
    ...definedOnly({
      resellerBaseUrl: values['base-url'],
      expiryDays: values['expiry-days'],
      criticalDays: values['critical-days'],
      scanMode: values.mode,
      perPage: values['per-page'],
      concurrency: values.concurrency,
      minSeverity: values['min-severity'],
      timeZone: values['time-zone'],
    }),
  };
  const settings = loadScanSettings(raw);
  const now = parseNow(values.now);
  const apiKey = requireEnv(
    io.env,
    ENV.resellerApiKey,
    'export the reseller API key (see README: "Using it on a real account")',
  );
  const signingKeys = settings.linkBaseUrl
    ? parseSigningKeys(
        requireEnv(io.env, ENV.linkSigningKey, `${ENV.linkBaseUrl} is set, so restore links must be signed`),
      )
    : undefined;
  const dryRun = values['dry-run'];
  const topicArn = settings.alertTopicArn;
  if (!dryRun && !topicArn) {
    throw new ConfigError(`${ENV.alertTopicArn} is not set; set it to publish the alert, or pass --dry-run`);
  }
  const budget = values['time-budget']
    ? positiveInt(values['time-budget'], '--time-budget', 0, 86_400)
    : undefined;

  if (stateLocationText(values.state, io.env) !== undefined) {
    const job = {
      settings,
      apiKey,
      now,
      ...(signingKeys ? { signingKeys } : {}),
      ...(budget ? { deadline: Date.now() + budget * 1000 } : {}),
    };
    const failOnMet = await scanWithState(
      {
        flag: values.state,
        job,
        dryRun,
        json: values.json,
        topicArn,
        failOn: failOn as Severity | undefined,
      },
      io,
    );
    if (failOnMet) io.stderr(`sentinel: findings at ${failOn} or above (--fail-on ${failOn})\n`);
    return failOnMet ? EXIT.failOn : EXIT.ok;
  }

  const report = await runScanJob({
    settings,
    apiKey,
    now,
    ...(signingKeys ? { signingKeys } : {}),
    ...(budget ? { deadline: Date.now() + budget * 1000 } : {}),
  });

  if (values.json) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  if (dryRun) {
    if (!values.json) {
      const options = {
        timeZone: settings.timeZone,
        ...(settings.accountLabel ? { accountLabel: settings.accountLabel } : {}),
      };
      io.stdout(
        `${renderDigest(report, options)}\n\n--- SMS (critical only) ---\n${renderSms(report, options)}\n`,
      );
    }
  } else if (topicArn) {
    const sns = io.sns?.() ?? new SNSClient({});
    const outcome = await deliverAlert(report, settings, sns, topicArn);
    const line = outcome.published
      ? `published alert ${outcome.messageId} to ${topicArn}${outcome.findingsCut ? ` (${outcome.findingsCut} findings cut to fit SNS's 256 KB)` : ''}`
      : `no alert published: ${outcome.reason}`;
    (values.json ? io.stderr : io.stdout)(`${line}\n`);
  }
  if (failOn && anyAtOrAbove(report.findings, failOn as Severity)) {
    io.stderr(`sentinel: findings at ${failOn} or above (--fail-on ${failOn})\n`);
    return EXIT.failOn;
  }
  return EXIT.ok;
}

function definedOnly(values: RawSettings): RawSettings {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
}

const FAULTS: Record<string, Fault> = {
  '429': { kind: 'status', status: 429, retryAfter: '1' },
  '500': { kind: 'status', status: 500 },
  '503': { kind: 'status', status: 503 },
  hang: { kind: 'hang' },
  malformed: { kind: 'malformed' },
};

async function simulateCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, {
    port: { type: 'string' },
    domains: { type: 'string' },
    seed: { type: 'string' },
    now: { type: 'string' },
    latency: { type: 'string' },
    'max-per-page': { type: 'string' },
    faults: { type: 'string' },
  });
  const port = portNumber(values.port, 8080);
  const faults = (values.faults ?? '')
    .split(',')
    .filter(Boolean)
    .map((name) => {
      const fault = FAULTS[name];
      if (!fault)
        throw new UsageError(
          `--faults: unknown fault ${JSON.stringify(name)}; use ${Object.keys(FAULTS).join(', ')}`,
        );
      return fault;
    });
  const keyFromEnv = io.env[ENV.resellerApiKey]?.trim();
  const apiKey = keyFromEnv || `sim-${randomBytes(12).toString('hex')}`;
  const domains = positiveInt(values.domains, '--domains', 500);
  const seed = positiveInt(values.seed, '--seed', 1);
  const sim = await startSimulator({
    portfolio: generatePortfolio({ domains, seed, now: parseNow(values.now) }),
    apiKey,
    port,
    latencyMs: values.latency === undefined ? 0 : positiveInt(values.latency, '--latency', 0, 60_000),
    maxPerPage: positiveInt(values['max-per-page'], '--max-per-page', 100, 10_000),
  });
  // Faults hit the domain list's pages after the first, in the order given.
  for (const fault of faults) {
    sim.injectFault({ fault, match: (r) => r.path === '/v2/domains' && r.query.get('page') !== '1' });
  }
  io.stdout(
    `reseller simulator listening on ${sim.url} (${domains} domains, seed ${seed})\n` +
      `export ${ENV.resellerBaseUrl}=${sim.url}\n` +
      `export ${ENV.resellerApiKey}=${keyFromEnv ? '<the key already in your environment>' : apiKey}\n`,
  );
  io.onListening?.(sim.url);
  await (io.untilStopped ?? new Promise<void>(() => undefined));
  await sim.close();
  return EXIT.ok;
}

/** `npm start`: the simulator on a free port, a real dry-run scan through the same `scan` command. */
async function demoCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, { domains: { type: 'string' }, seed: { type: 'string' } });
  const apiKey = `demo-${randomBytes(12).toString('hex')}`;
  const now = Date.now();
  const sim = await startSimulator({
    portfolio: generatePortfolio({
      domains: positiveInt(values.domains, '--domains', 60),
      seed: positiveInt(values.seed, '--seed', 7),
      now,
    }),
    apiKey,
  });
  try {
    io.stderr(`demo: reseller simulator on ${sim.url}; running: sentinel scan --dry-run\n\n`);
    return await main(['scan', '--dry-run', '--now', new Date(now).toISOString()], {
      ...io,
      env: {
        ...io.env,
        [ENV.resellerBaseUrl]: sim.url,
        [ENV.resellerApiKey]: apiKey,
        // Restore links point at `sentinel serve`'s default address, signed with a throwaway key.
        [ENV.linkBaseUrl]: io.env[ENV.linkBaseUrl] ?? 'http://127.0.0.1:8787',
        [ENV.linkSigningKey]: io.env[ENV.linkSigningKey] ?? randomBytes(32).toString('hex'),
        [ENV.accountLabel]: io.env[ENV.accountLabel] ?? 'demo account',
      },
    });
  } finally {
    await sim.close();
  }
}

/** Where `serve` listens and `link` points by default. */
export const LOCAL_RESTORE_URL = 'http://127.0.0.1:8787';

async function serveCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, { port: { type: 'string' } });
  const port = portNumber(values.port, 8787);
  for (const [name, hint] of [
    [ENV.resellerBaseUrl, 'the reseller API to restore through'],
    [ENV.resellerApiKey, 'the reseller API key'],
    [ENV.linkSigningKey, 'the key restore links are signed with'],
  ] as const) {
    requireEnv(io.env, name, `set ${hint}`);
  }
  const handler = createRestoreHandler({
    env: io.env,
    secrets: new EnvSecretSource(io.env),
    secretMode: 'env',
    log: (entry) => io.stderr(`${JSON.stringify({ message: 'restore attempt', ...entry })}\n`),
  });
  const server = await serveLocally(handler, { port });
  io.stdout(`restore endpoint listening on ${server.url}/restore/<domain>; links: sentinel link <domain>\n`);
  io.onListening?.(server.url);
  await (io.untilStopped ?? new Promise<void>(() => undefined));
  await server.close();
  return EXIT.ok;
}

function domainArgument(positionals: readonly string[], command: string): string {
  const [domain, ...extra] = positionals;
  if (!domain || extra.length) throw new UsageError(`usage: sentinel ${command} <domain>`);
  const problem = domainNameProblem(domain);
  if (problem)
    throw new UsageError(
      `${JSON.stringify(domain)} is not a valid domain name: ${problem} (IDNs in punycode, e.g. xn--bcher-kva.nl)`,
    );
  return domain;
}

async function linkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { 'ttl-days': { type: 'string' } });
  const domain = domainArgument(positionals, 'link');
  const keys = parseSigningKeys(
    requireEnv(io.env, ENV.linkSigningKey, 'set the key restore links are signed with'),
  );
  const baseUrl = io.env[ENV.linkBaseUrl]?.trim() || LOCAL_RESTORE_URL;
  if (!io.env[ENV.linkBaseUrl])
    io.stderr(`sentinel: ${ENV.linkBaseUrl} is not set; linking to sentinel serve at ${baseUrl}\n`);
  const ttlDays = positiveInt(values['ttl-days'], '--ttl-days', DEFAULT_LINK_TTL_SECONDS / 86_400, 30);
  io.stdout(`${signRestoreLink({ baseUrl, domain, keys, now: Date.now(), ttlSeconds: ttlDays * 86_400 })}\n`);
  return EXIT.ok;
}

async function restoreCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { yes: { type: 'boolean', default: false } });
  const domain = domainArgument(positionals, 'restore');
  const settings = loadScanSettings(settingsFromEnv(io.env));
  const apiKey = requireEnv(io.env, ENV.resellerApiKey, 'export the reseller API key');
  if (!values.yes) {
    if (!io.ask)
      throw new UsageError('not asking on a non-interactive terminal; pass --yes to restore without asking');
    const answer = await io.ask(
      `Restore ${domain} from quarantine through ${settings.resellerBaseUrl}? [y/N] `,
    );
    if (!/^y(es)?$/i.test(answer.trim())) {
      io.stdout('not restored\n');
      return EXIT.ok;
    }
  }
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey,
    timeoutMs: settings.requestTimeoutMs,
  });
  await client.restoreDomain(domain);
  io.stdout(`restored ${domain}\n`);
  return EXIT.ok;
}
