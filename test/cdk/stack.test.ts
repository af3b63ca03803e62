import { fileURLToPath } from 'node:url';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadStackConfig } from '../../lib/config';
import { DomainSentinelStack } from '../../lib/stack';

const functionsDir = fileURLToPath(new URL('../../functions', import.meta.url));
const BASE_CONTEXT = {
  // Template tests skip esbuild; one real bundling synth runs in synth.test.ts.
  'aws:cdk:bundling-stacks': [],
  resellerBaseUrl: 'https://api.reseller.example',
  schedule: 'cron(0 7 * * ? *)',
  timeZone: 'Europe/Amsterdam',
  alertEmails: 'alerts@example.nl,oncall@example.nl',
  alertSmsNumbers: '+31612345678',
  opsEmails: ['ops@example.nl'],
};

function synth(context: Record<string, unknown> = {}) {
  const app = new App({ context: { ...BASE_CONTEXT, ...context } });
  const stack = new DomainSentinelStack(app, 'DomainSentinel', {
    config: loadStackConfig(app.node),
    functionsDir,
    env: { account: '123456789012', region: 'eu-west-1' },
  });
  return { app, stack, template: Template.fromStack(stack) };
}

let template: Template;
let stack: DomainSentinelStack;
beforeAll(() => {
  ({ template, stack } = synth());
});

const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as never);
/** Logical id of a function's execution role. */
const roleId = (fn: { role?: { node: { defaultChild?: unknown } } }) => {
  if (!fn.role) throw new Error('function has no role');
  return logicalId(fn.role);
};

describe('scan', () => {
  it('runs on Node.js 24, ARM, 512 MB, 5 minutes, never two at once', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('scans the reseller account'),
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: 512,
      Timeout: 300,
      ReservedConcurrentExecutions: 1,
      Environment: {
        Variables: Match.objectLike({
          RESELLER_BASE_URL: 'https://api.reseller.example',
          RESELLER_API_KEY_PARAMETER: '/domain-sentinel/reseller-api-key',
          LINK_SIGNING_KEY_PARAMETER: '/domain-sentinel/link-signing-key',
          ALERT_TIME_ZONE: 'Europe/Amsterdam',
          EXPIRY_DAYS: '30',
          CRITICAL_DAYS: '7',
          ALERT_TOPIC_ARN: { Ref: Match.stringLikeRegexp('AlertsTopic') },
          LINK_BASE_URL: Match.objectLike({ 'Fn::Join': Match.anyValue() }),
        }),
      },
    });
  });

  it('is invoked by a schedule in the configured time zone, with retries and a dead-letter queue', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'cron(0 7 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Amsterdam',
      State: 'ENABLED',
      Target: {
        Arn: { 'Fn::GetAtt': [logicalId(stack.scan.fn), 'Arn'] },
        RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3600 },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [logicalId(stack.scan.scheduleDeadLetters), 'Arn'] } },
      },
    });
  });

  it('retries a failed run twice, then parks it in the on-failure queue', () => {
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalId(stack.scan.fn) },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 7200,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(stack.scan.failedRuns), 'Arn'] } },
      },
    });
  });

  it('keeps its logs for a set time', () => {
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: Match.anyValue() });
  });
});

describe('alerts', () => {
  it('refuses plain-HTTP access to the topic and encrypts it', () => {
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
      Topics: [{ Ref: logicalId(stack.alerts.topic) }],
    });
    template.hasResourceProperties('AWS::SNS::Topic', {
      DisplayName: 'domain-sentinel',
      KmsMasterKeyId: Match.anyValue(),
    });
  });

  it('subscribes every e-mail address, and SMS numbers for critical alerts only', () => {
    template.resourcePropertiesCountIs(
      'AWS::SNS::Subscription',
      { Protocol: 'email', TopicArn: { Ref: logicalId(stack.alerts.topic) } },
      2,
    );
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sms',
      Endpoint: '+31612345678',
      FilterPolicy: { severity: ['critical'] },
    });
  });
});

describe('restore API', () => {
  it('serves GET, HEAD and POST on /restore/{domain} through the restore function', () => {
    for (const method of ['GET', 'HEAD', 'POST']) {
      template.hasResourceProperties('AWS::ApiGateway::Method', {
        HttpMethod: method,
        AuthorizationType: 'NONE',
        RequestParameters: { 'method.request.path.domain': true },
        Integration: Match.objectLike({ Type: 'AWS_PROXY' }),
      });
    }
  });

  it('is throttled for a few humans and writes access logs without query strings', () => {
    const stage = template.findResources('AWS::ApiGateway::Stage');
    const props = Object.values(stage)[0]?.Properties;
    expect(props.MethodSettings).toEqual([
      expect.objectContaining({
        HttpMethod: '*',
        ResourcePath: '/*',
        ThrottlingRateLimit: 2,
        ThrottlingBurstLimit: 5,
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
      }),
    ]);
    expect(props.AccessLogSetting.DestinationArn).toBeDefined();
    const format = JSON.parse(props.AccessLogSetting.Format);
    expect(format).toMatchObject({
      path: '$context.path',
      ip: '$context.identity.sourceIp',
      status: '$context.status',
    });
    expect(props.AccessLogSetting.Format).not.toMatch(/querystring|requestOverride|\$input/i);
  });

  it("keeps API Gateway's account-wide CloudWatch role when the stack is destroyed", () => {
    template.hasResource('AWS::IAM::Role', {
      DeletionPolicy: 'Retain',
      Properties: {
        ManagedPolicyArns: [
          Match.objectLike({
            'Fn::Join': [
              '',
              Match.arrayWith([Match.stringLikeRegexp('AmazonAPIGatewayPushToCloudWatchLogs')]),
            ],
          }),
        ],
      },
    });
  });

  it('publishes its URL as an output', () => {
    template.hasOutput('RestoreApiUrl', { Value: Match.objectLike({ 'Fn::Join': Match.anyValue() }) });
  });
});

describe('least privilege', () => {
  const statementsOf = (fn: Parameters<typeof roleId>[0]) => {
    const policies = template.findResources('AWS::IAM::Policy', {
      Properties: {
        Roles: [{ Ref: roleId(fn) }],
      },
    });
    return Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement);
  };
  const parameterArn = (name: string) => ({
    'Fn::Join': [
      '',
      ['arn:', { Ref: 'AWS::Partition' }, `:ssm:eu-west-1:123456789012:parameter/domain-sentinel/${name}`],
    ],
  });

  it('lets the scan read exactly its two parameters, decrypt only through SSM, and publish only to its topic', () => {
    const statements = statementsOf(stack.scan.fn);
    expect(statements).toContainEqual({
      Action: 'ssm:GetParameter',
      Effect: 'Allow',
      Resource: parameterArn('reseller-api-key'),
    });
    expect(statements).toContainEqual({
      Action: 'ssm:GetParameter',
      Effect: 'Allow',
      Resource: parameterArn('link-signing-key'),
    });
    expect(statements).toContainEqual({
      Action: 'sns:Publish',
      Effect: 'Allow',
      Resource: { Ref: logicalId(stack.alerts.topic) },
    });
    const decrypts = statements.filter((s) => s.Action === 'kms:Decrypt' && s.Condition);
    expect(decrypts).toHaveLength(2);
    for (const s of decrypts) {
      expect(s.Condition.StringEquals['kms:ViaService']).toBe('ssm.eu-west-1.amazonaws.com');
      expect(s.Condition.StringEquals['kms:EncryptionContext:PARAMETER_ARN']).toBeDefined();
    }
    const actions = statements.flatMap((s) => [s.Action].flat());
    expect(actions.every((a: string) => !a.endsWith('*') || a === 'kms:GenerateDataKey*')).toBe(true);
  });

  it('gives the restore function its parameters and no publish right', () => {
    const statements = statementsOf(stack.restore.fn);
    expect(statements).toContainEqual({
      Action: 'ssm:GetParameter',
      Effect: 'Allow',
      Resource: parameterArn('reseller-api-key'),
    });
    expect(statements.flatMap((s) => [s.Action].flat())).not.toContain('sns:Publish');
  });

  it('attaches no managed policy to either function', () => {
    for (const fn of [stack.scan.fn, stack.restore.fn]) {
      const role = template.findResources('AWS::IAM::Role')[roleId(fn)];
      expect(role?.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('names the exact KMS key when secretsKmsKeyArn is given', () => {
    const key = 'arn:aws:kms:eu-west-1:123456789012:key/0b1c2d3e-0000-4000-8000-123456789abc';
    const { template: t } = synth({ secretsKmsKeyArn: key });
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Action: 'kms:Decrypt', Resource: key })]),
      },
    });
  });
});

describe('alarms', () => {
  const alarm = (props: Record<string, unknown>) =>
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [{ Ref: logicalId(stack.watchdog.topic) }],
      ...props,
    });

  it('raises scan and restore errors', () => {
    for (const fn of [stack.scan.fn, stack.restore.fn]) {
      alarm({
        MetricName: 'Errors',
        Namespace: 'AWS/Lambda',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(fn) } }],
        Statistic: 'Sum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('has a dead-man switch on ScanCompleted that treats missing data as breaching', () => {
    alarm({
      MetricName: 'ScanCompleted',
      Namespace: 'DomainSentinel',
      Dimensions: [{ Name: 'service', Value: 'scan' }],
      Period: 3600,
      EvaluationPeriods: 25,
      DatapointsToAlarm: 25,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
  });

  it('sizes the dead-man window from a rate() schedule', () => {
    const { template: t } = synth({ schedule: 'rate(6 hours)' });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ScanCompleted', EvaluationPeriods: 7 });
  });

  it('raises dead-letter queues that are not empty and alerts SNS could not deliver', () => {
    for (const queue of [stack.scan.failedRuns, stack.scan.scheduleDeadLetters]) {
      alarm({
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(queue), 'QueueName'] } }],
        Threshold: 1,
      });
    }
    alarm({ MetricName: 'NumberOfNotificationsFailed', Namespace: 'AWS/SNS', Threshold: 1 });
    template.resourceCountIs('AWS::CloudWatch::Alarm', 6);
  });

  it('sends alarms to the ops e-mail addresses', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.nl',
      TopicArn: { Ref: logicalId(stack.watchdog.topic) },
    });
  });
});

describe('configuration', () => {
  it('fails naming resellerBaseUrl when it is missing', () => {
    expect(() => synth({ resellerBaseUrl: undefined })).toThrow(
      /^invalid context: resellerBaseUrl is required/,
    );
  });

  it('names each invalid key', () => {
    expect(() =>
      synth({ timeZone: 'Mars/Olympus', alertSmsNumbers: '0612345678', expiryDays: 'soon' }),
    ).toThrow(
      /timeZone must be an IANA time zone.*expiryDays must be a whole number.*alertSmsNumbers must be E\.164/,
    );
    expect(() => synth({ resellerBaseUrl: 'http://api.reseller.example' })).toThrow(
      /resellerBaseUrl must be an https URL/,
    );
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unacknowledged in the stack', () => {
    const { app } = synth();
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
  });

  it('does fail synth on a finding (the check is really running)', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const bad = new Stack(app, 'Bad');
    new sqs.Queue(bad, 'Plain', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).toThrow(/The SQS Queue does not have server-side encryption enabled/);
  });
});
