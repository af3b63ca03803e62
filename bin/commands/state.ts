import { createStateTable, DynamoDbStateStore } from '../../functions/adapters/dynamodb-state-store';
import { FileStateStore } from '../../functions/adapters/file-state-store';
import { dynamoDbClientFromEnv, parseStateLocation } from '../../functions/adapters/stateful-scan';
import { loadSettings } from '../args';
import { BASE_URL_OPTION, type CliIo, type Command, EXIT, UsageError } from '../command';

const USAGE = 'usage: sentinel state init dynamodb:TABLE | sentinel state reset PATH|dynamodb:TABLE --yes';

/**
 * `sentinel state init dynamodb:TABLE`: creates the state table with the stack's own definition.
 * `sentinel state reset PATH|dynamodb:TABLE --yes`: forgets this account's state (the next scan is a first run).
 */
export const state: Command = {
  name: 'state',
  args: '<init|reset> <PATH|dynamodb:TABLE>',
  summary: 'create the state table (init) or forget this account’s state (reset)',
  about:
    'init creates a DynamoDB state table with the stack’s own definition (AWS_ENDPOINT_URL_DYNAMODB for a local one); ' +
    'reset removes a state file, or deletes this account’s items (the partition of the reseller base URL) from a table.',
  options: {
    yes: { type: 'boolean', doc: 'reset without asking' },
    'base-url': {
      ...BASE_URL_OPTION,
      doc: 'the account whose state reset forgets in a table (the scans’ base URL)',
    },
  },
  run: async (args, io) => {
    const [sub, target, ...extra] = args.positionals;
    if (!target || extra.length || (sub !== 'init' && sub !== 'reset')) throw new UsageError(USAGE);
    const location = parseStateLocation(target, `state ${sub}`);
    const client = () => io.dynamodb?.() ?? dynamoDbClientFromEnv(io.env);
    if (sub === 'init') {
      if (location.kind !== 'dynamodb')
        throw new UsageError(
          'a state file needs no init: scan --state PATH creates it; state init takes dynamodb:TABLE',
        );
      const notes = await createStateTable(client(), location.table);
      io.stdout(
        `created DynamoDB table ${location.table} (pk/sk, on demand, encrypted); use: scan --state dynamodb:${location.table}\n`,
      );
      for (const note of notes) io.stderr(`sentinel: ${note}\n`);
      return EXIT.ok;
    }
    if (args.values.yes !== true)
      throw new UsageError(
        `state reset forgets every finding, alert and watched field: confirm with --yes (${USAGE})`,
      );
    if (location.kind === 'file') {
      const existed = await new FileStateStore(location.path).clear();
      io.stdout(
        existed ? `removed the state file ${location.path}\n` : `no state file at ${location.path}\n`,
      );
      return EXIT.ok;
    }
    return resetTable(
      location.table,
      loadSettings(state, args, io.env, ['resellerBaseUrl']).resellerBaseUrl,
      client,
      io,
    );
  },
};

async function resetTable(
  table: string,
  scope: string,
  client: () => ReturnType<typeof dynamoDbClientFromEnv>,
  io: CliIo,
): Promise<number> {
  const removed = await new DynamoDbStateStore({ client: client(), tableName: table, scope }).clear();
  io.stdout(`removed ${removed} state items of ${scope} from dynamodb:${table}\n`);
  return EXIT.ok;
}
