#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ConfigError } from '../functions/core/errors';
import { loadStackConfig } from '../lib/config';
import { DomainSentinelStack } from '../lib/stack';

// The one place that reads the environment: account and region from the CLI's profile.
const app = new App();
try {
  const config = loadStackConfig(app.node);
  new DomainSentinelStack(app, 'DomainSentinel', {
    config,
    functionsDir: fileURLToPath(new URL('../functions', import.meta.url)),
    description:
      'domain-sentinel: scans a domain-reseller account, alerts before domains are lost, restores from quarantine',
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`domain-sentinel: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
