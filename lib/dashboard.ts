import { Duration } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { METRICS } from '../functions/core/scan/config';
import { auditFailuresMetric } from './watchdog';

export interface SentinelDashboardProps {
  /** The scan function; its timeout is drawn on the duration graph. */
  readonly scan: lambda.Function;
  /** The web function (restore, snooze, acknowledge, report, calendar). */
  readonly web: lambda.IFunction;
  readonly stage: apigateway.Stage;
  readonly alertTopic: sns.ITopic;
  /** The `deployment` dimension of this copy's metrics. */
  readonly deploymentName: string;
  /** The scan-duration alarm's share of the timeout, drawn as a second line. @default 0.8 */
  readonly durationAlarmShare?: number;
  /** Several accounts: a row of graphs with one line per account (their scans carry its name). @default false */
  readonly accounts?: boolean;
}

/**
 * One CloudWatch dashboard per copy: is the scan keeping up (duration against its timeout, domains
 * read, requests and 429s), what did it find and send (findings by severity, publishes), what did
 * people do with the links (web outcomes), and what failed (errors, throttles, 5xx).
 */
export class SentinelDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: SentinelDashboardProps) {
    super(scope, id);
    const period = Duration.hours(1);
    const dimensionsMap = { service: METRICS.service, [METRICS.deploymentDimension]: props.deploymentName };
    const scanMetric = (metricName: string, label: string) =>
      new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName,
        dimensionsMap,
        statistic: 'Sum',
        period,
        label,
      });
    const timeoutMs = (props.scan.timeout ?? Duration.minutes(5)).toMilliseconds();
    const share = props.durationAlarmShare ?? 0.8;
    // A search, so every outcome the code reports appears without listing them here; quotes escaped for its syntax.
    const deployment = props.deploymentName.replaceAll('\\', '\\\\').replaceAll('"', '\\"');

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.days(7),
      widgets: [
        [
          new cloudwatch.GraphWidget({
            title: 'Scan duration against its timeout (ms)',
            left: [props.scan.metricDuration({ statistic: 'Maximum', period, label: 'longest run' })],
            leftAnnotations: [
              { value: timeoutMs, label: 'timeout', color: cloudwatch.Color.RED },
              {
                value: timeoutMs * share,
                label: `alarm (${Math.round(share * 100)} %)`,
                color: cloudwatch.Color.ORANGE,
              },
            ],
            width: 8,
          }),
          new cloudwatch.GraphWidget({
            title: 'Domains read',
            left: [
              scanMetric(METRICS.domainsScanned, 'domains'),
              scanMetric(METRICS.unreadableRecords, 'unreadable records'),
            ],
            width: 8,
          }),
          new cloudwatch.GraphWidget({
            title: 'Findings by severity',
            left: [
              scanMetric(METRICS.criticalFindings, 'critical'),
              scanMetric(METRICS.warningFindings, 'warning'),
            ],
            stacked: true,
            width: 8,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Reseller API requests and 429s',
            left: [scanMetric(METRICS.resellerRequests, 'requests')],
            right: [scanMetric(METRICS.resellerThrottled, '429 answers')],
            width: 8,
          }),
          new cloudwatch.GraphWidget({
            title: 'Alerts published and delivered',
            left: [
              props.alertTopic.metricNumberOfMessagesPublished({ period, label: 'published' }),
              props.alertTopic.metricNumberOfNotificationsDelivered({ period, label: 'delivered' }),
              props.alertTopic.metricNumberOfNotificationsFailed({ period, label: 'failed' }),
            ],
            width: 8,
          }),
          new cloudwatch.GraphWidget({
            title: 'Web outcomes (restored, refused, outcome_unknown, snoozed, …)',
            left: [
              new cloudwatch.MathExpression({
                expression: `SEARCH('{${METRICS.namespace},action,${METRICS.deploymentDimension},outcome,service} MetricName="${METRICS.webOutcome}" ${METRICS.deploymentDimension}="${deployment}"', 'Sum', 3600)`,
                usingMetrics: {},
                label: '',
                period,
              }),
            ],
            width: 8,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Errors and throttles',
            left: [
              props.scan.metricErrors({ period, label: 'scan errors' }),
              props.web.metricErrors({ period, label: 'web errors' }),
              props.stage.metricServerError({ period, statistic: 'Sum', label: 'web API 5xx' }),
            ],
            right: [
              props.scan.metricThrottles({ period, label: 'scan throttled' }),
              props.web.metricThrottles({ period, label: 'web throttled' }),
            ],
            width: 16,
          }),
          new cloudwatch.GraphWidget({
            title: 'Audit trail writes failed',
            left: [
              auditFailuresMetric(props.deploymentName, {
                period,
                label: 'restore attempts not kept in the audit trail',
              }),
            ],
            width: 8,
          }),
        ],
        ...(props.accounts ? [accountWidgets(deployment)] : []),
      ],
    });
  }
}

/**
 * One line per account: a search over the account dimension, so an account added to the file
 * appears without a new dashboard, and no widget's list of metrics grows with the accounts.
 */
function accountWidgets(deployment: string): cloudwatch.IWidget[] {
  const perAccount = (metricName: string, label: string) =>
    new cloudwatch.MathExpression({
      expression: `SEARCH('{${METRICS.namespace},${METRICS.accountDimension},${METRICS.deploymentDimension},service} MetricName="${metricName}" ${METRICS.deploymentDimension}="${deployment}"', 'Sum', 3600)`,
      usingMetrics: {},
      label,
      period: Duration.hours(1),
    });
  return [
    new cloudwatch.GraphWidget({
      title: 'Critical findings per account',
      left: [perAccount(METRICS.criticalFindings, '')],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Scans completed per account',
      left: [perAccount(METRICS.scanCompleted, '')],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Scans failed per account',
      left: [perAccount(METRICS.scanFailed, '')],
      width: 8,
    }),
  ];
}
