import { describe, expect, it } from 'vitest';
import { type Template as TemplateJson, TemplateResolver } from '../deploy/template';
import { synthStack } from '../support/stack';

/**
 * Review: Lambda refuses a function whose environment variables take more than 4 KB in all (keys and
 * values), and CloudFormation finds out half-way through the deploy. lib/limits.ts checks policies'
 * share of it (POLICIES_ENVIRONMENT_MAX), and nothing checks the whole: each setting below passes
 * its own check, and together they push a function past 4 KB without the synth saying a word.
 */

const LAMBDA_ENVIRONMENT_BYTES = 4 * 1024;

/** The bytes of a function's environment once CloudFormation resolves it (ARNs and names as deployed). */
function environmentBytes(resolver: TemplateResolver, variables: Record<string, unknown>): number {
  const resolved = resolver.resolve(variables) as Record<string, string>;
  return Object.entries(resolved).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
}

/** Either the synth refuses the settings naming the environment, or every function's environment fits. */
function expectEnvironmentsFitOrRefused(context: Record<string, unknown>) {
  let template: ReturnType<typeof synthStack>['template'];
  try {
    template = synthStack(context).template;
  } catch (error) {
    expect(String(error)).toMatch(/environment/);
    return;
  }
  const resolver = new TemplateResolver(template.toJSON() as TemplateJson, {
    account: '123456789012',
    region: 'eu-west-1',
    stackName: 'DomainSentinel',
  });
  const sizes = Object.entries(template.findResources('AWS::Lambda::Function')).map(([id, fn]) => [
    id,
    environmentBytes(resolver, fn.Properties.Environment?.Variables ?? {}),
  ]);
  for (const [id, bytes] of sizes)
    expect(bytes, `${id}'s environment deploys as at least ${bytes} bytes`).toBeLessThanOrEqual(
      LAMBDA_ENVIRONMENT_BYTES,
    );
}

describe('Lambda’s 4 KB of environment, checked at synth (review)', { timeout: 60_000 }, () => {
  it('refuses, or fits, 30 webhooks: each adds its format, parameter and queue ARN to WEBHOOK_TARGETS', () => {
    const webhooks = Array.from({ length: 30 }, (_, i) => `slack:/domain-sentinel/webhook/slack-${i}`).join(
      ',',
    );
    expectEnvironmentsFitOrRefused({ webhooks });
  });

  it('refuses, or fits, the policies allowed beside SSM parameter names of 620 characters: each passes its own check', () => {
    // Policies within POLICIES_ENVIRONMENT_MAX (2 048 characters), and parameter names SSM allows.
    const tags = Array.from({ length: 100 }, (_, i) => `customer-tag-${i}`);
    const policies = { policies: [{ name: 'lapse', match: { tags }, letLapse: true }] };
    expect(JSON.stringify(policies).length).toBeLessThan(2_048);
    const long = (what: string) => `/domain-sentinel/${what}/${'p'.repeat(600)}`;
    expectEnvironmentsFitOrRefused({
      policies,
      apiKeyParameterName: long('reseller-api-key'),
      linkSigningKeyParameterName: long('link-signing-key'),
      heartbeatUrlParameterName: long('heartbeat'),
    });
  });
});
