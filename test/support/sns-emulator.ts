import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';

const region = 'us-east-1';
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

/**
 * fauxqs, an SNS/SQS emulator, on loopback (its own start helper binds every interface), set up
 * through the real AWS SDK clients the way a stack would be.
 */
export async function startSnsEmulator() {
  const app = buildApp({ logger: false });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const endpoint = address.replace('localhost', '127.0.0.1');
  const sns = new SNSClient({ endpoint, region, credentials });
  const sqs = new SQSClient({ endpoint, region, credentials });

  return {
    endpoint,
    /** AWS SDK environment that points a child process at the emulator. */
    sdkEnv: {
      AWS_ENDPOINT_URL_SNS: endpoint,
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    },
    snsClient: () => new SNSClient({ endpoint, region, credentials }),
    async topic(name: string) {
      const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: name }));
      return TopicArn as string;
    },
    /** A queue subscribed to the topic, optionally with a filter policy on message attributes. */
    async queueSubscribedTo(topicArn: string, name: string, filterPolicy?: Record<string, unknown>) {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
      const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
      await sns.send(
        new SubscribeCommand({
          TopicArn: topicArn,
          Protocol: 'sqs',
          Endpoint: attrs.Attributes?.QueueArn,
          Attributes: filterPolicy ? { FilterPolicy: JSON.stringify(filterPolicy) } : {},
        }),
      );
      return QueueUrl as string;
    },
    /** Every SNS envelope waiting in the queue, parsed. */
    async drain(queueUrl: string): Promise<SnsEnvelope[]> {
      const out: SnsEnvelope[] = [];
      for (;;) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
        );
        if (Messages.length === 0) return out;
        out.push(...Messages.map((m) => JSON.parse(m.Body ?? '{}') as SnsEnvelope));
      }
    },
    close: () => app.close(),
  };
}

export interface SnsEnvelope {
  readonly Type: string;
  readonly Subject: string | null;
  readonly Message: string;
  readonly MessageAttributes: Record<string, { Type: string; Value: string }>;
}

/**
 * The variant an SQS subscriber reads. Real SNS delivers the `sqs` member of a MessageStructure=json
 * message, or `default` where there is none (the alert carries its JSON once, in `default`);
 * fauxqs passes the whole structure through, so pick it here as SNS would.
 */
export function sqsVariant(envelope: SnsEnvelope): string {
  const structure = JSON.parse(envelope.Message) as Record<string, string>;
  return structure.sqs ?? structure.default ?? envelope.Message;
}
