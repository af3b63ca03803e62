import { parseArgs } from 'node:util';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { ENV } from '../functions/core/config';
import { ConfigError } from '../functions/core/errors';
import { parseRfc3339 } from '../functions/core/schemas';
import { generatePortfolio } from '../functions/simulator/portfolio';
import { startSimulator } from '../functions/simulator/server';
import { type CommandSpec, commandSpec, parseOptionsOf } from './commands';

/**
 * `sentinel try-alerts`: the alert path of a deployed stack, tried on one machine without an AWS
 * account or the AWS CLI. fauxqs (a dev dependency, so it is imported only here) emulates SNS and
 * SQS; the scan is the real `scan` command publishing through the real AWS SDK.
 */

/** What try-alerts needs from the command line without importing it (cli.ts imports this module). */
export interface TryAlertsIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly sns?: () => SNSClient;
}

type RunCommand = (argv: readonly string[], io: TryAlertsIo) => Promise<number>;

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };
const TOPIC = 'domain-sentinel-alerts';
/** The filter policy the stack puts on SMS subscriptions (lib/ alert topic). */
const SMS_FILTER = { severity: ['critical'] };

interface Envelope {
  readonly Subject?: string | null;
  readonly Message: string;
  readonly MessageAttributes?: Record<string, { Type: string; Value: string }>;
}

function wholeNumber(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 100_000)
    throw new ConfigError(`${flag} must be a whole number from 1 to 100000`);
  return Number(text);
}

/** Runs the try-out; `run` is the command line's main(), used for the one real `scan`. */
export async function tryAlertsCommand(
  args: readonly string[],
  io: TryAlertsIo,
  run: RunCommand,
): Promise<number> {
  const spec = commandSpec('try-alerts') as CommandSpec;
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...args], options: parseOptionsOf(spec), strict: true }));
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}; try: sentinel help`);
  }
  const nowText = typeof values.now === 'string' ? values.now : new Date().toISOString();
  const now = parseRfc3339(nowText);
  if (Number.isNaN(now))
    throw new ConfigError('--now must be an RFC 3339 date-time such as 2026-11-22T06:00:00Z');
  const domains = wholeNumber(values.domains as string | undefined, '--domains', 60);
  const seed = wholeNumber(values.seed as string | undefined, '--seed', 7);

  let fauxqs: typeof import('fauxqs');
  let sqsModule: typeof import('@aws-sdk/client-sqs');
  try {
    fauxqs = await import('fauxqs');
    sqsModule = await import('@aws-sdk/client-sqs');
  } catch (error) {
    throw new ConfigError(
      'try-alerts needs the dev dependencies fauxqs and @aws-sdk/client-sqs; run npm ci (not npm ci --omit=dev)',
      { cause: error },
    );
  }
  const { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } = sqsModule;

  // fauxqs's own start helper binds every interface; the app listened on loopback does not.
  const emulator = fauxqs.buildApp({ logger: false });
  const address = await emulator.listen({ port: 0, host: '127.0.0.1' });
  const endpoint = address.replace('localhost', '127.0.0.1');
  const sns = () => new SNSClient({ endpoint, region: REGION, credentials: CREDENTIALS });
  const sqs = new SQSClient({ endpoint, region: REGION, credentials: CREDENTIALS });
  const apiKey = 'try-alerts-simulator-key';
  const sim = await startSimulator({ portfolio: generatePortfolio({ domains, seed, now }), apiKey });
  try {
    const snsClient = sns();
    const { TopicArn } = await snsClient.send(new CreateTopicCommand({ Name: TOPIC }));
    const topicArn = TopicArn as string;
    const subscribe = async (name: string, filter?: Record<string, unknown>) => {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
      );
      await snsClient.send(
        new SubscribeCommand({
          TopicArn: topicArn,
          Protocol: 'sqs',
          Endpoint: Attributes?.QueueArn,
          Attributes: filter ? { FilterPolicy: JSON.stringify(filter) } : {},
        }),
      );
      return QueueUrl as string;
    };
    const queues = [
      {
        name: 'all-alerts',
        url: await subscribe('all-alerts'),
        about: 'no filter, like the e-mail subscribers',
      },
      {
        name: 'critical-only',
        url: await subscribe('critical-only', SMS_FILTER),
        about: `filter policy ${JSON.stringify(SMS_FILTER)}, the stack's SMS filter`,
      },
    ];
    io.stdout(
      `SNS/SQS emulator (fauxqs) on ${endpoint}, topic ${topicArn}\n` +
        queues.map((q) => `  queue ${q.name}: subscribed with ${q.about}\n`).join('') +
        `reseller simulator on ${sim.url} (${domains} domains, seed ${seed})\n\n` +
        `$ sentinel scan --now ${new Date(now).toISOString()}\n`,
    );

    const code = await run(['scan', '--now', new Date(now).toISOString()], {
      ...io,
      env: {
        ...io.env,
        [ENV.resellerBaseUrl]: sim.url,
        [ENV.resellerApiKey]: apiKey,
        [ENV.alertTopicArn]: topicArn,
      },
      sns,
    });
    if (code !== 0) return code;

    for (const queue of queues) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queue.url,
          MaxNumberOfMessages: 10,
          // Long polling: a delivery still on its way is waited for, an empty queue costs a second.
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
        }),
      );
      io.stdout(
        `\nqueue ${queue.name} received ${Messages.length} message${Messages.length === 1 ? '' : 's'}\n`,
      );
      for (const message of Messages)
        io.stdout(describeDelivery(JSON.parse(message.Body ?? '{}') as Envelope));
    }
    return 0;
  } finally {
    await sim.close();
    await emulator.close();
  }
}

/** One SNS delivery as an SQS subscriber of real SNS sees it. */
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
