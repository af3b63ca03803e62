import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { SentinelError } from '../../functions/core/base/errors';
import { StateConflictError, StateRefusedError } from '../../functions/core/memory/state';
import { StateDamagedError } from '../../functions/core/memory/state-header';
import { accountScope } from '../../functions/core/scan/accounts';
import { ENV } from '../../functions/core/scan/config';
import { FileStateStore } from '../../functions/local/file-state-store';
import {
  dynamoDbClientFromEnv,
  openStateStore,
  parseStateLocation,
  type StateLocation,
} from '../../functions/local/state-location';
import { type Lease, leaseHolds, rebindState, type StateStore } from '../../functions/use-cases/state-store';
import { accountKeySource, namedAccountOf } from '../accounts';
import { loadSettings } from '../args';
import { type CliIo, EXIT, type ParsedArgs, UsageError } from '../command';
import { accountStateLocation } from '../local-stores';
import { state } from './index';

const USAGE =
  'usage: sentinel state init dynamodb:TABLE | sentinel state reset|rebind PATH|dynamodb:TABLE [--account NAME --accounts FILE] --yes';

/**
 * Whose state reset and rebind act on: where it is, its scope, the key it is bound to and, for
 * messages, whose key that is. With `--account NAME --accounts FILE`, the account's own state as
 * `scan --accounts` keeps it (its file beside PATH, its scope of the table) and its own key.
 */
export interface StateOwner {
  readonly location: StateLocation;
  readonly scope: string;
  readonly apiKey: () => Promise<string>;
  /** Whose key: `the account of RESELLER_API_KEY`, or `account brand-a (the key in BRAND_A_KEY)`. */
  readonly keyWords: string;
  /** Where the state is, for messages: as given, or the account's file or scope. */
  readonly where: string;
}

/**
 * `sentinel state init dynamodb:TABLE`: creates the state table with the stack's own definition.
 * `sentinel state reset PATH|dynamodb:TABLE --yes`: forgets this account's state (the next scan is a first run).
 * `sentinel state rebind PATH|dynamodb:TABLE --yes`: binds the state to RESELLER_API_KEY (a rotated key), keeping its memory.
 */
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
    if (args.values.account !== undefined || args.values.accounts !== undefined)
      throw new UsageError(
        'state init creates the table every account shares; it takes no --account or --accounts',
      );
    const notes = await createStateTable(client(), location.table, io.signal);
    io.stdout(
      `created DynamoDB table ${location.table} (pk/sk, on demand, encrypted); use: scan --state dynamodb:${location.table}\n`,
    );
    for (const note of notes) io.stderr(`sentinel: ${note}\n`);
    return EXIT.ok;
  }
  const owner = stateOwnerOf(location, args, io);
  if (sub === 'rebind') return rebind(owner, args, io, client);
  if (args.values.yes !== true)
    throw new UsageError(
      `state reset forgets every finding, alert and watched field: confirm with --yes (${USAGE})`,
    );
  if (owner.location.kind === 'file') {
    const { path } = owner.location;
    const file = new FileStateStore(path);
    // A file the reset's own claim made (none was there) is no state that was removed.
    const before = existsSync(path);
    const existed = await unlessLeased(
      file,
      owner,
      async (fresh) => (await file.clear()) && (before || !fresh),
    );
    io.stdout(existed ? `removed the state file ${path}\n` : `no state file at ${path}\n`);
    return EXIT.ok;
  }
  const table = owner.location.table;
  const store = new DynamoDbStateStore({
    client: client(),
    tableName: table,
    scope: owner.scope,
    ...(io.signal ? { signal: io.signal } : {}),
  });
  // A state never saved holds at most its head, which the reset's own claim wrote (or found empty): not counted.
  const removed = await unlessLeased(store, owner, async (fresh) =>
    Math.max(0, (await store.clear()) - (fresh ? 1 : 0)),
  );
  io.stdout(`removed ${removed} state items of ${owner.scope} from dynamodb:${table}\n`);
  return EXIT.ok;
}

/** How long reset holds the state's lease while it deletes it: a delete takes seconds at most. */
const RESET_LEASE_MS = 60_000;

/**
 * Runs `clear` holding the state's lease, taken as a scan takes it before it publishes (open, then
 * claim the generation opened): a scan that holds it is publishing an alert and will save over the
 * state, so the reset is refused rather than deleting under it; a lease that lapsed (a crashed
 * scan) holds nothing. A state whose account-wide part is damaged (the reset is its remedy) is
 * cleared as before: a file's store holds the file's lock while such a scan publishes, and clear
 * waits for it; a table's lease is taken on the generation stored beside the damage.
 */
export async function unlessLeased<T>(
  store: StateStore,
  owner: StateOwner,
  clear: (fresh: boolean) => Promise<T>,
): Promise<T> {
  const lease = { owner: `reset-${randomBytes(6).toString('hex')}`, expiresAt: Date.now() + RESET_LEASE_MS };
  let opened: { generation: number | undefined; lease: Lease | null };
  try {
    opened = await store.open(owner.scope);
  } catch (error) {
    // Another reseller's state named by its path (its own scan is not this scope's to wait for),
    // or damage a file's lock covers: cleared as the reset always cleared them.
    if (error instanceof StateDamagedError) opened = { generation: error.generation, lease: null };
    else if (error instanceof StateRefusedError) return clear(false);
    // A file that does not open (a generation that is not a whole number): no scan can have claimed
    // it, and its clear judges what it holds under the file's lock (what is not state stays).
    else if (store instanceof FileStateStore && !(error instanceof StateConflictError)) return clear(false);
    else throw error;
  }
  const { generation } = opened;
  if (generation === undefined) return clear(false);
  // Never saved and nobody holding it (no state at all, mostly) is claimed too: a first scan that
  // claimed it after the open must make the reset refuse, not lose its save to the clear. The claim
  // writes the head the clear then removes: `fresh` tells the caller it held nothing before.
  const fresh = generation === 0 && opened.lease === null;
  try {
    await store.claim(generation, lease);
  } catch (error) {
    if (!(error instanceof StateConflictError)) throw error;
    throw new SentinelError(
      `the state in ${owner.where} is in use: ${heldBy(opened.lease, error)}; nothing was reset. Let that scan finish (its lease ends by then, or lapses if it crashed) and run state reset again`,
      { cause: error },
    );
  }
  try {
    return await clear(fresh);
  } catch (error) {
    await store.release(generation, lease.owner);
    throw error;
  }
}

/** Who holds the state reset was refused: a running scan, until when when known. */
function heldBy(seen: Lease | null, conflict: StateConflictError): string {
  const until = seen && leaseHolds(seen, Date.now()) ? seen.expiresAt : conflict.heldUntil;
  return until !== undefined
    ? `a scan is running on it: it holds the state until ${new Date(until).toISOString()}`
    : 'a scan is running on it, or saved it a moment ago';
}

/** The state reset or rebind acts on: RESELLER_API_KEY's at the base URL, or `--account`'s own. */
function stateOwnerOf(location: StateLocation, args: ParsedArgs, io: CliIo): StateOwner {
  const named = namedAccountOf(args, io.cwd);
  const { resellerBaseUrl } = loadSettings(state, args, io.env, ['resellerBaseUrl'], named?.account);
  if (!named)
    return {
      location,
      scope: resellerBaseUrl,
      apiKey: async () => new EnvSecretSource(io.env).apiKeyNow(),
      keyWords: `the account of ${ENV.resellerApiKey}`,
      where: args.positionals[1] as string,
    };
  const { account } = named;
  const own = accountStateLocation(location, account.name);
  const scope = accountScope(resellerBaseUrl, account.name);
  return {
    location: own,
    scope,
    apiKey: () => accountKeySource(io.env, account).apiKey(),
    keyWords: `account ${account.name} (the key in ${account.apiKeyEnv ?? 'its apiKeyEnv'})`,
    where: own.kind === 'file' ? own.path : `dynamodb:${own.table} (${scope})`,
  };
}

/** `state rebind`: the state's memory goes to the account of the current key (a rotated key of the same account). */
async function rebind(
  owner: StateOwner,
  args: ParsedArgs,
  io: CliIo,
  client: () => ReturnType<typeof dynamoDbClientFromEnv>,
): Promise<number> {
  if (args.values.yes !== true)
    throw new UsageError(
      `state rebind gives this state's memory to ${owner.keyWords}: do it only when that key was rotated for the same account, and confirm with --yes (${USAGE})`,
    );
  const apiKey = await owner.apiKey();
  const store = openStateStore(owner.location, owner.scope, client, io.signal);
  const changed = await rebindState(store, owner.scope, apiKey);
  io.stdout(
    changed
      ? `the state in ${owner.where} now belongs to ${owner.keyWords}; its memory is kept\n`
      : `the state in ${owner.where} already belongs to ${owner.keyWords}; nothing changed\n`,
  );
  return EXIT.ok;
}
