import { ConfigError } from '../base/errors';
import { apiKeyProblem } from '../reseller/api-key';
import type { SigningKey } from './links';

/**
 * Rules for secret values, wherever they come from (environment, SSM). Errors name where the value
 * came from and never the value itself.
 */

/**
 * Checks an API key read from `source` (a variable or parameter name); surrounding whitespace, such
 * as the newline a key file ends with, is dropped first.
 */
export function checkApiKey(value: string, source: string): string {
  const key = value.trim();
  const problem = apiKeyProblem(key);
  if (problem) throw new ConfigError(`${source} ${problem}; the value is not shown`);
  return key;
}

/** Where the two secrets come from: the environment on a laptop, SSM Parameter Store in Lambda. */
export interface SecretSource {
  /** The reseller API key, checked ({@link checkApiKey}). */
  apiKey(): Promise<string>;
  /** The link signing keys, the first signs; throws ConfigError/SecretError when not configured. */
  signingKeys(): Promise<readonly SigningKey[]>;
  /** True when signing keys are configured at all (links are optional for a scan). */
  hasSigningKeys(): boolean;
}
