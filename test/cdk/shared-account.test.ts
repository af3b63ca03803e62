import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { App, NestedStack, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { DomainSentinel } from '../../lib/index';
import { denials, describeDenial } from '../deploy/iam';
import { resourcePolicyFor, type Template as TemplateJson, TemplateResolver } from '../deploy/template';
import { BASE_CONTEXT, CHAT_CONTEXT, synthStack } from '../support/stack';

/**
 * A deployment into an account that is not brand new and not its own (issue 35): it changes none
 * of the account's settings unless told it owns them, creates nothing under a name another service
 * or a second copy could hold, and a redeploy after a destroy adopts the memory the first one kept.
 */

const ENV = { account: '123456789012', region: 'eu-west-1' };
const scratch = mkdtempSync(join(tmpdir(), 'sentinel-shared-account-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const ACCOUNTS = join(scratch, 'accounts.json');
writeFileSync(
  ACCOUNTS,
  JSON.stringify({
    accounts: [
      { name: 'brand-a', apiKeyParameter: '/domain-sentinel/brand-a/api-key', alertEmails: ['a@example.nl'] },
      { name: 'brand-b', apiKeyParameter: '/domain-sentinel/brand-b/api-key' },
    ],
  }),
);
/** Everything the stack can make: owned account settings, SMS and its quiet hours, chat, webhooks. */
const EVERYTHING = { ...CHAT_CONTEXT, ownAccountSettings: 'true', smsQuietHours: '22:00-07:00' };

/** Every template of a synth: the stack's and its nested stacks'. */
function templatesOf(stack: Stack): Array<{ stack: Stack; json: TemplateJson }> {
  const nested = stack.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack);
  return [stack, ...nested].map((s) => ({ stack: s, json: Template.fromStack(s).toJSON() as TemplateJson }));
}

/** A custom resource's call of one kind (Create, Update, Delete), as the template holds it. */
function callValue(template: Template, action: string, kind: 'Create' | 'Update' | 'Delete'): unknown {
  const call = Object.values(template.findResources('Custom::AWS')).find((r) =>
    ['Create', 'Update', 'Delete'].some((k) => JSON.stringify(r.Properties[k] ?? '').includes(action)),
  );
  return call?.Properties[kind];
}

/** A Fn::Join of the template as one string, each reference shown as `{Logical.Attr}`. */
function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (v['Fn::Join']) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(joined).join(separator);
  }
  if (v.Ref) return `{${v.Ref}}`;
  if (v['Fn::GetAtt']) return `{${(v['Fn::GetAtt'] as string[]).join('.')}}`;
  throw new Error(`cannot join ${JSON.stringify(value)}`);
}

describe('the account’s own settings: left alone unless the deployment owns them', {
  timeout: 180_000,
}, () => {
  it('by default sets nothing of the account: no API Gateway account role, no SMS attributes, no SNS log groups, no stage logs', () => {
    const { template } = synthStack();
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
    expect(JSON.stringify(template.findResources('AWS::IAM::Role'))).not.toContain(
      'AmazonAPIGatewayPushToCloudWatchLogs',
    );
    expect(callValue(template, 'setSMSAttributes', 'Create')).toBeUndefined();
    expect(JSON.stringify(template.findResources('AWS::Logs::LogGroup'))).not.toMatch(
      /DirectPublishToPhoneNumber|API-Gateway-Execution-Logs/,
    );
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage'))[0]?.Properties;
    expect(stage.AccessLogSetting).toBeUndefined();
    expect(stage.MethodSettings[0].LoggingLevel).toBeUndefined();
  });

  it('owning them: sets API Gateway’s CloudWatch Logs role before the stage, and on destroy releases it (cleared only if still ours) before the role goes', () => {
    const { template, stack } = synthStack({ ownAccountSettings: 'true' });
    const owner = stack.sentinel.accountSettings;
    if (!owner) throw new Error('no account settings');
    const roleId = stack.getLogicalId(owner.apiGatewayRole.node.defaultChild as never);
    const [accountId] = Object.keys(template.findResources('AWS::ApiGateway::Account'));
    template.hasResource('AWS::ApiGateway::Account', {
      Properties: { CloudWatchRoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] } },
    });
    // Not kept: the stack that set the account's role also takes it away, after releasing the setting.
    template.hasResource('AWS::IAM::Role', {
      Properties: {
        AssumeRolePolicyDocument: {
          Statement: [
            Match.objectLike({
              Principal: { Service: 'apigateway.amazonaws.com' },
              Condition: { StringEquals: { 'aws:SourceAccount': '123456789012' } },
            }),
          ],
        },
      },
      DeletionPolicy: Match.absent(),
    });
    template.hasResource('AWS::ApiGateway::Stage', { DependsOn: Match.arrayWith([accountId]) });
    // No deploy-time call clears the setting whoever it names (a shared account's other team's role).
    for (const kind of ['Create', 'Update', 'Delete'] as const)
      expect(callValue(template, 'updateAccount', kind)).toBeUndefined();
    // The former clearing call stays, with no delete call: had it gone, an update from a version
    // before the release would have run its old delete and cleared our own setting.
    const former = Object.entries(template.findResources('Custom::AWS')).find(([id]) =>
      id.includes('ApiGatewayRoleCleared'),
    );
    expect(former?.[1].Properties.Delete).toBeUndefined();
    expect(JSON.parse(joined(former?.[1].Properties.Create))).toMatchObject({ action: 'getAccount' });
    // The release names our role, so it goes first, and is deleted before the setting's resource.
    // One release per setting: this one names API Gateway's role alone.
    const release = Object.values(template.findResources('Custom::AccountSettingsRelease')).filter(
      (r) => r.Properties.ApiGatewayCloudWatchRole !== undefined,
    );
    expect(release).toHaveLength(1);
    expect(release[0]?.Properties).toMatchObject({
      ApiGatewayCloudWatchRole: { 'Fn::GetAtt': [roleId, 'Arn'] },
    });
    expect(release[0]?.Properties.SmsDeliveryStatusRole).toBeUndefined();
    expect(release[0]?.DependsOn).toEqual(expect.arrayContaining([accountId]));
  });

  it('owning them with SMS: sets the delivery-status role on create and update, releases it on delete (cleared only if still ours), passes only that role', () => {
    const { template, stack } = synthStack({ ownAccountSettings: 'true' });
    const role = stack.sentinel.accountSettings?.smsDeliveryStatusRole;
    if (!role) throw new Error('no SMS delivery-status role');
    const roleId = stack.getLogicalId(role.node.defaultChild as never);
    const set = (role: string, rate: string) => ({
      service: 'SNS',
      action: 'setSMSAttributes',
      parameters: { attributes: { DeliveryStatusIAMRole: role, DeliveryStatusSuccessSamplingRate: rate } },
      physicalResourceId: { id: 'sms-delivery-status-logging' },
    });
    const call = (kind: 'Create' | 'Update' | 'Delete') =>
      JSON.parse(joined(callValue(template, 'setSMSAttributes', kind)));
    expect(call('Create')).toEqual(set(`{${roleId}.Arn}`, '100'));
    expect(call('Update')).toEqual(set(`{${roleId}.Arn}`, '100'));
    // Cleared by the release alone, and only while it names this role (test/unit/settings-release.test.ts).
    expect(callValue(template, 'setSMSAttributes', 'Delete')).toBeUndefined();
    // A release of its own, so an update that drops SMS releases it only once the update succeeded.
    const [releaseId, release] =
      Object.entries(template.findResources('Custom::AccountSettingsRelease')).find(
        ([, r]) => r.Properties.SmsDeliveryStatusRole !== undefined,
      ) ?? [];
    expect(release?.Properties.SmsDeliveryStatusRole).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
    expect(release?.Properties.ApiGatewayCloudWatchRole).toBeUndefined();
    const setting = Object.entries(template.findResources('Custom::AWS')).find(([id]) =>
      id.includes('SmsAttributes'),
    );
    expect(release?.DependsOn).toEqual(expect.arrayContaining([setting?.[0]]));
    expect(releaseId).toBeDefined();
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          { Action: 'sns:SetSMSAttributes', Effect: 'Allow', Resource: '*' },
          {
            Action: 'iam:PassRole',
            Effect: 'Allow',
            Resource: { 'Fn::GetAtt': [roleId, 'Arn'] },
            Condition: { StringEquals: { 'iam:PassedToService': 'sns.amazonaws.com' } },
          },
        ],
      },
    });
    // SNS writes only its own groups, which it names and makes: the stack makes none of them.
    expect(template.toJSON().Resources[roleId]).toMatchObject({
      Properties: {
        AssumeRolePolicyDocument: {
          Statement: [
            expect.objectContaining({
              Principal: { Service: 'sns.amazonaws.com' },
              Condition: { StringEquals: { 'aws:SourceAccount': '123456789012' } },
            }),
          ],
        },
        Policies: [
          {
            PolicyName: 'SmsDeliveryLogs',
            PolicyDocument: {
              Statement: [
                expect.objectContaining({
                  Resource: {
                    'Fn::Join': [
                      '',
                      [
                        'arn:',
                        { Ref: 'AWS::Partition' },
                        ':logs:eu-west-1:123456789012:log-group:sns/eu-west-1/123456789012/*',
                      ],
                    ],
                  },
                }),
              ],
            },
          },
        ],
      },
    });
    expect(template.toJSON().Resources[roleId].DeletionPolicy).toBeUndefined();
    expect(JSON.stringify(template.findResources('AWS::Logs::LogGroup'))).not.toContain(
      'DirectPublishToPhoneNumber',
    );
  });

  it('owning them: the release function may read and clear the two settings and write its own log group, nothing else', () => {
    const { template, stack } = synthStack({ ownAccountSettings: 'true' });
    const fn = stack.sentinel.accountSettings?.releaseFunction;
    if (!fn) throw new Error('no release function');
    const fnId = stack.getLogicalId(fn.node.defaultChild as never);
    const logsId = stack.getLogicalId(fn.logGroupOfFunction.node.defaultChild as never);
    const roleId = stack.getLogicalId(fn.role?.node.defaultChild as never);
    const [, release] = Object.entries(template.findResources('Custom::AccountSettingsRelease'))[0] ?? [];
    expect(release?.Properties.ServiceToken).toEqual({ 'Fn::GetAtt': [fnId, 'Arn'] });
    expect(release?.Properties.ServiceTimeout).toBe('600');
    expect(template.toJSON().Resources[fnId].Properties.Timeout).toBe(120);
    expect(template.toJSON().Resources[logsId]).toMatchObject({
      DeletionPolicy: 'Delete',
      Properties: { RetentionInDays: 30 },
    });
    // Read and clear: API Gateway on the account resource alone; SNS's SMS attributes have no
    // resource-level permissions. No iam:PassRole: clearing names no role.
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties.Roles).includes(roleId),
    );
    expect(policies.map((p) => p.Properties.PolicyDocument.Statement)).toEqual([
      [
        {
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Effect: 'Allow',
          Resource: { 'Fn::GetAtt': [logsId, 'Arn'] },
        },
        {
          Action: ['apigateway:GET', 'apigateway:PATCH'],
          Effect: 'Allow',
          Resource: {
            'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':apigateway:eu-west-1::/account']],
          },
        },
        { Action: ['sns:GetSMSAttributes', 'sns:SetSMSAttributes'], Effect: 'Allow', Resource: '*' },
      ],
    ]);
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [Match.objectLike({ Principal: { Service: 'lambda.amazonaws.com' } })],
      },
      ManagedPolicyArns: Match.absent(),
      Description: Match.stringLikeRegexp('SettingsRelease'),
    });
    // Without SMS recipients there is no SMS setting to release (the SNS permission stays, for an
    // update that drops them: the next test).
    const { template: noSms } = synthStack({ ownAccountSettings: 'true', alertSmsNumbers: '' });
    const bare = Object.values(noSms.findResources('Custom::AccountSettingsRelease'));
    expect(bare.map((r) => Object.keys(r.Properties).sort())).toEqual([
      ['ApiGatewayCloudWatchRole', 'ServiceTimeout', 'ServiceToken'],
    ]);
  });

  it('owning them: an update that drops the SMS recipients still lets the release read and clear the SMS setting it had', async () => {
    // The update drops the SMS release, whose delete (in the cleanup after the update) clears the
    // SMS setting if it is still ours, under the new template's policy: so the template without
    // SMS must still grant both SNS calls.
    const { stack } = synthStack({ ownAccountSettings: 'true', alertSmsNumbers: '' });
    const fn = stack.sentinel.accountSettings?.releaseFunction;
    if (!fn) throw new Error('no release function');
    const json = Template.fromStack(stack).toJSON() as TemplateJson;
    const fnId = stack.getLogicalId(fn.node.defaultChild as never);
    const roleId = stack.getLogicalId(fn.role?.node.defaultChild as never);
    const policyId = Object.entries(json.Resources).find(
      ([, r]) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties).includes(`"Ref":"${roleId}"`),
    )?.[0];
    expect(json.Resources[fnId]?.DependsOn).toEqual(expect.arrayContaining([policyId]));
    const resolver = new TemplateResolver(json, { ...ENV, stackName: 'DomainSentinel' });
    const calls = ['sns:GetSMSAttributes', 'sns:SetSMSAttributes'].map((action) => ({
      caller: roleId,
      action,
      resource: '*',
      context: {},
    }));
    const refused = await denials(resolver, calls, (caller) => ({ roleId: caller, session: 'release' }));
    expect(refused.map(describeDenial)).toEqual([]);
  });

  it('refuses a second copy that would own them in the same app, account and region', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const props = {
      resellerBaseUrl: 'https://api.reseller.example',
      alertEmails: ['a@example.nl'],
      ownAccountSettings: true,
    };
    new DomainSentinel(new Stack(app, 'A', { env: ENV }), 'X', { ...props, apiKeyParameterName: '/a/key' });
    expect(
      () =>
        new DomainSentinel(new Stack(app, 'B', { env: ENV }), 'X', {
          ...props,
          apiKeyParameterName: '/b/key',
        }),
    ).toThrow(
      'invalid DomainSentinel props: ownAccountSettings is already set by A/X in the same account and region; one deployment owns the account settings: set it in one copy only',
    );
    // In another region, the settings are another region's: both may own theirs.
    expect(
      () =>
        new DomainSentinel(new Stack(app, 'C', { env: { ...ENV, region: 'us-east-1' } }), 'X', {
          ...props,
          apiKeyParameterName: '/c/key',
        }),
    ).not.toThrow();
  });
});

/** A resource's own name, as the template sets it: where it lives, and why no other can hold it. */
const NAMED: Readonly<Record<string, string>> = {
  'AWS::CloudWatch::Alarm.AlarmName':
    'regional: `<stack>/<construct path>/<alarm>`; a stack name is unique in its account and region',
  'AWS::ApiGateway::RestApi.Name':
    'regional, and API Gateway does not require it unique (the API id is): `<stack>-<construct path>-restore` keeps the 5XX alarm, which is keyed by it, on this API',
  'AWS::ApiGateway::Stage.StageName': 'within its own API only',
  'AWS::Logs::LogGroup.LogGroupName':
    'regional: `API-Gateway-Execution-Logs_<API id>/prod`, named by API Gateway after an API id that is new with every deploy; ' +
    'the state machine’s `/aws/vendedlogs/states/<stack>/<construct path>-<hash>`, deleted with the stack',
  'AWS::IAM::Policy.PolicyName': 'within the role it is attached to only',
  'AWS::Scheduler::ScheduleGroup.Name':
    'regional: the scan schedule’s group and the held SMS group, `<stack>-<construct path>-…Group-<hash of the path>`, deleted with the stack and its schedules',
  'AWS::Scheduler::Schedule.GroupName': 'the name of the scan schedule’s own group, above',
  'AWS::IAM::Role.Policies.PolicyName': 'within its role only',
  'AWS::Chatbot::SlackChannelConfiguration.ConfigurationName':
    'account-wide: carries the stack, the construct path, the region, and a hash of the workspace id, whose change replaces it',
  'AWS::Chatbot::MicrosoftTeamsChannelConfiguration.ConfigurationName':
    'account-wide: carries the stack, the construct path, the region, and a hash of the team and tenant ids, whose change replaces it',
};

/** Properties named like a name that name something else: a metric, a display text, another resource. */
const NOT_A_NAME = new Set(['MetricName', 'DisplayName']);

/** Every explicit name in a template, `Type.Property` → the values (references to other resources left out). */
function explicitNames(json: TemplateJson): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const add = (key: string, value: unknown) => out.set(key, [...(out.get(key) ?? []), value]);
  const isReference = (v: unknown) =>
    typeof v === 'object' && v !== null && ('Ref' in v || 'Fn::GetAtt' in v || 'Fn::ImportValue' in v);
  for (const resource of Object.values(json.Resources)) {
    if (resource.Type.startsWith('Custom::')) continue;
    for (const [property, value] of Object.entries(resource.Properties ?? {})) {
      if (property.endsWith('Name') && !NOT_A_NAME.has(property) && !isReference(value))
        add(`${resource.Type}.${property}`, value);
      if (property === 'Policies')
        for (const policy of value as Array<{ PolicyName: unknown }>)
          add(`${resource.Type}.Policies.PolicyName`, policy.PolicyName);
    }
  }
  return out;
}

describe('names: nothing collides in a shared account, in a second region, or after a destroy', {
  timeout: 180_000,
}, () => {
  it('lists every explicitly named resource, with why its name cannot collide', () => {
    const { stack } = synthStack({ ...EVERYTHING, accounts: ACCOUNTS });
    const found = new Set<string>();
    for (const { json } of templatesOf(stack)) for (const key of explicitNames(json).keys()) found.add(key);
    // Every name the templates set has its reason here, and every reason is of a name they set.
    expect([...found].sort()).toEqual(Object.keys(NAMED).sort());
    // Nothing under a name another service fixes per account: not SNS's SMS log groups.
    const groups = templatesOf(stack).flatMap(
      ({ json }) => explicitNames(json).get('AWS::Scheduler::ScheduleGroup.Name') ?? [],
    );
    expect(groups.sort()).toEqual([
      expect.stringMatching(/^DomainSentinel-HeldSms-Group-[0-9A-F]{8}$/),
      expect.stringMatching(/^DomainSentinel-Scan-ScheduleGroup-[0-9A-F]{8}$/),
    ]);
    const all = templatesOf(stack).flatMap(({ json }) => [...explicitNames(json).values()].flat());
    expect(JSON.stringify(all)).not.toContain('DirectPublishToPhoneNumber');
  });

  it('gives a second copy in another region other account-wide names, and makes no two regional names equal in one region', () => {
    const accountWide = (region: string) => {
      const { template } = synthStack({ ...EVERYTHING });
      const json = template.toJSON() as TemplateJson;
      const names = explicitNames(json);
      return [
        ...(names.get('AWS::Chatbot::SlackChannelConfiguration.ConfigurationName') ?? []),
        ...(names.get('AWS::Chatbot::MicrosoftTeamsChannelConfiguration.ConfigurationName') ?? []),
      ].map((n) => String(n).replace('eu-west-1', region));
    };
    const [ireland, virginia] = [accountWide('eu-west-1'), accountWide('us-east-1')];
    expect(ireland).toHaveLength(2);
    for (const name of virginia) expect(ireland).not.toContain(name);
    // The region in the name is the stack's own, not a constant: synthesized for another region, it says so.
    const app = new App({ context: { ...BASE_CONTEXT, ...EVERYTHING } });
    const other = new DomainSentinel(
      new Stack(app, 'DomainSentinel', { env: { ...ENV, region: 'us-east-1' } }),
      'Default',
      {
        resellerBaseUrl: 'https://api.reseller.example',
        alertEmails: ['a@example.nl'],
        slackWorkspaceId: 'T07ABCDEF12',
        slackChannelId: 'C07ABCDEF12',
      },
    );
    const names = explicitNames(Template.fromStack(Stack.of(other)).toJSON() as TemplateJson);
    expect(names.get('AWS::Chatbot::SlackChannelConfiguration.ConfigurationName')).toEqual([
      'DomainSentinel-us-east-1-8b7d08b3-slack',
    ]);
    // Within one template no two resources share a name of the same kind.
    const { stack } = synthStack({ ...EVERYTHING, accounts: ACCOUNTS });
    const alarms = templatesOf(stack).flatMap(
      ({ json }) => explicitNames(json).get('AWS::CloudWatch::Alarm.AlarmName') ?? [],
    );
    expect(new Set(alarms).size).toBe(alarms.length);
  });

  it('deploy, destroy, deploy: only the table and the bucket outlive the stack (their names are outputs), and the redeploy adopts them, colliding with nothing left', () => {
    // The first deploy.
    const first = synthStack(EVERYTHING);
    const json = first.template.toJSON() as TemplateJson & { Outputs: Record<string, { Value: unknown }> };
    const kept = Object.entries(json.Resources).filter(
      ([, r]) => (r as { DeletionPolicy?: string }).DeletionPolicy === 'Retain',
    );
    expect(kept.map(([, r]) => r.Type).sort()).toEqual(['AWS::DynamoDB::Table', 'AWS::S3::Bucket']);
    const [tableId] = kept.find(([, r]) => r.Type === 'AWS::DynamoDB::Table') ?? [];
    const [bucketId] = kept.find(([, r]) => r.Type === 'AWS::S3::Bucket') ?? [];
    expect(json.Outputs.StateTableName?.Value).toEqual({ Ref: tableId });
    expect(json.Outputs.ReportBucketName?.Value).toEqual({ Ref: bucketId });

    // The destroy: what is left in the account, by the names CloudFormation gave it, and the
    // names other services make there for the stack (SNS's SMS log groups, API Gateway's).
    const resolver = new TemplateResolver(json, { ...ENV, stackName: 'DomainSentinel' });
    const tableName = resolver.ref(tableId as string);
    const bucketName = resolver.ref(bucketId as string);
    const left = [
      tableName,
      bucketName,
      'sns/eu-west-1/123456789012/DirectPublishToPhoneNumber',
      'sns/eu-west-1/123456789012/DirectPublishToPhoneNumber/Failure',
      ...(explicitNames(json).get('AWS::Logs::LogGroup.LogGroupName') ?? []).map((n) => resolver.resolve(n)),
    ];

    // The second deploy, adopting what was kept.
    const second = synthStack({ ...EVERYTHING, stateTableName: tableName, reportBucketName: bucketName });
    const again = second.template.toJSON() as TemplateJson;
    second.template.resourceCountIs('AWS::DynamoDB::Table', 0);
    second.template.resourceCountIs('AWS::S3::Bucket', 0);
    for (const description of ['scans the reseller account', 'web links'])
      second.template.hasResourceProperties('AWS::Lambda::Function', {
        Description: Match.stringLikeRegexp(description),
        Environment: {
          Variables: Match.objectLike({ STATE_TABLE_NAME: tableName, REPORT_BUCKET: bucketName }),
        },
      });
    expect(JSON.stringify(again)).toContain(`:table/${tableName}`);
    // The kept bucket gets the stack's TLS-only policy, its readers-only policy and lifecycle rules again.
    second.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: bucketName,
      PolicyDocument: {
        Statement: [
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Sid: 'OnlyTheStacksFunctionsRead', Effect: 'Deny' }),
        ],
      },
    });
    expect(JSON.stringify(again)).toContain('putBucketLifecycleConfiguration');
    // No explicit name of the redeploy is one that is left: each is either the stack's own
    // (alarms, the API's name) or made from a resource that is new with this deploy.
    const resolverAgain = new TemplateResolver(again, { ...ENV, stackName: 'DomainSentinel' });
    for (const [key, values] of explicitNames(again))
      for (const value of values) {
        const name = String(resolverAgain.resolve(value));
        const fresh = JSON.stringify(value).includes('"Ref":"Restore');
        if (!fresh) expect(left, `${key} ${name}`).not.toContain(name);
      }
  });
});

/** Every statement of every role and policy of a template, with the role or policy it is in. */
function statementsOf(json: TemplateJson): Array<{ id: string; statement: Record<string, unknown> }> {
  const out: Array<{ id: string; statement: Record<string, unknown> }> = [];
  for (const [id, resource] of Object.entries(json.Resources)) {
    const p = (resource.Properties ?? {}) as Record<string, unknown>;
    const documents = [
      p.PolicyDocument,
      ...((p.Policies as Array<{ PolicyDocument: unknown }> | undefined) ?? []).map((x) => x.PolicyDocument),
    ];
    for (const document of documents)
      for (const statement of ((document as { Statement?: unknown[] } | undefined)?.Statement ?? []) as Array<
        Record<string, unknown>
      >)
        out.push({ id, statement });
  }
  return out;
}

describe('logs: no role writes to log groups of other teams', { timeout: 180_000 }, () => {
  it('lets the deploy-time calls’ function write its own log group only, with no managed policy of logs on every group', () => {
    const { stack } = synthStack({ ...EVERYTHING, accounts: ACCOUNTS, smsQuietHours: '22:00-07:00' });
    const writes = ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'];
    for (const { json } of templatesOf(stack)) {
      // AWSLambdaBasicExecutionRole allows these three on every log group of the account.
      expect(JSON.stringify(json).includes('AWSLambdaBasicExecutionRole')).toBe(false);
      for (const { id, statement } of statementsOf(json)) {
        const actions = [statement.Action].flat() as string[];
        if (!actions.some((a) => writes.includes(a) || a === 'logs:*')) continue;
        expect([statement.Resource].flat(), `${id} ${JSON.stringify(statement)}`).not.toContain('*');
      }
      // The function that makes the calls still writes its own group.
      const provider = Object.entries(json.Resources).find(
        ([, r]) => r.Type === 'AWS::Lambda::Function' && String(JSON.stringify(r)).includes('SdkCallLogs'),
      );
      if (!provider) continue;
      const role = (provider[1].Properties as { Role: { 'Fn::GetAtt': string[] } }).Role['Fn::GetAtt'][0];
      const own = statementsOf(json).filter(
        ({ id, statement }) =>
          JSON.stringify(json.Resources[id]?.Properties).includes(`"Ref":"${role}"`) &&
          [statement.Action].flat().includes('logs:PutLogEvents'),
      );
      expect(own.map(({ statement }) => JSON.stringify(statement.Resource))).toEqual([
        expect.stringMatching(/SdkCallLogs[0-9A-F]{8}","Arn"/),
      ]);
    }
  });
});

/** What IAM answers a role of another team whose own policy allows s3:GetObject on every bucket (as ReadOnlyAccess does). */
async function outsiderReads(resolver: TemplateResolver, object: string): Promise<string> {
  const { account } = resolver.env;
  const resourcePolicy = resourcePolicyFor(resolver, object);
  const response = await runSimulation(
    {
      identityPolicies: [
        {
          name: 'ReadEveryBucket',
          policy: {
            Version: '2012-10-17',
            Statement: [{ Effect: 'Allow', Action: 's3:Get*', Resource: '*' }],
          },
        },
      ],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy ? { resourcePolicy } : {}),
      request: {
        action: 's3:GetObject',
        principal: `arn:aws:sts::${account}:assumed-role/OtherTeamReadOnly/someone`,
        resource: { accountId: account, resource: object },
        contextVariables: {
          'aws:SecureTransport': 'true',
          'aws:PrincipalAccount': account,
          'aws:PrincipalArn': `arn:aws:iam::${account}:role/OtherTeamReadOnly`,
        },
      },
    } as never,
    {},
  );
  return response.resultType === 'error'
    ? `not evaluated: ${JSON.stringify(response).slice(0, 400)}`
    : String((response as { overallResult: string }).overallResult);
}

describe('the reports: read by the stack’s own functions alone', { timeout: 180_000 }, () => {
  it.each([
    ['a bucket of its own', {}],
    ['an adopted bucket', { reportBucketName: 'kept-bucket' }],
  ])(
    'refuses GetObject to another role of the account that may read every bucket, and not to the scan and the web function, with %s',
    async (_name, extra) => {
      // The reports hold every quarantined domain's signed restore link and the registrants: whoever
      // reads latest.json holds the report link's power, a paid restore of any of them included.
      const { stack } = synthStack({ ...extra, accounts: ACCOUNTS });
      const json = Template.fromStack(stack).toJSON() as TemplateJson;
      const resolver = new TemplateResolver(json, { ...ENV, stackName: 'DomainSentinel' });
      const bucket = String(resolver.resolve(stack.resolve(stack.reports.bucket.bucketName)));
      const objects = [
        'accounts.json',
        'accounts/brand-a/latest.json',
        'accounts/brand-a/reports/x.json',
      ].map((key) => `arn:aws:s3:::${bucket}/${key}`);
      for (const object of objects)
        expect(await outsiderReads(resolver, object), object).toMatch(/^ExplicitlyDenied$/);
      const roleOf = (fn: { role?: unknown }) =>
        stack.getLogicalId((fn.role as { node: { defaultChild: never } }).node.defaultChild);
      const calls = [
        { caller: roleOf(stack.web.fn), action: 's3:GetObject', resource: objects[1] as string, context: {} },
        { caller: roleOf(stack.web.fn), action: 's3:GetObject', resource: objects[0] as string, context: {} },
        // A kept report: report.json presigns it with the web function's role.
        { caller: roleOf(stack.web.fn), action: 's3:GetObject', resource: objects[2] as string, context: {} },
        {
          caller: roleOf(stack.scan.fn),
          action: 's3:GetObject',
          resource: objects[0] as string,
          context: {},
        },
      ];
      const refused = await denials(resolver, calls, (caller) => ({
        roleId: caller,
        session: 'shared-account-test',
      }));
      expect(refused.map(describeDenial)).toEqual([]);
    },
  );
});

describe('the scan schedule: out of the default group every team shares', { timeout: 180_000 }, () => {
  it.each([
    ['one account', {}],
    ['an accounts file', { accounts: ACCOUNTS }],
  ])('puts it in a group of the stack, and its role trusts that group alone, with %s', (_name, extra) => {
    const { template } = synthStack(extra);
    const json = template.toJSON() as TemplateJson;
    const scan = Object.values(template.findResources('AWS::Scheduler::Schedule')).filter(
      (r) => r.Properties.Description === 'domain-sentinel scan',
    );
    expect(scan).toHaveLength(1);
    const groups = Object.values(json.Resources)
      .filter((r) => r.Type === 'AWS::Scheduler::ScheduleGroup')
      .map((r) => r.Properties?.Name);
    expect(groups).toContain(scan[0]?.Properties.GroupName);
    // The role Scheduler assumes for it: with the default group in its trust, any schedule of
    // another team in that group could run as it once someone may pass it.
    const roles = Object.values(template.findResources('AWS::IAM::Role')).filter((r) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com'),
    );
    for (const role of roles)
      expect(JSON.stringify(role.Properties.AssumeRolePolicyDocument)).not.toContain(
        'schedule-group/default',
      );
  });
});
