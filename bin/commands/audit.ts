import { ConfigError } from '../../functions/core/base/errors';
import { auditLine } from '../../functions/core/memory/audit';
import { ENV } from '../../functions/core/scan/config';
import { namedAccountOf } from '../accounts';
import { flagsOf, noPositionals, settingsWithFlags, str } from '../args';
import { type CliIo, EXIT, type ParsedArgs } from '../command';
import { auditTrailFor } from '../local-stores';
import { audit } from './index';

/** `sentinel audit [--json] [--state …]`: the restore attempts the state store keeps, newest first. */
export async function runAudit(args: ParsedArgs, io: CliIo): Promise<number> {
  noPositionals(audit, args);
  const named = namedAccountOf(args, io.cwd);
  // With --account, the account's own reseller (its own or the shared one) and its part of the state.
  const shared = settingsWithFlags(audit, args, io.env).resellerBaseUrl;
  const baseUrl = named?.account.resellerBaseUrl ?? shared;
  const env = { ...io.env, [ENV.resellerBaseUrl]: baseUrl };
  const trail = auditTrailFor(str(args.values.state), env, io.dynamodb, flagsOf(audit), named, io.signal);
  if (!trail)
    throw new ConfigError(
      `audit reads the trail from the state store the scans and links use: pass --state PATH|dynamodb:TABLE or set ${ENV.state}`,
    );
  const entries = await trail.listAudit();
  if (args.values.json === true) {
    io.stdout(`${JSON.stringify({ location: trail.location, entries }, null, 2)}\n`);
    return EXIT.ok;
  }
  if (entries.length === 0) {
    io.stdout(`no restore attempts in ${trail.location}\n`);
    return EXIT.ok;
  }
  io.stdout(
    `${entries.length} restore attempt${entries.length === 1 ? '' : 's'} in ${trail.location}, newest first:\n${entries.map((e) => auditLine(e)).join('\n')}\n`,
  );
  return EXIT.ok;
}
