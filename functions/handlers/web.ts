import { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { S3AccountSummaries } from '../aws/account-stores';
import { DynamoDbStateStore } from '../aws/dynamodb-state-store';
import { sentinelMetrics } from '../aws/metrics';
import { S3ReportStore } from '../aws/s3-report-store';
import { type SdkTimeouts, timedClientConfig, WEB_SDK_TIMEOUTS } from '../aws/sdk-timeouts';
import { SsmSecretSource } from '../aws/secrets';
import { REPORT_ENV } from '../core/memory/report-store';
import { STATE_ENV } from '../core/memory/state-config';
import { ACCOUNT_ENV } from '../core/scan/accounts';
import { ENV, METRICS, parseSetting, settingsFromEnv } from '../core/scan/config';
import { StateActionStore } from '../use-cases/state-action-store';
import { awsAccountWebStores, cachedDirectory } from './account-deps';
import { accountWebApp, createAccountsWebApp, retiredRoutes } from './accounts-web';
import type { ProxyHandler } from './http-answer';
import { createWebApp } from './web-app';

/**
 * The web function's handler over `env`, its AWS clients bounded by `timeouts` (a test gives
 * small ones). Called once at module scope: the clients live as long as the container.
 */
export function createWebEntry(
  env: NodeJS.ProcessEnv,
  timeouts: SdkTimeouts = WEB_SDK_TIMEOUTS,
): ProxyHandler {
  const logger = new Logger({ serviceName: 'domain-sentinel-web' });
  const metrics = sentinelMetrics(METRICS.webService, env);
  const bucket = env[REPORT_ENV.bucket];
  const clientConfig = timedClientConfig(timeouts);
  const s3 = new S3Client(clientConfig);
  const reports = bucket ? new S3ReportStore(s3, bucket) : null;
  const table = env[STATE_ENV.tableName];
  const dynamodb = table ? new DynamoDBClient(clientConfig) : null;
  const ssm = new SSMClient(clientConfig);
  const secrets = new SsmSecretSource(ssm, env);
  const logLine = outcomeLogger(logger, metrics);
  const stateStore = () => {
    if (!table || !dynamodb) return null;
    const scope = parseSetting('resellerBaseUrl', env[ENV.resellerBaseUrl]);
    return { store: new DynamoDbStateStore({ client: dynamodb, tableName: table, scope }), scope };
  };

  const ownApp = createWebApp({
    settings: () => settingsFromEnv(env),
    secrets,
    // Built per request, so a bad setting is a logged error page rather than a crashed cold start.
    actions: () => {
      const state = stateStore();
      return state
        ? new StateActionStore(state.store, state.scope, { apiKey: () => secrets.apiKey() })
        : null;
    },
    reports: () => reports,
    // Restore attempts are kept in the state table, in the account's partition.
    audit: () => stateStore()?.store ?? null,
    log: (message, entry) => logLine(message, entry),
  });

  // Several accounts (docs/accounts.md): the accounts the deploy wrote beside the reports, each
  // account's links under /accounts/<name>/ with its own key, state and report.
  const directory = bucket && env[ACCOUNT_ENV.accountsOnly] === 'true' ? cachedDirectory(s3, bucket) : null;
  const accountStores = awsAccountWebStores({ env, ssm, s3, bucket, table, dynamodb, log: logLine });
  return createAccountsWebApp({
    directory: async () => (directory ? directory() : null),
    appFor: (input) => accountWebApp(input, accountStores),
    summaries: () => (bucket ? new S3AccountSummaries(s3, bucket) : null),
    signingKeys: () => secrets.signingKeys(),
    // Several accounts: the deployment's own routes serve links from before the switch, answered as such.
    fallback: env[ACCOUNT_ENV.accountsOnly] === 'true' ? retiredRoutes(logLine) : ownApp,
    log: logLine,
  });
}

/** One log line per request, and its outcome as a metric. */
function outcomeLogger(logger: Logger, metrics: ReturnType<typeof sentinelMetrics>) {
  return (message: string, { level, ...entry }: Record<string, unknown>): void => {
    // Powertools writes the level itself (and reserves the key): the entry's decides which call.
    if (level === 'error') logger.error(message, entry);
    else logger.info(message, entry);
    // One data point per request, by route and outcome (restored, outcome_unknown, …): the
    // dashboard's web outcomes. Both are the code's own words, never request data.
    const outcome = metrics.singleMetric();
    outcome.addDimension('action', String(entry.action ?? message.split(' ')[0]));
    outcome.addDimension('outcome', String(entry.outcome));
    outcome.addMetric(METRICS.webOutcome, MetricUnit.Count, 1);
  };
}

/** API Gateway (REST, proxy integration) invokes this for every link: restore, snooze, acknowledge, report, calendar. */
export const handler = createWebEntry(process.env);
