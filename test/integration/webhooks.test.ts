import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { publishAlert } from '../../functions/aws/sns-publish';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import { SIGNATURE_HEADER, verifyWebhookSignature } from '../../functions/core/alerts/webhook-formats';
import type { Report } from '../../functions/core/scan/scan';
import { handleWebhookEvent, ssmSecretReader } from '../../functions/handlers/webhook-subscriber';
import { postWebhook } from '../../functions/use-cases/webhook-post';
import { adaptiveCardProblems, SlackMessageSchema, TeamsMessageSchema } from '../support/chat-schemas';
import { domainFinding, reportOf } from '../support/report';
import { type SnsEnvelope, sqsVariant, startSnsEmulator } from '../support/sns-emulator';

/**
 * The webhook path as deployed: the scan's one SNS message through fauxqs into each webhook's
 * queue, that queue's messages as the SQS event Lambda hands the subscriber, the subscriber posting
 * to a real HTTP receiver on 127.0.0.1, and the receiver checking what arrived as Slack, Teams and
 * a JSON receiver would. SSM is the one part mocked (the project's rule: real emulators elsewhere).
 */

const SIGNING_KEY = 'webhook-signing-key-0123456789abcdef-0123';
/** The secret part of each webhook URL: it must never reach a log line or an error. */
const SECRET = {
  slack: 'T000/B000/XXXXsecretslack',
  teams: 'workflows/abc/sig=secretteams',
  json: 'hook-secretjson',
};

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** What the receiver answers next, per path prefix; absent: 200. */
const answers = new Map<string, Array<{ status: number; headers?: Record<string, string>; body?: string }>>();
let topicArn: string;
const queues: Record<'slack' | 'teams' | 'json', { url: string; arn: string }> = {} as never;
const ssm = mockClient(SSMClient);

beforeAll(async () => {
  emulator = await startSnsEmulator();
  topicArn = await emulator.topic('alerts');
  const sqs = new SQSClient({
    endpoint: emulator.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  for (const format of ['slack', 'teams', 'json'] as const) {
    const url = await emulator.queueSubscribedTo(topicArn, `webhook-${format}`);
    const attrs = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
    );
    queues[format] = { url, arn: attrs.Attributes?.QueueArn as string };
  }
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      // A lying webhook: one that never answers, one that answers a refusal of megabytes.
      if (path === '/hang') return;
      if (path === '/emoji') {
        res.writeHead(403);
        res.end(`a${'\u{1F600}'.repeat(1_000)}`);
        return;
      }
      if (path === '/huge') {
        res.writeHead(403);
        res.end('x'.repeat(5 * 1024 * 1024));
        return;
      }
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const queue = [...answers.entries()].find(([prefix]) => path.startsWith(prefix))?.[1];
      const answer = queue?.shift() ?? { status: path.startsWith('/teams') ? 202 : 200, body: 'ok' };
      res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await emulator?.close();
  await new Promise<void>((r) => receiver?.close(() => r()));
});

beforeEach(() => {
  received.length = 0;
  answers.clear();
  ssm.reset();
  const values: Record<string, string> = {
    '/hooks/slack': `${receiverUrl}/slack/${SECRET.slack}`,
    '/hooks/teams': `${receiverUrl}/teams/${SECRET.teams}`,
    '/hooks/json': `${receiverUrl}/json/${SECRET.json}`,
    '/hooks/signing-key': SIGNING_KEY,
  };
  ssm.on(GetParameterCommand).callsFake(({ Name, WithDecryption }) => {
    if (!WithDecryption) throw new Error('read without decryption');
    const value = values[Name as string];
    if (!value) throw Object.assign(new Error('ParameterNotFound'), { name: 'ParameterNotFound' });
    return { Parameter: { Name, Type: 'SecureString', Value: value } };
  });
});

const report = (): Report => ({
  ...reportOf([
    domainFinding('<!channel>.nl', 'quarantine', 'critical', -20, {
      date_deleted: '2026-11-02T09:00:00.000Z',
      restore_by: '2026-12-02T09:00:00.000Z',
      days_to_restore: 10,
      restore_url: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod/restore/x.nl?exp=1&kid=k&sig=s',
    }),
    domainFinding('@here[x](https://evil.example).nl', 'expiring', 'critical', 2),
    domainFinding('later.eu', 'expiring', 'warning', 20),
  ]),
  report_url: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod/report?exp=1&kid=k&sig=s',
});

/** Publishes the scan's one message and reads each webhook queue as Lambda's poller hands it over. */
async function publishAndReceive(r: Report): Promise<Record<'slack' | 'teams' | 'json', SQSEvent>> {
  await publishAlert(emulator.snsClient(), topicArn, buildAlertMessage(r));
  const sqs = new SQSClient({
    endpoint: emulator.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const events = {} as Record<'slack' | 'teams' | 'json', SQSEvent>;
  for (const format of ['slack', 'teams', 'json'] as const) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queues[format].url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
      }),
    );
    expect(Messages).toHaveLength(1);
    // Taken off the queue, as the poller does once the handler is done: each test reads its own message.
    for (const m of Messages)
      await sqs.send(
        new DeleteMessageCommand({ QueueUrl: queues[format].url, ReceiptHandle: m.ReceiptHandle }),
      );
    events[format] = {
      Records: Messages.map((m) => {
        const envelope = JSON.parse(m.Body ?? '{}') as SnsEnvelope;
        // Real SNS hands an SQS subscriber only the `sqs` member of a MessageStructure=json message.
        const body = JSON.stringify({ ...envelope, Message: sqsVariant(envelope) });
        return {
          messageId: m.MessageId as string,
          receiptHandle: m.ReceiptHandle as string,
          body,
          attributes: {} as never,
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: queues[format].arn,
          awsRegion: 'us-east-1',
        };
      }),
    };
  }
  return events;
}

function subscriber() {
  const lines: string[] = [];
  const metrics: Array<[string, number]> = [];
  const sleeps: number[] = [];
  const deps = {
    env: {
      WEBHOOK_TARGETS: JSON.stringify(
        (['slack', 'teams', 'json'] as const).map((format) => ({
          format,
          parameter: `/hooks/${format}`,
          queue: queues[format].arn,
        })),
      ),
      WEBHOOK_SIGNING_KEY_PARAMETER: '/hooks/signing-key',
      ALERT_TIME_ZONE: 'Europe/Amsterdam',
      ACCOUNT_LABEL: 'Acme',
    },
    secrets: ssmSecretReader(new SSMClient({ region: 'us-east-1' })),
    logger: {
      info: (message: string, extra?: unknown) => void lines.push(`${message} ${JSON.stringify(extra)}`),
      error: (message: string, extra?: unknown) => void lines.push(`${message} ${JSON.stringify(extra)}`),
    },
    metrics: {
      addMetric: (name: string, _unit: unknown, value: number) => void metrics.push([name, value]),
      publishStoredMetrics: () => {},
    },
    post: { sleep: async (ms: number) => void sleeps.push(ms) },
  };
  return { deps: deps as never, lines, metrics, sleeps };
}

describe('webhooks: fauxqs → the subscriber handler → a receiver on 127.0.0.1', () => {
  it('posts the Slack blocks, the Teams Adaptive Card and the signed JSON report', async () => {
    const events = await publishAndReceive(report());
    const { deps, lines, metrics } = subscriber();
    for (const format of ['slack', 'teams', 'json'] as const)
      expect(await handleWebhookEvent(events[format], deps, 30_000)).toEqual({ batchItemFailures: [] });
    expect(received.map((r) => r.path.split('/')[1])).toEqual(['slack', 'teams', 'json']);
    const [slack, teams, json] = received as [Received, Received, Received];

    const slackBody = SlackMessageSchema.parse(JSON.parse(slack.body));
    expect(slackBody.text).toBe('domain-sentinel (Acme): 2 critical, 1 warning');
    expect(slack.body).not.toContain('<!channel>');
    expect(slack.body).toContain('\\\\u003c\\\\u0021channel\\\\u003e.nl');
    expect(slackBody.blocks).toContainEqual(
      expect.objectContaining({
        type: 'section',
        accessory: expect.objectContaining({
          url: expect.stringMatching(/\/restore\/x\.nl\?exp=1&kid=k&sig=s$/),
        }),
      }),
    );

    const teamsBody = TeamsMessageSchema.parse(JSON.parse(teams.body));
    const card = teamsBody.attachments[0]?.content as { version: string };
    expect(card.version).toBe('1.5');
    expect(adaptiveCardProblems(card)).toEqual([]);
    expect(teams.body).not.toContain('@here');

    // As a receiver verifies it: the raw body, the header, the shared key, the clock.
    const signed = {
      body: json.body,
      deliveryId: json.headers['x-sentinel-delivery'] as string,
      header: json.headers[SIGNATURE_HEADER.toLowerCase()] as string,
      key: SIGNING_KEY,
      nowSeconds: Math.floor(Date.now() / 1000),
    };
    expect(verifyWebhookSignature(signed)).toBeNull();
    expect(verifyWebhookSignature({ ...signed, body: json.body.replace('later.eu', 'later.nl') })).toBe(
      'signature does not match',
    );
    const sent = JSON.parse(json.body) as Report;
    expect(sent.findings.map((f) => ('domain_name' in f ? f.domain_name : ''))).toEqual(
      report().findings.map((f) => ('domain_name' in f ? f.domain_name : '')),
    );
    expect(json.headers['x-sentinel-delivery']).toMatch(/\S/);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(metrics).toEqual([]);
    // The URLs are secrets: the logs name the parameter and the host, never the path.
    for (const secret of Object.values(SECRET)) expect(lines.join('\n')).not.toContain(secret);
    expect(lines.join('\n')).toContain('"parameter":"/hooks/slack"');
  });

  it("names the message's account from the report itself: SNS delivers no message attributes with MessageStructure json", async () => {
    // AWS: "Message attributes are sent only when the message structure is String, not JSON"
    // (sns-message-attributes), so the notification a queue receives in AWS has no `account` attribute.
    const r = report();
    const events = await publishAndReceive({ ...r, source: { ...r.source, account: 'brand-b' } });
    const record = events.slack.Records[0] as SQSEvent['Records'][number];
    const { MessageAttributes: _dropped, ...asAwsDelivers } = JSON.parse(record.body) as SnsEnvelope;
    const { deps } = subscriber();
    const event = { Records: [{ ...record, body: JSON.stringify(asAwsDelivers) }] };
    expect(await handleWebhookEvent(event, deps, 30_000)).toEqual({ batchItemFailures: [] });
    expect(JSON.parse((received[0] as Received).body).text).toBe(
      'domain-sentinel (brand-b): 2 critical, 1 warning',
    );
  });

  it("names the account as the e-mail subject does: the account's own label, and a group's message with its group", async () => {
    const { deps } = subscriber();
    const cases = [
      // An account of an accounts file with an accountLabel of its own, its group vip's message.
      [{ account: 'brand-b', account_label: 'Brand B (test)', group: 'vip' }, 'Brand B (test), group vip'],
      // One account, the deployment's ACCOUNT_LABEL (Acme): a group's message still names its group.
      [{ group: 'vip' }, 'Acme, group vip'],
    ] as const;
    for (const [source, label] of cases) {
      received.length = 0;
      const r = report();
      const events = await publishAndReceive({ ...r, source: { ...r.source, ...source } });
      for (const format of ['slack', 'teams'] as const) {
        const record = events[format].Records[0] as SQSEvent['Records'][number];
        const { MessageAttributes: _dropped, ...asAwsDelivers } = JSON.parse(record.body) as SnsEnvelope;
        const event = { Records: [{ ...record, body: JSON.stringify(asAwsDelivers) }] };
        expect(await handleWebhookEvent(event, deps, 30_000)).toEqual({ batchItemFailures: [] });
      }
      const [slack, teams] = received as [Received, Received];
      expect(JSON.parse(slack.body).text).toBe(`domain-sentinel (${label}): 2 critical, 1 warning`);
      expect(teams.body).toContain(JSON.stringify(`domain-sentinel (${label}): 2 critical, 1 warning`));
    }
  });

  it('retries a 503 and a 429 (waiting what Retry-After asks), then delivers', async () => {
    answers.set('/slack', [{ status: 503 }, { status: 429, headers: { 'retry-after': '2' } }]);
    const events = await publishAndReceive(report());
    const { deps, sleeps } = subscriber();
    expect(await handleWebhookEvent(events.slack, deps, 30_000)).toEqual({ batchItemFailures: [] });
    expect(received.filter((r) => r.path.startsWith('/slack'))).toHaveLength(3);
    expect(sleeps).toEqual([1000, 2000]);
    // The other webhooks' queues still hold their message: nobody was posted to twice.
    for (const format of ['teams', 'json'] as const)
      expect(await handleWebhookEvent(events[format], deps, 30_000)).toEqual({ batchItemFailures: [] });
  });

  it('counts a 4xx as a configuration error (WebhookRejected) and leaves the message to the queue, without retrying it itself', async () => {
    answers.set('/teams', [{ status: 404, body: 'Workflow not found' }]);
    const events = await publishAndReceive(report());
    const { deps, lines, metrics } = subscriber();
    const record = events.teams.Records[0]?.messageId;
    expect(await handleWebhookEvent(events.teams, deps, 30_000)).toEqual({
      batchItemFailures: [{ itemIdentifier: record }],
    });
    expect(received).toHaveLength(1);
    expect(metrics).toEqual([['WebhookRejected', 1]]);
    const log = lines.join('\n');
    expect(log).toContain('the teams webhook refused the alert (HTTP 404): its URL in /hooks/teams is wrong');
    expect(log).toContain('Workflow not found');
    expect(log).not.toContain(SECRET.teams);
  });

  it('fails the record, naming the parameter, when a URL cannot be read or is not https', async () => {
    const events = await publishAndReceive(report());
    const { deps, lines } = subscriber();
    ssm.reset();
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: 'http://hooks.example.com/secret-path' } });
    const outcome = await handleWebhookEvent(events.slack, deps, 30_000);
    expect(outcome.batchItemFailures).toHaveLength(1);
    expect(lines.join('\n')).toContain('SSM parameter /hooks/slack must be an https URL');
    expect(lines.join('\n')).not.toContain('secret-path');
    expect(received).toEqual([]);
  });

  it('fails a record from a queue it has no webhook for, and a message that is no report', async () => {
    const events = await publishAndReceive(report());
    const { deps, lines } = subscriber();
    const stray = {
      Records: [{ ...events.slack.Records[0], eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:other' }],
    };
    expect((await handleWebhookEvent(stray as SQSEvent, deps, 30_000)).batchItemFailures).toHaveLength(1);
    const junk = {
      Records: [
        {
          ...events.slack.Records[0],
          body: JSON.stringify({ Type: 'Notification', Message: '{"hello":1}' }),
        },
      ],
    };
    expect((await handleWebhookEvent(junk as SQSEvent, deps, 30_000)).batchItemFailures).toHaveLength(1);
    expect(lines.join('\n')).toContain(
      'no webhook is configured for the queue arn:aws:sqs:us-east-1:000000000000:other',
    );
    expect(lines.join('\n')).toContain('the message is not a domain-sentinel report');
    expect(received).toEqual([]);
  });
});

describe('postWebhook against a lying webhook', () => {
  it('gives up on one that never answers within each try and the deadline, and reads only an excerpt of a huge refusal', async () => {
    const sleeps: number[] = [];
    const started = Date.now();
    const hung = await postWebhook(
      `${receiverUrl}/hang`,
      '{}',
      {},
      {
        timeoutMs: 300,
        attempts: 2,
        sleep: async (ms) => void sleeps.push(ms),
      },
    );
    expect(hung).toMatchObject({ kind: 'failed', status: 0, attempts: 2, reason: 'no answer in time' });
    expect(sleeps).toEqual([1000]);
    // Nothing runs past the deadline: with under a second left, no try starts.
    const late = await postWebhook(`${receiverUrl}/hang`, '{}', {}, { deadline: Date.now() + 500 });
    expect(late).toMatchObject({ kind: 'failed', attempts: 0 });
    expect(Date.now() - started).toBeLessThan(5_000);

    const huge = await postWebhook(`${receiverUrl}/huge`, '{}', {});
    expect(huge).toMatchObject({ kind: 'rejected', status: 403, attempts: 1 });
    expect(huge.reason.length).toBeLessThanOrEqual(300);
  });

  it('cuts a refusal of emoji between characters, never inside one (half of one is no text in a log)', async () => {
    const refused = await postWebhook(`${receiverUrl}/emoji`, '{}', {});
    expect(refused).toMatchObject({ kind: 'rejected', status: 403 });
    expect(refused.reason.length).toBeLessThanOrEqual(300);
    expect(refused.reason).toMatch(/^a\u{1F600}+…$/u);
  });
});
