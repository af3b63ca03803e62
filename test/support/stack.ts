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

/** The stack as `cdk synth` builds it from this context, in a fixed account and region. */
export function synthStack(context: Record<string, unknown> = {}) {
  const app = new App({ context: { ...BASE_CONTEXT, ...context } });
  const stack = new DomainSentinelStack(app, 'DomainSentinel', {
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
