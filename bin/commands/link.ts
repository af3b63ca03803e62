import { EnvSecretSource } from '../../functions/aws/secrets';
import { signRestoreLink } from '../../functions/core/links/links';
import { accountLinkBase, accountSigningKeys } from '../../functions/core/scan/accounts';
import { ENV, parseSetting } from '../../functions/core/scan/config';
import { namedAccountOf } from '../accounts';
import { domainArgument, flagsOf, settingsWithFlags } from '../args';
import { type CliIo, EXIT, type ParsedArgs } from '../command';
import { LOCAL_LINK_URL, link } from './index';

/**
 * `sentinel link <domain> [--account NAME --accounts FILE]`: a signed restore link. For an account
 * of an accounts file, the link its alerts carry: under `/accounts/<name>/` and signed with the
 * account's derived keys, as the scan signs them; a deployment of accounts answers its own routes 410.
 */
export async function runLink(args: ParsedArgs, io: CliIo): Promise<number> {
  const domain = domainArgument(link, args);
  const named = namedAccountOf(args, io.cwd);
  const own = new EnvSecretSource(io.env).signingKeysNow();
  const keys = named ? accountSigningKeys(own, named.account.name) : own;
  const raw = settingsWithFlags(link, args, io.env);
  const ttlDays = parseSetting('linkTtlDays', raw.linkTtlDays, flagsOf(link));
  const root = parseSetting('linkBaseUrl', raw.linkBaseUrl, flagsOf(link)) ?? LOCAL_LINK_URL;
  const baseUrl = named ? accountLinkBase(root, named.account.name) : root;
  if (!raw.linkBaseUrl)
    io.stderr(`sentinel: ${ENV.linkBaseUrl} is not set; linking to sentinel serve at ${baseUrl}\n`);
  io.stdout(`${signRestoreLink({ baseUrl, domain, keys, now: Date.now(), ttlSeconds: ttlDays * 86_400 })}\n`);
  return EXIT.ok;
}
