import { createServer } from 'node:http';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SdkTimeouts } from '../../functions/aws/sdk-timeouts';
import { releaseDeps } from '../../functions/handlers/settings-release';
import { handleReleaseEvent } from '../../functions/handlers/settings-release-handler';
import { webhookSecrets } from '../../functions/handlers/webhook';
import { handleWebhookEvent } from '../../functions/handlers/webhook-subscriber';
import { captureOutput } from '../support/capture';
import { listenOnLoopback } from '../support/loopback';
import { releaseEvent } from '../support/release-event';
import { domainFinding, reportOf } from '../support/report';

/*
 * The settings release's and the webhook subscriber's AWS clients give up on a call that never
 * answers: the real SDK clients against a server on loopback that takes each request and never
 * answers, with small timeouts given as each entry's configuration.
 */

const SMALL: SdkTimeouts = { connectionTimeoutMs: 200, requestTimeoutMs: 300, maxAttempts: 2 };
const closers: Array<() => Promise<void>> = [];

/** A server on loopback that takes each request whole and never answers; `seen` counts them. */
async function silentServer() {
  const seen = { requests: 0 };
  const server = createServer((req) => {
    seen.requests++;
    req.resume();
  });
  const { url, close } = await listenOnLoopback(server);
  closers.push(close);
  return { url, seen };
}

beforeEach(() => {
  for (const [name, value] of Object.entries({
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  }))
    vi.stubEnv(name, value);
});
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('the settings release when AWS does not answer', () => {
  it('leaves both settings after the configured attempts and still tells CloudFormation SUCCESS', async () => {
    const output = captureOutput();
    const aws = await silentServer();
    vi.stubEnv('AWS_ENDPOINT_URL_API_GATEWAY', aws.url);
    vi.stubEnv('AWS_ENDPOINT_URL_SNS', aws.url);
    const responses: string[] = [];
    const event = releaseEvent('Delete', {
      ApiGatewayCloudWatchRole: 'arn:aws:iam::123456789012:role/ours-api',
      SmsDeliveryStatusRole: 'arn:aws:iam::123456789012:role/ours-sms',
    });
    await handleReleaseEvent(event, {
      ...releaseDeps(SMALL),
      respond: async (_url, body) => {
        responses.push(body);
      },
    });
    // Each setting's read, tried as often as configured, then left as it is.
    expect(aws.seen.requests).toBe(2 * SMALL.maxAttempts);
    expect(JSON.parse(responses[0] ?? '{}')).toMatchObject({
      Status: 'SUCCESS',
      Reason: 'released: {"ApiGatewayCloudWatchRole":"failed","SmsDeliveryStatusRole":"failed"}',
    });
    expect(output()).toContain('TimeoutError');
  });
});

describe('the webhook subscriber when SSM does not answer', () => {
  it('fails the record whose URL it cannot read after the configured attempts, posting nothing', async () => {
    const ssm = await silentServer();
    vi.stubEnv('AWS_ENDPOINT_URL_SSM', ssm.url);
    const queue = 'arn:aws:sqs:eu-west-1:123456789012:webhook-slack';
    const errors: string[] = [];
    let posts = 0;
    const event = {
      Records: [
        {
          messageId: 'm1',
          eventSourceARN: queue,
          body: JSON.stringify({
            Type: 'Notification',
            MessageId: 'sns-1',
            Message: JSON.stringify(reportOf([domainFinding('example.nl', 'expiring', 'warning', 5)])),
          }),
        },
      ],
    } as unknown as SQSEvent;
    const answer = await handleWebhookEvent(
      event,
      {
        env: { WEBHOOK_TARGETS: JSON.stringify([{ format: 'slack', parameter: '/ds/slack', queue }]) },
        secrets: webhookSecrets(SMALL),
        logger: { info: () => undefined, error: (message: string) => errors.push(message) },
        metrics: { addMetric: () => undefined, publishStoredMetrics: () => undefined },
        post: {
          fetch: (async () => {
            posts++;
            return new Response('ok');
          }) as typeof fetch,
          attempts: 1,
        },
      },
      30_000,
    );
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(ssm.seen.requests).toBe(SMALL.maxAttempts);
    expect(errors).toEqual(['could not post the alert to the webhook']);
    expect(posts).toBe(0);
  });
});
