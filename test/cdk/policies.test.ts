import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestedStack, type Stack } from 'aws-cdk-lib';
import { Template as CdkTemplate, Match } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { heldSmsScheduleName } from '../../functions/aws/held-sms';
import { NO_ALERT_SUBSCRIBER } from '../../lib/domain-sentinel';
import type { AwsCall } from '../deploy/aws-calls';
import { awsManagedKeyPolicy, denials, describeDenial } from '../deploy/iam';
import { type Template, TemplateResolver } from '../deploy/template';
import { logicalIdIn, synthStack } from '../support/stack';

/**
 * Issue 36 in the synthesized template: recipients per group (filter policies on the `group`
 * attribute, the deployment's and the accounts' on its absence), quiet hours' scheduler (its group,
 * the role that publishes a held SMS, the scan's right to make the schedules and pass that role),
 * and the heartbeat's SecureString. What the held-SMS code and the heartbeat do on AWS is judged
 * against the template's own policies by the rehearsal's IAM evaluator.
 */

const dir = mkdtempSync(join(tmpdir(), 'sentinel-policies-cdk-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENV = { account: '123456789012', region: 'eu-west-1', stackName: 'DomainSentinel' };
const ABSENT = [{ exists: false }];
// With quiet hours every message carries `sms`: one `anything-but` each, so it never doubles a filter's combinations.
const NOT_RELEASED = [{ 'anything-but': 'release' }];
const NOT_HELD = [{ 'anything-but': 'held' }];

let files = 0;
/** An accounts file of these accounts (each given its API key parameter), in the test's directory. */
function accountsFile(accounts: ReadonlyArray<Record<string, unknown> & { name: string }>): string {
  const path = join(dir, `accounts-${++files}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      accounts: accounts.map((a) => ({ apiKeyParameter: `/domain-sentinel/${a.name}/api-key`, ...a })),
    }),
  );
  return path;
}

/** The number of combinations of values of a filter policy, as SNS counts them (at most 150). */
const combinations = (filter: unknown) =>
  Object.values(filter as Record<string, unknown[]>).reduce((n, values) => n * values.length, 1);

const POLICIES = {
  policies: [
    { name: 'lapse', match: { tags: ['let-lapse'] }, letLapse: true },
    {
      name: 'vip',
      match: { tags: ['vip'] },
      criticalDays: 30,
      alertEmails: ['vip-desk@example.nl'],
      alertSmsNumbers: ['+31687654321'],
      webhooks: ['slack:/domain-sentinel/webhook/vip'],
    },
    { name: 'nl', match: { tlds: ['nl'] }, alertEmails: ['vip-desk@example.nl', 'nl@example.nl'] },
  ],
  escalation: { afterHours: 24, withinDays: 7, alertEmails: ['escalate@example.nl'] },
};

/** Every SNS subscription of the stack and its nested stacks: `protocol endpoint` → its filter policy. */
function filterPolicies(stack: Stack): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of [stack, ...stack.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack)])
    for (const [id, resource] of Object.entries(
      CdkTemplate.fromStack(s).findResources('AWS::SNS::Subscription'),
    )) {
      const { Protocol, Endpoint, FilterPolicy, TopicArn } = resource.Properties;
      // The ops topic's subscribers get the alarms, not the alerts.
      if (JSON.stringify(TopicArn).includes('OpsTopic')) continue;
      const endpoint = Protocol === 'sqs' ? /^WebhooksQueue\d+/.exec(id)?.[0] : Endpoint;
      out[`${Protocol} ${endpoint}`] = FilterPolicy ?? 'none';
    }
  return out;
}

describe('recipients per group (filter policies)', () => {
  it('gives each policy’s own recipients its group’s messages alone, and the deployment’s recipients the messages without a group', () => {
    const { stack } = synthStack({
      policies: POLICIES,
      webhooks: 'json:/domain-sentinel/webhook/json',
    });
    expect(filterPolicies(stack)).toEqual({
      // The deployment's (BASE_CONTEXT): the account's message, which carries no `group`.
      'email alerts@example.nl': { group: ABSENT },
      'email oncall@example.nl': { group: ABSENT },
      'sms +31612345678': { group: ABSENT, severity: ['critical'] },
      // A recipient of two groups: one subscription (SNS keeps one per endpoint), both groups.
      'email vip-desk@example.nl': { group: ['vip', 'nl'] },
      'email nl@example.nl': { group: ['nl'] },
      'sms +31687654321': { group: ['vip'], severity: ['critical'] },
      // Escalations of the account's message only.
      'email escalate@example.nl': { group: ABSENT, escalation: ['true'] },
      // The webhook queues: the deployment's json webhook, and the vip group's Slack webhook.
      'sqs WebhooksQueue0': { group: ABSENT },
      'sqs WebhooksQueue1': { group: ['vip'] },
    });
  });

  it('filters nothing on `group` when no policy has recipients of its own', () => {
    const { stack } = synthStack({ policies: { policies: [POLICIES.policies[0]] } });
    expect(filterPolicies(stack)).toEqual({
      'email alerts@example.nl': 'none',
      'email oncall@example.nl': 'none',
      'sms +31612345678': { severity: ['critical'] },
    });
  });

  it('still asks for a recipient of the account’s own messages when only groups and escalations have recipients', () => {
    expect(() => synthStack({ policies: POLICIES, alertEmails: '', alertSmsNumbers: '' })).toThrow(
      NO_ALERT_SUBSCRIBER,
    );
  });

  it('refuses an address that is both an escalation recipient and a group’s, naming it', () => {
    expect(() =>
      synthStack({
        policies: { ...POLICIES, escalation: { ...POLICIES.escalation, alertEmails: ['nl@example.nl'] } },
      }),
    ).toThrow(/nl@example\.nl is both an escalation recipient and a group's \(policies\)/);
  });

  it('filters the accounts’ own recipients on the account and the absent group, and their policies’ recipients on both', () => {
    const accounts = join(dir, 'accounts.json');
    writeFileSync(
      accounts,
      JSON.stringify({
        accounts: [
          {
            name: 'brand-a',
            apiKeyParameter: '/domain-sentinel/brand-a/api-key',
            alertEmails: ['a@example.nl'],
            policies: {
              policies: [
                {
                  name: 'vip',
                  match: { tags: ['vip'] },
                  alertEmails: ['a-vip@example.nl'],
                  webhooks: ['slack:/domain-sentinel/brand-a/webhook/vip'],
                },
              ],
            },
          },
          {
            name: 'brand-b',
            apiKeyParameter: '/domain-sentinel/brand-b/api-key',
            alertSmsNumbers: ['+31600000002'],
            policies: {
              policies: [{ name: 'vip', match: { tags: ['vip'] }, alertEmails: ['a-vip@example.nl'] }],
            },
          },
        ],
      }),
    );
    const { stack } = synthStack({ accounts, smsQuietHours: '22:00-07:00' });
    expect(filterPolicies(stack)).toEqual({
      'email alerts@example.nl': { group: ABSENT, sms: NOT_RELEASED },
      'email oncall@example.nl': { group: ABSENT, sms: NOT_RELEASED },
      'sms +31612345678': { group: ABSENT, severity: ['critical'], sms: NOT_HELD },
      'email a@example.nl': { account: ['brand-a'], group: ABSENT, sms: NOT_RELEASED },
      'sms +31600000002': {
        account: ['brand-b'],
        group: ABSENT,
        severity: ['critical'],
        sms: NOT_HELD,
      },
      'email a-vip@example.nl': { account: ['brand-a', 'brand-b'], group: ['vip'], sms: NOT_RELEASED },
      // brand-a's own vip webhook: brand-a's vip messages alone, never brand-b's.
      'sqs WebhooksQueue0': { account: ['brand-a'], group: ['vip'], sms: NOT_RELEASED },
    });
    const targets = JSON.stringify(
      CdkTemplate.fromStack(stack).findResources('AWS::Lambda::Function', {
        Properties: { Description: Match.stringLikeRegexp('posts each alert to its webhooks') },
      }),
    );
    expect(targets).toContain('/domain-sentinel/brand-a/webhook/vip');
  });

  it('refuses an account’s own group of the name of a deployment group with recipients, naming both', () => {
    const accounts = accountsFile([
      { name: 'brand-a', alertEmails: ['a@example.nl'] },
      {
        name: 'brand-b',
        policies: {
          policies: [{ name: 'vip', match: { tags: ['vip'] }, alertEmails: ['b-vip@example.nl'] }],
        },
      },
    ]);
    // The deployment's vip desk would take brand-b's vip messages: its filter has no `account`.
    expect(() => synthStack({ accounts, policies: POLICIES })).toThrow(
      /^invalid accounts: account brand-b's own policy vip has the name of the deployment's policy vip, which has recipients of its own; .*rename one of the two policies$/,
    );
    // Another name is no clash.
    const renamed = accountsFile([
      {
        name: 'brand-b',
        policies: {
          policies: [{ name: 'b-vip', match: { tags: ['vip'] }, alertEmails: ['b-vip@example.nl'] }],
        },
      },
    ]);
    expect(filterPolicies(synthStack({ accounts: renamed, policies: POLICIES }).stack)).toMatchObject({
      'email vip-desk@example.nl': { group: ['vip', 'nl'] },
      'email b-vip@example.nl': { account: ['brand-b'], group: ['b-vip'] },
    });
  });

  it('keeps a recipient of 76 accounts with quiet hours within SNS’s 150 combinations', () => {
    const names = Array.from({ length: 76 }, (_, i) => `brand-${i}`);
    const accounts = accountsFile(names.map((name) => ({ name, alertEmails: ['all@example.nl'] })));
    const filters = filterPolicies(synthStack({ accounts, smsQuietHours: '22:00-07:00' }).stack);
    expect(filters['email all@example.nl']).toEqual({ account: names, sms: NOT_RELEASED });
    for (const filter of Object.values(filters)) expect(combinations(filter)).toBeLessThanOrEqual(150);
  });

  it('refuses a filter of more than 150 combinations, naming the endpoint and the count', () => {
    const groups = Array.from({ length: 10 }, (_, i) => ({
      name: `g${i}`,
      match: { tags: [`g${i}`] },
      alertEmails: ['desk@example.nl'],
    }));
    const accounts = accountsFile(
      Array.from({ length: 16 }, (_, i) => ({ name: `brand-${i}`, policies: { policies: groups } })),
    );
    expect(() => synthStack({ accounts })).toThrow(
      /^invalid DomainSentinel props: the filter policy of email desk@example\.nl has 160 combinations of values \(account 16 × group 10\), SNS allows at most 150/,
    );
  });

  it('refuses an account’s own recipient that is another account’s group recipient, naming both accounts', () => {
    const vip = (emails: string[]) => ({
      policies: [{ name: 'vip', match: { tags: ['vip'] }, alertEmails: emails }],
    });
    const accounts = accountsFile([
      { name: 'brand-a', alertEmails: ['x@example.nl'] },
      { name: 'brand-b', alertEmails: ['b@example.nl'], policies: vip(['x@example.nl']) },
    ]);
    expect(() => synthStack({ accounts })).toThrow(
      /^invalid accounts: x@example\.nl is an own recipient of account brand-a and a recipient of groups vip in account brand-b; /,
    );
    // A group of its own account adds nothing: that account's messages hold every domain.
    const same = accountsFile([
      { name: 'brand-a', alertEmails: ['x@example.nl'], policies: vip(['x@example.nl']) },
    ]);
    expect(filterPolicies(synthStack({ accounts: same }).stack)).toMatchObject({
      'email x@example.nl': { account: ['brand-a'], group: ABSENT },
    });
  });

  it('refuses an account’s recipient that is a deployment group’s or escalation recipient, naming it', () => {
    const accounts = accountsFile([
      { name: 'brand-a', alertEmails: ['nl@example.nl'] },
      {
        name: 'brand-b',
        policies: {
          policies: [{ name: 'b-vip', match: { tags: ['vip'] }, alertEmails: ['escalate@example.nl'] }],
        },
      },
    ]);
    // nl@ is the deployment's nl group's, escalate@ its escalation recipient: each has a subscription already.
    expect(() => synthStack({ accounts, policies: POLICIES })).toThrow(
      /^invalid accounts: nl@example\.nl is a recipient of account brand-a and a deployment policy's group or escalation recipient; /,
    );
    const escalating = accountsFile([{ name: 'brand-a', alertEmails: ['escalate@example.nl'] }]);
    expect(() => synthStack({ accounts: escalating, policies: POLICIES })).toThrow(
      /^invalid accounts: escalate@example\.nl is a recipient of account brand-a and a deployment policy's group or escalation recipient; /,
    );
  });

  it('refuses an account’s own escalation recipients: escalation recipients are the deployment’s', () => {
    const accounts = accountsFile([
      {
        name: 'brand-a',
        alertEmails: ['a@example.nl'],
        policies: {
          policies: [{ name: 'nl', match: { tlds: ['nl'] } }],
          escalation: { afterHours: 24, withinDays: 7, alertEmails: ['boss@example.nl'] },
        },
      },
    ]);
    expect(() => synthStack({ accounts })).toThrow(
      /^invalid accounts: account brand-a's policies list escalation recipients \(boss@example\.nl\); escalation recipients are the deployment's \(policies\.escalation of the settings\)/,
    );
  });
});

/** The template of the stack, resolved as the rehearsal deploys it. */
function resolverOf(stack: Stack) {
  return new TemplateResolver(CdkTemplate.fromStack(stack).toJSON() as Template, ENV);
}

/** The calls judged against `template`'s policies, each refusal in words. */
async function judge(resolver: TemplateResolver, calls: readonly AwsCall[]): Promise<string[]> {
  const ssmKey = `arn:aws:kms:${ENV.region}:${ENV.account}:key/aws-ssm-managed-key`;
  const refused = await denials(
    resolver,
    calls,
    (caller) =>
      caller.endsWith('.amazonaws.com') ? { service: caller } : { roleId: caller, session: 'policies-test' },
    new Map([[ssmKey, awsManagedKeyPolicy(ENV.account, 'ssm', ENV.region)]]),
  );
  return refused.map(describeDenial);
}

describe('quiet hours on AWS (smsQuietHours)', () => {
  const { stack, template } = synthStack({ smsQuietHours: '22:00-07:00' });
  const id = logicalIdIn(stack);
  const held = stack.sentinel.heldSms;
  if (!held) throw new Error('no held-SMS scheduler with smsQuietHours');
  const resolver = resolverOf(stack);
  const groupId = id(held.group);
  const group = resolver.ref(groupId);
  const scanRole = id(stack.scan.fn.role as never);
  const publishRole = id(held.role);
  const topic = resolver.ref(id(stack.alerts.topic));
  const key = resolver.attribute(id(stack.topicKey), 'Arn');
  const roleArn = resolver.attribute(publishRole, 'Arn');
  // The schedule the held-SMS code names, for a window's end.
  const schedule = `arn:aws:scheduler:${ENV.region}:${ENV.account}:schedule/${group}/${heldSmsScheduleName({
    attributes: { severity: 'critical' } as never,
    until: '2026-11-23T07:00:00',
  })}`;
  /** What the scan does to hold an SMS (functions/aws/held-sms.ts), and what Scheduler does to release it. */
  const calls: AwsCall[] = [
    { caller: scanRole, action: 'scheduler:CreateSchedule', resource: schedule, context: {} },
    // A second scan in the same window replaces the schedule.
    { caller: scanRole, action: 'scheduler:UpdateSchedule', resource: schedule, context: {} },
    {
      caller: scanRole,
      action: 'iam:PassRole',
      resource: roleArn,
      context: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
    },
    {
      caller: 'scheduler.amazonaws.com',
      action: 'sts:AssumeRole',
      resource: roleArn,
      context: {
        'aws:SourceAccount': ENV.account,
        'aws:SourceArn': resolver.attribute(groupId, 'Arn'),
      },
    },
    { caller: publishRole, action: 'sns:Publish', resource: topic, context: {} },
    ...['kms:GenerateDataKey', 'kms:Decrypt'].map((action) => ({
      caller: publishRole,
      action,
      resource: key,
      context: {
        'kms:ViaService': `sns.${ENV.region}.amazonaws.com`,
        'kms:EncryptionContext:aws:sns:topicArn': topic,
      },
    })),
  ];

  it('tells the scan the window, the schedule group and the role', () => {
    const variables = Object.values(template.findResources('AWS::Lambda::Function')).find(
      (f) => f.Properties.Environment.Variables.SMS_QUIET_HOURS,
    )?.Properties.Environment.Variables;
    expect(variables).toMatchObject({
      SMS_QUIET_HOURS: '22:00-07:00',
      HELD_SMS_SCHEDULE_GROUP: group,
      HELD_SMS_ROLE_ARN: { 'Fn::GetAtt': [publishRole, 'Arn'] },
    });
    // The held-SMS group, beside the scan schedule's own.
    expect(Object.keys(template.findResources('AWS::Scheduler::ScheduleGroup'))).toContain(groupId);
    expect(Object.keys(template.findResources('AWS::Scheduler::ScheduleGroup'))).toHaveLength(2);
  });

  it('allows what holding and releasing an SMS takes, judged by an IAM policy evaluator', async () => {
    expect(await judge(resolver, calls)).toEqual([]);
  });

  it('allows nothing beside it: another group, another service, another account, another topic', async () => {
    const elsewhere = schedule.replace(`/${group}/`, '/default/');
    expect(
      await judge(resolver, [
        { caller: scanRole, action: 'scheduler:CreateSchedule', resource: elsewhere, context: {} },
        { caller: scanRole, action: 'scheduler:DeleteSchedule', resource: schedule, context: {} },
        {
          caller: scanRole,
          action: 'iam:PassRole',
          resource: roleArn,
          context: { 'iam:PassedToService': 'lambda.amazonaws.com' },
        },
        {
          caller: 'scheduler.amazonaws.com',
          action: 'sts:AssumeRole',
          resource: roleArn,
          context: {
            'aws:SourceAccount': '210987654321',
            'aws:SourceArn': resolver.attribute(groupId, 'Arn'),
          },
        },
        {
          caller: publishRole,
          action: 'sns:Publish',
          resource: resolver.ref(id(stack.watchdog.topic)),
          context: {},
        },
      ]),
    ).toHaveLength(5);
  });

  it.each([
    ['the scan’s CreateSchedule', scanRole, 'scheduler:CreateSchedule'],
    ['the scan’s iam:PassRole', scanRole, 'iam:PassRole'],
    ['the publishing role’s sns:Publish', publishRole, 'sns:Publish'],
    ['the publishing role’s use of the topic key', publishRole, 'kms:GenerateDataKey'],
  ])('fails without %s, naming it', async (_name, roleId, action) => {
    const copy = structuredClone(resolver.template) as Template;
    for (const resource of Object.values(copy.Resources)) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      const props = resource.Properties as {
        Roles: Array<{ Ref?: string }>;
        PolicyDocument: { Statement: Array<{ Action: string | string[] }> };
      };
      if (props.Roles.some((r) => r.Ref === roleId))
        props.PolicyDocument.Statement = props.PolicyDocument.Statement.filter(
          (s) => ![s.Action].flat().includes(action),
        );
    }
    const refused = await judge(new TemplateResolver(copy, ENV), calls);
    expect(refused.length).toBeGreaterThan(0);
    for (const line of refused)
      expect(line).toMatch(new RegExp(`^${roleId} may not \\S+ on .*: ImplicitlyDenied$`));
    expect(refused.join('\n')).toContain(action);
  });

  it('refuses a window that is none before anything is built, naming the setting', () => {
    expect(() => synthStack({ smsQuietHours: '22:00' })).toThrow(
      /invalid context: smsQuietHours must be a window of the 24-hour clock such as 22:00-07:00/,
    );
    expect(() => synthStack({ smsQuietHours: '07:00-07:00' })).toThrow(/smsQuietHours must be a window/);
  });

  it('makes nothing of it without smsQuietHours', () => {
    const { stack: plain, template: t } = synthStack();
    expect(plain.sentinel.heldSms).toBeUndefined();
    // The scan schedule's own group alone.
    expect(Object.keys(t.findResources('AWS::Scheduler::ScheduleGroup'))).toEqual([
      logicalIdIn(plain)(plain.scan.schedule.scheduleGroup as never),
    ]);
    expect(JSON.stringify(t.toJSON())).not.toMatch(/HELD_SMS|SMS_QUIET_HOURS|scheduler:CreateSchedule/);
  });
});

describe('the heartbeat on AWS (heartbeatUrlParameterName)', () => {
  const NAME = '/domain-sentinel/heartbeat-url';
  const { stack, template } = synthStack({ heartbeatUrlParameterName: NAME });
  const resolver = resolverOf(stack);
  const scanRole = logicalIdIn(stack)(stack.scan.fn.role as never);
  const arnOf = (name: string) => `arn:aws:ssm:${ENV.region}:${ENV.account}:parameter${name}`;
  const read = (name: string): AwsCall[] => [
    { caller: scanRole, action: 'ssm:GetParameter', resource: arnOf(name), context: {} },
    {
      caller: scanRole,
      action: 'kms:Decrypt',
      resource: `arn:aws:kms:${ENV.region}:${ENV.account}:key/aws-ssm-managed-key`,
      context: {
        'kms:ViaService': `ssm.${ENV.region}.amazonaws.com`,
        'kms:EncryptionContext:PARAMETER_ARN': arnOf(name),
        'kms:CallerAccount': ENV.account,
      },
    },
  ];

  it('refuses a URL where the parameter’s name belongs, without repeating it', () => {
    const attempt = () => synthStack({ heartbeatUrlParameterName: 'https://hc-ping.com/0f1e2d3c' });
    expect(attempt).toThrow(
      /^invalid context: heartbeatUrlParameterName must be an SSM parameter name starting with "\/"/,
    );
    expect(attempt).not.toThrow(/0f1e2d3c/);
  });

  it('names the parameter to the scan alone, never the URL', () => {
    const withVariable = Object.values(template.findResources('AWS::Lambda::Function')).filter(
      (f) => f.Properties.Environment?.Variables?.HEARTBEAT_URL_PARAMETER,
    );
    expect(withVariable.map((f) => f.Properties.Environment.Variables.HEARTBEAT_URL_PARAMETER)).toEqual([
      NAME,
    ]);
    expect(withVariable[0]?.Properties.Description).toMatch(/scans the reseller account/);
    expect(JSON.stringify(template.toJSON())).not.toContain('"HEARTBEAT_URL"');
  });

  it('lets the scan read exactly that parameter, decrypted, and no other of its name’s kind', async () => {
    expect(await judge(resolver, read(NAME))).toEqual([]);
    // The aws/ssm key's own policy lets any principal of the account decrypt through SSM: what
    // SSM hands out is decided by ssm:GetParameter.
    expect(await judge(resolver, read('/domain-sentinel/heartbeat-url-2'))).toEqual([
      `${scanRole} may not ssm:GetParameter on ${arnOf('/domain-sentinel/heartbeat-url-2')}: ImplicitlyDenied`,
    ]);
    const plain = synthStack().stack;
    expect(await judge(resolverOf(plain), read(NAME))).toEqual([
      `${logicalIdIn(plain)(plain.scan.fn.role as never)} may not ssm:GetParameter on ${arnOf(NAME)}: ImplicitlyDenied`,
    ]);
  });
});
