import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbStateStore } from '../aws/dynamodb-state-store';
import { SCAN_SDK_TIMEOUTS, timedClientConfig } from '../aws/sdk-timeouts';
import { ConfigError } from '../core/base/errors';
import type { AuditTrail } from '../core/memory/audit';
import type { StateStore } from '../use-cases/state-store';
import { FileStateStore } from './file-state-store';

/**
 * Where the command line keeps state (`--state` / STATE): a file, or `dynamodb:TABLE`. Only the
 * command line chooses; the scan Lambda always keeps its state in the stack's table, so its bundle
 * never carries the file store.
 */

const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

/** `dynamodb:TABLE` or a file path, as `--state` / `STATE` take it. */
export type StateLocation =
  | { readonly kind: 'dynamodb'; readonly table: string }
  | { readonly kind: 'file'; readonly path: string };

/**
 * Reads `--state` / `STATE`; the error says what a good value looks like. A path is used exactly as
 * given (never trimmed into another file's name): one with spaces around it is refused.
 */
export function parseStateLocation(value: string, source = '--state'): StateLocation {
  if (value.trim() !== value)
    throw new ConfigError(
      `${source}: ${JSON.stringify(value)} starts or ends with white space; give the path or dynamodb:TABLE without it`,
    );
  if (value.startsWith('dynamodb:')) {
    const table = value.slice('dynamodb:'.length);
    if (!TABLE_NAME.test(table))
      throw new ConfigError(
        `${source}: ${JSON.stringify(table)} is not a DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -)`,
      );
    return { kind: 'dynamodb', table };
  }
  // `DynamoDB:state`, `ddb:state`: a table meant, and a file of that name in the working directory
  // would be written without a word, the table never read. A path (with a '/') stays a path.
  if (/^(?:dynamo[-_]?db|dynamo|ddb):/i.test(value))
    throw new ConfigError(
      `${source}: ${JSON.stringify(value)} reads as a table, but a table is written dynamodb:TABLE (in lower case); for a file of that name write ./${value}`,
    );
  if (!value) throw new ConfigError(`${source} must be a file path or dynamodb:TABLE`);
  // `dir/` means a folder: the file store would write a file named dir and keep its reports in
  // dir/.reports, which then cannot exist. Said here, before anything is written.
  if (value.endsWith('/') || value.endsWith('\\'))
    throw new ConfigError(
      `${source}: ${JSON.stringify(value)} ends with a /, naming a folder; the state is a file: give its path, such as ${value.slice(0, -1)}/state.json`,
    );
  return { kind: 'file', path: value };
}

/**
 * A DynamoDB client configured from an environment object the way the SDK configures itself from
 * process.env (endpoint, region, static keys), so the CLI honours AWS_ENDPOINT_URL_DYNAMODB from
 * the environment it was given.
 */
export function dynamoDbClientFromEnv(env: NodeJS.ProcessEnv): DynamoDBClient {
  const endpoint = env.AWS_ENDPOINT_URL_DYNAMODB ?? env.AWS_ENDPOINT_URL;
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  const {
    AWS_ACCESS_KEY_ID: accessKeyId,
    AWS_SECRET_ACCESS_KEY: secretAccessKey,
    AWS_SESSION_TOKEN: sessionToken,
  } = env;
  // Bounded as the scan function's client is: a table that never answers fails the call, rather than
  // holding the command (and the state's lease) until Ctrl-C.
  return new DynamoDBClient({
    ...timedClientConfig(SCAN_SDK_TIMEOUTS.dynamodb),
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    ...(accessKeyId && secretAccessKey
      ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } }
      : {}),
  });
}

/**
 * Opens the store a location names; `scope` (the reseller base URL) keeps accounts apart in a
 * table. `signal`, the command's stop, ends a table's requests (a file's are local and short).
 */
export function openStateStore(
  location: StateLocation,
  scope: string,
  dynamodb: () => DynamoDBClient,
  signal?: AbortSignal,
): StateStore & AuditTrail {
  return location.kind === 'dynamodb'
    ? new DynamoDbStateStore({
        client: dynamodb(),
        tableName: location.table,
        scope,
        ...(signal ? { signal } : {}),
      })
    : new FileStateStore(location.path);
}
