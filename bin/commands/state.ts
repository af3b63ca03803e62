import { createStateTable, DynamoDbStateStore } from '../../functions/adapters/dynamodb-state-store';
import { FileStateStore } from '../../functions/adapters/file-state-store';
import { EnvSecretSource } from '../../functions/adapters/secrets';
import { rebindState } from '../../functions/adapters/state-store';
import {
  dynamoDbClientFromEnv,
  openStateStore,
  parseStateLocation,
  type StateLocation,
} from '../../functions/adapters/stateful-scan';
import { ENV } from '../../functions/core/scan/config';
import { loadSettings } from '../args';
import { type CliIo, EXIT, type ParsedArgs, UsageError } from '../command';
import { state } from './index';

const USAGE =
  'usage: sentinel state init dynamodb:TABLE | sentinel state reset|rebind PATH|dynamodb:TABLE --yes';

/**
 * `sentinel state init dynamodb:TABLE`: creates the state table with the stack's own definition.
 * `sentinel state reset PATH|dynamodb:TABLE --yes`: forgets this account's state (the next scan is a first run).
 * `sentinel state rebind PATH|dynamodb:TABLE --yes`: binds the state to RESELLER_API_KEY (a rotated key), keeping its memory.
 */
/** `sentinel state init|reset|rebind`. */
export async function runState(args: ParsedArgs, io: CliIo): Promise<number> {
  const [sub, target, ...extra] = args.positionals;
  if (!target || extra.length || (sub !== 'init' && sub !== 'reset' && sub !== 'rebind'))
    throw new UsageError(USAGE);
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
  if (sub === 'rebind') return rebind(target, location, args, io, client);
  if (args.values.yes !== true)
    throw new UsageError(
      `state reset forgets every finding, alert and watched field: confirm with --yes (${USAGE})`,
    );
  if (location.kind === 'file') {
    const existed = await new FileStateStore(location.path).clear();
    io.stdout(existed ? `removed the state file ${location.path}\n` : `no state file at ${location.path}\n`);
    return EXIT.ok;
  }
  return resetTable(
    location.table,
    loadSettings(state, args, io.env, ['resellerBaseUrl']).resellerBaseUrl,
    client,
    io,
  );
}

/** `state rebind`: the state's memory goes to the account of RESELLER_API_KEY (a rotated key of the same account). */
async function rebind(
  target: string,
  location: StateLocation,
  args: ParsedArgs,
  io: CliIo,
  client: () => ReturnType<typeof dynamoDbClientFromEnv>,
): Promise<number> {
  if (args.values.yes !== true)
    throw new UsageError(
      `state rebind gives this state's memory to the account of ${ENV.resellerApiKey}: do it only when that key was rotated for the same account, and confirm with --yes (${USAGE})`,
    );
  const scope = loadSettings(state, args, io.env, ['resellerBaseUrl']).resellerBaseUrl;
  const apiKey = new EnvSecretSource(io.env).apiKeyNow();
  const changed = await rebindState(openStateStore(location, scope, client), scope, apiKey);
  io.stdout(
    changed
      ? `the state in ${target} now belongs to the account of ${ENV.resellerApiKey}; its memory is kept\n`
      : `the state in ${target} already belongs to the account of ${ENV.resellerApiKey}; nothing changed\n`,
  );
  return EXIT.ok;
}

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
