import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { serveLocally } from '../functions/adapters/local-server';
import { finishReport } from '../functions/adapters/report-finish';
import { deliverAlert, runScanJob } from '../functions/adapters/scan-job';
import { EnvSecretSource } from '../functions/adapters/secrets';
import { DEFAULT_SNOOZE_DAYS, MAX_SNOOZE_DAYS } from '../functions/core/actions';
import { renderDigest, renderSms, reportReaches, smsAsDelivered } from '../functions/core/alert';
import { auditEntry, auditLine } from '../functions/core/audit';
import { SEVERITIES, type Severity } from '../functions/core/classify';
import {
  ENV,
  loadRestoreSettings,
  loadScanSettings,
  parseSetting,
  type RawSettings,
  type SettingName,
  settingsFromEnv,
} from '../functions/core/config';
import { ConfigError, SentinelError } from '../functions/core/errors';
import { domainNameProblem, signRestoreLink } from '../functions/core/links';
import { restoreDeadline, tldOf } from '../functions/core/quarantine-periods';
import { prettyReportJson } from '../functions/core/report-json';
import { ResellerClient } from '../functions/core/reseller-client';
import { needsConsent, typedNameMatches } from '../functions/core/restore';
import { parseRfc3339 } from '../functions/core/schemas';
import { normalizeDomainName } from '../functions/core/text';
import {
  generatePortfolio,
  PORTFOLIO_PROFILES,
  type PortfolioProfile,
} from '../functions/simulator/portfolio';
import { SEARCH_SEMANTICS, type SearchSemantics } from '../functions/simulator/search';
import { type Fault, startSimulator } from '../functions/simulator/server';
import { scanWithState, stateCommand, stateLocationText } from './cli-state';
import { auditTrailFor, reportStoreFromEnv, silenceCommand, webAppForServe } from './cli-web';
import { type CommandSpec, commandSpec, parseOptionsOf, renderHelp } from './commands';
import { tryAlertsCommand } from './try-alerts';

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

/** Exit statuses: 0 completed, 1 could not complete, 2 bad usage or configuration, 3 --fail-on reached. */
export const EXIT = { ok: 0, failed: 1, usage: 2, failOn: 3 } as const;

class UsageError extends SentinelError {
  override readonly name: string = 'UsageError';
}

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
      case 'snooze':
        return await snoozeCommand(rest, io);
      case 'ack':
        return await ackCommand(rest, io);
      case 'audit':
        return await auditCommand(rest, io);
      case 'state': {
        // The table's parser first, so an unknown flag is refused here as for every command.
        const { values, positionals } = parse('state', rest);
        await stateCommand([...positionals, ...(values.yes === true ? ['--yes'] : [])], io);
        return EXIT.ok;
      }
      case 'try-alerts':
        return await tryAlertsCommand(rest, io, main);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        (command === undefined ? io.stderr : io.stdout)(`${renderHelp()}\n`);
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

/** Parses a command's argv against its spec in bin/commands.ts: unknown flags are usage errors. */
function parse(name: string, args: readonly string[]) {
  const spec = commandSpec(name) as CommandSpec;
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: parseOptionsOf(spec),
      strict: true,
      allowPositionals: true,
    });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (error) {
    throw new UsageError(`${(error as Error).message}; try: sentinel help`);
  }
}

/** The string value of a flag (parseArgs gives booleans for boolean flags only). */
const str = (value: string | boolean | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

/** Settings from the environment, with every flag of `args` that is bound to a setting on top. */
function settingsWithFlags(
  command: string,
  values: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv,
): RawSettings {
  const raw: RawSettings = settingsFromEnv(env);
  const spec = commandSpec(command) as CommandSpec;
  for (const [flag, option] of Object.entries(spec.options)) {
    const value = str(values[flag]);
    if (option.setting && value !== undefined) raw[option.setting as SettingName] = value;
  }
  return raw;
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
  const { values, positionals } = parse('scan', args);
  if (positionals.length) throw new UsageError(`scan takes no arguments (got ${positionals.join(' ')})`);
  const failOn = str(values['fail-on']);
  if (failOn !== undefined && !SEVERITIES.includes(failOn as Severity)) {
    throw new UsageError(`--fail-on must be one of ${SEVERITIES.join(', ')}`);
  }
  const settings = loadScanSettings(settingsWithFlags('scan', values, io.env));
  const now = parseNow(str(values.now));
  // Secrets are checked before anything starts: a bad key is a configuration error (exit 2).
  const secrets = new EnvSecretSource(io.env);
  secrets.apiKeyNow();
  if (settings.linkBaseUrl) secrets.signingKeysNow();
  else if (secrets.hasSigningKeys()) {
    // A key without a base is most likely a half-done setup: say so rather than drop links silently.
    io.stderr(
      `sentinel: note: findings carry no restore links because ${ENV.linkBaseUrl} is not set (${ENV.linkSigningKey} is)\n`,
    );
  }
  const dryRun = values['dry-run'] === true;
  const topicArn = settings.alertTopicArn;
  if (!dryRun && !topicArn) {
    throw new ConfigError(`${ENV.alertTopicArn} is not set; set it to publish the alert, or pass --dry-run`);
  }

  const stateFlag = str(values.state);
  const stateful = stateLocationText(stateFlag, io.env) !== undefined;
  if (values['allow-clock-skew'] === true && !stateful)
    throw new UsageError(
      '--allow-clock-skew is for scans with --state (or STATE): without state no time is checked',
    );
  if (stateful) {
    const job = { settings, secrets, now, deadline: Date.now() + settings.timeBudgetSeconds * 1000 };
    const failOnMet = await scanWithState(
      {
        flag: stateFlag,
        job,
        dryRun,
        json: values.json === true,
        topicArn,
        failOn: failOn as Severity | undefined,
        allowClockSkew: values['allow-clock-skew'] === true,
      },
      io,
    );
    if (failOnMet) io.stderr(`sentinel: findings at ${failOn} or above (--fail-on ${failOn})\n`);
    return failOnMet ? EXIT.failOn : EXIT.ok;
  }

  const read = await runScanJob({
    settings,
    secrets,
    now,
    deadline: Date.now() + settings.timeBudgetSeconds * 1000,
  });
  // Kept for the report page and the calendar feed (REPORT_DIR / REPORT_BUCKET), see bin/cli-web.ts.
  const reports = reportStoreFromEnv(io.env);
  const { report, alert } = await finishReport({
    report: read,
    ...(reports ? { reports } : {}),
  });

  // In pieces: at a million domains the report is some 100 MB, which one string would hold twice over.
  if (values.json) for (const piece of prettyReportJson(report, '\n')) io.stdout(piece);
  if (dryRun) {
    if (!values.json) {
      const options = {
        timeZone: settings.timeZone,
        ...(settings.accountLabel ? { accountLabel: settings.accountLabel } : {}),
      };
      io.stdout(
        `${renderDigest(alert, options)}\n\n--- SMS (critical only, as a phone receives it) ---\n${smsAsDelivered(renderSms(alert, options))}\n`,
      );
    }
  } else if (topicArn) {
    const sns = io.sns?.() ?? new SNSClient({});
    const outcome = await deliverAlert(alert, settings, sns, topicArn);
    const line = outcome.published
      ? `published alert ${outcome.messageId} to ${topicArn}${outcome.findingsCut ? ` (${outcome.findingsCut} findings cut to fit SNS's 256 KB)` : ''}`
      : `no alert published: ${outcome.reason}`;
    (values.json ? io.stderr : io.stdout)(`${line}\n`);
  }
  if (failOn && reportReaches(report, failOn as Severity)) {
    io.stderr(`sentinel: findings at ${failOn} or above (--fail-on ${failOn})\n`);
    return EXIT.failOn;
  }
  return EXIT.ok;
}

const FAULTS: Record<string, Fault> = {
  '429': { kind: 'status', status: 429, retryAfter: '1' },
  '500': { kind: 'status', status: 500 },
  '503': { kind: 'status', status: 503 },
  hang: { kind: 'hang' },
  malformed: { kind: 'malformed' },
};

async function simulateCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse('simulate', args);
  const port = portNumber(str(values.port), 8080);
  const semantics = str(values['search-semantics']);
  if (semantics !== undefined && !SEARCH_SEMANTICS.includes(semantics as SearchSemantics)) {
    throw new UsageError(`--search-semantics must be one of ${SEARCH_SEMANTICS.join(', ')}`);
  }
  const rateLimit = positiveInt(str(values['rate-limit']), '--rate-limit', 0, 100_000);
  const faults = (str(values.faults) ?? '')
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
  const domains = positiveInt(str(values.domains), '--domains', 500);
  const profile = str(values.portfolio) ?? 'realistic';
  if (!PORTFOLIO_PROFILES.includes(profile as PortfolioProfile)) {
    throw new UsageError(`--portfolio must be one of ${PORTFOLIO_PROFILES.join(', ')}`);
  }
  const seed = positiveInt(str(values.seed), '--seed', 1);
  const latency = str(values.latency);
  const sim = await startSimulator({
    portfolio: generatePortfolio({
      domains,
      seed,
      now: parseNow(str(values.now)),
      profile: profile as PortfolioProfile,
    }),
    apiKey,
    port,
    latencyMs: latency === undefined || latency === '0' ? 0 : positiveInt(latency, '--latency', 0, 60_000),
    maxPerPage: positiveInt(str(values['max-per-page']), '--max-per-page', 100, 10_000),
    ...(semantics ? { searchSemantics: semantics as SearchSemantics } : {}),
    ...(rateLimit ? { rateLimit } : {}),
  });
  // Faults hit the domain list's pages after the first, in the order given.
  for (const fault of faults) {
    sim.injectFault({ fault, match: (r) => r.path === '/v2/domains' && r.query.get('page') !== '1' });
  }
  io.stdout(
    `reseller simulator listening on ${sim.url} (${domains} domains, ${profile} portfolio, seed ${seed})\n` +
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
  const { values } = parse('demo', args);
  const apiKey = `demo-${randomBytes(12).toString('hex')}`;
  const now = parseNow(str(values.now));
  const sim = await startSimulator({
    portfolio: generatePortfolio({
      domains: positiveInt(str(values.domains), '--domains', 60),
      seed: positiveInt(str(values.seed), '--seed', 7),
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
  const { values } = parse('serve', args);
  const port = portNumber(str(values.port), 8787);
  // Checked at start, with the same rules the handler applies per request, so a typo is exit 2 now
  // rather than an error page later.
  loadRestoreSettings(settingsFromEnv(io.env));
  const secrets = new EnvSecretSource(io.env);
  secrets.apiKeyNow();
  secrets.signingKeysNow();
  // Every link (restore, snooze, acknowledge, report, calendar) through the web Lambda's own handler.
  const handler = webAppForServe(io.env, secrets, (message, entry) =>
    io.stderr(`${JSON.stringify({ message, ...entry })}\n`),
  );
  const server = await serveLocally(handler, { port });
  io.stdout(
    `web links listening on ${server.url}: /restore/<domain>, /snooze/<domain>, /acknowledge/<domain>, /report, /calendar.ics\n` +
      `links for it: ${ENV.linkBaseUrl}=${server.url} ${ENV.linkSigningKey}=<the same key> sentinel link <domain>\n`,
  );
  io.onListening?.(server.url);
  await (io.untilStopped ?? new Promise<void>(() => undefined));
  await server.close();
  return EXIT.ok;
}

function domainArgument(positionals: readonly string[], command: string): string {
  const [given, ...extra] = positionals;
  if (!given || extra.length) throw new UsageError(`usage: sentinel ${command} <domain>`);
  // The same normalisation the scan applies before it signs: upper case, a trailing dot and
  // Unicode names are accepted and written the way the link and the registry use them.
  const domain = normalizeDomainName(given);
  const problem = domainNameProblem(domain);
  if (problem) throw new UsageError(`${JSON.stringify(given)} is not a valid domain name: ${problem}`);
  return domain;
}

async function linkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse('link', args);
  const domain = domainArgument(positionals, 'link');
  const keys = new EnvSecretSource(io.env).signingKeysNow();
  const raw = settingsWithFlags('link', values, io.env);
  const ttlDays = parseSetting('linkTtlDays', raw.linkTtlDays);
  const baseUrl = parseSetting('linkBaseUrl', raw.linkBaseUrl) ?? LOCAL_RESTORE_URL;
  if (!raw.linkBaseUrl)
    io.stderr(`sentinel: ${ENV.linkBaseUrl} is not set; linking to sentinel serve at ${baseUrl}\n`);
  io.stdout(`${signRestoreLink({ baseUrl, domain, keys, now: Date.now(), ttlSeconds: ttlDays * 86_400 })}\n`);
  return EXIT.ok;
}

async function restoreCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse('restore', args);
  const domain = domainArgument(positionals, 'restore');
  const settings = loadScanSettings(settingsFromEnv(io.env));
  const apiKey = new EnvSecretSource(io.env).apiKeyNow();
  const trail = auditTrailFor(str(values.state), io.env, io.dynamodb);
  const consentNeeded = needsConsent(domain);
  // Asked before anything is looked up, so a script missing a flag fails at once (exit 2).
  if (values.yes === true && consentNeeded && values.consent !== true)
    throw new UsageError(
      `${domain}: the registry restores a .${tldOf(domain)} name only with the registrant’s consent; pass --consent with --yes once the registrant agreed`,
    );
  if (values.yes !== true && !io.ask)
    throw new UsageError(
      `not asking on a non-interactive terminal; pass --yes${consentNeeded ? ' --consent' : ''} to restore without asking`,
    );
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey,
    timeoutMs: settings.requestTimeoutMs,
  });
  // Look first, as the restore endpoint does: restoring twice may be billed twice.
  const found = await client.findDomain(domain);
  if (!found) throw new SentinelError(`${domain} is not in this reseller account`);
  if (!found.status.includes('quarantine')) {
    throw new SentinelError(
      `${domain} is not in quarantine (already restored?): its status is ${found.status.join(', ') || 'unknown'}`,
    );
  }
  const now = Date.now();
  const deadline = restoreDeadline(found.domain_name, found.date_deleted, now, settings.quarantineDays);
  io.stdout(
    `${domain} is in quarantine; ${deadline.known ? `restore by ${deadline.restore_by.replace('T', ' ').slice(0, 16)} UTC (${deadline.days_to_restore} days left)` : `restore deadline unknown: ${deadline.reason}`}.\n` +
      'A restore is a paid action: the reseller charges for it, and its API does not state the price.\n',
  );
  if (values.yes !== true && io.ask) {
    const typed = await io.ask(`Type the domain name to restore it through ${settings.resellerBaseUrl}: `);
    if (!typedNameMatches(typed, domain)) {
      io.stdout(`not restored: the name typed is not ${domain}\n`);
      return EXIT.ok;
    }
    if (consentNeeded && values.consent !== true) {
      const agreed = await io.ask(
        `Did the registrant (the holder when it was cancelled) agree to this restore? The registry restores a .${tldOf(domain)} name only with the registrant’s consent. [y/N] `,
      );
      if (!/^y(es)?$/i.test(agreed.trim())) {
        io.stdout('not restored: the registrant’s consent was not confirmed\n');
        return EXIT.ok;
      }
    }
  }
  const keep = async (outcome: string) => {
    if (!trail) return;
    await trail.recordAudit(
      auditEntry({ at: now, domain, outcome, status: 0, via: 'cli', userAgent: 'sentinel restore' }),
    );
  };
  let answer: Awaited<ReturnType<ResellerClient['restoreDomain']>>;
  try {
    answer = await client.restoreDomain(found.domain_name);
  } catch (error) {
    await keep(`failed: ${(error as Error).name}`);
    throw error;
  }
  if (answer.status !== 204) {
    // Not the documented success (a 202, a 200 carrying an error): only the domain's status tells.
    const after = await client.findDomain(domain);
    if (!after || after.status.includes('quarantine')) {
      await keep('not_restored');
      throw new SentinelError(
        `${domain} was NOT restored: the reseller answered the restore with HTTP ${answer.status}, not the documented 204, and ${after ? 'the domain is still in quarantine' : 'the domain is no longer found'}`,
      );
    }
    await keep('restored');
    io.stdout(`restored ${domain} (confirmed by a fresh look-up)\n`);
    return EXIT.ok;
  }
  await keep('restored');
  io.stdout(`restored ${domain}\n`);
  return EXIT.ok;
}

/** `sentinel audit [--json] [--state …]`: the restore attempts the state store keeps, newest first. */
async function auditCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse('audit', args);
  if (positionals.length) throw new UsageError(`audit takes no arguments (got ${positionals.join(' ')})`);
  const trail = auditTrailFor(str(values.state), io.env, io.dynamodb);
  if (!trail)
    throw new ConfigError(
      `audit reads the trail from the state store the scans and links use: pass --state PATH|dynamodb:TABLE or set ${ENV.state}`,
    );
  const entries = await trail.listAudit();
  if (values.json === true) {
    io.stdout(`${JSON.stringify({ location: trail.location, entries }, null, 2)}\n`);
    return EXIT.ok;
  }
  if (entries.length === 0) {
    io.stdout(`no restore attempts in ${trail.location}\n`);
    return EXIT.ok;
  }
  io.stdout(
    `${entries.length} restore attempt${entries.length === 1 ? '' : 's'} in ${trail.location}, newest first:\n${entries.map(auditLine).join('\n')}\n`,
  );
  return EXIT.ok;
}

/** `sentinel snooze <domain> [--days N]`: the snooze link's POST, from the command line (bin/cli-web.ts). */
async function snoozeCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse('snooze', args);
  const domain = domainArgument(positionals, 'snooze');
  const days = positiveInt(str(values.days), '--days', DEFAULT_SNOOZE_DAYS, MAX_SNOOZE_DAYS);
  await silenceCommand({ action: 'snooze', domain, days, stateFlag: str(values.state) }, io);
  return EXIT.ok;
}

/** `sentinel ack <domain>`: the acknowledge link's POST, from the command line (bin/cli-web.ts). */
async function ackCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse('ack', args);
  const domain = domainArgument(positionals, 'ack');
  await silenceCommand({ action: 'acknowledge', domain, days: 0, stateFlag: str(values.state) }, io);
  return EXIT.ok;
}
