import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import type { SQSEvent } from 'aws-lambda';
import { ConfigError } from '../../functions/core/base/errors';
import { ENV, WEBHOOK_FORMATS, type WebhookFormat } from '../../functions/core/scan/config';
import { handleWebhookEvent } from '../../functions/handlers/webhook-subscriber';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { noPositionals, oneOf, parseNow, positiveInt, str, withoutSettings } from '../args';
import { type CliIo, EXIT, type ParsedArgs } from '../command';
import { tryAlerts } from './index';

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };
const TOPIC = 'domain-sentinel-alerts';
const API_KEY = 'try-alerts-simulator-key';
/** The filter policy the stack puts on SMS subscriptions (lib/ alert topic). */
const SMS_FILTER = { severity: ['critical'] };

type Sqs = typeof import('@aws-sdk/client-sqs');

interface Emulator {
  readonly endpoint: string;
  readonly sns: () => SNSClient;
  readonly sqs: InstanceType<Sqs['SQSClient']>;
  readonly sqsModule: Sqs;
  close(): Promise<void>;
}

interface Queue {
  readonly name: string;
  readonly url: string;
  readonly about: string;
  readonly arn?: string;
  /** The format of the webhook this queue feeds (--webhook-format). */
  readonly webhook?: WebhookFormat;
}

interface Envelope {
  readonly Subject?: string | null;
  readonly Message: string;
  readonly MessageAttributes?: Record<string, { Type: string; Value: string }>;
}

/**
 * `sentinel try-alerts`: the alert path of a deployed stack, tried on one machine without an AWS
 * account or the AWS CLI. fauxqs (a dev dependency, so it is imported only here) emulates SNS and
 * SQS; the scan is the real `scan` command publishing through the real AWS SDK.
 * The story: emulator and simulator up, a topic with two queues, one real scan, what each queue got.
 */
export async function runTryAlerts(args: ParsedArgs, io: CliIo): Promise<number> {
  noPositionals(tryAlerts, args);
  const now = parseNow(str(args.values.now));
  const domains = positiveInt(str(args.values.domains), '--domains', 60, 100_000);
  const seed = positiveInt(str(args.values.seed), '--seed', 7, 100_000);
  const format = oneOf(str(args.values['webhook-format']), '--webhook-format', WEBHOOK_FORMATS);
  const emulator = await startEmulator();
  let sim: Simulator | undefined;
  try {
    sim = await startSimulator({ portfolio: generatePortfolio({ domains, seed, now }), apiKey: API_KEY });
    const { topicArn, queues } = await createTopicWithQueues(emulator, format);
    io.stdout(
      `SNS/SQS emulator (fauxqs) on ${emulator.endpoint}, topic ${topicArn}\n` +
        queues.map((q) => `  queue ${q.name}: subscribed with ${q.about}\n`).join('') +
        `reseller simulator on ${sim.url} (${domains} domains, seed ${seed})\n\n` +
        `$ sentinel scan --now ${new Date(now).toISOString()}\n`,
    );
    const code = await scanPublishingTo(topicArn, sim.url, now, emulator, io);
    if (code !== EXIT.ok) return code;
    for (const queue of queues)
      io.stdout(
        queue.webhook
          ? await deliverToWebhook(queue, queue.webhook, emulator)
          : await describeQueue(queue, emulator),
      );
    return EXIT.ok;
  } finally {
    await sim?.close();
    await emulator.close();
  }
}

/** fauxqs on 127.0.0.1 (its own start helper binds every interface), and SNS/SQS clients for it. */
async function startEmulator(): Promise<Emulator> {
  let fauxqs: typeof import('fauxqs');
  let sqsModule: Sqs;
  try {
    fauxqs = await import('fauxqs');
    sqsModule = await import('@aws-sdk/client-sqs');
  } catch (error) {
    throw new ConfigError(
      'try-alerts needs the dev dependencies fauxqs and @aws-sdk/client-sqs; run npm ci (not npm ci --omit=dev)',
      { cause: error },
    );
  }
  const app = fauxqs.buildApp({ logger: false });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const endpoint = address.replace('localhost', '127.0.0.1');
  return {
    endpoint,
    sns: () => new SNSClient({ endpoint, region: REGION, credentials: CREDENTIALS }),
    sqs: new sqsModule.SQSClient({ endpoint, region: REGION, credentials: CREDENTIALS }),
    sqsModule,
    close: async () => {
      await app.close();
    },
  };
}

/** The alert topic with two SQS subscribers: one like the e-mail ones, one with the stack's SMS filter. */
async function createTopicWithQueues(emulator: Emulator, format: WebhookFormat | undefined) {
  const sns = emulator.sns();
  const { CreateQueueCommand, GetQueueAttributesCommand } = emulator.sqsModule;
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: TOPIC }));
  const topicArn = TopicArn as string;
  const subscribe = async (name: string, about: string, filter?: Record<string, unknown>): Promise<Queue> => {
    const { QueueUrl } = await emulator.sqs.send(new CreateQueueCommand({ QueueName: name }));
    const { Attributes } = await emulator.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    await sns.send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: 'sqs',
        Endpoint: Attributes?.QueueArn,
        Attributes: filter ? { FilterPolicy: JSON.stringify(filter) } : {},
      }),
    );
    return { name, url: QueueUrl as string, about, arn: Attributes?.QueueArn as string };
  };
  const queues = [
    await subscribe('all-alerts', 'no filter, like the e-mail subscribers'),
    await subscribe(
      'critical-only',
      `filter policy ${JSON.stringify(SMS_FILTER)}, the stack's SMS filter`,
      SMS_FILTER,
    ),
  ];
  if (format)
    queues.push({
      ...(await subscribe(`webhook-${format}`, `the SNS envelope, as the stack's webhook queue (${format})`)),
      webhook: format,
    });
  return { topicArn, queues };
}

/** The one real `scan`, publishing through the AWS SDK to the emulated topic. */
async function scanPublishingTo(
  topicArn: string,
  baseUrl: string,
  now: number,
  emulator: Emulator,
  io: CliIo,
) {
  return (await import('./scan')).runScan(
    { values: { now: new Date(now).toISOString() }, positionals: [] },
    {
      ...io,
      // Only the emulator's topic and the simulator: a real setup's webhook, heartbeat, state or
      // report folder in the environment is neither reached nor changed by the try-out.
      env: {
        ...withoutSettings(io.env),
        [ENV.resellerBaseUrl]: baseUrl,
        [ENV.resellerApiKey]: API_KEY,
        [ENV.alertTopicArn]: topicArn,
      },
      sns: emulator.sns,
    },
  );
}

/** What one queue received, as an SQS subscriber of real SNS sees it. */
async function describeQueue(queue: Queue, emulator: Emulator): Promise<string> {
  const { Messages = [] } = await emulator.sqs.send(
    new emulator.sqsModule.ReceiveMessageCommand({
      QueueUrl: queue.url,
      MaxNumberOfMessages: 10,
      // Long polling: a delivery still on its way is waited for, an empty queue costs a second.
      WaitTimeSeconds: 1,
      MessageAttributeNames: ['All'],
    }),
  );
  return (
    `\nqueue ${queue.name} received ${Messages.length} message${Messages.length === 1 ? '' : 's'}\n` +
    Messages.map((m) => describeDelivery(JSON.parse(m.Body ?? '{}') as Envelope)).join('')
  );
}

/** One SNS delivery: subject, attributes, and the variant an SQS subscriber gets (`default`). */
function describeDelivery(envelope: Envelope): string {
  const attributes = Object.entries(envelope.MessageAttributes ?? {})
    .map(([name, a]) => `${name}=${a.Value} (${a.Type})`)
    .join(', ');
  // Real SNS hands an SQS subscriber the `sqs` member of a MessageStructure=json message, else
  // `default` (where the alert keeps its JSON); fauxqs passes the whole structure through.
  const structure = JSON.parse(envelope.Message) as Record<string, string>;
  const report = JSON.parse(structure.sqs ?? structure.default ?? envelope.Message) as {
    summary: Record<string, number>;
    findings: Array<{ domain_name?: string; handle?: string; kind: string; severity: string }>;
    problems: unknown[];
  };
  const first = report.findings[0];
  return (
    `  Subject: ${envelope.Subject ?? '(none)'}\n` +
    `  MessageAttributes: ${attributes}\n` +
    `  Message (the default variant, the JSON report): summary ${JSON.stringify(report.summary)}, ` +
    `${report.findings.length} findings, ${report.problems.length} unreadable record${report.problems.length === 1 ? '' : 's'}` +
    (first ? `; first: ${first.domain_name ?? first.handle} ${first.kind} ${first.severity}` : '') +
    '\n' +
    `  (the same message carries the digest for e-mail and this SMS: ${JSON.stringify(structure.sms ?? '')})\n`
  );
}

/**
 * The webhook queue's message handed to the real subscriber handler (as Lambda's poller hands it),
 * which posts to a receiver on 127.0.0.1; prints what the receiver got.
 */
async function deliverToWebhook(queue: Queue, format: WebhookFormat, emulator: Emulator): Promise<string> {
  const got: Array<{ headers: Record<string, unknown>; body: string }> = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/${format}`;
  try {
    const { Messages = [] } = await emulator.sqs.send(
      new emulator.sqsModule.ReceiveMessageCommand({
        QueueUrl: queue.url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
      }),
    );
    const event: SQSEvent = {
      Records: Messages.map((m) => {
        const envelope = JSON.parse(m.Body ?? '{}') as Envelope;
        // Real SNS puts only the `sqs` member, else `default`, into an SQS subscriber's envelope; fauxqs keeps them all.
        const structure = JSON.parse(envelope.Message) as Record<string, string>;
        return {
          messageId: m.MessageId as string,
          receiptHandle: m.ReceiptHandle as string,
          body: JSON.stringify({
            ...envelope,
            Message: structure.sqs ?? structure.default ?? envelope.Message,
          }),
          attributes: {} as SQSEvent['Records'][number]['attributes'],
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: queue.arn as string,
          awsRegion: REGION,
        };
      }),
    };
    const lines: string[] = [];
    const outcome = await handleWebhookEvent(
      event,
      {
        env: {
          [ENV.webhookTargets]: JSON.stringify([
            { format, parameter: '/try-alerts/webhook', queue: queue.arn },
          ]),
          [ENV.webhookSigningKeyParameter]: '/try-alerts/signing-key',
        },
        secrets: async (name) => (name === '/try-alerts/webhook' ? url : TRY_SIGNING_KEY),
        logger: { info: (m: string) => void lines.push(m), error: (m: string) => void lines.push(m) },
        metrics: { addMetric: () => {}, publishStoredMetrics: () => {} },
      },
      30_000,
    );
    const shown = got
      .map(
        (p) =>
          `  POST /${format} ${Buffer.byteLength(p.body)} bytes${p.headers['x-sentinel-signature'] ? `, X-Sentinel-Signature: ${String(p.headers['x-sentinel-signature']).slice(0, 30)}…` : ''}\n` +
          `  ${p.body.slice(0, 300)}${p.body.length > 300 ? '…' : ''}\n`,
      )
      .join('');
    return (
      `\nqueue ${queue.name}: the webhook subscriber (${lines.join('; ')}; ${outcome.batchItemFailures.length} failed) posted to a receiver on 127.0.0.1:\n` +
      shown
    );
  } finally {
    await new Promise<void>((r) => receiver.close(() => r()));
  }
}

/** Signs the json format in the try-out (a try-out key, not a secret). */
const TRY_SIGNING_KEY = 'try-alerts-webhook-signing-key-not-a-secret';
