import { Logger } from '@aws-lambda-powertools/logger';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { Context, SQSEvent } from 'aws-lambda';
import { sentinelMetrics } from '../aws/metrics';
import { type SdkTimeouts, timedClientConfig } from '../aws/sdk-timeouts';
import { METRICS } from '../core/scan/config';
import { handleWebhookEvent, type SecretReader, ssmSecretReader } from './webhook-subscriber';

/**
 * A parameter read (the webhook's URL, its signing key) may take 2 s an attempt, 3 attempts: at
 * most 6.6 s with the SDK's waits, so a read that hangs fails its record (the queue delivers it
 * again) well inside the function's 30 s, rather than Lambda's timeout failing the whole batch.
 */
export const WEBHOOK_SDK_TIMEOUTS: SdkTimeouts = {
  connectionTimeoutMs: 1_000,
  requestTimeoutMs: 2_000,
  maxAttempts: 3,
};

/** The webhook function's parameter reader, each call bounded by `timeouts` (a test gives small ones). */
export const webhookSecrets = (timeouts: SdkTimeouts = WEBHOOK_SDK_TIMEOUTS): SecretReader =>
  ssmSecretReader(new SSMClient(timedClientConfig(timeouts)));

// Clients at module scope: created once per container, reused by warm invocations.
const logger = new Logger({ serviceName: 'domain-sentinel-webhook' });
const metrics = sentinelMetrics(METRICS.webhookService, process.env);
const secrets = webhookSecrets();

/** Each webhook's queue (subscribed to the alert topic) invokes this with its alerts. */
export const handler = async (event: SQSEvent, context: Context) =>
  handleWebhookEvent(
    event,
    { env: process.env, secrets, logger, metrics },
    context.getRemainingTimeInMillis(),
  );
