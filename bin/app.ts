#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ConfigError } from '../functions/core/base/errors';
import { loadDeploySettings } from '../lib/config';
import { DomainSentinelStack } from '../lib/stack';

// The clone-and-deploy app: settings from a settings file (-c settings=FILE) and -c key=value, one
// stack. The one place that reads the environment: account and region from the CLI's profile.
const app = new App();
try {
  const { stackName, ...settings } = loadDeploySettings(app.node);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  new DomainSentinelStack(app, stackName, {
    settings,
    description:
      'domain-sentinel: scans a domain-reseller account, alerts before domains are lost, restores from quarantine',
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  app.synth();
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  // A bad setting, or a construct's own check (no one would receive alerts), in one line each.
  const validation = /^Validation failed with the following errors:\n([\s\S]*)$/.exec(message);
  if (error instanceof ConfigError || validation) {
    const lines = validation
      ? (validation[1] ?? '').split('\n').map((l) => l.replace(/^\s*\[[^\]]*\]\s*/, '').trim())
      : [message];
    for (const line of lines.filter(Boolean)) process.stderr.write(`domain-sentinel: ${line}\n`);
    process.exit(1);
  }
  throw error;
}
