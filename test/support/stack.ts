import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { loadDeploySettings } from '../../lib/config';
import { DomainSentinelStack } from '../../lib/stack';

export const functionsDir = fileURLToPath(new URL('../../functions', import.meta.url));

/** The context of the template tests; each test file adds or overrides keys. */
export const BASE_CONTEXT = {
  // Template tests skip esbuild; one real bundling synth runs in synth.test.ts.
  'aws:cdk:bundling-stacks': [],
  resellerBaseUrl: 'https://api.reseller.example',
  schedule: 'cron(0 7 * * ? *)',
  timeZone: 'Europe/Amsterdam',
  alertEmails: 'alerts@example.nl,oncall@example.nl',
  alertSmsNumbers: '+31612345678',
  opsEmails: ['ops@example.nl'],
};

/** The optional chat parts (docs/chat.md): Slack and Teams channels, and one webhook of each format. */
export const CHAT_CONTEXT = {
  slackWorkspaceId: 'T07ABCDEF12',
  slackChannelId: 'C07ABCDEF12',
  teamsTeamId: '0b2c3d4e-5f60-4a1b-8c2d-3e4f5a6b7c8d',
  teamsTenantId: '1a2b3c4d-5e6f-4a1b-9c2d-3e4f5a6b7c8d',
  teamsChannelId: '19%3a0123456789abcdef0123456789abcdef%40thread.tacv2',
  webhooks:
    'slack:/domain-sentinel/webhook/slack,teams:/domain-sentinel/webhook/teams,json:/domain-sentinel/webhook/json',
};

/** The stack as `cdk synth` builds it from this context, in a fixed account and region. */
export function synthStack(context: Record<string, unknown> = {}) {
  const app = new App({ context: { ...BASE_CONTEXT, ...context } });
  const stack = new DomainSentinelStack(app, String(context.stackName ?? 'DomainSentinel'), {
    settings: settingsFromContext(app),
    env: { account: '123456789012', region: 'eu-west-1' },
  });
  return { app, stack, template: Template.fromStack(stack) };
}

/** The construct's settings from an app's context, as bin/app.ts reads them (less the stack's name). */
export function settingsFromContext(app: App) {
  const { stackName: _stackName, ...settings } = loadDeploySettings(app.node);
  return settings;
}

/** The logical id of a construct's CloudFormation resource in `stack`. */
export const logicalIdIn =
  (stack: DomainSentinelStack) =>
  (construct: { node: { defaultChild?: unknown } }): string =>
    stack.getLogicalId(construct.node.defaultChild as never);
