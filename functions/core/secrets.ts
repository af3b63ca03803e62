import { ConfigError } from './errors';
import type { SigningKey } from './links';

/**
 * Rules for secret values, wherever they come from (environment, SSM). Errors name where the value
 * came from and never the value itself.
 */

/**
 * Why an API key cannot be sent as `Authorization: Bearer <key>`, or null when it can. A key with
 * CR, LF or other controls would be refused by fetch with the whole header, key included, in its
 * error message; one outside Latin-1 cannot be a header value at all.
 */
export function apiKeyProblem(key: string): string | null {
  if (key.length === 0) return 'is empty';
  if (/\p{Cc}/u.test(key)) return 'holds a control character (CR, LF, tab, …), not allowed in an HTTP header';
  if (/[^\u0020-\u00ff]/.test(key)) return 'holds a character outside Latin-1, not allowed in an HTTP header';
  if (/\s/.test(key)) return 'holds whitespace; an API key is one token';
  return null;
}

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
