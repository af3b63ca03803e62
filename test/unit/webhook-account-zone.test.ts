import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { chatNotificationOf } from '../../functions/core/alerts/chat';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import type { Report } from '../../functions/core/scan/scan';
import { handleWebhookEvent } from '../../functions/handlers/webhook-subscriber';
import { domainFinding, reportOf } from '../support/report';

const QUEUE = 'arn:aws:sqs:eu-west-1:123456789012:webhook-slack';

/** An account in Auckland whose restore-by is 2 Dec 23:30 UTC: 3 Dec where its people are. */
const aucklandReport = (): Report => {
  const r = reportOf([
    domainFinding('example.nl', 'quarantine', 'critical', -20, {
      date_deleted: '2026-11-02T09:00:00.000Z',
      restore_by: '2026-12-02T23:30:00.000Z',
      days_to_restore: 10,
    }),
  ]);
  return { ...r, source: { ...r.source, account: 'brand-nz', time_zone: 'Pacific/Auckland' } };
};

async function postedSlackText(report: Report): Promise<string> {
  const bodies: string[] = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    bodies.push(String(init.body));
    return new Response('ok', { status: 200 });
  }) as typeof globalThis.fetch;
  const event = {
    Records: [
      {
        messageId: 'm1',
        eventSourceARN: QUEUE,
        body: JSON.stringify({ Type: 'Notification', MessageId: 'sns-1', Message: JSON.stringify(report) }),
      },
    ],
  } as unknown as SQSEvent;
  const answer = await handleWebhookEvent(
    event,
    {
      // The deployment's zone is UTC; the account's own is Auckland.
      env: {
        WEBHOOK_TARGETS: JSON.stringify([{ format: 'slack', parameter: '/ds/slack', queue: QUEUE }]),
        TIME_ZONE: 'UTC',
      },
      secrets: async () => 'https://hooks.slack.example/services/T0/B0/secret-token-1',
      logger: { info: () => undefined, error: () => undefined },
      metrics: { addMetric: () => undefined, publishStoredMetrics: () => undefined },
      post: { fetch, attempts: 1 },
    },
    30_000,
  );
  expect(answer).toEqual({ batchItemFailures: [] });
  return bodies.join('\n');
}

describe('an account with a time zone of its own, in its webhooks', () => {
  it('dates the Slack message in the account zone, as its e-mail and chat notification are', async () => {
    const report = aucklandReport();
    const text = await postedSlackText(report);
    // The chat notification (Amazon Q) is built with the account zone by the scan itself.
    const chat = JSON.stringify(
      chatNotificationOf(buildAlertMessage(report), { timeZone: 'Pacific/Auckland' }),
    );
    expect(chat).toMatch(/restore by 3 Dec 2026/);
    expect(text).toMatch(/restore by 3 Dec 2026/);
    expect(text).not.toMatch(/restore by 2 Dec/);
  });

  it('falls back to the deployment zone when the report names a zone that is not one', async () => {
    const report = aucklandReport();
    const text = await postedSlackText({
      ...report,
      source: { ...report.source, time_zone: 'Mars/Olympus' },
    });
    expect(text).toMatch(/restore by 2 Dec 2026/);
  });
});
