import { Logger } from '@aws-lambda-powertools/logger';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { Context, SQSEvent } from 'aws-lambda';
import { sentinelMetrics } from '../aws/metrics';
import { METRICS } from '../core/scan/config';
import { handleWebhookEvent, ssmSecretReader } from './webhook-subscriber';

// Clients at module scope: created once per container, reused by warm invocations.
const logger = new Logger({ serviceName: 'domain-sentinel-webhook' });
const metrics = sentinelMetrics(METRICS.webhookService, process.env);
const secrets = ssmSecretReader(new SSMClient({}));

/** Each webhook's queue (subscribed to the alert topic) invokes this with its alerts. */
export const handler = async (event: SQSEvent, context: Context) =>
  handleWebhookEvent(
    event,
    { env: process.env, secrets, logger, metrics },
    context.getRemainingTimeInMillis(),
  );
