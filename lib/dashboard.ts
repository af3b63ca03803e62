import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { METRICS } from '../functions/core/scan/config';
import type { AlertMetrics } from './alerts';
import type { ScanMetrics } from './scanner';
import type { WebMetrics } from './web-api';

export interface SentinelDashboardProps {
  /** The scan's metrics; its timeout is drawn on the duration graph. */
  readonly scan: ScanMetrics;
  /** The web API's metrics (restore, snooze, acknowledge, report, calendar). */
  readonly web: WebMetrics;
  readonly alerts: AlertMetrics;
  /** The scan-duration alarm's share of the timeout, drawn as a second line. @default 0.8 */
  readonly durationAlarmShare?: number;
  /** Several accounts: a row of graphs with one line per account (their scans carry its name). @default false */
  readonly accounts?: boolean;
}

/**
 * One CloudWatch dashboard per copy: is the scan keeping up (duration against its timeout, domains
 * read, requests and 429s), what did it find and send (critical items and warning findings, publishes), what did
 * people do with the links (web outcomes), and what failed (errors, throttles, 5xx). Every metric
 * comes from the factory beside what it measures, the same the alarms read.
 */
export class SentinelDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: SentinelDashboardProps) {
    super(scope, id);
    const { scan, web, alerts } = props;
    const timeoutMs = scan.timeout.toMilliseconds();
    const share = props.durationAlarmShare ?? 0.8;
    const graph = (
      title: string,
      left: cloudwatch.IMetric[],
      more: Partial<cloudwatch.GraphWidgetProps> = {},
    ) => new cloudwatch.GraphWidget({ title, left, width: 8, ...more });

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.days(7),
      widgets: [
        [
          graph('Scan duration against its timeout (ms)', [scan.duration({ label: 'longest run' })], {
            leftAnnotations: [
              { value: timeoutMs, label: 'timeout', color: cloudwatch.Color.RED },
              {
                value: timeoutMs * share,
                label: `alarm (${Math.round(share * 100)} %)`,
                color: cloudwatch.Color.ORANGE,
              },
            ],
          }),
          graph('Domains read', [
            scan.domainsScanned({ label: 'domains' }),
            scan.unreadableRecords({ label: 'unreadable records' }),
          ]),
          graph(
            'Critical items and warning findings',
            [scan.criticalFindings({ label: 'critical' }), scan.warningFindings({ label: 'warning' })],
            { stacked: true },
          ),
        ],
        [
          graph('Reseller API requests and 429s', [scan.resellerRequests({ label: 'requests' })], {
            right: [scan.resellerThrottled({ label: '429 answers' })],
          }),
          graph('Alerts published and delivered', [
            alerts.published({ label: 'published' }),
            alerts.delivered({ label: 'delivered' }),
            alerts.failed({ label: 'failed' }),
          ]),
          graph('Web outcomes (restored, refused, outcome_unknown, snoozed, …)', [web.outcomes()]),
        ],
        [
          graph(
            'Errors and throttles',
            [
              scan.errors({ label: 'scan errors' }),
              web.errors({ label: 'web errors' }),
              web.serverErrors({ label: 'web API 5xx' }),
            ],
            {
              right: [scan.throttles({ label: 'scan throttled' }), web.throttles({ label: 'web throttled' })],
              width: 16,
            },
          ),
          graph('Audit trail writes failed', [
            web.auditFailures({ label: 'restore attempts not kept in the audit trail' }),
          ]),
        ],
        ...(props.accounts
          ? [
              [
                graph('Critical items per account', [scan.perAccount(METRICS.criticalFindings)]),
                graph('Scans completed per account', [scan.perAccount(METRICS.scanCompleted)]),
                graph('Scans failed per account', [scan.perAccount(METRICS.scanFailed)]),
              ],
            ]
          : []),
      ],
    });
  }
}
