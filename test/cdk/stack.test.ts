import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { RESELLER_BUDGET_MS } from '../../functions/handlers/restore-handler';
import { ACTION_WAIT_MS } from '../../functions/use-cases/state-action-store';
import { Scanner } from '../../lib/scanner';
import type { DomainSentinelStack } from '../../lib/stack';
import { NO_OPS_SUBSCRIBER_WARNING } from '../../lib/watchdog';
import { functionsDir, synthStack } from '../support/stack';

const synth = synthStack;

let template: Template;
let stack: DomainSentinelStack;
beforeAll(() => {
  ({ template, stack } = synth());
}, 180_000);

const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as never);
/** Logical id of a function's execution role. */
const roleId = (fn: { role?: { node: { defaultChild?: unknown } } }) => {
  if (!fn.role) throw new Error('function has no role');
  return logicalId(fn.role);
};

describe('scan', () => {
  it('runs on Node.js 24, ARM, 3 008 MB (sized by the bench), 5 minutes, without reserved concurrency by default', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('scans the reseller account'),
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: 3008,
      Timeout: 300,
      // A new account's concurrency quota (10) leaves nothing to reserve: the deploy would roll back.
      ReservedConcurrentExecutions: Match.absent(),
      Environment: {
        Variables: {
          NODE_OPTIONS: '--enable-source-maps',
          POWERTOOLS_SERVICE_NAME: 'domain-sentinel-scan',
          POWERTOOLS_METRICS_NAMESPACE: 'DomainSentinel',
          RESELLER_BASE_URL: 'https://api.reseller.example',
          RESELLER_API_KEY_PARAMETER: '/domain-sentinel/reseller-api-key',
          LINK_SIGNING_KEY_PARAMETER: '/domain-sentinel/link-signing-key',
          ALERT_TIME_ZONE: 'Europe/Amsterdam',
          EXPIRY_DAYS: '30',
          CRITICAL_DAYS: '7',
          MIN_SEVERITY: 'warning',
          ALERT_TOPIC_ARN: { Ref: logicalId(stack.alerts.topic) },
          LINK_BASE_URL: {
            'Fn::Join': [
              '',
              [
                'https://',
                { Ref: logicalId(stack.web.api) },
                '.execute-api.eu-west-1.',
                { Ref: 'AWS::URLSuffix' },
                '/',
                { Ref: logicalId(stack.web.api.deploymentStage) },
                '/',
              ],
            ],
          },
        },
      },
    });
  });

  it('reserves concurrency only when scanReservedConcurrency asks for it', () => {
    const { template: t, stack: s } = synth({ scanReservedConcurrency: '1', accountLabel: 'Acme' });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('scans the reseller account'),
      ReservedConcurrentExecutions: 1,
      Environment: { Variables: Match.objectLike({ ACCOUNT_LABEL: 'Acme' }) },
    });
    expect(
      t.findResources('AWS::Lambda::Function', {
        Properties: { ReservedConcurrentExecutions: Match.anyValue() },
      }),
    ).toEqual({ [s.getLogicalId(s.scan.fn.node.defaultChild as never)]: expect.anything() });
  });

  it('turns the registry check on with its budget and days, and gives the scan Lambda’s longest timeout for it', () => {
    const { template: t } = synth({ registryCheck: 'true', rdapQueryBudget: '6000' });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('scans the reseller account'),
      Timeout: 900,
      Environment: {
        Variables: Match.objectLike({
          REGISTRY_CHECK: 'on',
          RDAP_QUERY_BUDGET: '6000',
          REGISTRY_CHECK_DAYS: '30',
        }),
      },
    });
    const off = synth({ registryCheck: 'false' }).template.findResources('AWS::Lambda::Function', {
      Properties: { Environment: { Variables: Match.objectLike({ REGISTRY_CHECK: Match.anyValue() }) } },
    });
    expect(off).toEqual({});
    expect(() => synth({ registryCheck: 'yes' })).toThrow(/registryCheck must be on or off/);
  });

  it('gives the scan the timeout scanTimeoutMinutes sets, which its duration alarm and the message follow', () => {
    const { template: t } = synth({ scanTimeoutMinutes: '12' });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('scans the reseller account'),
      Timeout: 720,
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmDescription: Match.stringLikeRegexp('of its 720 s timeout; raise scanTimeoutMinutes'),
      Threshold: 576_000,
    });
    // Set, it wins over the registry check's 15 minutes; out of Lambda's range, the synth says so.
    const both = synth({ scanTimeoutMinutes: '10', registryCheck: 'true' }).template;
    both.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('scans the reseller account'),
      Timeout: 600,
    });
    expect(() => synth({ scanTimeoutMinutes: '16' })).toThrow(
      /scanTimeoutMinutes must be a whole number from 1 to 15/,
    );
  });

  it('does not tell a scan already at Lambda longest timeout to raise scanTimeoutMinutes', () => {
    for (const settings of [{ scanTimeoutMinutes: '15' }, { registryCheck: 'true' }]) {
      const { template: t } = synth(settings);
      t.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmDescription: Match.stringLikeRegexp(
          'of its 900 s timeout, Lambda.s longest: a read it cuts is alerted marked incomplete',
        ),
        Threshold: 720_000,
      });
    }
  });

  it('gives QUARANTINE_DAYS to the scan and the web function alike, and nothing when it is not set', () => {
    const { template: t } = synth({ quarantineDays: 'nl=45,shop=30' });
    for (const description of ['scans the reseller account', 'web links'])
      t.hasResourceProperties('AWS::Lambda::Function', {
        Description: Match.stringLikeRegexp(description),
        Environment: { Variables: Match.objectLike({ QUARANTINE_DAYS: 'nl=45,shop=30' }) },
      });
    const unset = synth({}).template.findResources('AWS::Lambda::Function', {
      Properties: { Environment: { Variables: Match.objectLike({ QUARANTINE_DAYS: Match.anyValue() }) } },
    });
    expect(unset).toEqual({});
    expect(() => synth({ quarantineDays: 'nl=forty' })).toThrow(/quarantineDays .*"nl=forty"/);
  });

  it('gives the web function the alerts’ time zone, so the calendar dates a restore-by day as the digest does', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('web links'),
      Environment: { Variables: Match.objectLike({ ALERT_TIME_ZONE: 'Europe/Amsterdam' }) },
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

/** The TLS-only statement enforceSSL puts on a topic. */
const tlsOnly = (topicId: string) => ({
  Sid: 'AllowPublishThroughSSLOnly',
  Effect: 'Deny',
  Principal: '*',
  Action: 'sns:Publish',
  Resource: { Ref: topicId },
  Condition: { Bool: { 'aws:SecureTransport': 'false' } },
});

describe('Scanner', () => {
  it('sets its own environment from typed props, leaving unset settings to the function defaults', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const bare = new Stack(app, 'Bare');
    new Scanner(bare, 'Scan', {
      entry: `${functionsDir}/handlers/scan.ts`,
      schedule: 'rate(12 hours)',
      timeZone: 'Europe/Amsterdam',
      resellerBaseUrl: 'https://api.reseller.example',
      minSeverity: 'critical',
    });
    Template.fromStack(bare).hasResourceProperties('AWS::Lambda::Function', {
      ReservedConcurrentExecutions: Match.absent(),
      Environment: {
        Variables: {
          NODE_OPTIONS: '--enable-source-maps',
          POWERTOOLS_SERVICE_NAME: 'domain-sentinel-scan',
          POWERTOOLS_METRICS_NAMESPACE: 'DomainSentinel',
          RESELLER_BASE_URL: 'https://api.reseller.example',
          ALERT_TIME_ZONE: 'Europe/Amsterdam',
          MIN_SEVERITY: 'critical',
        },
      },
    });
  });
});

describe('alerts', () => {
  it('refuses plain-HTTP publishing and allows no one else: the scan publishes through its own role', () => {
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Version: '2012-10-17',
        Statement: [tlsOnly(logicalId(stack.alerts.topic))],
      },
      Topics: [{ Ref: logicalId(stack.alerts.topic) }],
    });
    template.hasResourceProperties('AWS::SNS::Topic', {
      DisplayName: 'domain-sentinel',
      KmsMasterKeyId: {
        'Fn::GetAtt': [stack.getLogicalId(stack.topicKey.node.defaultChild as never), 'Arn'],
      },
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

  it('subscribes the escalation recipients of the policies to escalations alone, and gives the scan the policies', () => {
    const escalation = {
      afterHours: 24,
      withinDays: 7,
      alertEmails: ['escalate@example.nl', 'oncall@example.nl'],
      alertSmsNumbers: ['+31687654321'],
    };
    const { stack: s, template: t } = synth({ policies: { policies: [], escalation } });
    const topic = { Ref: s.getLogicalId(s.alerts.topic.node.defaultChild as never) };
    for (const [Protocol, Endpoint] of [
      ['email', 'escalate@example.nl'],
      ['sms', '+31687654321'],
    ])
      t.hasResourceProperties('AWS::SNS::Subscription', {
        Protocol,
        Endpoint,
        TopicArn: topic,
        FilterPolicy: { escalation: ['true'] },
      });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ POLICIES: JSON.stringify({ policies: [], escalation }) }),
      },
    });
  });
});

describe('restore API', () => {
  it('gives its URL once, as RestoreApiUrl, not again as the output RestApi adds by itself', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const urls = Object.entries(outputs).filter(([, o]) => JSON.stringify(o.Value).includes('execute-api'));
    expect(urls.map(([name]) => name)).toEqual(['RestoreApiUrl']);
  });

  it('gives the web function time for its slowest answer, within what API Gateway waits for', () => {
    // A snooze at the worst: the reseller's whole budget, a running scan's lease waited out through
    // every try of the action store, then the state written and the page made.
    const worstMs = RESELLER_BUDGET_MS + ACTION_WAIT_MS + 3_000;
    const web = Object.values(
      template.findResources('AWS::Lambda::Function', {
        Properties: { Description: Match.stringLikeRegexp('web links') },
      }),
    )[0] as { Properties: { Timeout: number } };
    expect(web.Properties.Timeout * 1000).toBeGreaterThanOrEqual(worstMs);
    // API Gateway's REST integration gives up at 29 s: a function still working then answers nobody.
    expect(web.Properties.Timeout).toBeLessThan(29);
  });

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

  it('is throttled for a few humans; its stage logs nothing to CloudWatch unless the stack owns the account settings', () => {
    const stageOf = (t: Template) => Object.values(t.findResources('AWS::ApiGateway::Stage'))[0]?.Properties;
    expect(stageOf(template).MethodSettings).toEqual([
      {
        HttpMethod: '*',
        ResourcePath: '/*',
        ThrottlingRateLimit: 2,
        ThrottlingBurstLimit: 5,
        DataTraceEnabled: false,
      },
    ]);
    expect(stageOf(template).AccessLogSetting).toBeUndefined();
    // Owning the account's API Gateway role, the stage logs errors and access, never query strings.
    const props = stageOf(synth({ ownAccountSettings: 'true' }).template);
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
    expect(props.AccessLogSetting.DestinationArn).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^RestoreAccessLogs/), 'Arn'],
    });
    const format = JSON.parse(props.AccessLogSetting.Format);
    expect(format).toMatchObject({
      path: '$context.path',
      ip: '$context.identity.sourceIp',
      status: '$context.status',
    });
    expect(props.AccessLogSetting.Format).not.toMatch(/querystring|requestOverride|\$input/i);
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

  /** The one statement that lets a function decrypt one parameter, through SSM only, with the account's aws/ssm key. */
  const ssmDecrypt = (name: string) => ({
    Action: 'kms:Decrypt',
    Effect: 'Allow',
    Resource: {
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':kms:eu-west-1:123456789012:key/*']],
    },
    Condition: {
      StringEquals: {
        'kms:ViaService': 'ssm.eu-west-1.amazonaws.com',
        'kms:EncryptionContext:PARAMETER_ARN': parameterArn(name),
      },
    },
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
    // The topic is encrypted: publishing needs the key too (its policy lets the account's IAM
    // decide), and only through SNS: the role's credentials decrypt nothing with it elsewhere.
    expect(statements).toContainEqual({
      Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
      Condition: { StringEquals: { 'kms:ViaService': 'sns.eu-west-1.amazonaws.com' } },
      Effect: 'Allow',
      Resource: { 'Fn::GetAtt': [logicalId(stack.topicKey), 'Arn'] },
    });
    // A wrong PARAMETER_ARN would deny decryption in production: each statement names its parameter exactly.
    const decrypts = statements.filter((s) => s.Action === 'kms:Decrypt' && s.Condition);
    expect(decrypts).toEqual(
      expect.arrayContaining(['reseller-api-key', 'link-signing-key'].map(ssmDecrypt)),
    );
    expect(decrypts).toHaveLength(2);
    const actions = statements.flatMap((s) => [s.Action].flat());
    expect(actions.every((a: string) => !a.endsWith('*') || a === 'kms:GenerateDataKey*')).toBe(true);
  });

  it('gives the restore function its parameters and no publish right', () => {
    const statements = statementsOf(stack.web.fn);
    expect(statements).toContainEqual({
      Action: 'ssm:GetParameter',
      Effect: 'Allow',
      Resource: parameterArn('reseller-api-key'),
    });
    expect(statements).toContainEqual(ssmDecrypt('reseller-api-key'));
    expect(statements).toContainEqual(ssmDecrypt('link-signing-key'));
    expect(statements.flatMap((s) => [s.Action].flat())).not.toContain('sns:Publish');
  });

  it('attaches no managed policy to either function', () => {
    for (const fn of [stack.scan.fn, stack.web.fn]) {
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

describe('who may publish to the topics and queues', () => {
  it('lets CloudWatch publish to the ops topic only for this account and only for alarms named as its own, over TLS', () => {
    const topicId = logicalId(stack.watchdog.topic);
    expect(stack.watchdog.alarms.map((a) => a.alarmName)).toHaveLength(12);
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Version: '2012-10-17',
        Statement: [
          tlsOnly(topicId),
          {
            Sid: 'AllowAlarmsOfThisStackToPublish',
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Resource: { Ref: topicId },
            // The alarms by their names' prefix, as the key policy: one size however many alarms.
            Condition: {
              StringEquals: { 'aws:SourceAccount': '123456789012' },
              ArnLike: {
                'aws:SourceArn': {
                  'Fn::Join': [
                    '',
                    [
                      'arn:',
                      { Ref: 'AWS::Partition' },
                      ':cloudwatch:eu-west-1:123456789012:alarm:DomainSentinel/*',
                    ],
                  ],
                },
              },
            },
          },
        ],
      },
      Topics: [{ Ref: topicId }],
    });
  });

  it('lets CloudWatch encrypt alarm notifications with the topic key, which is deleted 7 days after the stack', () => {
    template.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Delete',
      UpdateReplacePolicy: 'Delete',
      Properties: {
        EnableKeyRotation: true,
        PendingWindowInDays: 7,
        KeyPolicy: {
          Version: '2012-10-17',
          Statement: [
            {
              Action: 'kms:*',
              Effect: 'Allow',
              Principal: {
                AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::123456789012:root']] },
              },
              Resource: '*',
            },
            {
              Sid: 'AllowAlarmsOfThisStackToEncrypt',
              Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
              Effect: 'Allow',
              Principal: { Service: 'cloudwatch.amazonaws.com' },
              Resource: '*',
              // Bound like the topic policy: this account, and alarms named with this deployment's prefix.
              Condition: {
                StringEquals: { 'aws:SourceAccount': '123456789012' },
                ArnLike: {
                  'aws:SourceArn': {
                    'Fn::Join': [
                      '',
                      [
                        'arn:',
                        { Ref: 'AWS::Partition' },
                        ':cloudwatch:eu-west-1:123456789012:alarm:DomainSentinel/*',
                      ],
                    ],
                  },
                },
              },
            },
          ],
        },
      },
    });
  });

  it('lets the schedule send to its dead-letter queue and the scan to its on-failure queue, through their roles', () => {
    for (const queue of [stack.scan.failedRuns, stack.scan.scheduleDeadLetters]) {
      const queueId = logicalId(queue);
      // SQS-managed encryption: a sender needs no KMS permission.
      expect(template.toJSON().Resources[queueId].Properties).toEqual({
        MessageRetentionPeriod: 1209600,
        SqsManagedSseEnabled: true,
      });
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Action: 'sqs:*',
              Effect: 'Deny',
              Principal: { AWS: '*' },
              Resource: { 'Fn::GetAtt': [queueId, 'Arn'] },
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            },
          ],
        },
        Queues: [{ Ref: queueId }],
      });
    }
    const schedule = Object.values(template.findResources('AWS::Scheduler::Schedule'))[0];
    const schedulerRole = schedule?.Properties.Target.RoleArn['Fn::GetAtt'][0];
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: schedulerRole }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: 'sqs:SendMessage',
            Effect: 'Allow',
            Resource: { 'Fn::GetAtt': [logicalId(stack.scan.scheduleDeadLetters), 'Arn'] },
          },
        ]),
      },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: roleId(stack.scan.fn) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
            Effect: 'Allow',
            Resource: { 'Fn::GetAtt': [logicalId(stack.scan.failedRuns), 'Arn'] },
          },
        ]),
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

  it('raises scan and restore errors; the scan’s stays raised until a scan completes', () => {
    alarm({
      MetricName: 'Errors',
      Namespace: 'AWS/Lambda',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(stack.web.fn) } }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    // The scan's judges the hour's last outcome: its errors, or 0 once a scan (a retry) completed
    // (test/cdk/alarm-outcomes.test.ts runs it over hours of data).
    const metric = (id: string, namespace: string, name: string) =>
      Match.objectLike({
        Id: id,
        ReturnData: false,
        MetricStat: Match.objectLike({
          Metric: Match.objectLike({ Namespace: namespace, MetricName: name }),
          Stat: 'Sum',
          Period: 3600,
        }),
      });
    alarm({
      AlarmName: 'DomainSentinel/ScanErrors',
      Metrics: Match.arrayWith([
        metric('completed', 'DomainSentinel', 'ScanCompleted'),
        metric('errors', 'AWS/Lambda', 'Errors'),
      ]),
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'ignore',
    });
  });

  it('keeps a dead-letter queue’s alarm raised while its metrics are missing: SQS stops them for a queue left alone', () => {
    for (const queue of [stack.scan.failedRuns, stack.scan.scheduleDeadLetters])
      alarm({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(queue), 'QueueName'] } }],
        Statistic: 'Maximum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'ignore',
      });
  });

  it('has a dead-man switch on ScanCompleted of this deployment that treats missing data as breaching', () => {
    const scanMetric = (id: string, metricName: string) => ({
      Id: id,
      MetricStat: {
        Metric: {
          Namespace: 'DomainSentinel',
          MetricName: metricName,
          Dimensions: [
            { Name: 'deployment', Value: 'DomainSentinel' },
            { Name: 'service', Value: 'scan' },
          ],
        },
        Period: 3600,
        Stat: 'Sum',
      },
      ReturnData: false,
    });
    alarm({
      AlarmName: 'DomainSentinel/ScanNotCompleted',
      Metrics: Match.arrayWith([
        Match.objectLike({ Id: 'expr_1', Expression: 'FILL(completed, 0) + FILL(armed, 0)' }),
        scanMetric('completed', 'ScanCompleted'),
        scanMetric('armed', 'DeadManArmed'),
      ]),
      // A day's cron in Europe/Amsterdam: 24 hours, an hour for the scan, and an hour for the night
      // the clocks go back, when 07:00 comes 25 hours after the 07:00 before.
      EvaluationPeriods: 26,
      DatapointsToAlarm: 26,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
  });

  it('gives the dead-man switch no hour for clock changes where the schedule has none: UTC, or a rate()', () => {
    for (const context of [{ timeZone: 'UTC' }, { schedule: 'rate(24 hours)' }]) {
      const { template: other } = synthStack(context);
      other.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: 'DomainSentinel/ScanNotCompleted',
        EvaluationPeriods: 25,
        DatapointsToAlarm: 25,
      });
    }
  });

  it('sizes the dead-man window from a rate() schedule', () => {
    const { template: t } = synth({ schedule: 'rate(6 hours)' });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'DomainSentinel/ScanNotCompleted',
      EvaluationPeriods: 7,
    });
    // CloudWatch refuses an alarm whose periods span more than 7 days: the synth fails first.
    expect(() => synth({ schedule: 'rate(7 days)' })).toThrow(
      /^invalid context: schedule rate\(7 days\) leaves 168 hours without a scan .* a CloudWatch alarm watches at most 168 hours \(7 days\)/,
    );
  });

  it('sizes the dead-man window from the longest gap of a cron() schedule, and refuses one CloudWatch cannot watch', () => {
    // Weekdays only: Friday to Monday is 72 hours, and the alarm waits an hour more; no warning.
    const weekdays = synth({ schedule: 'cron(0 6 ? * MON-FRI *)', timeZone: 'UTC' });
    weekdays.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'DomainSentinel/ScanNotCompleted',
      EvaluationPeriods: 73,
      DatapointsToAlarm: 73,
    });
    Annotations.fromStack(weekdays.stack).hasNoWarning('*', Match.anyValue());
    // A week between scans, and the alarm's hour, is more than CloudWatch's 7 days; in Amsterdam the
    // week the clocks go back is an hour longer still.
    expect(() => synth({ schedule: 'cron(0 6 ? * MON *)' })).toThrow(
      /^invalid context: schedule cron\(0 6 \? \* MON \*\) leaves 169 hours without a scan \(.* UTC, in Europe\/Amsterdam\); the dead-man alarm waits that and 1 hour more, and a CloudWatch alarm watches at most 168 hours \(7 days\): scan at least every 167 hours \(e\.g\. cron\(0 6 \? \* MON,THU \*\)\), or set heartbeatUrlParameterName and let an outside heartbeat service \(Healthchecks\.io watches weekly checks\) tell you when the scan stops$/,
    );
    // A month: October 1 to November 1 is 31 days and the hour the clocks go back.
    expect(() => synth({ schedule: 'cron(0 6 1 * ? *)' })).toThrow(
      /^invalid context: schedule cron\(0 6 1 \* \? \*\) leaves 745 hours without a scan/,
    );
    // A year field: runs that ended before the deploy leave nothing to watch.
    expect(() => synth({ schedule: 'cron(0 6 * * ? 2020)' })).toThrow(
      /^invalid context: schedule cron\(0 6 \* \* \? 2020\) has no run in the 366 days from .*: the dead-man alarm would fire a day after the deploy$/,
    );
    synth({ schedule: 'cron(0 6 * * ? 2026-2199)', timeZone: 'UTC' }).template.hasResourceProperties(
      'AWS::CloudWatch::Alarm',
      { AlarmName: 'DomainSentinel/ScanNotCompleted', EvaluationPeriods: 25 },
    );
  });

  it('leaves a weekly schedule to the heartbeat: no dead-man alarm, and no data point to arm one', () => {
    const { stack: s, template: t } = synth({
      schedule: 'cron(0 6 ? * MON *)',
      heartbeatUrlParameterName: '/domain-sentinel/heartbeat-url',
    });
    expect(s.watchdog.alarms.map((a) => a.node.id)).not.toContain('ScanNotCompleted');
    expect(JSON.stringify(t.toJSON())).not.toContain('DeadManArmed');
    t.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'cron(0 6 ? * MON *)' });
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
    expect(stack.watchdog.alarms.map((a) => a.node.id)).toEqual([
      'ScanErrors',
      'ScanNotCompleted',
      'ScanFailedRuns',
      'ScheduleDeadLetters',
      'RestoreErrors',
      'RestoreServerErrors',
      'AuditWriteFailed',
      'AlertDeliveryFailed',
      'ScanThrottled',
      'WebThrottled',
      'ScanNearTimeout',
      'SmsSpend',
    ]);
    template.resourceCountIs('AWS::CloudWatch::Alarm', 12);
  });

  it('raises server errors of the restore API, which the function answers as pages without failing', () => {
    alarm({
      Namespace: 'AWS/ApiGateway',
      MetricName: '5XXError',
      Dimensions: [
        { Name: 'ApiName', Value: 'DomainSentinel-restore' },
        { Name: 'Stage', Value: { Ref: logicalId(stack.web.api.deploymentStage) } },
      ],
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      OKActions: [{ Ref: logicalId(stack.watchdog.topic) }],
    });
    // The metric is keyed by API name: the API carries the name the alarm watches.
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'DomainSentinel-restore' });
  });

  it('sends alarms to the ops e-mail addresses, without a warning', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.nl',
      TopicArn: { Ref: logicalId(stack.watchdog.topic) },
    });
    Annotations.fromStack(stack).hasNoWarning('*', Match.anyValue());
  });

  it('sends the alarms to the alert e-mail recipients when no ops e-mail is configured: a person still learns the scan failed', () => {
    const opsSubscriptions = (s: DomainSentinelStack, t: Template) =>
      Object.values(
        t.findResources('AWS::SNS::Subscription', {
          Properties: { TopicArn: { Ref: s.getLogicalId(s.watchdog.topic.node.defaultChild as never) } },
        }),
      ).map((r) => `${r.Properties.Protocol}:${r.Properties.Endpoint}`);
    const fallback = synth({ opsEmails: [] });
    expect(opsSubscriptions(fallback.stack, fallback.template).sort()).toEqual([
      'email:alerts@example.nl',
      'email:oncall@example.nl',
    ]);
    Annotations.fromStack(fallback.stack).hasNoWarning('*', Match.anyValue());
    // With neither, nobody gets them: the synth says so.
    const { stack: s, template: t } = synth({ opsEmails: [], alertEmails: [] });
    Annotations.fromStack(s).hasWarning(
      '/DomainSentinel/Default/Watchdog',
      `Neither opsEmails nor alertEmails configured: alarms (scan failed, scan did not run, restore errors) reach only the ops topic (output OpsTopicArn) and nobody is told. Subscribe something to it, or deploy with -c opsEmails=you@example.nl. [ack: ${NO_OPS_SUBSCRIBER_WARNING}]`,
    );
    expect(Annotations.fromStack(s).findWarning('*', Match.anyValue())).toHaveLength(1);
    expect(opsSubscriptions(s, t)).toEqual([]);
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

  it('refuses a schedule EventBridge would reject, naming the key and the rule', () => {
    expect(() => synth({ schedule: 'cron(0 6 * * * *)' })).toThrow(
      'invalid context: schedule is invalid: cron(0 6 * * * *) must have ? in exactly one of day-of-month and day-of-week',
    );
    expect(() => synth({ schedule: 'rate(1 hours)' })).toThrow(
      'invalid context: schedule is invalid: rate(1 hours) must say rate(1 hour)',
    );
    expect(() => synth({ schedule: 'cron(0 6 * *)' })).toThrow(
      /^invalid context: schedule is invalid: cron\(0 6 \* \*\) has 4 fields/,
    );
  });

  it('refuses a reserved concurrency that is not a positive whole number', () => {
    for (const value of ['0', 'one', '1.5'])
      expect(() => synth({ scanReservedConcurrency: value })).toThrow(
        'invalid context: scanReservedConcurrency must be a whole number from 1 to 1000',
      );
  });
});
