import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template as CdkTemplate } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCOUNT_GROUPS } from '../../lib/account-groups';
import { AWS_LIMITS } from '../../lib/limits';
import { DomainSentinelStack } from '../../lib/stack';
import { resourcePolicyFor, type Template, TemplateResolver } from '../deploy/template';
import { BASE_CONTEXT, settingsFromContext, synthStack } from '../support/stack';

/**
 * The scale of one deployment against AWS's own limits (issue 35): 100 accounts with three
 * recipients each stay within CloudFormation's 500 resources per stack, IAM's policy sizes and
 * Lambda's 20 KB resource policy; past a limit, the synth fails with the project's own message.
 */

const dir = mkdtempSync(join(tmpdir(), 'sentinel-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ENV = { account: '123456789012', region: 'eu-west-1', stackName: 'DomainSentinel' };

function accountsFile(accounts: unknown, name: string): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ accounts }));
  return path;
}

/** 100 accounts, each with two e-mail recipients and one SMS number of its own. */
const HUNDRED = Array.from({ length: 100 }, (_, i) => ({
  name: `brand-${i}`,
  apiKeyParameter: `/domain-sentinel/brand-${i}/api-key`,
  alertEmails: [`owner-${i}@example.nl`, `backup-${i}@example.nl`],
  alertSmsNumbers: [`+3161${String(i).padStart(7, '0')}`],
}));

const stacksOf = (stack: Stack): Stack[] => [
  stack,
  ...stack.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack),
];

/** IAM's size of a policy: its JSON without whitespace, as IAM counts it. */
const chars = (document: unknown) => JSON.stringify(document).length;

describe('100 accounts with three recipients each', { timeout: 300_000 }, () => {
  // 301 subscriptions with a filter on the alert topic: past SNS's default of 200, so the quota is raised.
  const { stack } = synthStack({
    accounts: accountsFile(HUNDRED, 'hundred.json'),
    snsFilterPoliciesPerTopic: '400',
  });
  const templates = stacksOf(stack).map((s) => ({
    path: s.node.path,
    json: CdkTemplate.fromStack(s).toJSON() as Template,
  }));
  const parent = templates[0]?.json as Template;
  const resolver = new TemplateResolver(parent, ENV);

  it('spread over nested stacks, each well within CloudFormation’s 500 resources', () => {
    const counts = templates.map((t) => Object.keys(t.json.Resources).length);
    // Together more than one stack may hold: the nesting is needed, not decoration.
    expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThan(AWS_LIMITS.resourcesPerStack);
    expect(templates.length).toBe(1 + ACCOUNT_GROUPS);
    for (const [i, count] of counts.entries())
      expect(count, templates[i]?.path).toBeLessThanOrEqual(AWS_LIMITS.resourcesPerStack * 0.4);
    // Every account's two alarms and every recipient's subscription are there, once.
    const all = templates.flatMap((t) => Object.values(t.json.Resources));
    expect(all.filter((r) => r.Type === 'AWS::SNS::Subscription')).toHaveLength(300 + 4);
    // Each account's recipients and the SMS of the deployment's own filter on the one alert topic.
    const filtered = all.filter((r) => r.Type === 'AWS::SNS::Subscription' && r.Properties?.FilterPolicy);
    expect(filtered).toHaveLength(301);
    expect(
      all.filter((r) => r.Type === 'AWS::CloudWatch::Alarm').map((r) => r.Properties?.AlarmName),
    ).toEqual(
      expect.arrayContaining(
        HUNDRED.flatMap((a) => [
          `DomainSentinel/ScanFailed-${a.name}`,
          `DomainSentinel/ScanNotCompleted-${a.name}`,
        ]),
      ),
    );
  });

  it('keeps every role within IAM’s policy sizes, and the deploy-time calls in one policy', () => {
    const roles = resolver.ofType('AWS::IAM::Role');
    for (const roleId of roles) {
      const attached = (type: string) =>
        resolver
          .ofType(type)
          .filter((id) =>
            ((resolver.resource(id).Properties?.Roles as Array<{ Ref?: string }>) ?? []).some(
              (r) => r.Ref === roleId,
            ),
          )
          .map((id) => chars(resolver.resolve(resolver.resource(id).Properties?.PolicyDocument)));
      const inline =
        attached('AWS::IAM::Policy').reduce((a, b) => a + b, 0) +
        ((resolver.resource(roleId).Properties?.Policies as Array<{ PolicyDocument: unknown }>) ?? []).reduce(
          (n, p) => n + chars(resolver.resolve(p.PolicyDocument)),
          0,
        );
      expect(inline, roleId).toBeLessThanOrEqual(AWS_LIMITS.roleInlinePolicyChars);
      const managed = attached('AWS::IAM::ManagedPolicy');
      expect(managed.length, roleId).toBeLessThanOrEqual(AWS_LIMITS.managedPoliciesPerRole);
      for (const size of managed) expect(size, roleId).toBeLessThanOrEqual(AWS_LIMITS.managedPolicyChars);
    }
    // Each account's dead-man switch is armed by a call of its own (so adding an account never
    // arms the others again), and each stack grants that call's permission once, not once per account.
    const all = templates.flatMap((t) => Object.values(t.json.Resources));
    expect(
      all.filter((r) => r.Type === 'Custom::AWS' && JSON.stringify(r).includes('DeadManArmed')),
    ).toHaveLength(HUNDRED.length);
    for (const { json, path } of templates)
      expect(
        Object.values(json.Resources).filter(
          (r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r).includes('cloudwatch:PutMetricData'),
        ).length,
        path,
      ).toBeLessThanOrEqual(1);
  });

  it('keeps each function’s resource policy within Lambda’s 20 KB, and the ops topic’s policy one size', () => {
    for (const fnId of resolver.ofType('AWS::Lambda::Function')) {
      const policy = resourcePolicyFor(resolver, resolver.attribute(fnId, 'Arn'));
      if (policy)
        expect(JSON.stringify(policy).length, fnId).toBeLessThanOrEqual(AWS_LIMITS.functionPolicyBytes / 10);
    }
    for (const id of resolver.ofType('AWS::SNS::TopicPolicy'))
      expect(chars(resolver.resolve(resolver.resource(id).Properties?.PolicyDocument))).toBeLessThan(2_000);
  });
});

describe('a deployment that would pass a limit fails the synth with the limit, the count and what to change', {
  timeout: 300_000,
}, () => {
  it('SNS’s 200 filter policies per topic: 100 accounts with three recipients each, unless the quota was raised', () => {
    const hundred = accountsFile(HUNDRED, 'hundred-default-quota.json');
    expect(() => synthStack({ accounts: hundred })).toThrow(
      'the topic DomainSentinel/Default/Alerts/Topic would have 301 subscriptions with a filter policy; SNS allows 200 per topic: give the accounts fewer recipients of their own',
    );
    expect(() => synthStack({ accounts: hundred, snsFilterPoliciesPerTopic: '300' })).toThrow(
      /would have 301 subscriptions with a filter policy; SNS allows 300 per topic: .* set snsFilterPoliciesPerTopic to it/,
    );
    // Sixty such accounts fit SNS's default.
    expect(() => synthStack({ accounts: accountsFile(HUNDRED.slice(0, 60), 'sixty.json') })).not.toThrow();
  });

  it('CloudFormation’s 500 resources of a stack: too many recipients of their own', () => {
    const crowded = [
      { ...HUNDRED[0], alertEmails: Array.from({ length: 4400 }, (_, i) => `r${i}@example.nl`) },
    ];
    expect(() => synthStack({ accounts: accountsFile(crowded, 'crowded.json') })).toThrow(
      /the stack DomainSentinel\/Default\/AccountGroups\/Group\d would have \d{3} resources; CloudFormation allows 500 per stack: give the accounts fewer recipients of their own/,
    );
  });

  it('CloudFormation’s 1 MB template: 100 accounts with long policies of their own', () => {
    // Each account's policies (at most 64 KB of JSON each) are in the template twice, escaped twice:
    // the deploy-time call that writes accounts.json on create and on update.
    const names = Array.from(
      { length: 100 },
      (_, i) => `*.brand-domain-${String(i).padStart(3, '0')}.example`,
    );
    const policies = {
      policies: Array.from({ length: 2 }, (_, j) => ({ name: `p${j}`, match: { names }, criticalDays: 30 })),
    };
    const long = HUNDRED.map(({ name, apiKeyParameter }) => ({ name, apiKeyParameter, policies }));
    expect(() =>
      synthStack({ accounts: accountsFile(long, 'long-policies.json'), alertEmails: 'x@example.nl' }),
    ).toThrow(
      /the stack DomainSentinel would have a template of about \d{7} bytes; CloudFormation accepts 1000000: give the accounts shorter policies of their own, or give the accounts fewer recipients/,
    );
  });

  it('Lambda’s 20 KB resource policy and IAM’s limits of a role: what code adds is counted too', () => {
    const app = new App({ context: BASE_CONTEXT });
    const stack = new DomainSentinelStack(app, 'DomainSentinel', {
      settings: settingsFromContext(app),
      env: ENV,
    });
    for (let i = 0; i < 120; i++)
      stack.web.fn.addPermission(`Caller${i}`, {
        principal: new iam.ServicePrincipal('events.amazonaws.com'),
        sourceArn: `arn:aws:events:eu-west-1:123456789012:rule/a-rule-with-a-rather-long-name-${i}`,
      });
    for (let i = 0; i < 600; i++)
      stack.scan.fn.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['s3:GetObject'],
          resources: [`arn:aws:s3:::a-bucket-with-a-rather-long-name-${i}/and/a/long/prefix/of/objects/*`],
        }),
      );
    expect(() => app.synth()).toThrow(
      /the function DomainSentinel\/Default\/Restore\/Function\/Resource would have a resource policy of about \d+ bytes \(121 permissions\); Lambda allows 20480/,
    );
    expect(() => app.synth()).toThrow(
      /the role DomainSentinel\/Default\/Scan\/FunctionRole\/Resource would have/,
    );
  });
});
