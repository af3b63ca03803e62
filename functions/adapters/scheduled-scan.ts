import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import { truncateReport } from '../core/alert';
import { ENV, loadScanSettings, METRICS, settingsFromEnv } from '../core/config';
import { ConfigError } from '../core/errors';
import type { ReportStore } from '../core/report-store';
import { STATE_ENV } from '../core/state-config';
import { countingFetch } from './metrics';
import { finishReport } from './report-finish';
import { deliverAlert, runScanJob } from './scan-job';
import type { SecretSource } from './secrets';
import { chatTargetOf, snsSender } from './sns-publish';
import { runScheduledStatefulScan } from './stateful-scan';

/** Time kept back from the Lambda's budget for publishing the alert and flushing logs. */
export const PUBLISH_RESERVE_MS = 20_000;
/** Findings written to the log in full; the rest are counted (CloudWatch events stop at 256 KB). */
const LOGGED_FINDINGS = 200;

export interface ScheduledScanDeps {
  readonly env: NodeJS.ProcessEnv;
  readonly secrets: SecretSource;
  readonly sns: SNSClient;
  /** Used when the environment names a state table (memory between scans). */
  readonly dynamodb?: DynamoDBClient;
  readonly logger: Pick<Logger, 'info' | 'error'>;
  readonly metrics: Pick<Metrics, 'addMetric' | 'publishStoredMetrics'>;
  /** Where the report is kept for the report page (the stack's bucket); absent, it is not kept. */
  readonly reports?: ReportStore;
  /** @default Date.now */
  readonly clock?: () => number;
  /** How the reseller API is reached. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

export interface ScheduledScanResult {
  readonly summary: Readonly<Record<string, number>>;
  readonly domainsScanned: number;
  readonly problems: number;
  readonly published: boolean;
}

/**
 * One scheduled scan: settings from the environment, secrets from SSM, scan within the Lambda's
 * remaining time, one alert, metrics. Any failure is logged with its reason and re-thrown, so the
 * invocation fails, the on-failure destination gets the event, and the error alarm fires.
 */
export async function handleScheduledScan(
  deps: ScheduledScanDeps,
  remainingMs: number,
): Promise<ScheduledScanResult> {
  const clock = deps.clock ?? Date.now;
  const reseller = countingFetch(deps.fetch);
  try {
    const settings = loadScanSettings(settingsFromEnv(deps.env));
    if (settings.linkBaseUrl && !deps.secrets.hasSigningKeys())
      throw new ConfigError(`${ENV.linkSigningKeyParameter} is not set but ${ENV.linkBaseUrl} is`);
    const now = clock();
    const job = {
      settings,
      secrets: deps.secrets,
      now,
      deadline: now + Math.max(5_000, remainingMs - PUBLISH_RESERVE_MS),
      fetch: reseller.fetch,
    };
    // With a state table: alert on change, and only after delivery does the state move on.
    const stateTable = deps.env[STATE_ENV.tableName];
    const stateful = stateTable
      ? await runScheduledStatefulScan({
          job,
          tableName: stateTable,
          env: deps.env,
          dynamodb: deps.dynamodb ?? new DynamoDBClient({}),
          sns: deps.sns,
          clock,
        })
      : undefined;
    // The report page and the calendar feed read the report from the bucket the stack names.
    const { report, alert } = await finishReport({
      report: stateful?.result.report ?? (await runScanJob(job)),
      ...(stateful ? { silenced: stateful.result.silenced } : {}),
      ...(deps.reports ? { reports: deps.reports } : {}),
    });
    deps.logger.info('scan completed', { report: truncateReport(report, LOGGED_FINDINGS) });

    let published = Boolean(stateful?.published);
    if (stateful)
      deps.logger.info(published ? 'alert published' : 'no alert published', {
        why: stateful.superseded ? [stateful.superseded] : stateful.result.why,
        published: stateful.published,
      });
    else if (settings.alertTopicArn) {
      const outcome = await deliverAlert(
        alert,
        settings,
        snsSender(deps.sns, settings.alertTopicArn, chatTargetOf(settings)),
      );
      published = outcome.published;
      deps.logger.info(outcome.published ? 'alert published' : 'no alert published', { outcome });
    }

    deps.metrics.addMetric(METRICS.criticalFindings, MetricUnit.Count, report.summary.critical);
    deps.metrics.addMetric(METRICS.warningFindings, MetricUnit.Count, report.summary.warning);
    deps.metrics.addMetric(METRICS.domainsScanned, MetricUnit.Count, report.stats.domains_scanned);
    deps.metrics.addMetric(METRICS.unreadableRecords, MetricUnit.Count, report.problems.length);
    // Last: only a scan that read everything and delivered its alert counts as completed.
    deps.metrics.addMetric(METRICS.scanCompleted, MetricUnit.Count, 1);
    return {
      summary: report.summary,
      domainsScanned: report.stats.domains_scanned,
      problems: report.problems.length,
      published,
    };
  } catch (error) {
    deps.logger.error('scan failed', {
      reason: error instanceof Error ? error.message : String(error),
      errorName: (error as Error).name,
    });
    throw error;
  } finally {
    // Also when the scan failed: a run that ends in 429s is what this pair of metrics is for.
    reseller.addTo(deps.metrics);
    deps.metrics.publishStoredMetrics();
  }
}
