import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { groupLabel } from '../core/alerts/groups';
import { checkWebhookUrl, parseWebhookTargets, type WebhookTarget } from '../core/alerts/webhook-delivery';
import {
  DELIVERY_HEADER,
  parseAlertReport,
  renderWebhookBody,
  SIGNATURE_HEADER,
  signWebhookBody,
} from '../core/alerts/webhook-formats';
import { ConfigError, SecretError } from '../core/base/errors';
import { ENV, METRICS, parseSetting } from '../core/scan/config';
import { type PostOptions, postWebhook, type WebhookOutcome } from '../use-cases/webhook-post';

/** Reads a SecureString by name; errors name the parameter, never a value. */
export type SecretReader = (parameterName: string) => Promise<string>;

/** How long a webhook URL is cached across warm invocations: a changed URL lands within minutes. */
const CACHE_SECONDS = 300;
/** A signing key shorter than this is refused: it would be guessable. */
const MIN_SIGNING_KEY = 32;

/** SecureStrings through SSM, decrypted and cached a few minutes (Powertools Parameters). */
export function ssmSecretReader(client: SSMClient): SecretReader {
  const provider = new SSMProvider({ awsSdkV3Client: client });
  return async (name) => {
    let value: unknown;
    try {
      value = await provider.get(name, { decrypt: true, maxAge: CACHE_SECONDS });
    } catch (error) {
      const cause = (error as { cause?: { name?: string } }).cause;
      throw new SecretError(
        `could not read SSM parameter ${name} (${cause?.name ?? (error as Error).name})`,
        {
          cause: error,
        },
      );
    }
    if (typeof value !== 'string' || value.trim() === '')
      throw new SecretError(`SSM parameter ${name} is empty`);
    return value.trim();
  };
}

export interface WebhookSubscriberDeps {
  readonly env: NodeJS.ProcessEnv;
  readonly secrets: SecretReader;
  readonly logger: Pick<Logger, 'info' | 'error'>;
  /** Powertools Metrics, or anything that counts the same way. */
  readonly metrics: {
    addMetric(name: string, unit: Parameters<Metrics['addMetric']>[1], value: number): unknown;
    publishStoredMetrics(): unknown;
  };
  readonly post?: PostOptions;
  /** @default Date.now */
  readonly clock?: () => number;
}

/** The SNS envelope an SQS subscription (raw delivery off) receives. */
interface SnsEnvelope {
  readonly Type?: string;
  readonly MessageId?: string;
  readonly Message?: string;
}

/**
 * Posts each alert that arrives on a webhook's queue to that webhook, in its format. One queue per
 * webhook, so a webhook that fails is retried (the queue redelivers it, then parks it in the
 * dead-letter queue) without posting twice to the others. A webhook that answers 4xx is a
 * configuration error: counted as WebhookRejected, whose alarm tells the ops topic.
 */
export async function handleWebhookEvent(
  event: SQSEvent,
  deps: WebhookSubscriberDeps,
  remainingMs: number,
): Promise<SQSBatchResponse> {
  const clock = deps.clock ?? Date.now;
  const deadline = clock() + Math.max(1_000, remainingMs - 3_000);
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  try {
    const targets = parseWebhookTargets(deps.env[ENV.webhookTargets], ENV.webhookTargets);
    for (const record of event.Records) {
      const target = targets.find((t) => t.queue === record.eventSourceARN);
      try {
        if (!target) throw new ConfigError(`no webhook is configured for the queue ${record.eventSourceARN}`);
        const outcome = await deliver(record, target, deps, deadline);
        const about = {
          format: target.format,
          parameter: target.parameter,
          host: outcome.host,
          status: outcome.status,
          attempts: outcome.attempts,
          messageId: record.messageId,
        };
        if (outcome.kind === 'delivered') {
          deps.logger.info('posted the alert to the webhook', about);
          continue;
        }
        if (outcome.kind === 'rejected') {
          deps.metrics.addMetric(METRICS.webhookRejected, MetricUnit.Count, 1);
          deps.logger.error(
            `the ${target.format} webhook refused the alert (HTTP ${outcome.status}): its URL in ${target.parameter} is wrong, revoked or moved, or it refuses the body; fix the parameter, then redrive the dead-letter queue`,
            { ...about, reason: outcome.reason },
          );
        } else {
          deps.logger.error(
            `the ${target.format} webhook did not take the alert; the queue will deliver it again`,
            {
              ...about,
              reason: outcome.reason,
            },
          );
        }
        failures.push({ itemIdentifier: record.messageId });
      } catch (error) {
        deps.logger.error('could not post the alert to the webhook', {
          reason: (error as Error).message,
          errorName: (error as Error).name,
          messageId: record.messageId,
        });
        failures.push({ itemIdentifier: record.messageId });
      }
    }
  } catch (error) {
    // Configuration that does not parse fails every record: each stays in its queue, then the dead-letter queue.
    deps.logger.error('webhook subscriber misconfigured', { reason: (error as Error).message });
    return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
  } finally {
    deps.metrics.publishStoredMetrics();
  }
  return { batchItemFailures: failures };
}

/**
 * The zone an account's report says its alerts are dated in (its own `timeZone`, which the webhook
 * subscriber's environment does not hold): its Slack and Teams messages give the restore-by day its
 * e-mail gives. One that is not a zone is not trusted: the deployment's applies.
 */
function accountZone(zone: string | undefined): string | undefined {
  if (zone === undefined) return undefined;
  try {
    return parseSetting('timeZone', zone);
  } catch {
    return undefined;
  }
}

async function deliver(
  record: SQSRecord,
  target: WebhookTarget,
  deps: WebhookSubscriberDeps,
  deadline: number,
): Promise<WebhookOutcome> {
  let envelope: SnsEnvelope;
  try {
    envelope = JSON.parse(record.body) as SnsEnvelope;
  } catch {
    throw new ConfigError(
      'the message is not an SNS notification (JSON); the queue must be subscribed with raw delivery off',
    );
  }
  if (typeof envelope.Message !== 'string')
    throw new ConfigError(
      'the message is not an SNS notification; the queue must be subscribed with raw delivery off',
    );
  const reportJson = envelope.Message;
  const report = parseAlertReport(reportJson);
  // Labelled as the e-mail subject is (alertMessageOf): the account's own label, else its name,
  // else this deployment's label, with a group's name for a group's message. Read from the report,
  // not the `account` attribute: SNS sends message attributes only with a String message, not with
  // MessageStructure json (sns-message-attributes), so in AWS the notification carries none.
  const source = report.source;
  const accountLabel = groupLabel(
    source?.account_label ?? source?.account ?? deps.env[ENV.accountLabel],
    source?.group,
  );
  const timeZone = accountZone(source?.time_zone) ?? parseSetting('timeZone', deps.env[ENV.timeZone]);
  const body = renderWebhookBody(target.format, reportJson, report, {
    timeZone,
    ...(accountLabel ? { accountLabel } : {}),
  });
  const url = checkWebhookUrl(await deps.secrets(target.parameter), `SSM parameter ${target.parameter}`);
  // SNS's message id: the same on every redelivery of one alert, so a receiver can ignore a repeat.
  const deliveryId = envelope.MessageId ?? record.messageId;
  const headers: Record<string, string> = {
    'user-agent': 'domain-sentinel',
    [DELIVERY_HEADER.toLowerCase()]: deliveryId,
  };
  if (target.format === 'json') {
    const parameter = deps.env[ENV.webhookSigningKeyParameter];
    if (!parameter)
      throw new ConfigError(
        `${ENV.webhookSigningKeyParameter} is not set (the stack sets it for a json webhook)`,
      );
    const key = await deps.secrets(parameter);
    if (key.length < MIN_SIGNING_KEY)
      throw new SecretError(
        `SSM parameter ${parameter} must hold a key of at least ${MIN_SIGNING_KEY} characters`,
      );
    headers[SIGNATURE_HEADER.toLowerCase()] = signWebhookBody({
      body,
      deliveryId,
      key,
      unixSeconds: Math.floor((deps.clock ?? Date.now)() / 1000),
    });
  }
  return postWebhook(url, body, headers, { ...deps.post, deadline });
}
