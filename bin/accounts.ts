import { EnvSecretSource } from '../functions/aws/secrets';
import { ConfigError, withKeySource } from '../functions/core/base/errors';
import { closest } from '../functions/core/base/suggest';
import { checkApiKey, type SecretSource } from '../functions/core/links/secrets';
import { type AccountSettings, readAccountsFile } from '../lib/config';
import { type ParsedArgs, UsageError } from './command';

/**
 * The accounts of an accounts file on the command line: each account's key from the variable its
 * `apiKeyEnv` names, and its own settings as the scan and the web app take them.
 */

/** The account's key, from the variable its `apiKeyEnv` names; errors name the variable and the account. */
export function accountKeySource(env: NodeJS.ProcessEnv, account: AccountSettings): SecretSource {
  const base = new EnvSecretSource(env);
  return {
    apiKey: async () => {
      const variable = account.apiKeyEnv;
      if (!variable)
        throw new ConfigError(
          `account ${account.name} has no apiKeyEnv: name the variable that holds its API key in the accounts file`,
        );
      const value = env[variable];
      if (value === undefined || value.trim() === '')
        throw new ConfigError(`${variable} is not set; export account ${account.name}'s API key in it`);
      return checkApiKey(value, variable);
    },
    signingKeys: () => base.signingKeys(),
    hasSigningKeys: () => base.hasSigningKeys(),
  };
}

/**
 * What refuses an account whose key (as sent: trimmed) at the same reseller is an earlier
 * account's: it would read and alert that account's domains again, under another name and with a
 * memory of its own (a snooze in one would not quiet the other). `baseUrlOf` gives each account's
 * reseller; the message names the variables, never the key.
 */
export function sameKeyCheck(
  accounts: readonly AccountSettings[],
  env: NodeJS.ProcessEnv,
  baseUrlOf: (account: AccountSettings) => string | undefined,
  file: string,
): (name: string) => void {
  const first = new Map<string, AccountSettings>();
  const twins = new Map<string, { readonly earlier: AccountSettings; readonly baseUrl: string }>();
  for (const account of accounts) {
    const key = account.apiKeyEnv === undefined ? undefined : env[account.apiKeyEnv]?.trim();
    const baseUrl = baseUrlOf(account);
    if (!key || baseUrl === undefined) continue;
    // JSON of the pair: no reseller URL and key can run together into another pair's. The URL as
    // a request goes to it: a host's letter case and its scheme's default port name no other reseller.
    const pair = JSON.stringify([sameReseller(baseUrl), key]);
    const earlier = first.get(pair);
    if (earlier === undefined) first.set(pair, account);
    else twins.set(account.name, { earlier, baseUrl });
  }
  return (name) => {
    const twin = twins.get(name);
    if (twin === undefined) return;
    const { earlier, baseUrl } = twin;
    const account = accounts.find((a) => a.name === name) as AccountSettings;
    throw new ConfigError(
      `${account.apiKeyEnv} holds the same API key as ${earlier.apiKeyEnv} of account ${earlier.name}, at the same reseller (${baseUrl}): account ${name} would scan and alert ${earlier.name}'s domains again; give each account its own key, or remove one of them from ${file}`,
    );
  };
}

/** A reseller base URL as its requests reach it (host in lower case, no default port, no last slash). */
function sameReseller(baseUrl: string): string {
  try {
    return new URL(baseUrl).href.replace(/\/+$/, '');
  } catch {
    return baseUrl;
  }
}

/** Where an account's key comes from, as a refused key's error names it (see withKeySource). */
export const accountKeyWords = (account: AccountSettings): string =>
  `${account.apiKeyEnv} (the key of account ${account.name})`;

/**
 * `work` of a command acting for `named` (or for the deployment's own key without it): a refused
 * key names the account's own variable, the key that was sent, not RESELLER_API_KEY.
 */
export async function withAccountKey<T>(named: NamedAccount | undefined, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw named ? withKeySource(error, accountKeyWords(named.account)) : error;
  }
}

/** The accounts of the file, or the one `--account` names (a name it lacks is a usage error). */
export function selectedAccounts(
  file: string,
  only: string | undefined,
  cwd: string | undefined,
): AccountSettings[] {
  const all = readAccountsFile(file, cwd);
  const accounts = only === undefined ? all : all.filter((a) => a.name === only);
  if (accounts.length === 0) {
    const near = closest(
      only ?? '',
      all.map((a) => a.name),
    );
    throw new UsageError(
      `--account ${only}: no account of that name in ${file}; ${near ? `did you mean ${near}?` : `its accounts: ${all.map((a) => a.name).join(', ')}`}`,
    );
  }
  return accounts;
}

/** The account of an accounts file a command that takes a state acts for, and the file as it was given. */
export interface NamedAccount {
  readonly account: AccountSettings;
  readonly file: string;
}

/**
 * `--account NAME --accounts FILE` of a command that takes a state (state, snooze, ack, audit,
 * restore): the account, read from the file as `scan --accounts` reads it; undefined when neither
 * is given. One without the other is a usage error: the name alone says nothing of the account's
 * key or reseller, and the file alone names no account to act for.
 */
export function namedAccountOf(args: ParsedArgs, cwd: string | undefined): NamedAccount | undefined {
  const name = args.values.account;
  const file = args.values.accounts;
  if (name === undefined && file === undefined) return undefined;
  if (typeof file !== 'string')
    throw new UsageError(
      `--account ${String(name)} goes with --accounts FILE: the accounts file that names the account (docs/accounts.md)`,
    );
  if (typeof name !== 'string')
    throw new UsageError(
      `--accounts ${file}: name the account to act for with --account NAME (one account at a time)`,
    );
  const [account] = selectedAccounts(file, name, cwd);
  return { account: account as AccountSettings, file };
}
