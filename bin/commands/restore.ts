import { EnvSecretSource } from '../../functions/adapters/secrets';
import { ENV } from '../../functions/core/config';
import { SentinelError } from '../../functions/core/errors';
import { ResellerClient } from '../../functions/core/reseller/client';
import type { Domain } from '../../functions/core/schemas';
import { domainArgument, loadSettings } from '../args';
import { BASE_URL_OPTION, type CliIo, type Command, EXIT, UsageError } from '../command';

export const restore: Command = {
  name: 'restore',
  args: '<domain>',
  summary: 'restore a domain from quarantine now, through the reseller API',
  about:
    'Looks the domain up first (restoring twice may be billed twice), asks before it restores unless --yes, ' +
    'and confirms an undocumented answer with a fresh look-up.',
  options: { yes: { type: 'boolean', doc: 'do not ask first' }, 'base-url': BASE_URL_OPTION },
  env: [ENV.resellerApiKey, ENV.requestTimeoutMs],
  run: async (args, io) => {
    const domain = domainArgument(restore, args);
    const settings = loadSettings(restore, args, io.env, ['resellerBaseUrl', 'requestTimeoutMs']);
    const client = new ResellerClient({
      baseUrl: settings.resellerBaseUrl,
      apiKey: new EnvSecretSource(io.env).apiKeyNow(),
      timeoutMs: settings.requestTimeoutMs,
    });
    const found = await findInQuarantine(client, domain);
    if (
      args.values.yes !== true &&
      !(await confirmed(io, `Restore ${domain} from quarantine through ${settings.resellerBaseUrl}? [y/N] `))
    ) {
      io.stdout('not restored\n');
      return EXIT.ok;
    }
    io.stdout(`${await restoreAndConfirm(client, found)}\n`);
    return EXIT.ok;
  },
};

/** Look first, as the restore endpoint does: restoring twice may be billed twice. */
async function findInQuarantine(client: ResellerClient, domain: string): Promise<Domain> {
  const found = await client.findDomain(domain);
  if (!found) throw new SentinelError(`${domain} is not in this reseller account`);
  if (!found.status.includes('quarantine')) {
    throw new SentinelError(
      `${domain} is not in quarantine (already restored?): its status is ${found.status.join(', ') || 'unknown'}`,
    );
  }
  return found;
}

async function confirmed(io: CliIo, question: string): Promise<boolean> {
  if (!io.ask)
    throw new UsageError('not asking on a non-interactive terminal; pass --yes to restore without asking');
  return /^y(es)?$/i.test((await io.ask(question)).trim());
}

/** The restore call; an answer other than the documented 204 is believed only after a fresh look-up. */
async function restoreAndConfirm(client: ResellerClient, found: Domain): Promise<string> {
  const domain = found.domain_name;
  const answer = await client.restoreDomain(domain);
  if (answer.status === 204) return `restored ${domain}`;
  const now = await client.findDomain(domain);
  if (!now || now.status.includes('quarantine')) {
    throw new SentinelError(
      `${domain} was NOT restored: the reseller answered the restore with HTTP ${answer.status}, not the documented 204, and ${now ? 'the domain is still in quarantine' : 'the domain is no longer found'}`,
    );
  }
  return `restored ${domain} (confirmed by a fresh look-up)`;
}
