import { randomBytes } from 'node:crypto';
import { ENV } from '../../functions/core/scan/config';
import {
  generatePortfolio,
  PORTFOLIO_PROFILES,
  type PortfolioProfile,
} from '../../functions/simulator/portfolio';
import {
  DEFAULT_REGISTRIES,
  type RegistrySimulator,
  registryScenarios,
  startRegistrySimulator,
} from '../../functions/simulator/registry';
import { SEARCH_SEMANTICS } from '../../functions/simulator/search';
import { type Fault, startSimulator } from '../../functions/simulator/server';
import { readAccountsFile } from '../../lib/config';
import { noPositionals, oneOf, parseNow, portNumber, positiveInt, str, wholeNumber } from '../args';
import { type CliIo, EXIT, type ParsedArgs, UsageError } from '../command';
import { untilAborted } from '../interrupt';
import { simulate } from './index';

const FAULTS: Record<string, Fault> = {
  '429': { kind: 'status', status: 429, retryAfter: '1' },
  '500': { kind: 'status', status: 500 },
  '503': { kind: 'status', status: 503 },
  hang: { kind: 'hang' },
  malformed: { kind: 'malformed' },
};

function faultsOf(text: string | undefined): Fault[] {
  const names = (text ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  // `--faults ,` would serve a well-behaved reseller to a person who asked for a faulty one.
  if (text !== undefined && !names.length)
    throw new UsageError(
      `--faults names no fault; use ${Object.keys(FAULTS).join(', ')}, separated by commas`,
    );
  return names.map((name) => {
    const fault = FAULTS[name];
    if (!fault)
      throw new UsageError(
        `--faults: unknown fault ${JSON.stringify(name)}; use ${Object.keys(FAULTS).join(', ')}`,
      );
    return fault;
  });
}

/** `sentinel simulate`: the simulator until stopped. */
export async function runSimulator(args: ParsedArgs, io: CliIo): Promise<number> {
  noPositionals(simulate, args);
  const { values } = args;
  const port = portNumber(str(values.port), 8080);
  const semantics = oneOf(str(values['search-semantics']), '--search-semantics', SEARCH_SEMANTICS);
  const rateLimit = positiveInt(str(values['rate-limit']), '--rate-limit', 0, 100_000);
  const faults = faultsOf(str(values.faults));
  const keyFromEnv = io.env[ENV.resellerApiKey]?.trim();
  const apiKey = keyFromEnv || `sim-${randomBytes(12).toString('hex')}`;
  const domains = positiveInt(str(values.domains), '--domains', 500);
  const profile = oneOf(str(values.portfolio), '--portfolio', PORTFOLIO_PROFILES) ?? 'realistic';
  const seed = positiveInt(str(values.seed), '--seed', 1);
  const now = parseNow(str(values.now));
  const portfolio = (s: number) =>
    generatePortfolio({ domains, seed: s, now, profile: profile as PortfolioProfile });
  const accountsFile = str(values.accounts);
  const accounts = (accountsFile ? readAccountsFile(accountsFile, io.cwd) : []).map((account, index) => {
    const own = account.apiKeyEnv ? io.env[account.apiKeyEnv]?.trim() : undefined;
    return {
      account,
      apiKey: own || `sim-${randomBytes(12).toString('hex')}`,
      madeUp: !own,
      portfolio: portfolio(seed + index + 1),
    };
  });
  sharedKeyCheck(accounts, keyFromEnv);
  const primary = portfolio(seed);
  let registry: RegistrySimulator | undefined;
  const sim = await startSimulator({
    portfolio: primary,
    rdapBootstrap: () => registry?.bootstrap,
    accounts: accounts.map(({ apiKey: key, portfolio: p }) => ({ apiKey: key, portfolio: p })),
    apiKey,
    port,
    latencyMs: wholeNumber(str(values.latency), '--latency', 0, 0, 60_000),
    maxPerPage: positiveInt(str(values['max-per-page']), '--max-per-page', 100, 10_000),
    ...(semantics ? { searchSemantics: semantics } : {}),
    ...(rateLimit ? { rateLimit } : {}),
  });
  // The registry side answers from the records as they are now, in every account served.
  const lookup = (name: string) =>
    sim.domain(name) ?? accounts.map((a) => sim.account(a.apiKey)?.domain(name)).find(Boolean);
  registry = await startRegistrySimulator({
    lookup,
    scenarios: registryScenarios(primary, now).scenarios,
    now: () => now,
  });
  // Faults hit the domain list's pages after the first, in the order given.
  for (const fault of faults) {
    sim.injectFault({ fault, match: (r) => r.path === '/v2/domains' && r.query.get('page') !== '1' });
  }
  // stdout holds only lines a shell takes as they are; what describes them goes to stderr. A key
  // that came from the environment is never echoed: it may be a real one.
  io.stderr(
    `reseller simulator listening on ${sim.url} (${domains} domains, ${profile} portfolio, seed ${seed}); Ctrl-C stops it\n` +
      (keyFromEnv
        ? `in the terminal you scan from, set ${ENV.resellerApiKey} to the key this one has, and paste:\n`
        : 'in the terminal you scan from, paste:\n'),
  );
  io.stdout(
    `export ${ENV.resellerBaseUrl}=${sim.url}\n` +
      `export ${ENV.rdapBootstrapUrl}=${sim.url}/rdap/dns.json\n` +
      (keyFromEnv ? '' : `export ${ENV.resellerApiKey}=${apiKey}\n`) +
      accounts
        .filter((a) => a.madeUp && a.account.apiKeyEnv)
        .map((a) => `export ${a.account.apiKeyEnv}=${a.apiKey}\n`)
        .join(''),
  );
  for (const { account } of accounts.filter((a) => !a.account.apiKeyEnv))
    io.stderr(
      `sentinel: account ${account.name} has no apiKeyEnv: it is served, but scan --accounts cannot read it\n`,
    );
  io.stderr(`registry side (RDAP) for scan --registry-check: ${registryLayout()}\n`);
  io.onListening?.(sim.url);
  await untilAborted(io.signal);
  await Promise.all([sim.close(), registry.close()]);
  return EXIT.ok;
}

/**
 * Refuses two accounts given one key (or an account given RESELLER_API_KEY's): the simulator tells
 * its accounts apart by their keys. Said of the variables, as bad configuration; the key is never shown.
 */
function sharedKeyCheck(
  accounts: ReadonlyArray<{ account: { name: string; apiKeyEnv?: string | undefined }; apiKey: string }>,
  primaryKey: string | undefined,
): void {
  const holders = new Map<string, string>(primaryKey ? [[primaryKey, ENV.resellerApiKey]] : []);
  for (const { account, apiKey } of accounts) {
    const words = `${account.apiKeyEnv} (account ${account.name})`;
    const earlier = holders.get(apiKey);
    if (earlier !== undefined)
      throw new UsageError(
        `${words} holds the same key as ${earlier}; the simulator tells its accounts apart by their keys: give each its own`,
      );
    holders.set(apiKey, words);
  }
}

/** The registry side in one line: which TLDs have RDAP, which server is down, which TLDs have none. */
function registryLayout(): string {
  const served = DEFAULT_REGISTRIES.filter((r) => !r.failsWith).flatMap((r) => r.tlds.map((t) => `.${t}`));
  const down = DEFAULT_REGISTRIES.filter((r) => r.failsWith).flatMap((r) =>
    r.tlds.map((t) => `.${t} (answers ${r.failsWith})`),
  );
  const noExpiry = DEFAULT_REGISTRIES.filter((r) => !r.publishesExpiry).flatMap((r) =>
    r.tlds.map((t) => `.${t}`),
  );
  return `${served.join(' ')} answer (${noExpiry.join(' ')} without an expiry date); ${down.join(', ')} is down; .eu and .de have no RDAP`;
}
