import { EnvSecretSource } from '../../functions/aws/secrets';
import type { ScheduledScanDeps } from '../../functions/handlers/scheduled-scan';

/**
 * A scheduled scan's dependencies against a reseller at `baseUrl` with `key`: `env` over the base
 * URL and the key's parameter, no SNS nor DynamoDB (nothing calls them without a topic or a state
 * table), a logger and metrics that drop everything; `more` on top.
 */
export function quietScanDeps(
  baseUrl: string,
  key: string,
  env: NodeJS.ProcessEnv,
  more: Partial<ScheduledScanDeps> = {},
): ScheduledScanDeps {
  return {
    env: { RESELLER_BASE_URL: baseUrl, RESELLER_API_KEY_PARAMETER: '/sentinel/key', ...env },
    secrets: new EnvSecretSource({ RESELLER_API_KEY: key }),
    sns: {} as ScheduledScanDeps['sns'],
    dynamodb: {} as ScheduledScanDeps['dynamodb'],
    logger: { info: () => undefined, error: () => undefined },
    metrics: {
      addMetric: () => undefined,
      publishStoredMetrics: () => undefined,
    } as unknown as ScheduledScanDeps['metrics'],
    ...more,
  };
}
