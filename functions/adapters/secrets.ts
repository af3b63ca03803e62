import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { SecretError } from '../core/errors';

/** How long a secret is kept across warm invocations: long enough to spare SSM, short enough for a rotation to land. */
export const SECRET_CACHE_SECONDS = 300;

/** Reads one named secret. */
export interface SecretSource {
  get(name: string): Promise<string>;
}

/**
 * Secrets from SSM Parameter Store SecureStrings, decrypted, cached for a few minutes across warm
 * invocations (Powertools Parameters does the caching). Errors name the parameter, never a value.
 */
export class SsmSecretSource implements SecretSource {
  private readonly provider: SSMProvider;

  constructor(
    client: SSMClient,
    private readonly maxAgeSeconds = SECRET_CACHE_SECONDS,
  ) {
    this.provider = new SSMProvider({ awsSdkV3Client: client });
  }

  async get(name: string): Promise<string> {
    let value: unknown;
    try {
      value = await this.provider.get(name, { decrypt: true, maxAge: this.maxAgeSeconds });
    } catch (error) {
      const cause = (error as { cause?: { name?: string } }).cause;
      const reason = cause?.name ?? (error as Error).name;
      throw new SecretError(`could not read SSM parameter ${name} (${reason})`, { cause: error });
    }
    if (typeof value !== 'string' || value.trim() === '') {
      throw new SecretError(`SSM parameter ${name} is empty`);
    }
    return value.trim();
  }
}

/** Secrets from environment variables, for the command-line tool and `serve`. */
export class EnvSecretSource implements SecretSource {
  constructor(private readonly env: NodeJS.ProcessEnv) {}
  async get(name: string): Promise<string> {
    const value = this.env[name]?.trim();
    if (!value) throw new SecretError(`${name} is not set`);
    return value;
  }
}
