import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type Environment, Stack, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { DomainSentinelStack } from '../../lib/stack';
import { BASE_CONTEXT, CHAT_CONTEXT, settingsFromContext } from '../support/stack';

/**
 * cdk-nag as a deploy runs it: the plugin is added to a fresh App before anything synthesizes, so
 * the check really runs (a plugin added after Template.fromStack() never does), and the stack is
 * built in each kind of environment the CDK CLI gives an app.
 */
const ENVIRONMENTS: ReadonlyArray<[string, Environment | undefined]> = [
  ['no account or region (environment-agnostic)', undefined],
  [
    'a concrete account and region (cdk deploy with credentials)',
    { account: '123456789012', region: 'eu-west-1' },
  ],
  ['a concrete account, region-agnostic', { account: '123456789012' }],
  ['a concrete region, account-agnostic', { region: 'eu-central-1' }],
];

function nagErrors(env: Environment | undefined, context: Record<string, unknown> = {}): string[] {
  const app = new App({ context: { ...BASE_CONTEXT, ...context } });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  new DomainSentinelStack(app, 'DomainSentinel', {
    settings: settingsFromContext(app),
    ...(env ? { env } : {}),
  });
  try {
    app.synth();
    return [];
  } catch (error) {
    return [(error as Error).message];
  }
}

describe('cdk-nag AwsSolutions, added before the first synth', { timeout: 120_000 }, () => {
  it.each(ENVIRONMENTS)('finds nothing unacknowledged with %s', (_name, env) => {
    expect(nagErrors(env)).toEqual([]);
  });

  it.each(ENVIRONMENTS)(
    'finds nothing unacknowledged with the chat channels and webhooks, %s',
    (_name, env) => {
      expect(nagErrors(env, CHAT_CONTEXT)).toEqual([]);
    },
  );

  it.each(ENVIRONMENTS)(
    'finds nothing unacknowledged owning the account settings, with chat, webhooks and accounts, %s',
    (_name, env) => {
      const dir = mkdtempSync(join(tmpdir(), 'sentinel-nag-'));
      const accounts = join(dir, 'accounts.json');
      writeFileSync(
        accounts,
        JSON.stringify({
          accounts: [{ name: 'brand-a', apiKeyParameter: '/a/key', alertSmsNumbers: ['+31600000009'] }],
        }),
      );
      try {
        expect(nagErrors(env, { ...CHAT_CONTEXT, ownAccountSettings: 'true', accounts })).toEqual([]);
        // Adopting a kept table and bucket too.
        expect(
          nagErrors(env, {
            ownAccountSettings: 'true',
            stateTableName: 'kept-table',
            reportBucketName: 'kept-bucket',
          }),
        ).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it.each(ENVIRONMENTS)(
    'finds nothing unacknowledged with quiet hours, the heartbeat parameter and a policy group with recipients, %s',
    (_name, env) => {
      expect(
        nagErrors(env, {
          smsQuietHours: '22:00-07:00',
          heartbeatUrlParameterName: '/domain-sentinel/heartbeat-url',
          policies: {
            policies: [
              {
                name: 'vip',
                match: { tags: ['vip'] },
                alertEmails: ['vip@example.nl'],
                webhooks: ['slack:/domain-sentinel/webhook/vip'],
              },
            ],
          },
        }),
      ).toEqual([]);
    },
  );

  it.each([
    ['no account or region', undefined],
    ['a concrete account and region', { account: '123456789012', region: 'eu-west-1' }],
  ] as const)('passes APIG3 unacknowledged with a web ACL (webAclArn), %s', (_name, env) => {
    const webAclArn =
      'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/links/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';
    expect(nagErrors(env, { webAclArn })).toEqual([]);
    const app = new App({ context: { ...BASE_CONTEXT, webAclArn } });
    const stack = new DomainSentinelStack(app, 'DomainSentinel', { settings: settingsFromContext(app) });
    const acknowledged = stack.sentinel.web.api.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.keys(m.data as Record<string, string>));
    expect(acknowledged.some((id) => id.includes('AwsSolutions-APIG4'))).toBe(true);
    expect(acknowledged.some((id) => id.includes('AwsSolutions-APIG3'))).toBe(false);
  });

  it('names the record of the bucket object reads as it is: CloudTrail data events, not management events', () => {
    const app = new App({ context: { ...BASE_CONTEXT } });
    const stack = new DomainSentinelStack(app, 'DomainSentinel', { settings: settingsFromContext(app) });
    const reasons = stack.sentinel.reports.bucket.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .filter(([id]) => id.includes('AwsSolutions-S1'))
      .map(([, reason]) => reason);
    expect(reasons).toHaveLength(1);
    // Management events record the bucket's own changes; GetObject and PutObject are data events,
    // which CloudTrail records only where a trail selects them.
    expect(reasons[0]).not.toMatch(/logged by CloudTrail management events/);
    expect(reasons[0]).toMatch(/data events/);
  });

  it('does fail synth on a finding (the check is really running)', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    const bad = new Stack(app, 'Bad', { env: { account: '123456789012', region: 'eu-west-1' } });
    new sqs.Queue(bad, 'Plain', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    expect(() => app.synth()).toThrow(/The SQS Queue does not have server-side encryption enabled/);
  });
});
