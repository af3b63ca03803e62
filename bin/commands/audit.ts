import { ConfigError } from '../../functions/core/base/errors';
import { auditLine } from '../../functions/core/memory/audit';
import { ENV } from '../../functions/core/scan/config';
import { flagsOf, noPositionals, settingsWithFlags, str } from '../args';
import { type CliIo, EXIT, type ParsedArgs } from '../command';
import { auditTrailFor } from '../local-stores';
import { audit } from './index';

/** `sentinel audit [--json] [--state …]`: the restore attempts the state store keeps, newest first. */
export async function runAudit(args: ParsedArgs, io: CliIo): Promise<number> {
  noPositionals(audit, args);
  const env = { ...io.env, [ENV.resellerBaseUrl]: settingsWithFlags(audit, args, io.env).resellerBaseUrl };
  const trail = auditTrailFor(str(args.values.state), env, io.dynamodb, flagsOf(audit));
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
    `${entries.length} restore attempt${entries.length === 1 ? '' : 's'} in ${trail.location}, newest first:\n${entries.map(auditLine).join('\n')}\n`,
  );
  return EXIT.ok;
}
