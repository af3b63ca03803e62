import { resolve } from 'node:path';
import { ConfigError } from '../functions/core/base/errors';
import { ENV, type RawSettings } from '../functions/core/scan/config';
import { POLICIES_MAX_CHARS, parsePoliciesText } from '../functions/core/scan/policies';
import { MAX_CONFIG_FILE_BYTES, readRegularFileSync } from '../functions/local/regular-file';
import type { CliIo } from './command';

/**
 * `scan --policies FILE` (POLICIES_FILE): the file read and checked here, where its name can be
 * said, then carried as the `policies` setting (POLICIES) every scan reads, the Lambda's included.
 */
export function withPoliciesFile(raw: RawSettings, io: Pick<CliIo, 'cwd'>): RawSettings {
  const path = raw.policiesFile?.trim();
  if (!path) return raw;
  const where = `policies file ${path}`;
  let text: string;
  try {
    text = readRegularFileSync(resolve(io.cwd ?? process.cwd(), path), MAX_CONFIG_FILE_BYTES);
  } catch (error) {
    throw new ConfigError(
      `${where} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); ${ENV.policiesFile} and --policies name a JSON file (docs/policies.md)`,
      { cause: error },
    );
  }
  parsePoliciesText(text, where);
  // Said here, of the file, rather than later of POLICIES, a setting the reader never wrote.
  const length = text.trim().length;
  if (length > POLICIES_MAX_CHARS)
    throw new ConfigError(
      `${where} is ${length} characters, more than the ${POLICIES_MAX_CHARS} a scan takes (${ENV.policies}); use fewer or shorter patterns (a tag matches many domains at once)`,
    );
  return { ...raw, policies: text };
}
