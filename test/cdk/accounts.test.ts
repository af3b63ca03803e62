import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, NestedStack, Stack, Validations } from 'aws-cdk-lib';
import { Template as CdkTemplate, Match } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { AccountScanEventSchema, MAX_ACCOUNTS } from '../../functions/core/scan/accounts';
import { ACCOUNT_SCAN_STATES } from '../../lib/account-scans';
import { DomainSentinel } from '../../lib/index';
import { DomainSentinelStack } from '../../lib/stack';
import { Watchdog } from '../../lib/watchdog';
import { type Template, TemplateResolver } from '../deploy/template';
import type { Machine } from '../support/asl';
import { alarmStateChange, matchesPattern, transformInput } from '../support/event-pattern';
import { BASE_CONTEXT, settingsFromContext, synthStack } from '../support/stack';

/** A deployment of three accounts (issue 22): the state machine, its items, the grants, the recipients, the alarms. */

const dir = mkdtempSync(join(tmpdir(), 'sentinel-accounts-cdk-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ACCOUNTS = [
  { name: 'brand-a', apiKeyParameter: '/domain-sentinel/brand-a/api-key', alertEmails: ['a@example.nl'] },
  {
    name: 'brand-b',
    apiKeyParameter: '/domain-sentinel/brand-b/api-key',
    resellerBaseUrl: 'https://api.other-reseller.example',
    expiryDays: 45,
    accountLabel: 'Brand B',
    alertEmails: ['b@example.nl', 'a@example.nl'],
    alertSmsNumbers: ['+31600000002'],
  },
  { name: 'test-env', apiKeyParameter: '/domain-sentinel/test-env/api-key', minSeverity: 'critical' },
];

function accountsFile(accounts: unknown, name = 'accounts.json'): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ accounts }));
  return path;
}

const ENV = { account: '123456789012', region: 'eu-west-1', stackName: 'DomainSentinel' };

function synth(context: Record<string, unknown> = {}) {
  const { stack, template } = synthStack({ accounts: accountsFile(ACCOUNTS), ...context });
  const json = template.toJSON() as Template;
  const resolver = new TemplateResolver(json, ENV);
  const [machineId] = resolver.ofType('AWS::StepFunctions::StateMachine');
  const definition = JSON.parse(
    resolver.string(resolver.resource(machineId as string).Properties?.DefinitionString, 'the definition'),
  ) as Machine;
  return { stack, template, resolver, definition, machineId: machineId as string };
}

const built = synth();

/** The deployment's template and its nested stacks' (the accounts' groups) as one, for what may live in either. */
function everything(stack: Stack): CdkTemplate {
  const resources: Record<string, unknown> = {};
  for (const s of [stack, ...stack.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack)])
    Object.assign(resources, CdkTemplate.fromStack(s).toJSON().Resources);
  return CdkTemplate.fromJSON({ Resources: resources });
}

/** Every statement of a role's policies (inline, attached and overflow), resolved. */
function statementsOf(roleId: string) {
  return statementsOfIn(built.resolver, roleId);
}

function statementsOfIn(resolver: TemplateResolver, roleId: string) {
  return [...resolver.ofType('AWS::IAM::Policy'), ...resolver.ofType('AWS::IAM::ManagedPolicy')]
    .filter((id) =>
      ((resolver.resource(id).Properties?.Roles as Array<{ Ref?: string }>) ?? []).some(
        (r) => r.Ref === roleId,
      ),
    )
    .flatMap(
      (id) =>
        (
          resolver.resolve(resolver.resource(id).Properties?.PolicyDocument) as {
            Statement: Array<Record<string, unknown>>;
          }
        ).Statement,
    );
}
/** The ops topic's logical id. */
const opsTopicOf = (resolver: TemplateResolver): string =>
  resolver.ofType('AWS::SNS::Topic').find((id) => id.startsWith('WatchdogOpsTopic')) as string;
const roleOf = (fn: { role?: unknown }) =>
  built.stack.getLogicalId((fn.role as { node: { defaultChild: never } }).node.defaultChild);
const list = (v: unknown) => (Array.isArray(v) ? v : [v]) as string[];
const parameterArn = (name: string) => `arn:aws:ssm:eu-west-1:123456789012:parameter${name}`;

describe('a deployment of several accounts', () => {
  it('starts one state machine from the schedule, whose Map holds one item per account', () => {
    const { template, resolver, definition, machineId } = built;
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 1);
    const [schedule] = resolver.ofType('AWS::Scheduler::Schedule');
    const target = resolver.resolve(resolver.resource(schedule as string).Properties?.Target) as {
      Arn: string;
    };
    expect(target.Arn).toBe(resolver.attribute(machineId, 'Arn'));

    const map = definition.States[ACCOUNT_SCAN_STATES.map] as unknown as {
      Type: string;
      MaxConcurrency: number;
      ItemsPath: string;
      ItemProcessor: { ProcessorConfig: { Mode: string } };
    };
    expect(map).toMatchObject({ Type: 'Map', MaxConcurrency: 4, ItemsPath: '$.accounts' });
    expect(map.ItemProcessor.ProcessorConfig.Mode).toBe('INLINE');
    const pass = definition.States[ACCOUNT_SCAN_STATES.accounts] as unknown as {
      Result: { accounts: unknown[] };
    };
    // Names only: Step Functions refuses a state's output over 256 KiB, which the accounts' own
    // policies could pass; each scan reads its item from the deployed accounts.json.
    const items = pass.Result.accounts;
    expect(items).toEqual([{ account: 'brand-a' }, { account: 'brand-b' }, { account: 'test-env' }]);
    for (const item of items) expect(AccountScanEventSchema.safeParse(item).success).toBe(true);
    const writer = resolver
      .ofType('Custom::AWS')
      .map((id) => String(resolver.resolve(resolver.resource(id).Properties?.Create)))
      .find((create) => create.includes('"Key":"accounts.json"'));
    const deployed = JSON.parse(JSON.parse(writer as string).parameters.Body) as { accounts: unknown[] };
    expect(deployed.accounts).toEqual([
      { account: 'brand-a', apiKeyParameter: '/domain-sentinel/brand-a/api-key', settings: {} },
      {
        account: 'brand-b',
        apiKeyParameter: '/domain-sentinel/brand-b/api-key',
        settings: {
          resellerBaseUrl: 'https://api.other-reseller.example',
          expiryDays: 45,
          accountLabel: 'Brand B',
        },
      },
      {
        account: 'test-env',
        apiKeyParameter: '/domain-sentinel/test-env/api-key',
        settings: { minSeverity: 'critical' },
      },
    ]);
    expect(synth({ accountConcurrency: '2' }).definition.States[ACCOUNT_SCAN_STATES.map]).toMatchObject({
      MaxConcurrency: 2,
    });
  });

  it('logs the state machine under /aws/vendedlogs/states/, in a log group of its own deployment', () => {
    // Step Functions adds any other log group to the account's one CloudWatch Logs resource policy
    // (5 120 characters, shared by every team's vended logs); under this prefix it adds nothing.
    const nameOf = (stack: Stack) => {
      const { resolver } = synthOf(stack);
      const [machine] = resolver.ofType('AWS::StepFunctions::StateMachine');
      const config = resolver.resolve(
        resolver.resource(machine as string).Properties?.LoggingConfiguration,
      ) as {
        Destinations: Array<{ CloudWatchLogsLogGroup: { LogGroupArn: string } }>;
      };
      const arn = config.Destinations[0]?.CloudWatchLogsLogGroup.LogGroupArn as string;
      const [group] = resolver
        .ofType('AWS::Logs::LogGroup')
        .filter((id) => resolver.attribute(id, 'Arn') === arn);
      return String(resolver.resolve(resolver.resource(group as string).Properties?.LogGroupName));
    };
    const synthOf = (stack: Stack) => ({
      resolver: new TemplateResolver(CdkTemplate.fromStack(stack).toJSON() as Template, {
        ...ENV,
        stackName: stack.stackName,
      }),
    });
    const own = nameOf(built.stack);
    expect(own).toMatch(/^\/aws\/vendedlogs\/states\/DomainSentinel-[0-9a-f]{8}$/);
    // Another deployment in the same account and region, and a copy whose path CloudWatch Logs would refuse.
    const other = synthStack({ accounts: accountsFile(ACCOUNTS), stackName: 'DomainSentinelTeamB' }).stack;
    expect(nameOf(other)).toMatch(/^\/aws\/vendedlogs\/states\/DomainSentinelTeamB-[0-9a-f]{8}$/);
    const app = new App({ context: BASE_CONTEXT });
    const host = new Stack(app, 'Sentinels', { env: { account: ENV.account, region: ENV.region } });
    new DomainSentinel(host, 'Acme Account', {
      resellerBaseUrl: 'https://api.reseller.example',
      alertEmails: ['a@example.nl'],
      accounts: ACCOUNTS.map(({ name, apiKeyParameter }) => ({ name, apiKeyParameter })),
    });
    const odd = nameOf(host);
    expect(odd).toMatch(/^\/aws\/vendedlogs\/states\/[.\-_/#A-Za-z0-9]+$/);
    expect(new Set([own, nameOf(other), odd]).size).toBe(3);
  });

  it('lets the scan and web functions read exactly the accounts’ key parameters (and the signing key)', () => {
    const { stack } = built;
    for (const fn of [stack.scan.fn, stack.web.fn]) {
      const statements = statementsOf(roleOf(fn));
      const readable = statements
        .filter((s) => list(s.Action).includes('ssm:GetParameter'))
        .flatMap((s) => list(s.Resource))
        .sort();
      expect(readable).toEqual(
        [...ACCOUNTS.map((a) => a.apiKeyParameter), '/domain-sentinel/link-signing-key']
          .map(parameterArn)
          .sort(),
      );
      // The SSM parameters' decrypts (the topic key's, through SNS, is another statement).
      const decrypt = statements.filter(
        (s) =>
          list(s.Action).includes('kms:Decrypt') &&
          (s.Condition as { StringEquals?: Record<string, unknown> } | undefined)?.StringEquals?.[
            'kms:EncryptionContext:PARAMETER_ARN'
          ] !== undefined,
      );
      const contexts = decrypt.flatMap((s) =>
        list(
          (s.Condition as { StringEquals: Record<string, unknown> }).StringEquals[
            'kms:EncryptionContext:PARAMETER_ARN'
          ],
        ),
      );
      expect(contexts.sort()).toEqual(readable);
    }
    const env = (
      built.resolver.resource(built.stack.getLogicalId(stack.scan.fn.node.defaultChild as never))
        .Properties as { Environment: { Variables: Record<string, unknown> } }
    ).Environment.Variables;
    expect(env.ACCOUNTS_ONLY).toBe('true');
    expect(env).not.toHaveProperty('RESELLER_API_KEY_PARAMETER');
  });

  it('lets the scan read the deployed accounts.json and no other object, and schedules no scan before the deploy wrote it', () => {
    const { resolver, stack } = built;
    const bucketId = stack.getLogicalId(stack.reports.bucket.node.defaultChild as never);
    const bucketArn = resolver.attribute(bucketId, 'Arn');
    const reads = statementsOf(roleOf(stack.scan.fn)).filter((s) =>
      // Every S3 action but the writes of its own reports (asserted where those are).
      list(s.Action).some((a) => a.startsWith('s3:') && a !== 's3:PutObject'),
    );
    expect(reads.map((s) => [s.Effect, s.Action, s.Resource])).toEqual([
      ['Allow', 's3:GetObject', `${bucketArn}/accounts.json`],
    ]);
    const env = (
      resolver.resource(stack.getLogicalId(stack.scan.fn.node.defaultChild as never)).Properties as {
        Environment: { Variables: Record<string, unknown> };
      }
    ).Environment.Variables;
    expect(resolver.resolve(env.REPORT_BUCKET)).toBe(resolver.resolve({ Ref: bucketId }));
    // The deploy-time call that writes accounts.json comes before the schedule that starts the scans.
    const [schedule] = resolver.ofType('AWS::Scheduler::Schedule');
    const writer = resolver
      .ofType('Custom::AWS')
      .find((id) =>
        String(resolver.resolve(resolver.resource(id).Properties?.Create)).includes('"Key":"accounts.json"'),
      );
    expect(resolver.resource(schedule as string).DependsOn).toContain(writer);
  });

  it('lets the web function read accounts.json and each account’s latest report, view, summary and kept reports, and nothing else', () => {
    const { resolver, stack } = built;
    const bucketId = stack.getLogicalId(stack.reports.bucket.node.defaultChild as never);
    const bucketArn = resolver.attribute(bucketId, 'Arn');
    const reads = statementsOf(roleOf(stack.web.fn)).filter((s) =>
      list(s.Action).some((a) => a.startsWith('s3:')),
    );
    const keys = [
      'accounts/*/latest.json',
      'accounts/*/latest-view.json',
      'accounts/*/summary.json',
      // report.json presigns the kept copy of the report its link names, which no later scan overwrites.
      'accounts/*/reports/*',
    ];
    expect(reads.map((s) => [s.Effect, s.Action, s.Resource, s.Condition])).toEqual([
      ['Allow', 's3:GetObject', ['accounts.json', ...keys].map((key) => `${bucketArn}/${key}`), undefined],
      ['Allow', 's3:ListBucket', bucketArn, { StringLike: { 's3:prefix': ['accounts.json', ...keys] } }],
    ]);
  });

  it('lets only the state machine invoke the scan function, and the schedule only start the state machine', () => {
    const { resolver, stack, machineId } = built;
    const scanArn = resolver.attribute(stack.getLogicalId(stack.scan.fn.node.defaultChild as never), 'Arn');
    const invokers = resolver
      .ofType('AWS::IAM::Role')
      .filter((role) =>
        statementsOf(role).some(
          (s) =>
            list(s.Action).includes('lambda:InvokeFunction') &&
            list(s.Resource).some((r) => r.startsWith(scanArn)),
        ),
      );
    const machineRole = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(
      JSON.stringify(resolver.resource(machineId).Properties?.RoleArn),
    )?.[1];
    expect(invokers).toEqual([machineRole]);
    const [schedule] = resolver.ofType('AWS::Scheduler::Schedule');
    const schedulerRole = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(
      JSON.stringify(
        (resolver.resource(schedule as string).Properties as { Target: { RoleArn: unknown } }).Target.RoleArn,
      ),
    )?.[1] as string;
    expect(statementsOf(schedulerRole).map((s) => [s.Action, s.Resource])).toEqual([
      ['states:StartExecution', resolver.attribute(machineId, 'Arn')],
      // Its dead-letter queue, for a start it could not deliver.
      ['sqs:SendMessage', expect.stringMatching(/:DomainSentinel-ScanScheduleDeadLetters/)],
    ]);
  });

  it('subscribes each account’s own recipients with a filter on its account; a recipient of every account without', () => {
    const template = everything(built.stack);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'alerts@example.nl',
      FilterPolicy: Match.absent(),
    });
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'a@example.nl',
      FilterPolicy: { account: ['brand-a', 'brand-b'] },
    });
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'b@example.nl',
      FilterPolicy: { account: ['brand-b'] },
    });
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sms',
      Endpoint: '+31600000002',
      FilterPolicy: { account: ['brand-b'], severity: ['critical'] },
    });
  });

  it('raises an alarm naming the account when its scan fails, and keeps a dead-man switch per account', () => {
    const { template: own } = built;
    const template = everything(built.stack);
    for (const { name } of ACCOUNTS) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `DomainSentinel/ScanFailed-${name}`,
        AlarmDescription: Match.stringLikeRegexp(`^The scan of account ${name} failed`),
        Namespace: 'DomainSentinel',
        MetricName: 'ScanFailed',
        Dimensions: Match.arrayWith([{ Name: 'account', Value: name }]),
        Threshold: 1,
        // Cleared by the 0 a completed scan of the account counts, not by the hours without a scan.
        TreatMissingData: 'ignore',
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `DomainSentinel/ScanNotCompleted-${name}`,
        Metrics: Match.arrayWith([
          Match.objectLike({
            Id: 'completed',
            MetricStat: Match.objectLike({
              Metric: Match.objectLike({
                MetricName: 'ScanCompleted',
                Dimensions: Match.arrayWith([{ Name: 'account', Value: name }]),
              }),
            }),
          }),
        ]),
      });
    }
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'DomainSentinel/AccountScansFailed',
    });
    // The dashboard draws one line per account: a search over the account dimension of this deployment.
    const dashboard = built.resolver.resolve(
      Object.values(own.findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties?.DashboardBody,
    ) as string;
    const searches = (JSON.parse(dashboard).widgets as Array<{ properties: { metrics?: unknown[][] } }>)
      .flatMap((w) => w.properties.metrics ?? [])
      .map((row) => (row[0] as { expression?: string }).expression ?? '')
      .filter((e) => e.startsWith('SEARCH(') && e.includes(',account,'));
    expect(searches.sort()).toEqual(
      ['CriticalFindings', 'ScanCompleted', 'ScanFailed'].map(
        (m) =>
          `SEARCH('{DomainSentinel,account,deployment,service} MetricName="${m}" deployment="DomainSentinel"', 'Sum', 3600)`,
      ),
    );
    // No dead-man switch for a deployment-wide scan that no longer runs.
    expect(JSON.stringify(template.findResources('AWS::CloudWatch::Alarm'))).not.toContain(
      '"AlarmName":"DomainSentinel/ScanNotCompleted"',
    );
  });

  it('tells the ops topic when an account alarm goes from ALARM to OK, and at no other change', () => {
    const { resolver } = built;
    const [ruleId, ...more] = resolver.ofType('AWS::Events::Rule');
    expect(more).toEqual([]);
    const rule = resolver.resolve(resolver.resource(ruleId as string).Properties) as {
      EventPattern: Record<string, never>;
      Targets: Array<{
        Arn: string;
        InputTransformer: { InputPathsMap: Record<string, string>; InputTemplate: string };
      }>;
    };
    const alarms = 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:DomainSentinel';
    expect(rule.EventPattern).toEqual({
      source: ['aws.cloudwatch'],
      'detail-type': ['CloudWatch Alarm State Change'],
      resources: [{ prefix: `${alarms}/ScanFailed-` }, { prefix: `${alarms}/ScanNotCompleted-` }],
      detail: { previousState: { value: ['ALARM'] }, state: { value: ['OK'] } },
    });
    const opsTopic = opsTopicOf(resolver);
    const [target, ...others] = rule.Targets;
    expect(others).toEqual([]);
    expect(target?.Arn).toBe(resolver.ref(opsTopic));
    const place = { account: ENV.account, region: ENV.region };
    const clears = (
      name: string,
      from: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA' = 'ALARM',
      to: 'OK' | 'ALARM' = 'OK',
    ) => matchesPattern(rule.EventPattern, alarmStateChange(place, name, from, to));
    for (const { name } of ACCOUNTS) {
      expect(clears(`DomainSentinel/ScanFailed-${name}`)).toBe(true);
      expect(clears(`DomainSentinel/ScanNotCompleted-${name}`)).toBe(true);
      // A new alarm's first OK (the flood the alarms' missing OK actions avoid), and firing, are not told.
      expect(clears(`DomainSentinel/ScanFailed-${name}`, 'INSUFFICIENT_DATA')).toBe(false);
      expect(clears(`DomainSentinel/ScanNotCompleted-${name}`, 'INSUFFICIENT_DATA')).toBe(false);
      expect(clears(`DomainSentinel/ScanFailed-${name}`, 'OK', 'ALARM')).toBe(false);
    }
    // The deployment's own alarms tell OK themselves; another deployment's are not this one's.
    expect(clears('DomainSentinel/ScanFailedRuns')).toBe(false);
    expect(clears('DomainSentinel/AccountScansFailed')).toBe(false);
    expect(clears('OtherSentinel/ScanFailed-brand-a')).toBe(false);
    expect(
      matchesPattern(
        rule.EventPattern,
        alarmStateChange(
          { ...place, account: '210987654321' },
          'DomainSentinel/ScanFailed-brand-a',
          'ALARM',
          'OK',
        ),
      ),
    ).toBe(false);
    const event = alarmStateChange(place, 'DomainSentinel/ScanFailed-brand-a', 'ALARM', 'OK');
    expect(transformInput(target?.InputTransformer as never, event)).toBe(
      'Cleared: the alarm DomainSentinel/ScanFailed-brand-a went from ALARM to OK at 2026-03-02T06:14:40Z (UTC): a scan of the account its name ends with completed. Nothing to do.',
    );
  });

  it('lets EventBridge publish the clearing to the ops topic for this rule only, and encrypt with its key', () => {
    const { resolver } = built;
    const [ruleId] = resolver.ofType('AWS::Events::Rule');
    const opsTopic = opsTopicOf(resolver);
    const policy = resolver
      .ofType('AWS::SNS::TopicPolicy')
      .find((id) =>
        (resolver.resolve(resolver.resource(id).Properties?.Topics) as string[]).includes(
          resolver.ref(opsTopic),
        ),
      ) as string;
    const statements = (
      resolver.resolve(resolver.resource(policy).Properties?.PolicyDocument) as {
        Statement: Array<Record<string, unknown>>;
      }
    ).Statement;
    const fromEvents = statements.filter(
      (s) => JSON.stringify(s.Principal) === JSON.stringify({ Service: 'events.amazonaws.com' }),
    );
    expect(fromEvents).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Action: 'sns:Publish',
        Resource: resolver.ref(opsTopic),
        Condition: { ArnEquals: { 'aws:SourceArn': resolver.attribute(ruleId as string, 'Arn') } },
      }),
    ]);
    // SNS's guide: aws:SourceArn and aws:SourceAccount in a key policy fail EventBridge's messages.
    const key = resolver.resource(opsTopic).Properties?.KmsMasterKeyId as { 'Fn::GetAtt': [string] };
    const keyPolicy = resolver.resolve(resolver.resource(key['Fn::GetAtt'][0]).Properties?.KeyPolicy) as {
      Statement: Array<Record<string, unknown>>;
    };
    expect(
      keyPolicy.Statement.filter((s) => JSON.stringify(s.Principal).includes('events.amazonaws.com')),
    ).toEqual([
      {
        Sid: 'AllowEventBridgeToEncryptForTheOpsTopic',
        Effect: 'Allow',
        Principal: { Service: 'events.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        Resource: '*',
      },
    ]);
  });

  it('raises an alarm on the ops topic when EventBridge fails to deliver a clearing', () => {
    const { resolver } = built;
    const [ruleId] = resolver.ofType('AWS::Events::Rule');
    const opsTopic = opsTopicOf(resolver);
    const watching = resolver.ofType('AWS::CloudWatch::Alarm').filter((id) => {
      const p = resolver.resource(id).Properties ?? {};
      return p.Namespace === 'AWS/Events' && p.MetricName === 'FailedInvocations';
    });
    expect(watching).toHaveLength(1);
    const alarm = resolver.resolve(resolver.resource(watching[0] as string).Properties) as Record<
      string,
      unknown
    >;
    expect(alarm).toMatchObject({
      AlarmName: 'DomainSentinel/AccountAlarmClearedUndelivered',
      Dimensions: [{ Name: 'RuleName', Value: resolver.ref(ruleId as string) }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [resolver.ref(opsTopic)],
    });
    // Its own name is none the rule matches: its clearing is told by its OK action, once.
    const event = alarmStateChange(
      { account: ENV.account, region: ENV.region },
      'DomainSentinel/AccountAlarmClearedUndelivered',
      'ALARM',
      'OK',
    );
    const rule = resolver.resolve(resolver.resource(ruleId as string).Properties) as {
      EventPattern: Record<string, never>;
    };
    expect(matchesPattern(rule.EventPattern, event)).toBe(false);
  });

  it('refuses an ops topic key it cannot add the EventBridge and CloudWatch statements to', () => {
    const stack = new Stack(new App(), 'Imported', { env: { account: ENV.account, region: ENV.region } });
    const key = kms.Key.fromKeyArn(
      stack,
      'Key',
      `arn:aws:kms:${ENV.region}:${ENV.account}:key/1234abcd-12ab-34cd-56ef-1234567890ab`,
    );
    expect(() => new Watchdog(stack, 'Watchdog', { key, emails: ['ops@example.nl'] })).toThrow(
      /the ops topic.s key .* is imported: its policy cannot be changed here/,
    );
  });

  it('leaves a weekly schedule of the accounts to the heartbeat: no account has a dead-man alarm or arms one', () => {
    const weekly = synth({
      schedule: 'cron(0 6 ? * MON *)',
      heartbeatUrlParameterName: '/domain-sentinel/heartbeat-url',
    });
    const alarms = JSON.stringify(everything(weekly.stack).findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).not.toContain('ScanNotCompleted');
    // Only the failure alarms can clear: the rule matches theirs alone.
    const [rule] = Object.values(weekly.template.findResources('AWS::Events::Rule'));
    expect(JSON.stringify(weekly.resolver.resolve(rule?.Properties?.EventPattern))).not.toContain(
      'ScanNotCompleted',
    );
    expect(JSON.stringify(weekly.resolver.resolve(rule?.Properties?.EventPattern))).toContain('/ScanFailed-');
    // The failure alarm of each account stays: a run that failed is still seen.
    for (const { name } of ACCOUNTS) expect(alarms).toContain(`DomainSentinel/ScanFailed-${name}`);
    expect(JSON.stringify(everything(weekly.stack).toJSON())).not.toContain('DeadManArmed');
  });

  it('arms a new account’s dead-man switch and leaves the armed ones alone when an account is added', () => {
    // Each DeadManArmed call of the deployment (in any of its stacks), by the accounts it arms.
    const arming = (stack: Stack) =>
      Object.entries(everything(stack).findResources('Custom::AWS'))
        .map(([id, r]) => ({ id, properties: r.Properties as Record<string, unknown> }))
        .filter(({ properties }) => JSON.stringify(properties.Create).includes('DeadManArmed'))
        .map(({ id, properties }) => {
          const create = JSON.parse(built.resolver.string(properties.Create, 'the call')) as {
            parameters: { MetricData: Array<{ Dimensions: Array<{ Name: string; Value: string }> }> };
          };
          const accounts = create.parameters.MetricData.map(
            (d) => d.Dimensions.find((x) => x.Name === 'account')?.Value,
          );
          return { id, properties, accounts };
        });
    const before = arming(built.stack);
    const added = synthStack({
      accounts: accountsFile(
        [...ACCOUNTS, { name: 'brand-c', apiKeyParameter: '/domain-sentinel/brand-c/api-key' }],
        'added.json',
      ),
    });
    const after = arming(added.stack);
    // One call per account, arming only it, on create only: a deploy that updated an existing
    // switch's call would put a data point for an account whose scan may have stopped, and its
    // alarm would turn OK (telling the ops topic so) and stay quiet for another interval.
    for (const calls of [before, after])
      for (const call of calls) {
        expect(call.accounts).toHaveLength(1);
        expect(call.properties.Update).toBeUndefined();
      }
    expect(after.map((c) => c.accounts[0]).sort()).toEqual(['brand-a', 'brand-b', 'brand-c', 'test-env']);
    // The accounts already armed keep their calls exactly as they were: CloudFormation does not run them again.
    for (const call of before) expect(after.find((c) => c.accounts[0] === call.accounts[0])).toEqual(call);
  });

  it('draws the deployment’s own graphs as totals over its accounts: every scan metric carries its account', () => {
    const dashboard = built.resolver.resolve(
      Object.values(built.template.findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties?.DashboardBody,
    ) as string;
    const rows = (JSON.parse(dashboard).widgets as Array<{ properties: { metrics?: unknown[][] } }>).flatMap(
      (w) => w.properties.metrics ?? [],
    );
    // A metric of the scan without the account dimension is one no scan of an account emits: an empty graph.
    const plain = rows
      .map((row) => row.filter((x) => typeof x === 'string') as string[])
      .filter(([namespace, , ...pairs]) => namespace === 'DomainSentinel' && pairs.includes('scan'));
    expect(plain.filter((row) => !row.includes('account'))).toEqual([]);
    const totals = rows
      .map((row) => (row[0] as { expression?: string }).expression ?? '')
      .filter((e) => e.startsWith('SUM('));
    expect(totals.sort()).toEqual(
      [
        'CriticalFindings',
        'DomainsScanned',
        'ResellerRequests',
        'ResellerThrottled',
        'UnreadableRecords',
        'WarningFindings',
      ].map(
        (m) =>
          `SUM(SEARCH('{DomainSentinel,account,deployment,service} MetricName="${m}" deployment="DomainSentinel"', 'Sum', 3600))`,
      ),
    );
  });

  it('routes each account’s links under /accounts/{account}/ and the overview at /accounts', () => {
    const paths = Object.values(built.template.findResources('AWS::ApiGateway::Resource')).map(
      (r) => (r as { Properties: { PathPart: string } }).Properties.PathPart,
    );
    expect(paths).toEqual(expect.arrayContaining(['accounts', '{account}', 'report', 'calendar.ics']));
    built.template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'POST',
      RequestParameters: { 'method.request.path.account': true, 'method.request.path.domain': true },
    });
  });

  it('passes cdk-nag with accounts, in a concrete account and environment-agnostic', () => {
    for (const env of [{ account: '123456789012', region: 'eu-west-1' }, undefined]) {
      const app = new App({ context: { ...BASE_CONTEXT, accounts: accountsFile(ACCOUNTS) } });
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
      new DomainSentinelStack(app, 'DomainSentinel', {
        settings: settingsFromContext(app),
        ...(env ? { env } : {}),
      });
      expect(() => app.synth()).not.toThrow();
    }
  });

  it('keeps every role’s policies within IAM’s sizes with the most accounts and long key parameter names', () => {
    // 50 accounts whose key parameters have 124-character names: each function lists all 50 twice
    // (ssm:GetParameter and the kms:Decrypt condition). IAM counts characters without whitespace:
    // a role's inline policies together at most 10 240, each managed policy at most 6 144, and at
    // most 10 managed policies per role without a quota increase.
    const long = Array.from({ length: MAX_ACCOUNTS }, (_, i) => ({
      name: `brand-${i}`,
      apiKeyParameter: `/domain-sentinel/${'resellers/'.repeat(9)}brand-${String(i).padStart(3, '0')}/api-key`,
    }));
    expect(long[0]?.apiKeyParameter).toHaveLength(124);
    const { template } = synthStack({ accounts: accountsFile(long, 'long-names.json') });
    const json = template.toJSON() as Template;
    const resolver = new TemplateResolver(json, ENV);
    const sizes = new Map<string, { inline: number; managed: number[] }>();
    for (const type of ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy'])
      for (const id of resolver.ofType(type)) {
        const properties = resolver.resource(id).Properties ?? {};
        const size = JSON.stringify(resolver.resolve(properties.PolicyDocument)).length;
        for (const role of (properties.Roles as Array<{ Ref: string }>) ?? []) {
          const entry = sizes.get(role.Ref) ?? { inline: 0, managed: [] };
          if (type === 'AWS::IAM::Policy') entry.inline += size;
          else entry.managed.push(size);
          sizes.set(role.Ref, entry);
        }
      }
    const scanRole = [...sizes.keys()].find((role) => role.startsWith('ScanFunctionRole'));
    // The grant is there (the sizes below are about it): every account's key, readable.
    expect(
      statementsOfIn(resolver, scanRole as string)
        .filter((s) => list(s.Action).includes('ssm:GetParameter'))
        .flatMap((s) => list(s.Resource)),
    ).toEqual(expect.arrayContaining(long.map((a) => parameterArn(a.apiKeyParameter))));
    const over = [...sizes.entries()].filter(
      ([, { inline, managed }]) => inline > 10_240 || managed.some((m) => m > 6_144) || managed.length > 10,
    );
    expect(over).toEqual([]);
    // Names so long together that no role could hold them: refused at synth, not by the deploy.
    const tooLong = long.map((a) => ({ ...a, apiKeyParameter: `${a.apiKeyParameter}/${'x'.repeat(300)}` }));
    expect(() => synthStack({ accounts: accountsFile(tooLong, 'too-long-names.json') })).toThrow(
      /^invalid DomainSentinel props: the accounts' apiKeyParameter names are too long together \(42500 characters\): reading them takes \d+ IAM managed policies/,
    );
  });

  it('refuses accounts the stack cannot deploy, naming the account', () => {
    const noParameter = accountsFile([{ name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' }], 'no-parameter.json');
    expect(() => synthStack({ accounts: noParameter })).toThrow(
      'invalid DomainSentinel props: accounts brand-a have no apiKeyParameter',
    );
    const nobody = accountsFile(
      [
        { name: 'brand-a', apiKeyParameter: '/a', alertEmails: ['a@example.nl'] },
        { name: 'brand-b', apiKeyParameter: '/b' },
      ],
      'nobody.json',
    );
    const app = new App({
      context: { ...BASE_CONTEXT, alertEmails: '', alertSmsNumbers: '', accounts: nobody },
    });
    new DomainSentinelStack(app, 'DomainSentinel', { settings: settingsFromContext(app) });
    expect(() => app.synth()).toThrow(/No one would receive the alerts of these accounts.*: brand-b$/m);
    const deploymentKey = accountsFile(
      [{ name: 'brand-a', apiKeyParameter: '/a', schedule: 'rate(1 hour)' }],
      'key.json',
    );
    expect(() => synthStack({ accounts: deploymentKey })).toThrow(
      `accounts file ${deploymentKey}: account "brand-a" (accounts[0]): schedule is a setting of the whole deployment, not of one account`,
    );
    const twice = accountsFile(
      [
        { name: 'brand-a', apiKeyParameter: '/same' },
        { name: 'brand-b', apiKeyParameter: '/same' },
      ],
      'twice.json',
    );
    expect(() => synthStack({ accounts: twice })).toThrow(
      'accounts brand-a and brand-b both read their key from /same',
    );
    const many = accountsFile(
      Array.from({ length: MAX_ACCOUNTS + 1 }, (_, i) => ({ name: `a${i}`, apiKeyParameter: `/a${i}` })),
      'many.json',
    );
    expect(() => synthStack({ accounts: many })).toThrow(`one deployment scans at most ${MAX_ACCOUNTS}`);
    // Reserved concurrency below the Map's: the Map's invocations beyond it are throttled, and
    // an account whose scan is throttled twice fails and raises its alarm, though nothing is wrong.
    expect(() =>
      synthStack({ accounts: accountsFile(ACCOUNTS), scanReservedConcurrency: '1', accountConcurrency: '2' }),
    ).toThrow(
      'invalid DomainSentinel props: scanReservedConcurrency (1) is below accountConcurrency (2): the state machine would start 2 scans at once and Lambda would throttle all but 1',
    );
    expect(() =>
      synthStack({ accounts: accountsFile(ACCOUNTS), scanReservedConcurrency: '2', accountConcurrency: '2' }),
    ).not.toThrow();
    const badName = accountsFile([{ name: 'Brand A', apiKeyParameter: '/a' }], 'bad-name.json');
    expect(() => synthStack({ accounts: badName })).toThrow(
      /account "Brand A" \(accounts\[0\]\): name must be 1 to 32 of a-z/,
    );
  });
});
