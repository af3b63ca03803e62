import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { openAuditTrail } from '../functions/adapters/audit-trail';
import type { ProxyHandler } from '../functions/adapters/local-server';
import { FolderReportStore, S3ReportStore } from '../functions/adapters/report-stores';
import { EnvSecretSource } from '../functions/adapters/secrets';
import { StateActionStore } from '../functions/adapters/state-action-store';
import {
  dynamoDbClientFromEnv,
  openStateStore,
  parseStateLocation,
} from '../functions/adapters/stateful-scan';
import { createWebApp } from '../functions/adapters/web-app';
import type { SilenceAction } from '../functions/core/action-decision';
import { type ActionStore, acknowledgementOf, snoozeOf } from '../functions/core/actions';
import type { AuditTrail } from '../functions/core/audit';
import { classify } from '../functions/core/classify';
import { ENV, loadScanSettings, parseSetting, settingsFromEnv } from '../functions/core/config';
import { ConfigError, SentinelError } from '../functions/core/errors';
import { REPORT_ENV, type ReportStore } from '../functions/core/report-store';
import { ResellerClient } from '../functions/core/reseller-client';
import type { SecretSource } from '../functions/core/secrets';
import { stateLocationText } from './cli-state';

/**
 * The command line's side of the web links: where the report is kept, and (once the state store
 * is there) snooze and acknowledge. Kept apart from cli.ts, which calls in here.
 */

/**
 * The report store the command line uses: `REPORT_DIR` (a folder), else `REPORT_BUCKET` (S3, as
 * the stack's scan), else a folder beside the state file when the state is a file, else none.
 */
export function reportStoreFromEnv(env: NodeJS.ProcessEnv, stateFile?: string): ReportStore | null {
  const dir = env[REPORT_ENV.dir]?.trim();
  if (dir) return new FolderReportStore(dir);
  const bucket = env[REPORT_ENV.bucket]?.trim();
  if (bucket) {
    const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
    return new S3ReportStore(
      new S3Client({ ...(endpoint ? { endpoint, forcePathStyle: true } : {}) }),
      bucket,
    );
  }
  if (stateFile) return new FolderReportStore(`${stateFile}.reports`);
  return null;
}

/** `sentinel serve`'s handler: the web Lambda's app with the command line's stores. */
export function webAppForServe(
  env: NodeJS.ProcessEnv,
  secrets: SecretSource,
  log: (message: string, entry: Record<string, unknown>) => void,
): ProxyHandler {
  return createWebApp({
    settings: () => settingsFromEnv(env),
    secrets,
    actions: () => actionStoreFromEnv(env),
    reports: () => reportStoreFromEnv(env, stateFileOf(env)),
    audit: () => auditTrailFor(undefined, env),
    log,
  });
}

/** The audit trail of the state store `--state` or STATE names; null when none is named. */
export function auditTrailFor(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  dynamodb?: () => DynamoDBClient,
): AuditTrail | null {
  const text = stateLocationText(flag, env);
  if (text === undefined) return null;
  const scope = parseSetting('resellerBaseUrl', env[ENV.resellerBaseUrl]);
  return openAuditTrail(
    parseStateLocation(text, flag !== undefined ? '--state' : ENV.state),
    scope,
    () => dynamodb?.() ?? dynamoDbClientFromEnv(env),
  );
}

/** The path of the state file `STATE` names, if it names a file: the report folder is beside it. */
function stateFileOf(env: NodeJS.ProcessEnv): string | undefined {
  const text = stateLocationText(undefined, env);
  if (text === undefined) return undefined;
  const location = parseStateLocation(text, ENV.state);
  return location.kind === 'file' ? location.path : undefined;
}

/** The snoozes and acknowledgements of the state store `STATE` names; null without one. */
export function actionStoreFromEnv(env: NodeJS.ProcessEnv): ActionStore | null {
  return actionStoreFor(undefined, env);
}

/** The state store `--state` or STATE names, as snoozes and acknowledgements see it; null when none is named. */
export function actionStoreFor(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  dynamodb?: () => DynamoDBClient,
): ActionStore | null {
  const text = stateLocationText(flag, env);
  if (text === undefined) return null;
  const scope = parseSetting('resellerBaseUrl', env[ENV.resellerBaseUrl]);
  const store = openStateStore(
    parseStateLocation(text, flag !== undefined ? '--state' : ENV.state),
    scope,
    () => dynamodb?.() ?? dynamoDbClientFromEnv(env),
  );
  return new StateActionStore(store, scope, { apiKey: async () => new EnvSecretSource(env).apiKeyNow() });
}

export interface SilenceCommand {
  readonly action: SilenceAction;
  readonly domain: string;
  readonly days: number;
  readonly stateFlag: string | undefined;
}

/**
 * `sentinel snooze` / `sentinel ack`: what the links do, from the command line. Looks the domain
 * up first (only a domain with a finding can be silenced, and the action remembers the finding as
 * it is), then writes to the state store.
 */
export async function silenceCommand(
  command: SilenceCommand,
  io: { env: NodeJS.ProcessEnv; stdout: (t: string) => void; dynamodb?: () => DynamoDBClient },
): Promise<void> {
  const store = actionStoreFor(command.stateFlag, io.env, io.dynamodb);
  if (!store)
    throw new ConfigError(
      `${command.action === 'snooze' ? 'snooze' : 'ack'} needs the state store the scans use: pass --state PATH|dynamodb:TABLE or set ${ENV.state}`,
    );
  const settings = loadScanSettings(settingsFromEnv(io.env));
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey: new EnvSecretSource(io.env).apiKeyNow(),
    timeoutMs: settings.requestTimeoutMs,
  });
  const found = await client.findDomain(command.domain);
  if (!found) throw new SentinelError(`${command.domain} is not in this reseller account`);
  const now = Date.now();
  const finding = classify(found, now, {
    expiryDays: settings.expiryDays,
    criticalDays: settings.criticalDays,
  });
  if (!finding)
    throw new SentinelError(
      `${command.domain} has nothing to report now (renewed, restored or healthy), so there is nothing to ${command.action}`,
    );
  if (command.action === 'snooze') {
    const snooze = snoozeOf(finding, command.days, now);
    await store.snooze(command.domain, snooze);
    io.stdout(
      `snoozed ${command.domain} until ${snooze.until} in ${store.location}: alerts leave it out unless it gets worse (now: ${finding.kind}, ${finding.severity})\n`,
    );
  } else {
    await store.acknowledge(command.domain, acknowledgementOf(finding, now));
    io.stdout(
      `acknowledged ${command.domain} in ${store.location}: alerts leave it out until its expiry date (${finding.date_expiry.slice(0, 10)}), status or auto-renew changes\n`,
    );
  }
}
