import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { ENV } from '../../functions/core/config';
import { ConfigError } from '../../functions/core/errors';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { noPositionals, parseNow, positiveInt, str } from '../args';
import { type CliIo, type Command, EXIT, type ParsedArgs } from '../command';
import { scan } from './scan';

/**
 * `sentinel try-alerts`: the alert path of a deployed stack, tried on one machine without an AWS
 * account or the AWS CLI. fauxqs (a dev dependency, so it is imported only here) emulates SNS and
 * SQS; the scan is the real `scan` command publishing through the real AWS SDK.
 */
export const tryAlerts: Command = {
  name: 'try-alerts',
  summary: 'the alert path end to end through an SNS/SQS emulator, without AWS',
  about:
    'Starts an SNS/SQS emulator (fauxqs) on 127.0.0.1 with a topic and two queues (one unfiltered, one with ' +
    'the SMS filter severity = critical), the simulator, and one real scan publishing through the AWS SDK; ' +
    'then prints what each queue received.',
  options: {
    domains: { type: 'string', value: 'N', doc: 'domains in the portfolio', default: '60' },
    seed: { type: 'string', value: 'S', doc: 'portfolio seed', default: '7' },
    now: {
      type: 'string',
      value: 'ISO',
      doc: 'lay the portfolio out and scan at this instant',
      default: 'now',
    },
  },
  run: runTryAlerts,
};

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
}

interface Envelope {
  readonly Subject?: string | null;
  readonly Message: string;
  readonly MessageAttributes?: Record<string, { Type: string; Value: string }>;
}

/** The story: emulator and simulator up, a topic with two queues, one real scan, what each queue got. */
async function runTryAlerts(args: ParsedArgs, io: CliIo): Promise<number> {
  noPositionals(tryAlerts, args);
  const now = parseNow(str(args.values.now));
  const domains = positiveInt(str(args.values.domains), '--domains', 60, 100_000);
  const seed = positiveInt(str(args.values.seed), '--seed', 7, 100_000);
  const emulator = await startEmulator();
  let sim: Simulator | undefined;
  try {
    sim = await startSimulator({ portfolio: generatePortfolio({ domains, seed, now }), apiKey: API_KEY });
    const { topicArn, queues } = await createTopicWithQueues(emulator);
    io.stdout(
      `SNS/SQS emulator (fauxqs) on ${emulator.endpoint}, topic ${topicArn}\n` +
        queues.map((q) => `  queue ${q.name}: subscribed with ${q.about}\n`).join('') +
        `reseller simulator on ${sim.url} (${domains} domains, seed ${seed})\n\n` +
        `$ sentinel scan --now ${new Date(now).toISOString()}\n`,
    );
    const code = await scanPublishingTo(topicArn, sim.url, now, emulator, io);
    if (code !== EXIT.ok) return code;
    for (const queue of queues) io.stdout(await describeQueue(queue, emulator));
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
async function createTopicWithQueues(emulator: Emulator) {
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
    return { name, url: QueueUrl as string, about };
  };
  const queues = [
    await subscribe('all-alerts', 'no filter, like the e-mail subscribers'),
    await subscribe(
      'critical-only',
      `filter policy ${JSON.stringify(SMS_FILTER)}, the stack's SMS filter`,
      SMS_FILTER,
    ),
  ];
  return { topicArn, queues };
}

/** The one real `scan`, publishing through the AWS SDK to the emulated topic. */
function scanPublishingTo(topicArn: string, baseUrl: string, now: number, emulator: Emulator, io: CliIo) {
  return scan.run(
    { values: { now: new Date(now).toISOString() }, positionals: [] },
    {
      ...io,
      env: {
        ...io.env,
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

/** One SNS delivery: subject, attributes, and the `sqs` variant of the message. */
function describeDelivery(envelope: Envelope): string {
  const attributes = Object.entries(envelope.MessageAttributes ?? {})
    .map(([name, a]) => `${name}=${a.Value} (${a.Type})`)
    .join(', ');
  // Real SNS hands an SQS subscriber only the `sqs` member of a MessageStructure=json message;
  // fauxqs passes the whole structure through, so pick it as SNS would.
  const structure = JSON.parse(envelope.Message) as Record<string, string>;
  const report = JSON.parse(structure.sqs ?? envelope.Message) as {
    summary: Record<string, number>;
    findings: Array<{ domain_name?: string; handle?: string; kind: string; severity: string }>;
    problems: unknown[];
  };
  const first = report.findings[0];
  return (
    `  Subject: ${envelope.Subject ?? '(none)'}\n` +
    `  MessageAttributes: ${attributes}\n` +
    `  Message (the sqs variant, the JSON report): summary ${JSON.stringify(report.summary)}, ` +
    `${report.findings.length} findings, ${report.problems.length} unreadable record${report.problems.length === 1 ? '' : 's'}` +
    (first ? `; first: ${first.domain_name ?? first.handle} ${first.kind} ${first.severity}` : '') +
    '\n' +
    `  (the same message carries the digest for e-mail and this SMS: ${JSON.stringify(structure.sms ?? '')})\n`
  );
}
