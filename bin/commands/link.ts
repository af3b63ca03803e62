import { EnvSecretSource } from '../../functions/adapters/secrets';
import { signRestoreLink } from '../../functions/core/links/links';
import { ENV, parseSetting } from '../../functions/core/scan/config';
import { domainArgument, flagsOf, settingsWithFlags } from '../args';
import { type Command, EXIT, fromSetting } from '../command';
import { LOCAL_LINK_URL } from './serve';

export const link: Command = {
  name: 'link',
  args: '<domain>',
  summary: 'print a signed restore link for a domain',
  about: `The link points at ${ENV.linkBaseUrl}, or at serve's default address when it is not set, and is signed with the first key of ${ENV.linkSigningKey}.`,
  options: { 'ttl-days': fromSetting('linkTtlDays', 'N') },
  env: [ENV.linkSigningKey, ENV.linkBaseUrl],
  run: async (args, io) => {
    const domain = domainArgument(link, args);
    const keys = new EnvSecretSource(io.env).signingKeysNow();
    const raw = settingsWithFlags(link, args, io.env);
    const ttlDays = parseSetting('linkTtlDays', raw.linkTtlDays, flagsOf(link));
    const baseUrl = parseSetting('linkBaseUrl', raw.linkBaseUrl, flagsOf(link)) ?? LOCAL_LINK_URL;
    if (!raw.linkBaseUrl)
      io.stderr(`sentinel: ${ENV.linkBaseUrl} is not set; linking to sentinel serve at ${baseUrl}\n`);
    io.stdout(
      `${signRestoreLink({ baseUrl, domain, keys, now: Date.now(), ttlSeconds: ttlDays * 86_400 })}\n`,
    );
    return EXIT.ok;
  },
};
