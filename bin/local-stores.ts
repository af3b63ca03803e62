import { extname, join, resolve } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3AccountSummaries } from '../functions/aws/account-stores';
import { S3ReportStore } from '../functions/aws/s3-report-store';
import { EnvSecretSource } from '../functions/aws/secrets';
import type { ActionStore } from '../functions/core/memory/actions';
import type { AuditTrail } from '../functions/core/memory/audit';
import { REPORT_ENV, type ReportStore } from '../functions/core/memory/report-store';
import { StateError } from '../functions/core/memory/state';
import { type AccountSummaryStore, accountReportPrefix, accountScope } from '../functions/core/scan/accounts';
import { ENV, type FlagOf, parseSetting } from '../functions/core/scan/config';
import { FolderAccountSummaries } from '../functions/local/folder-account-summaries';
import { FolderReportStore } from '../functions/local/folder-report-store';
import { checkRegularOrAbsent } from '../functions/local/regular-file';
import {
  dynamoDbClientFromEnv,
  openStateStore,
  parseStateLocation,
  type StateLocation,
} from '../functions/local/state-location';
import { StateActionStore } from '../functions/use-cases/state-action-store';
import type { StateSelector } from '../functions/use-cases/state-store';
import type { AccountSettings } from '../lib/config';
import { accountKeySource } from './accounts';
import { CLI_S3_TIMEOUTS, cliS3Client } from './aws-clients';

/**
 * Where the command line keeps things between commands: the state store (`--state` / STATE), the
 * snoozes and acknowledgements and the audit trail of restores in it, and the latest report the
 * report page shows. `scan`, `serve`, `snooze`, `ack`, `restore`, `audit` and `state` all resolve
 * them here, by the same rules, so what one command stores the next one finds without extra flags.
 */

/** Where the report is kept when nothing says otherwise: relative to the working directory. */
export const DEFAULT_REPORT_DIR = '.sentinel/reports';

/** `--state` if given, else STATE; undefined when neither is set (the scan stays stateless). */
export function stateLocationText(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return flag ?? (env[ENV.state]?.trim() || undefined);
}

/** The state location `--state` or STATE names, parsed; undefined when neither is set. */
export function stateLocationOf(flag: string | undefined, env: NodeJS.ProcessEnv): StateLocation | undefined {
  const text = stateLocationText(flag, env);
  return text === undefined
    ? undefined
    : parseStateLocation(text, flag !== undefined ? '--state' : ENV.state);
}

export interface ReportPlace {
  readonly env: NodeJS.ProcessEnv;
  /** `--state`, when the command was given one. */
  readonly stateFlag?: string | undefined;
  /** The working directory {@link DEFAULT_REPORT_DIR} is under. @default process.cwd() */
  readonly cwd?: string | undefined;
}

/**
 * The report store: `REPORT_DIR` (a folder), else `REPORT_BUCKET` (S3, as the stack's scan), else
 * a folder beside the state file when the state is a file, else {@link DEFAULT_REPORT_DIR}.
 * `configuredOnly` leaves out the last (a scan whose report carries no link keeps it nowhere).
 */
export function reportStoreFor(place: ReportPlace, configuredOnly = false): ReportStore | null {
  const { env } = place;
  const dir = env[REPORT_ENV.dir]?.trim();
  if (dir) return new FolderReportStore(dir);
  const bucket = env[REPORT_ENV.bucket]?.trim();
  if (bucket) {
    const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
    return new S3ReportStore(cliS3Client(endpoint), bucket, '', CLI_S3_TIMEOUTS);
  }
  const state = stateLocationOf(place.stateFlag, env);
  if (state?.kind === 'file') return new FolderReportStore(`${state.path}.reports`);
  if (configuredOnly) return null;
  return new FolderReportStore(resolve(place.cwd ?? process.cwd(), DEFAULT_REPORT_DIR));
}

/**
 * An account of an accounts file a command acts for (`--account NAME --accounts FILE`): its state
 * is its own (its file beside the one named, its scope in a table), and so is its key.
 */
export interface StateAccount {
  readonly account: AccountSettings;
  /** The accounts file as given, for the refusal's `sentinel state rebind …`. */
  readonly file: string;
}

/** Where a command's state is and whose it is: the store, the scope in it, the key that must own it. */
interface StateTarget {
  readonly location: StateLocation;
  readonly scope: string;
  readonly apiKey: () => Promise<string>;
  readonly rebind?: StateSelector;
}

/**
 * The state `--state` or STATE names, for the reseller base URL in `env`, as one account's: the
 * account of RESELLER_API_KEY, or the account `named` of an accounts file. Undefined when no state
 * is named.
 */
function stateTargetOf(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  flagOf: FlagOf | undefined,
  named: StateAccount | undefined,
): StateTarget | undefined {
  const text = stateLocationText(flag, env);
  const location = stateLocationOf(flag, env);
  if (text === undefined || !location) return undefined;
  const baseUrl = parseSetting('resellerBaseUrl', env[ENV.resellerBaseUrl], flagOf);
  if (!named) return { location, scope: baseUrl, apiKey: async () => new EnvSecretSource(env).apiKeyNow() };
  const { account, file } = named;
  return {
    location: accountStateLocation(location, account.name),
    scope: accountScope(baseUrl, account.name),
    apiKey: () => accountKeySource(env, account).apiKey(),
    rebind: {
      state: text,
      account: { name: account.name, accountsFile: file },
      ...(account.resellerBaseUrl === undefined ? { baseUrl } : {}),
    },
  };
}

/**
 * The state store `--state` or STATE names, as snoozes and acknowledgements see it; null when none
 * is named. It refuses a state bound to another account than the key's (RESELLER_API_KEY, or with
 * `named` that account's own), as a scan does.
 */
export function actionStoreFor(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  dynamodb?: () => DynamoDBClient,
  flagOf?: FlagOf,
  named?: StateAccount,
  signal?: AbortSignal,
): ActionStore | null {
  const target = stateTargetOf(flag, env, flagOf, named);
  if (!target) return null;
  const { location, scope, apiKey, rebind } = target;
  const store = openStateStore(location, scope, () => dynamodb?.() ?? dynamoDbClientFromEnv(env), signal);
  return new StateActionStore(store, scope, { apiKey, ...(rebind ? { rebind } : {}) });
}

/**
 * The audit trail of restores in the state store `--state` or STATE names (with `named`, that
 * account's part of it); null when none is named.
 */
export function auditTrailFor(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  dynamodb?: () => DynamoDBClient,
  flagOf?: FlagOf,
  named?: StateAccount,
  signal?: AbortSignal,
): AuditTrail | null {
  const target = stateTargetOf(flag, env, flagOf, named);
  if (!target) return null;
  const dynamodbOf = () => dynamodb?.() ?? dynamoDbClientFromEnv(env);
  return openStateStore(target.location, target.scope, dynamodbOf, signal);
}

/**
 * Refuses a state file `--state` or STATE names (with `named`, that account's own) that is a
 * directory, a pipe or a device, as a scan refuses it: before a command acts (a restore is paid for),
 * not as a warning after it. A file not there yet is fine; a DynamoDB table is not checked here.
 */
export async function checkStateFileOf(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  flagOf?: FlagOf,
  named?: StateAccount,
): Promise<void> {
  const location = stateTargetOf(flag, env, flagOf, named)?.location;
  if (location?.kind !== 'file') return;
  await checkRegularOrAbsent(location.path).catch((error: Error) => {
    throw new StateError(`cannot read the state file ${location.path}: ${error.message}`, { cause: error });
  });
}

/**
 * An account's own state file beside the one `--state` names: `state.json` → `state.brand-a.json`,
 * `state` → `state.brand-a.json`. Always with an extension: `state.<name>` would be the lock file
 * (`state.lock`) or the reports folder (`state.reports`) of the state `--state state` names.
 */
export function accountStatePath(path: string, account: string): string {
  const ext = extname(path);
  return ext && ext !== path ? `${path.slice(0, -ext.length)}.${account}${ext}` : `${path}.${account}.json`;
}

/**
 * Where an account of several keeps its state: the same table under its own scope, or its own
 * file beside the one named.
 */
export function accountStateLocation(location: StateLocation, account: string): StateLocation {
  return location.kind === 'file'
    ? { kind: 'file', path: accountStatePath(location.path, account) }
    : location;
}

/**
 * Where the accounts of an accounts file keep their reports and summaries, by the rules of
 * {@link reportStoreFor}: under `accounts/<name>/` of REPORT_DIR, of REPORT_BUCKET, of the folder
 * beside the state file, or of {@link DEFAULT_REPORT_DIR}; `configuredOnly` leaves out the last.
 */
export function accountStoresFor(
  place: ReportPlace,
  configuredOnly = false,
): { reports: (account: string) => ReportStore; summaries: AccountSummaryStore } | null {
  const { env } = place;
  const folder = (root: string) => ({
    reports: (account: string) => new FolderReportStore(join(root, accountReportPrefix(account))),
    summaries: new FolderAccountSummaries(root),
  });
  const dir = env[REPORT_ENV.dir]?.trim();
  if (dir) return folder(dir);
  const bucket = env[REPORT_ENV.bucket]?.trim();
  if (bucket) {
    const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
    const client = cliS3Client(endpoint);
    return {
      reports: (account) => new S3ReportStore(client, bucket, accountReportPrefix(account), CLI_S3_TIMEOUTS),
      summaries: new S3AccountSummaries(client, bucket),
    };
  }
  const state = stateLocationOf(place.stateFlag, env);
  if (state?.kind === 'file') return folder(`${state.path}.reports`);
  if (configuredOnly) return null;
  return folder(resolve(place.cwd ?? process.cwd(), DEFAULT_REPORT_DIR));
}
