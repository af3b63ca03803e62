import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { createStateTable, DynamoDbStateStore } from '../functions/adapters/dynamodb-state-store';
import { FileStateStore } from '../functions/adapters/file-state-store';
import type { ScanJobInput } from '../functions/adapters/scan-job';
import { EnvSecretSource } from '../functions/adapters/secrets';
import {
  dynamoDbClientFromEnv,
  openStateStore,
  parseStateLocation,
  rebindState,
  runStatefulScan,
  snsPublisher,
} from '../functions/adapters/stateful-scan';
import { alertView } from '../functions/core/actions';
import { renderDigest, renderSms, reportReaches } from '../functions/core/alert';
import type { Severity } from '../functions/core/classify';
import { ENV, parseSetting, requireEnv } from '../functions/core/config';
import { ConfigError } from '../functions/core/errors';
import { prettyReportJson } from '../functions/core/report-json';
import { loadStatePolicy, STATE_ENV } from '../functions/core/state-config';
import { reportStoreFromEnv } from './cli-web';

/**
 * The command-line side of memory between scans: `scan --state` and `state init`. Kept apart
 * from cli.ts, which calls in here; what it needs of the CLI's I/O comes in as plain values.
 */

export interface StateCliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly sns?: () => SNSClient;
  /** The DynamoDB client for `dynamodb:TABLE`. @default configured from `env` (AWS_ENDPOINT_URL_DYNAMODB, …) */
  readonly dynamodb?: () => DynamoDBClient;
}

export interface StatefulScanCommand {
  /** The `--state` value, or undefined to read STATE. */
  readonly flag: string | undefined;
  readonly job: ScanJobInput;
  readonly dryRun: boolean;
  readonly json: boolean;
  readonly topicArn: string | undefined;
  readonly failOn: Severity | undefined;
  /** `--allow-clock-skew`: scan even when the time does not fit the state's (replays). */
  readonly allowClockSkew?: boolean;
}

/** `--state` if given, else STATE; undefined when neither is set (the scan stays stateless). */
export function stateLocationText(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return flag ?? (env[STATE_ENV.state]?.trim() || undefined);
}

/** `scan --state …`: the scan with memory. Returns true when `--fail-on` is met. */
export async function scanWithState(command: StatefulScanCommand, io: StateCliIo): Promise<boolean> {
  const { job, dryRun } = command;
  const { settings } = job;
  const text = stateLocationText(command.flag, io.env) ?? '';
  const location = parseStateLocation(text, command.flag !== undefined ? '--state' : STATE_ENV.state);
  const store = openStateStore(
    location,
    settings.resellerBaseUrl,
    () => io.dynamodb?.() ?? dynamoDbClientFromEnv(io.env),
  );
  const policy = loadStatePolicy(io.env, settings.minSeverity);
  const topicArn = command.topicArn;
  const publish =
    dryRun || !topicArn ? undefined : snsPublisher(settings, io.sns?.() ?? new SNSClient({}), topicArn);

  const { result, published, saved, conflicts, superseded } = await runStatefulScan({
    job,
    store,
    policy,
    ...(publish ? { publish } : {}),
    ...(command.allowClockSkew ? { allowClockSkew: true } : {}),
  });
  const say = command.json ? io.stderr : io.stdout;
  if (superseded) {
    // The report as read is still printed; the stored one (the later scan's) is kept.
    if (command.json) for (const piece of prettyReportJson(result.report, '\n')) io.stdout(piece);
    say(`no alert published and state not written: ${superseded}\n`);
    return false;
  }
  // The report page and the calendar feed read the report from here (bin/cli-web.ts).
  await reportStoreFromEnv(io.env, location.kind === 'file' ? location.path : undefined)?.put(result.report);
  if (conflicts > 0)
    say(
      `another scan moved the state on while this one ran: re-read it ${conflicts} time${conflicts === 1 ? '' : 's'} before deciding\n`,
    );
  if (command.json) for (const piece of prettyReportJson(result.report, '\n')) io.stdout(piece);
  if (dryRun) {
    if (!command.json) {
      const options = {
        timeZone: settings.timeZone,
        ...(settings.accountLabel ? { accountLabel: settings.accountLabel } : {}),
      };
      const alert = alertView(result.report, result.silenced); // snoozed and acknowledged left out
      io.stdout(
        `${renderDigest(alert, options)}\n\n--- SMS (critical only) ---\n${renderSms(alert, options)}\n`,
      );
    }
    say(
      `state in ${store.location} not written (--dry-run); a real run would ${result.publish ? 'publish' : 'publish nothing'}: ${result.why.join(', ')}\n`,
    );
  } else {
    say(
      published
        ? `published alert ${published.messageId} to ${topicArn} (${result.why.join(', ')})${published.findingsCut ? ` (${published.findingsCut} findings cut to fit SNS's 256 KB)` : ''}\n`
        : `no alert published: ${result.why.join(', ')}\n`,
    );
    if (saved) say(`state saved to ${store.location}\n`);
  }
  return command.failOn !== undefined && reportReaches(result.report, command.failOn);
}

/**
 * `sentinel state init dynamodb:TABLE`: creates the state table with the stack's own definition.
 * `sentinel state reset PATH|dynamodb:TABLE --yes`: forgets this account's state (the next scan is a first run).
 * `sentinel state rebind PATH|dynamodb:TABLE --yes`: binds the state to RESELLER_API_KEY (a rotated key), keeping its memory.
 */
export async function stateCommand(args: readonly string[], io: StateCliIo): Promise<void> {
  const [sub, target, ...extra] = args;
  const usage =
    'usage: sentinel state init dynamodb:TABLE | sentinel state reset|rebind PATH|dynamodb:TABLE --yes';
  if (!target || (sub !== 'init' && sub !== 'reset' && sub !== 'rebind')) throw new ConfigError(usage);
  const location = parseStateLocation(target, `state ${sub}`);
  const client = () => io.dynamodb?.() ?? dynamoDbClientFromEnv(io.env);
  if (sub === 'rebind') {
    if (extra.length !== 1 || extra[0] !== '--yes')
      throw new ConfigError(
        `state rebind gives this state's memory to the account of ${ENV.resellerApiKey}: do it only when that key was rotated for the same account, and confirm with --yes (${usage})`,
      );
    const scope = parseSetting('resellerBaseUrl', io.env[ENV.resellerBaseUrl]);
    const apiKey = new EnvSecretSource(io.env).apiKeyNow();
    const changed = await rebindState(openStateStore(location, scope, client), scope, apiKey);
    io.stdout(
      changed
        ? `the state in ${target} now belongs to the account of ${ENV.resellerApiKey}; its memory is kept\n`
        : `the state in ${target} already belongs to the account of ${ENV.resellerApiKey}; nothing changed\n`,
    );
    return;
  }
  if (sub === 'init') {
    if (extra.length) throw new ConfigError(usage);
    if (location.kind !== 'dynamodb')
      throw new ConfigError(
        'a state file needs no init: scan --state PATH creates it; state init takes dynamodb:TABLE',
      );
    const notes = await createStateTable(client(), location.table);
    io.stdout(
      `created DynamoDB table ${location.table} (pk/sk, on demand, encrypted); use: scan --state dynamodb:${location.table}\n`,
    );
    for (const note of notes) io.stderr(`sentinel: ${note}\n`);
    return;
  }
  if (extra.length !== 1 || extra[0] !== '--yes')
    throw new ConfigError(
      `state reset forgets every finding, alert and watched field: confirm with --yes (${usage})`,
    );
  if (location.kind === 'file') {
    const existed = await new FileStateStore(location.path).clear();
    io.stdout(existed ? `removed the state file ${location.path}\n` : `no state file at ${location.path}\n`);
    return;
  }
  const scope = requireEnv(io.env, ENV.resellerBaseUrl, 'the state in a table is kept per reseller base URL');
  const store = new DynamoDbStateStore({
    client: client(),
    tableName: location.table,
    scope: scope.replace(/\/+$/, ''),
  });
  const removed = await store.clear();
  io.stdout(`removed ${removed} state items of ${scope} from dynamodb:${location.table}\n`);
}
