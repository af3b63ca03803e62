import { EnvSecretSource } from '../../functions/aws/secrets';
import type { SecretSource } from '../../functions/core/links/secrets';
import { StateError } from '../../functions/core/memory/state';
import { accountRawSettings } from '../../functions/core/scan/accounts';
import { ENV, loadRestoreSettings, settingsFromEnv } from '../../functions/core/scan/config';
import { accountWebApp, createAccountsWebApp, retiredRoutes } from '../../functions/handlers/accounts-web';
import type { ProxyHandler } from '../../functions/handlers/http-answer';
import { createWebApp } from '../../functions/handlers/web-app';
import { serveLocally } from '../../functions/local/local-server';
import { checkRegularOrAbsent } from '../../functions/local/regular-file';
import {
  dynamoDbClientFromEnv,
  openStateStore,
  type StateLocation,
} from '../../functions/local/state-location';
import { StateActionStore } from '../../functions/use-cases/state-action-store';
import { type AccountSettings, readAccountsFile } from '../../lib/config';
import { accountKeySource } from '../accounts';
import { accountEntryOf, flagsOf, noPositionals, portNumber, str } from '../args';
import { type CliIo, EXIT, type ParsedArgs } from '../command';
import { untilAborted } from '../interrupt';
import {
  accountStateLocation,
  accountStatePath,
  accountStoresFor,
  actionStoreFor,
  auditTrailFor,
  reportStoreFor,
  stateLocationOf,
} from '../local-stores';
import { LOCAL_LINK_PORT, serve } from './index';

/** Where the web links find what the command line keeps: the same rules `scan` stores by. */
export interface LinksPlace {
  readonly env: NodeJS.ProcessEnv;
  readonly secrets: SecretSource;
  readonly stateFlag?: string | undefined;
  readonly cwd?: string | undefined;
  readonly log: (message: string, entry: Record<string, unknown>) => void;
}

/**
 * The web Lambda's own app (restore, snooze, acknowledge, report page, calendar feed) with the
 * command line's stores: restore attempts go to the audit trail of the same state store.
 */
export function webAppForServe(place: LinksPlace): ProxyHandler {
  return createWebApp({
    settings: () => settingsFromEnv(place.env),
    secrets: place.secrets,
    actions: () => actionStoreFor(place.stateFlag, place.env, undefined, flagsOf(serve)),
    reports: () => reportStoreFor({ env: place.env, stateFlag: place.stateFlag, cwd: place.cwd }),
    audit: () => auditTrailFor(place.stateFlag, place.env, undefined, flagsOf(serve)),
    log: place.log,
  });
}

/**
 * `serve --accounts FILE`: each account's links under /accounts/<name>/ with the stores `scan
 * --accounts` keeps them in (its own state file or scope, its own report folder), and the overview.
 * The deployment's own routes answer 410, as the web function of a deployment of accounts does
 * (retiredRoutes): `scan --accounts` keeps nothing there, and a rehearsal that served them with the
 * deployment's own key and state would show links working that fail once deployed.
 */
export function accountsAppForServe(place: LinksPlace, accounts: readonly AccountSettings[]): ProxyHandler {
  const byName = new Map(accounts.map((a) => [a.name, a]));
  const entries = accounts.map(accountEntryOf);
  const stores = accountStoresFor({ env: place.env, stateFlag: place.stateFlag, cwd: place.cwd });
  const location = stateLocationOf(place.stateFlag, place.env);
  const dynamodb = () => dynamoDbClientFromEnv(place.env);
  const stateOf = (scope: string, name: string) =>
    location ? openStateStore(accountStateLocation(location, name), scope, dynamodb) : null;
  return createAccountsWebApp({
    directory: async () => ({ accounts: entries }),
    appFor: (entry) =>
      accountWebApp(entry, {
        env: place.env,
        secrets: (e) => accountKeySource(place.env, byName.get(e.account) as AccountSettings),
        actions: (scope, secrets) => {
          const store = stateOf(scope, entry.account);
          return store ? new StateActionStore(store, scope, { apiKey: () => secrets.apiKey() }) : null;
        },
        reports: (name) => stores?.reports(name) ?? null,
        audit: (scope) =>
          location ? openStateStore(accountStateLocation(location, entry.account), scope, dynamodb) : null,
        log: place.log,
      }),
    summaries: () => stores?.summaries ?? null,
    signingKeys: () => place.secrets.signingKeys(),
    fallback: retiredRoutes(place.log),
    log: place.log,
  });
}

/** One JSON line per request on stderr, as the Lambda logs it. */
export const logTo =
  (io: CliIo) =>
  (message: string, entry: Record<string, unknown>): void =>
    io.stderr(`${JSON.stringify({ message, ...entry })}\n`);

/**
 * A state file the links would read that is a directory, a pipe or a device is refused at start, as
 * `scan` refuses it, not on the first click (which answered 503).
 */
async function checkStateFiles(location: StateLocation | undefined, accounts: readonly string[] | undefined) {
  if (location?.kind !== 'file') return;
  const paths = accounts ? accounts.map((name) => accountStatePath(location.path, name)) : [location.path];
  for (const path of paths)
    await checkRegularOrAbsent(path).catch((error: Error) => {
      throw new StateError(`cannot read the state file ${path}: ${error.message}`, { cause: error });
    });
}

/** `sentinel serve`: every link on a local server until stopped. */
export async function runServe(args: ParsedArgs, io: CliIo): Promise<number> {
  noPositionals(serve, args);
  const port = portNumber(str(args.values.port), LOCAL_LINK_PORT);
  const baseUrl = str(args.values['base-url']);
  const env = baseUrl === undefined ? io.env : { ...io.env, [ENV.resellerBaseUrl]: baseUrl };
  // Checked at start, with the rules the handler applies per request: a typo is exit 2 now, not an error page later.
  const secrets = new EnvSecretSource(env);
  const accountsFile = str(args.values.accounts);
  const accounts = accountsFile ? readAccountsFile(accountsFile, io.cwd) : undefined;
  if (accounts)
    // Each account's reseller, checked as its links will read it; its key when it is used.
    for (const account of accounts)
      loadRestoreSettings(accountRawSettings(settingsFromEnv(env), accountEntryOf(account)), flagsOf(serve));
  else {
    loadRestoreSettings(settingsFromEnv(env), flagsOf(serve));
    secrets.apiKeyNow();
  }
  secrets.signingKeysNow();
  const stateFlag = str(args.values.state);
  await checkStateFiles(
    stateLocationOf(stateFlag, env),
    accounts?.map((account) => account.name),
  );
  const place = { env, secrets, stateFlag, cwd: io.cwd, log: logTo(io) };
  const app = accounts ? accountsAppForServe(place, accounts) : webAppForServe(place);
  const server = await serveLocally(app, { port });
  // As `simulate`: stdout holds only what a shell takes as it is.
  const routes = accounts
    ? "/accounts, and under /accounts/<name>/ each account's finding/<domain>, restore/<domain>, snooze/<domain>, acknowledge/<domain>, report, report.json, calendar.ics; the deployment's own routes (/restore/<domain>, /report, …) answer 410, as on AWS"
    : '/finding/<domain>, /restore/<domain>, /snooze/<domain>, /acknowledge/<domain>, /report, /report.json, /calendar.ics';
  io.stderr(
    `web links listening on ${server.url}: ${routes}; Ctrl-C stops it\n` +
      `in the terminal you make links in (sentinel link, or a scan), set the same ${ENV.linkSigningKey} and paste:\n`,
  );
  io.stdout(`export ${ENV.linkBaseUrl}=${server.url}\n`);
  io.onListening?.(server.url);
  await untilAborted(io.signal);
  await server.close();
  return EXIT.ok;
}
