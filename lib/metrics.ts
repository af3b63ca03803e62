import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { METRICS } from '../functions/core/scan/config';

/** How one metric is read: an alarm and a graph of the same metric differ only in these. */
export interface MetricReading {
  /** @default - the factory's: an hour */
  readonly period?: Duration;
  /** @default 'Sum' */
  readonly statistic?: string;
  /** @default - none */
  readonly label?: string;
}

/** A metric of AWS's own (Lambda's, SNS's, API Gateway's) read as `reading` says. */
export const metricOptions = (reading: MetricReading, statistic = 'Sum'): cloudwatch.MetricOptions => ({
  period: reading.period ?? Duration.hours(1),
  statistic: reading.statistic ?? statistic,
  ...(reading.label !== undefined ? { label: reading.label } : {}),
});

/**
 * The custom metrics one function of a deployment emits (namespace `DomainSentinel`, dimensions
 * `service` and `deployment`, and `account` for one account of several), defined once where the
 * function is: alarms and the dashboard take their metrics from here, never build their own
 * (cdk-monitoring-constructs' metric factories are the model).
 */
export class CustomMetricFactory {
  constructor(
    /** The `service` dimension the function emits under (METRICS.service, webService, …). */
    readonly service: string,
    /** The `deployment` dimension of this copy. */
    readonly deploymentName: string,
  ) {}

  /** The dimensions of this function's metrics, with `account` for one account of several. */
  dimensions(account?: string): Record<string, string> {
    return {
      service: this.service,
      [METRICS.deploymentDimension]: this.deploymentName,
      ...(account ? { [METRICS.accountDimension]: account } : {}),
    };
  }

  /** One metric of this function, of one account when `account` is given. */
  metric(metricName: string, reading: MetricReading = {}, account?: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: METRICS.namespace,
      metricName,
      dimensionsMap: this.dimensions(account),
      statistic: reading.statistic ?? 'Sum',
      period: reading.period ?? Duration.hours(1),
      ...(reading.label !== undefined ? { label: reading.label } : {}),
    });
  }

  /**
   * One line: the sum of {@link search} over the given extra dimensions (every account's), for a
   * deployment whose every data point carries one of them.
   */
  total(metricName: string, dimensions: readonly string[], label = ''): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      expression: `SUM(${this.search(metricName, dimensions).expression})`,
      usingMetrics: {},
      label,
      period: Duration.hours(1),
    });
  }

  /**
   * Every metric of this name and deployment over the given extra dimensions, one line each (a
   * search: an outcome or an account added later appears without a new dashboard).
   */
  search(metricName: string, dimensions: readonly string[], label = ''): cloudwatch.MathExpression {
    const keys = [...dimensions, METRICS.deploymentDimension, 'service'].sort();
    // Quotes and backslashes escaped for the search's own syntax.
    const deployment = this.deploymentName.replaceAll('\\', '\\\\').replaceAll('"', '\\"');
    return new cloudwatch.MathExpression({
      expression: `SEARCH('{${METRICS.namespace},${keys.join(',')}} MetricName="${metricName}" ${METRICS.deploymentDimension}="${deployment}"', 'Sum', 3600)`,
      usingMetrics: {},
      label,
      period: Duration.hours(1),
    });
  }
}

/**
 * The outcome of the runs that ended in each period: 0 when one of them succeeded (`succeeded`,
 * their sum), else how many failed (`failed`, their sum), and no data point at all for a period in
 * which no run ended. An alarm on it with TreatMissingData IGNORE fires on a period of failures only,
 * keeps its state through the periods without a run, and clears on the first period a run succeeds:
 * a failure that a retry made good in the same period never fires it, and the hours after a failure
 * never clear it.
 *
 * Why not FILL(failed, 0) alone: FILL gives every period of the range a value (CloudWatch metric
 * math, "FILL: fills the missing values of a time series", using-metric-math.html), so each empty
 * period after a failure is a 0 that clears the alarm while nothing has run since; the same page
 * warns that FILL in an alarm can keep its latest data point at the filler. Here FILL only lines the
 * series up, and IF drops the periods in which nothing ended: "IF(metric1, scalar2, metric3) … is
 * dropped, if the corresponding data point of metric1 is FALSE and … metric3 is omitted from the
 * expression" (same page, "Using IF expressions"). How an alarm treats the dropped points:
 * AlarmThatSendsEmail.html#alarms-and-missing-data ("ignore — the current alarm state is maintained").
 */
export function runOutcome(
  succeeded: Record<string, cloudwatch.IMetric>,
  failed: Record<string, cloudwatch.IMetric>,
  label: string,
  period = Duration.hours(1),
): cloudwatch.MathExpression {
  const filled = (ids: Record<string, unknown>) =>
    Object.keys(ids)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + ');
  const ok = filled(succeeded);
  const bad = filled(failed);
  return new cloudwatch.MathExpression({
    expression: `IF(${ok} + ${bad} > 0, IF(${ok} > 0, 0, ${bad}))`,
    usingMetrics: { ...succeeded, ...failed },
    period,
    label,
  });
}
