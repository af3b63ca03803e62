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
