import { ConfigError } from '../../functions/core/base/errors';
import { auditLine } from '../../functions/core/memory/audit';
import { ENV } from '../../functions/core/scan/config';
import { flagsOf, noPositionals, settingsWithFlags, str } from '../args';
import { BASE_URL_OPTION, type Command, EXIT, STATE_OPTION } from '../command';
import { auditTrailFor } from '../local-stores';

/** `sentinel audit [--json] [--state …]`: the restore attempts the state store keeps, newest first. */
export const audit: Command = {
  name: 'audit',
  summary: 'the audit trail of restores kept in the state store: every attempt, newest first',
  about:
    'Every POST to a validly signed restore link and every sentinel restore given the state store is kept ' +
    'with its outcome: domain, time, HTTP status, the link’s key id, client address and user agent (never ' +
    'the signature). The newest 200 that reached the reseller are kept, and apart from them the newest 100 ' +
    'refusals (5 an hour per link, the rest counted).',
  options: {
    json: { type: 'boolean', doc: 'print the entries as JSON' },
    state: {
      ...STATE_OPTION,
      doc: 'the state store (file or table) the scans and the restore links use',
    },
    'base-url': {
      ...BASE_URL_OPTION,
      doc: 'the account whose trail to read in a table (the scans’ base URL)',
    },
  },
  run: async (args, io) => {
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
      `${entries.length} restore attempt${entries.length === 1 ? '' : 's'} in ${trail.location}, newest first:\n${entries.map((e) => auditLine(e)).join('\n')}\n`,
    );
    return EXIT.ok;
  },
};
