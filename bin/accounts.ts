import { EnvSecretSource } from '../functions/adapters/secrets';
import { ConfigError } from '../functions/core/base/errors';
import { checkApiKey, type SecretSource } from '../functions/core/links/secrets';
import { ACCOUNT_SCAN_SETTINGS, type AccountScanInput } from '../functions/core/scan/accounts';
import type { AccountSettings } from '../lib/config';

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

/** An account of the file as the scan and the web app take it: its name and its own settings only. */
export function accountEntryOf(account: AccountSettings): Pick<AccountScanInput, 'account' | 'settings'> {
  const settings: Record<string, string | number> = {};
  for (const name of ACCOUNT_SCAN_SETTINGS) {
    const value = account[name];
    // Policies are an object in the file and JSON text in the scan's settings, as in POLICIES.
    if (value !== undefined) settings[name] = typeof value === 'object' ? JSON.stringify(value) : value;
  }
  return { account: account.name, settings };
}
