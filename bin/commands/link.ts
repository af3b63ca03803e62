import { EnvSecretSource } from '../../functions/aws/secrets';
import { signRestoreLink } from '../../functions/core/links/links';
import { ENV, parseSetting } from '../../functions/core/scan/config';
import { domainArgument, flagsOf, settingsWithFlags } from '../args';
import { type CliIo, EXIT, type ParsedArgs } from '../command';
import { LOCAL_LINK_URL, link } from './index';

/** `sentinel link <domain>`: a signed restore link. */
export async function runLink(args: ParsedArgs, io: CliIo): Promise<number> {
  const domain = domainArgument(link, args);
  const keys = new EnvSecretSource(io.env).signingKeysNow();
  const raw = settingsWithFlags(link, args, io.env);
  const ttlDays = parseSetting('linkTtlDays', raw.linkTtlDays, flagsOf(link));
  const baseUrl = parseSetting('linkBaseUrl', raw.linkBaseUrl, flagsOf(link)) ?? LOCAL_LINK_URL;
  if (!raw.linkBaseUrl)
    io.stderr(`sentinel: ${ENV.linkBaseUrl} is not set; linking to sentinel serve at ${baseUrl}\n`);
  io.stdout(`${signRestoreLink({ baseUrl, domain, keys, now: Date.now(), ttlSeconds: ttlDays * 86_400 })}\n`);
  return EXIT.ok;
}
