import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainSentinelStack } from '../../lib/stack';
import { CHAT_CONTEXT, synthStack } from '../support/stack';

let template: Template;
let stack: DomainSentinelStack;
beforeAll(() => {
  ({ template, stack } = synthStack(CHAT_CONTEXT));
}, 180_000);
const id = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as never);
const ssmArn = (name: string) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:ssm:eu-west-1:123456789012:parameter/${name}`]],
});

/** Every statement of the policies attached to a role. */
function statementsOf(roleId: string): Array<Record<string, unknown>> {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement);
}

describe('chat channels (Amazon Q Developer in chat applications)', () => {
  it('has no chat topic and no channel without the settings', () => {
    const { template: plain } = synthStack();
    plain.resourceCountIs('AWS::Chatbot::SlackChannelConfiguration', 0);
    plain.resourceCountIs('AWS::Chatbot::MicrosoftTeamsChannelConfiguration', 0);
    plain.resourceCountIs('AWS::SNS::Topic', 2);
    plain.resourceCountIs('AWS::SQS::Queue', 2);
  });

  it('subscribes a Slack and a Teams channel to the chat topic, with a role that may do nothing and a deny-all guardrail', () => {
    const chat = stack.sentinel.chat;
    if (!chat) throw new Error('no chat channels');
    const common = {
      SnsTopicArns: [{ Ref: id(chat.topic) }],
      IamRoleArn: { 'Fn::GetAtt': [id(chat.role), 'Arn'] },
      GuardrailPolicies: [
        { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/AWSDenyAll']] },
      ],
      UserRoleRequired: false,
      LoggingLevel: 'NONE',
    };
    template.hasResourceProperties('AWS::Chatbot::SlackChannelConfiguration', {
      ...common,
      // Unique in the account (every region): the deployment, the region, and a hash of the
      // deployment with the workspace, whose change replaces the configuration under a new name.
      ConfigurationName: 'DomainSentinel-eu-west-1-8b7d08b3-slack',
      SlackWorkspaceId: 'T07ABCDEF12',
      SlackChannelId: 'C07ABCDEF12',
    });
    template.hasResourceProperties('AWS::Chatbot::MicrosoftTeamsChannelConfiguration', {
      ...common,
      ConfigurationName: 'DomainSentinel-eu-west-1-cba27283-teams',
      TeamId: '0b2c3d4e-5f60-4a1b-8c2d-3e4f5a6b7c8d',
      TeamsTenantId: '1a2b3c4d-5e6f-4a1b-9c2d-3e4f5a6b7c8d',
      TeamsChannelId: '19%3a0123456789abcdef0123456789abcdef%40thread.tacv2',
    });
    // The channel role: assumed by the service, and no policy attached to it at all.
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [Match.objectLike({ Principal: { Service: 'chatbot.amazonaws.com' } })],
      },
    });
    expect(statementsOf(id(chat.role))).toEqual([]);
    expect(template.toJSON().Resources[id(chat.role)].Properties.ManagedPolicyArns).toBeUndefined();
    // The chat topic is encrypted with the alerts' key and refuses plain HTTP.
    template.hasResourceProperties('AWS::SNS::Topic', {
      DisplayName: 'domain-sentinel chat',
      KmsMasterKeyId: { 'Fn::GetAtt': [id(stack.sentinel.topicKey), 'Arn'] },
    });
  });

  it('names each configuration anew when the workspace or team changes (a replacement), and within 128 characters', () => {
    const names = (context: Record<string, unknown>, stackName?: string) => {
      const { template: t } = synthStack({
        ...CHAT_CONTEXT,
        ...context,
        ...(stackName ? { stackName } : {}),
      });
      return [
        ...Object.values(t.findResources('AWS::Chatbot::SlackChannelConfiguration')),
        ...Object.values(t.findResources('AWS::Chatbot::MicrosoftTeamsChannelConfiguration')),
      ].map((r) => r.Properties.ConfigurationName as string);
    };
    const [slack, teams] = names({});
    const [otherSlack, otherTeams] = names({
      slackWorkspaceId: 'T99ZZZZZZ99',
      teamsTenantId: '9a2b3c4d-5e6f-4a1b-9c2d-3e4f5a6b7c8d',
    });
    expect(otherSlack).not.toBe(slack);
    expect(otherTeams).not.toBe(teams);
    // A channel in the same workspace is updated in place: same name.
    expect(names({ slackChannelId: 'C99ZZZZZZ99' })[0]).toBe(slack);
    for (const name of names({}, 'A'.repeat(128))) {
      expect(name.length).toBeLessThanOrEqual(128);
      expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
    }
  });

  it('lets the scan publish to the chat topic and tells it where', () => {
    const chat = stack.sentinel.chat;
    if (!chat) throw new Error('no chat channels');
    const scan = template.toJSON().Resources[id(stack.sentinel.scan.fn)];
    expect(scan.Properties.Environment.Variables.CHAT_TOPIC_ARN).toEqual({ Ref: id(chat.topic) });
    expect(statementsOf(id(stack.sentinel.scan.fn.role as never))).toContainEqual({
      Action: 'sns:Publish',
      Effect: 'Allow',
      Resource: { Ref: id(chat.topic) },
    });
  });

  it('counts a chat channel as a subscriber: no alertEmails needed', () => {
    expect(() =>
      synthStack({ alertEmails: '', alertSmsNumbers: '', slackWorkspaceId: 'T1', slackChannelId: 'C1' }),
    ).not.toThrow();
    expect(() => synthStack({ alertEmails: '', alertSmsNumbers: '' })).toThrow(/No one would receive alerts/);
  });

  it('refuses half a channel and malformed ids, naming the key', () => {
    expect(() => synthStack({ slackWorkspaceId: 'T07ABCDEF12' })).toThrow(
      'invalid context: slackWorkspaceId and slackChannelId go together: set both, or neither',
    );
    expect(() => synthStack({ teamsTeamId: CHAT_CONTEXT.teamsTeamId })).toThrow(
      /teamsTeamId, teamsTenantId and teamsChannelId go together/,
    );
    expect(() => synthStack({ slackWorkspaceId: 't-lower', slackChannelId: 'C1' })).toThrow(
      /slackWorkspaceId must be a Slack workspace id/,
    );
    expect(() => synthStack({ webhooks: 'discord:/x' })).toThrow(
      /webhooks webhook "discord:\/x" must be FORMAT:\/ssm\/parameter\/name/,
    );
  });
});

describe('webhook subscriber', () => {
  const sub = () => {
    const webhooks = stack.sentinel.webhooks;
    if (!webhooks) throw new Error('no webhook subscriber');
    return webhooks;
  };

  it('gives each webhook its own queue on the alert topic (SNS envelope), redriven to one dead-letter queue after 4 deliveries', () => {
    const { queues, deadLetters, fn } = sub();
    expect(queues).toHaveLength(3);
    for (const queue of queues) {
      template.hasResourceProperties('AWS::SQS::Queue', {
        SqsManagedSseEnabled: true,
        VisibilityTimeout: 180,
        // An alert in its SNS envelope can pass SQS's default 256 KiB (test/unit/alert-sqs-envelope.test.ts).
        MaximumMessageSize: 1_048_576,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [id(deadLetters), 'Arn'] },
          maxReceiveCount: 4,
        },
      });
      template.hasResourceProperties('AWS::SNS::Subscription', {
        Protocol: 'sqs',
        TopicArn: { Ref: id(stack.sentinel.alerts.topic) },
        Endpoint: { 'Fn::GetAtt': [id(queue), 'Arn'] },
        RawMessageDelivery: false,
      });
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [id(queue), 'Arn'] },
        FunctionName: { Ref: id(fn) },
        BatchSize: 1,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
    }
    template.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 1_209_600,
      SqsManagedSseEnabled: true,
      MaximumMessageSize: 1_048_576,
    });
  });

  it('tells the function its webhooks (names of SSM parameters, never URLs) and their queues', () => {
    const { fn, queues } = sub();
    const variables = template.toJSON().Resources[id(fn)].Properties.Environment.Variables;
    const targets = JSON.stringify(variables.WEBHOOK_TARGETS);
    for (const [index, [format, parameter]] of [
      ['slack', '/domain-sentinel/webhook/slack'],
      ['teams', '/domain-sentinel/webhook/teams'],
      ['json', '/domain-sentinel/webhook/json'],
    ].entries()) {
      expect(targets).toContain(`\\"format\\":\\"${format}\\",\\"parameter\\":\\"${parameter}\\"`);
      expect(targets).toContain(id(queues[index] as never));
    }
    expect(variables.WEBHOOK_SIGNING_KEY_PARAMETER).toBe('/domain-sentinel/webhook-signing-key');
    expect(variables.ALERT_TIME_ZONE).toBe('Europe/Amsterdam');
    expect(variables.DEPLOYMENT_NAME).toBe('DomainSentinel');
  });

  it('may read its own SSM parameters (decrypted through SSM only) and consume its own queues: nothing else', () => {
    const { fn, queues } = sub();
    const statements = statementsOf(id(fn.role as never)).filter(
      (s) => !JSON.stringify(s.Action).includes('logs:'),
    );
    const parameters = [
      'domain-sentinel/webhook/slack',
      'domain-sentinel/webhook/teams',
      'domain-sentinel/webhook/json',
      'domain-sentinel/webhook-signing-key',
    ];
    const reads = statements.filter((s) => s.Action === 'ssm:GetParameter').map((s) => s.Resource);
    expect(reads).toEqual(parameters.map(ssmArn));
    const decrypts = statements.filter((s) => s.Action === 'kms:Decrypt');
    expect(
      decrypts.map((s) => (s.Condition as Record<string, Record<string, unknown>>).StringEquals),
    ).toEqual(
      parameters.map((p) => ({
        'kms:ViaService': 'ssm.eu-west-1.amazonaws.com',
        'kms:EncryptionContext:PARAMETER_ARN': ssmArn(p),
      })),
    );
    const consume = statements.filter((s) => JSON.stringify(s.Action).includes('sqs:'));
    expect(consume.map((s) => s.Resource)).toEqual(queues.map((q) => ({ 'Fn::GetAtt': [id(q), 'Arn'] })));
    for (const s of consume)
      expect(s.Action).toEqual([
        'sqs:ReceiveMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:GetQueueUrl',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
      ]);
    expect(statements.length).toBe(reads.length + decrypts.length + consume.length);
  });

  it('alarms on the ops topic for parked alerts and for webhooks that answer 4xx', () => {
    const ops = { Ref: id(stack.sentinel.watchdog.topic) };
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'DomainSentinel/WebhookDeadLetters',
      AlarmDescription: Match.stringLikeRegexp('each is an alert one webhook did not get'),
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [id(sub().deadLetters), 'QueueName'] } }],
      AlarmActions: [ops],
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'DomainSentinel/WebhookRejected',
      Namespace: 'DomainSentinel',
      MetricName: 'WebhookRejected',
      Dimensions: [
        { Name: 'deployment', Value: 'DomainSentinel' },
        { Name: 'service', Value: 'webhook' },
      ],
      Threshold: 1,
      AlarmActions: [ops],
    });
  });

  it('reads no signing key when no json webhook is listed', () => {
    const { stack: slackOnly, template: t } = synthStack({
      webhooks: 'slack:/domain-sentinel/webhook/slack',
    });
    const fn = slackOnly.sentinel.webhooks?.fn;
    if (!fn) throw new Error('no webhook subscriber');
    const variables =
      t.toJSON().Resources[slackOnly.getLogicalId(fn.node.defaultChild as never)].Properties.Environment
        .Variables;
    expect(variables.WEBHOOK_SIGNING_KEY_PARAMETER).toBeUndefined();
  });
});
