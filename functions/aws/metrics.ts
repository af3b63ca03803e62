import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { ENV, METRICS, parseSetting } from '../core/scan/config';

/**
 * The metrics of one function: namespace DomainSentinel, the service dimension, and the deployment
 * the stack names (DEPLOYMENT_NAME), so two deployments in one account and region never count
 * each other's scans.
 */
export function sentinelMetrics(serviceName: string, env: NodeJS.ProcessEnv): Metrics {
  const deployment = parseSetting('deploymentName', env[ENV.deploymentName]);
  return new Metrics({
    namespace: METRICS.namespace,
    serviceName,
    ...(deployment ? { defaultDimensions: { [METRICS.deploymentDimension]: deployment } } : {}),
  });
}

/**
 * A fetch that counts what the reseller API was sent and how often it answered 429, retries
 * included: the requests-and-throttles line of the dashboard. The scan's report counts pages; this
 * counts HTTP requests.
 */
export function countingFetch(inner: typeof fetch = globalThis.fetch) {
  const counts = { requests: 0, throttled: 0 };
  const counted: typeof fetch = async (input, init) => {
    counts.requests++;
    const response = await inner(input, init);
    if (response.status === 429) counts.throttled++;
    return response;
  };
  return {
    fetch: counted,
    counts,
    /** Adds both counts to the metrics the run publishes. */
    addTo(metrics: Pick<Metrics, 'addMetric'>) {
      metrics.addMetric(METRICS.resellerRequests, MetricUnit.Count, counts.requests);
      metrics.addMetric(METRICS.resellerThrottled, MetricUnit.Count, counts.throttled);
    },
  };
}
