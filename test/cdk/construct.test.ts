import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  DomainSentinel,
  type DomainSentinelProps,
  loadDeploySettings,
  NO_ALERT_SUBSCRIBER,
  type SentinelSettings,
  SentinelSettingsSchema,
} from '../../lib/index';
import { buildTwoAccounts } from './fixtures/two-accounts';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const ENV = { account: '123456789012', region: 'eu-west-1' };
const BASE = 'https://api.reseller.example';

const scratch = mkdtempSync(join(tmpdir(), 'sentinel-settings-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A settings file in the scratch directory; returns its path relative to it (as `-c settings=` would name it). */
function settingsFile(name: string, content: unknown): string {
  writeFileSync(join(scratch, name), typeof content === 'string' ? content : JSON.stringify(content));
  return name;
}

const load = (context: Record<string, unknown>) =>
  loadDeploySettings(new App({ context: { ...NO_BUNDLING, ...context } }).node, scratch);

describe('deploy settings: a settings file, then -c key=value over it', () => {
  it('reads every setting from the file, with the stack name', () => {
    const file = settingsFile('acme.json', {
      stackName: 'AcmeSentinel',
      resellerBaseUrl: BASE,
      alertEmails: ['a@example.nl', 'b@example.nl'],
      alertSmsNumbers: ['+31612345678'],
      alertSubscribersOutsideStack: false,
      smsSpendAlarmUsd: 4.5,
      expiryDays: 45,
    });
    expect(load({ settings: file })).toMatchObject({
      stackName: 'AcmeSentinel',
      alertEmails: ['a@example.nl', 'b@example.nl'],
      alertSmsNumbers: ['+31612345678'],
      smsSpendAlarmUsd: 4.5,
      expiryDays: 45,
      scanIntervalHours: 24,
    });
  });

  it('lets -c override a key of the file, in the form -c gives it (strings, comma lists)', () => {
    const file = settingsFile('override.json', { resellerBaseUrl: BASE, alertEmails: ['a@example.nl'] });
    expect(
      load({
        settings: file,
        alertEmails: 'c@example.nl,d@example.nl',
        smsSpendAlarmUsd: '2.5',
        alertSubscribersOutsideStack: 'true',
      }),
    ).toMatchObject({
      alertEmails: ['c@example.nl', 'd@example.nl'],
      smsSpendAlarmUsd: 2.5,
      alertSubscribersOutsideStack: true,
    });
  });

  it('names an unknown key of the file and the closest known one', () => {
    const file = settingsFile('typo.json', { resellerBaseUrl: BASE, alertEmail: ['a@example.nl'] });
    expect(() => load({ settings: file })).toThrow(
      'invalid settings in typo.json: unknown setting alertEmail; did you mean alertEmails?',
    );
  });

  it('names an unknown -c key and the closest known one, but leaves CDK’s own keys alone', () => {
    expect(() => load({ resellerBaseUrl: BASE, alertEmail: 'a@example.nl' })).toThrow(
      'invalid context: unknown setting alertEmail; did you mean alertEmails?',
    );
    expect(() => load({ resellerBaseUrl: BASE, timezone: 'UTC' })).toThrow('did you mean timeZone?');
    expect(
      load({
        resellerBaseUrl: BASE,
        '@aws-cdk/core:checkSecretUsage': true,
        'acknowledged-issue-numbers': [32775],
        'availability-zones:account=123456789012:region=eu-west-1': ['eu-west-1a'],
      }).resellerBaseUrl,
    ).toBe(BASE);
  });

  it('says which file cannot be read or is not a JSON object', () => {
    expect(() => load({ settings: 'missing.json' })).toThrow(
      'settings file missing.json cannot be read (ENOENT)',
    );
    expect(() => load({ settings: settingsFile('broken.json', '{"resellerBaseUrl": ') })).toThrow(
      /^settings file broken\.json is not JSON \(/,
    );
    expect(() => load({ settings: settingsFile('list.json', '["a"]') })).toThrow(
      'settings file list.json must hold a JSON object of settings',
    );
  });

  it('validates the file’s values with the same schema, naming the file and the key', () => {
    const file = settingsFile('bad.json', { resellerBaseUrl: BASE, stackName: '1st', expiryDays: 'soon' });
    const error = (() => {
      try {
        load({ settings: file });
      } catch (e) {
        return (e as Error).message.split('; ').sort();
      }
    })();
    expect(error).toEqual([
      'invalid settings in bad.json: expiryDays must be a whole number from 1 to 3650',
      'invalid settings in bad.json: stackName must be a CloudFormation stack name: a letter, then letters, digits and hyphens (at most 128)',
    ]);
    expect(() => load({ resellerBaseUrl: BASE, smsSpendAlarmUsd: 'lots' })).toThrow(
      'invalid context: smsSpendAlarmUsd must be an amount in USD such as 0.8',
    );
    expect(() => load({ resellerBaseUrl: BASE, alertSubscribersOutsideStack: 'yes' })).toThrow(
      'invalid context: alertSubscribersOutsideStack must be true or false',
    );
  });
});

describe('DomainSentinel props', () => {
  const stack = () => new Stack(new App({ context: NO_BUNDLING }), 'S', { env: ENV });

  it('are the settings of the one schema, key for key (checked by tsc as well)', () => {
    expectTypeOf<keyof DomainSentinelProps>().toEqualTypeOf<keyof SentinelSettings>();
    expect(Object.keys(SentinelSettingsSchema.shape).sort()).toEqual(
      [
        'resellerBaseUrl',
        'apiKeyParameterName',
        'linkSigningKeyParameterName',
        'secretsKmsKeyArn',
        'schedule',
        'timeZone',
        'scanIntervalHours',
        'expiryDays',
        'criticalDays',
        'minSeverity',
        'alertEmails',
        'alertSmsNumbers',
        'opsEmails',
        'accountLabel',
        'quarantineDays',
        'scanReservedConcurrency',
        'scanTimeoutMinutes',
        'snsFilterPoliciesPerTopic',
        'alertSubscribersOutsideStack',
        'smsSpendAlarmUsd',
        'ownAccountSettings',
        'webAclArn',
        'stateTableName',
        'reportBucketName',
        'slackWorkspaceId',
        'slackChannelId',
        'teamsTeamId',
        'teamsTenantId',
        'teamsChannelId',
        'webhooks',
        'webhookSigningKeyParameterName',
        'accounts',
        'accountConcurrency',
        'registryCheck',
        'rdapQueryBudget',
        'registryCheckDays',
        'policies',
        'smsQuietHours',
        'heartbeatUrlParameterName',
      ].sort(),
    );
  });

  it('are validated by the same schema, naming the key', () => {
    expect(
      () => new DomainSentinel(stack(), 'X', { resellerBaseUrl: 'http://api.reseller.example' }),
    ).toThrow('invalid DomainSentinel props: resellerBaseUrl must be an https URL');
    expect(
      () =>
        new DomainSentinel(stack(), 'X', {
          resellerBaseUrl: BASE,
          alertEmails: ['not-an-address'],
        }),
    ).toThrow('invalid DomainSentinel props: alertEmails must be e-mail addresses');
    // A JavaScript caller (no type check) with a typo gets the same hint as -c does.
    expect(
      () =>
        new DomainSentinel(stack(), 'X', { resellerBaseUrl: BASE, alertEmail: ['a@example.nl'] } as never),
    ).toThrow('invalid DomainSentinel props: unknown setting alertEmail; did you mean alertEmails?');
  });

  it('fail the synth when no one would receive alerts, saying how to add a subscriber', () => {
    const s = stack();
    new DomainSentinel(s, 'X', { resellerBaseUrl: BASE, opsEmails: ['ops@example.nl'] });
    expect(() => Template.fromStack(s)).toThrow(NO_ALERT_SUBSCRIBER);
    expect(NO_ALERT_SUBSCRIBER).toMatch(
      /alertEmails.*alertSmsNumbers.*addSubscription.*alertSubscribersOutsideStack/,
    );
  });

  it('accept a subscription added in code after construction, even from another stack', () => {
    const app = new App({ context: NO_BUNDLING });
    const s = new Stack(app, 'S', { env: ENV });
    const sentinel = new DomainSentinel(s, 'X', { resellerBaseUrl: BASE });
    const other = new Stack(app, 'Consumers', { env: ENV });
    sentinel.alerts.topic.addSubscription(new subscriptions.SqsSubscription(new sqs.Queue(other, 'Digest')));
    expect(() => app.synth()).not.toThrow();
  });

  it('accept no subscriber when alertSubscribersOutsideStack says they are added elsewhere', () => {
    const s = stack();
    new DomainSentinel(s, 'X', { resellerBaseUrl: BASE, alertSubscribersOutsideStack: true });
    expect(Template.fromStack(s).findResources('AWS::SNS::Subscription')).toEqual({});
  });

  it('refuse a second copy that would read the same API key (the same reseller account)', () => {
    const app = new App({ context: NO_BUNDLING });
    new DomainSentinel(new Stack(app, 'A', { env: ENV }), 'X', {
      resellerBaseUrl: BASE,
      alertEmails: ['a@example.nl'],
    });
    expect(
      () =>
        new DomainSentinel(new Stack(app, 'B', { env: ENV }), 'X', {
          resellerBaseUrl: BASE,
          alertEmails: ['a@example.nl'],
        }),
    ).toThrow(
      'invalid DomainSentinel props: apiKeyParameterName /domain-sentinel/reseller-api-key is already read by A/X; give each copy (each reseller account) its own apiKeyParameterName',
    );
  });
});

describe('two copies in two stacks of one account and region (a user’s app outside bin/)', () => {
  const app = new App({ context: NO_BUNDLING });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const { acme, globex } = buildTwoAccounts(app, ENV);
  const assembly = app.synth();
  const acmeT = Template.fromJSON(assembly.getStackByName('AcmeSentinel').template);
  const globexT = Template.fromJSON(assembly.getStackByName('GlobexSentinel').template);
  const typesOf = (t: Template) => {
    const counts: Record<string, number> = {};
    for (const r of Object.values(t.toJSON().Resources as Record<string, { Type: string }>))
      counts[r.Type] = (counts[r.Type] ?? 0) + 1;
    return counts;
  };

  it('synthesizes both, cdk-nag on, each complete: the same resources but what exists once per account', () => {
    const complete = {
      // scan, web, and CDK's function for deploy-time calls (arming the dead-man alarm)
      'AWS::Lambda::Function': 3,
      'AWS::DynamoDB::Table': 1,
      'AWS::S3::Bucket': 1,
      'AWS::SNS::Topic': 2,
      'AWS::ApiGateway::RestApi': 1,
      'AWS::Scheduler::Schedule': 1,
      'AWS::CloudWatch::Dashboard': 1,
    };
    expect(typesOf(acmeT)).toMatchObject(complete);
    expect(typesOf(globexT)).toMatchObject(complete);
    // Globex sends SMS: its subscription and the spend alarm. Neither touches the account's settings.
    const differ = ['AWS::CloudWatch::Alarm', 'AWS::SNS::Subscription'];
    const without = (counts: Record<string, number>) =>
      Object.fromEntries(Object.entries(counts).filter(([t]) => !differ.includes(t)));
    expect(without(typesOf(globexT))).toEqual(without(typesOf(acmeT)));
    const alarms = (t: Template) => Object.keys(t.findResources('AWS::CloudWatch::Alarm')).length;
    expect(alarms(globexT)).toBe(alarms(acmeT) + 1);
  });

  it('leaves the account’s own settings alone in both copies unless one says it owns them', () => {
    expect([acme.ownAccountSettings, globex.ownAccountSettings]).toEqual([false, false]);
    for (const t of [acmeT, globexT]) {
      t.resourceCountIs('AWS::ApiGateway::Account', 0);
      expect(JSON.stringify(t.findResources('Custom::AWS'))).not.toContain('setSMSAttributes');
    }
    const other = new App({ context: NO_BUNDLING });
    const s = new Stack(other, 'Third', { env: ENV });
    const third = new DomainSentinel(s, 'X', {
      resellerBaseUrl: BASE,
      alertSmsNumbers: ['+31612345678'],
      ownAccountSettings: true,
    });
    expect(third.accountSettings?.smsDeliveryStatusRole).toBeDefined();
    Template.fromStack(s).resourceCountIs('AWS::ApiGateway::Account', 1);
  });

  it('names each copy’s API and metrics apart, so no alarm counts the other copy', () => {
    expect([acme.deploymentName, globex.deploymentName]).toEqual([
      'AcmeSentinel/Sentinel',
      'GlobexSentinel/Sentinel',
    ]);
    acmeT.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'AcmeSentinel-Sentinel-restore' });
    globexT.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'GlobexSentinel-Sentinel-restore' });
    for (const [t, name] of [
      [acmeT, 'AcmeSentinel/Sentinel'],
      [globexT, 'GlobexSentinel/Sentinel'],
    ] as const) {
      t.hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: Match.objectLike({ DEPLOYMENT_NAME: name }) },
      });
    }
  });

  it('gives each copy its own API key parameter and the same link signing key', () => {
    const parameters = (t: Template) =>
      Object.values(t.findResources('AWS::IAM::Policy'))
        .flatMap((p) => p.Properties.PolicyDocument.Statement)
        .filter((s: { Action: unknown }) => s.Action === 'ssm:GetParameter')
        .map((s: { Resource: unknown }) => JSON.stringify(s.Resource));
    expect(parameters(acmeT).join()).toContain('parameter/acme/reseller-api-key');
    expect(parameters(globexT).join()).toContain('parameter/globex/reseller-api-key');
    expect(parameters(globexT).join()).not.toContain('acme');
  });
});
