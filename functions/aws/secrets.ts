import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { ConfigError, SecretError } from '../core/base/errors';
import { parseSigningKeys, type SigningKey } from '../core/links/links';
import { checkApiKey, type SecretSource } from '../core/links/secrets';
import { ENV } from '../core/scan/config';

export type { SecretSource } from '../core/links/secrets';

/** How long a secret is kept across warm invocations: long enough to spare SSM, short enough for a rotation to land. */
export const SECRET_CACHE_SECONDS = 300;

/**
 * Secrets from SSM Parameter Store SecureStrings (the Lambdas): the parameter names come from
 * RESELLER_API_KEY_PARAMETER and LINK_SIGNING_KEY_PARAMETER, values are decrypted and cached for a
 * few minutes across warm invocations (Powertools Parameters does the caching). Errors name the
 * parameter, never a value.
 */
export class SsmSecretSource implements SecretSource {
  private readonly provider: SSMProvider;

  constructor(
    client: SSMClient,
    private readonly env: NodeJS.ProcessEnv,
    private readonly maxAgeSeconds = SECRET_CACHE_SECONDS,
  ) {
    this.provider = new SSMProvider({ awsSdkV3Client: client });
  }

  async apiKey(): Promise<string> {
    const name = this.parameterName(ENV.apiKeyParameter);
    return checkApiKey(await this.read(name), `SSM parameter ${name}`);
  }

  async signingKeys(): Promise<readonly SigningKey[]> {
    const name = this.parameterName(ENV.linkSigningKeyParameter);
    return parseSigningKeys(await this.read(name), `SSM parameter ${name}`);
  }

  hasSigningKeys(): boolean {
    return Boolean(this.env[ENV.linkSigningKeyParameter]?.trim());
  }

  /**
   * The heartbeat URL from the SecureString HEARTBEAT_URL_PARAMETER names (docs/deploy.md), or
   * undefined when the stack set none. Cached like the other secrets.
   */
  async heartbeatUrl(): Promise<string | undefined> {
    const name = this.env[ENV.heartbeatUrlParameter]?.trim();
    return name ? this.read(name) : undefined;
  }

  private parameterName(variable: string): string {
    const name = this.env[variable]?.trim();
    if (!name)
      throw new ConfigError(`${variable} is not set (the stack sets it to the SSM parameter's name)`);
    return name;
  }

  private async read(name: string): Promise<string> {
    let value: unknown;
    try {
      value = await this.provider.get(name, { decrypt: true, maxAge: this.maxAgeSeconds });
    } catch (error) {
      const cause = (error as { cause?: { name?: string } }).cause;
      const reason = cause?.name ?? (error as Error).name;
      throw new SecretError(`could not read SSM parameter ${name} (${reason})`, { cause: error });
    }
    if (typeof value !== 'string' || value.trim() === '')
      throw new SecretError(`SSM parameter ${name} is empty`);
    return value;
  }
}

/** Secrets from environment variables (the command line and `serve`): RESELLER_API_KEY and LINK_SIGNING_KEY. */
export class EnvSecretSource implements SecretSource {
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  async apiKey(): Promise<string> {
    return this.apiKeyNow();
  }

  /** The same check, synchronously, so the command line can refuse a bad key before it starts anything. */
  apiKeyNow(): string {
    const value = this.env[ENV.resellerApiKey];
    if (value === undefined || value.trim() === '') {
      throw new ConfigError(
        `${ENV.resellerApiKey} is not set; export the reseller API key (see README: "On a real account")`,
      );
    }
    return checkApiKey(value, ENV.resellerApiKey);
  }

  async signingKeys(): Promise<readonly SigningKey[]> {
    return this.signingKeysNow();
  }

  signingKeysNow(): readonly SigningKey[] {
    const value = this.env[ENV.linkSigningKey];
    if (value === undefined || value.trim() === '') {
      throw new ConfigError(
        `${ENV.linkSigningKey} is not set; set it to the key links are signed with (the same key for scan, link and serve; generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")`,
      );
    }
    return parseSigningKeys(value, ENV.linkSigningKey);
  }

  hasSigningKeys(): boolean {
    return Boolean(this.env[ENV.linkSigningKey]?.trim());
  }
}
