import { describe, expect, it } from 'vitest';
import { type Template as TemplateJson, TemplateResolver } from '../deploy/template';
import { synthStack } from '../support/stack';

/**
 * Found by a review: Lambda refuses a function whose environment variables take more than 4 KB in all (keys and
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

/** Every function's environment as deployed, in bytes, by logical id. */
function deployedEnvironments(context: Record<string, unknown>): Map<string, number> {
  const { template } = synthStack(context);
  const resolver = new TemplateResolver(template.toJSON() as TemplateJson, {
    account: '123456789012',
    region: 'eu-west-1',
    stackName: 'DomainSentinel',
  });
  return new Map(
    Object.entries(template.findResources('AWS::Lambda::Function')).map(([id, fn]) => [
      id,
      environmentBytes(resolver, fn.Properties.Environment?.Variables ?? {}),
    ]),
  );
}

const webhooks = (n: number) =>
  Array.from({ length: n }, (_, i) => `slack:/domain-sentinel/webhook/slack-${i}`).join(',');

describe('Lambda’s 4 KB of environment, checked at synth', { timeout: 60_000 }, () => {
  it('refuses 16 webhooks: each adds its format, parameter and queue ARN to the webhook function’s WEBHOOK_TARGETS', () => {
    expect(() => synthStack({ webhooks: webhooks(16) })).toThrow(
      /the function DomainSentinel\/Default\/Webhooks\/Function\/Resource would have an environment of about \d+ bytes \(\d+ variables\); Lambda allows 4096: fewer webhooks/,
    );
  });

  it('refuses the policies allowed beside SSM parameter names of 620 characters, though each passes its own check', () => {
    // Policies within POLICIES_ENVIRONMENT_MAX (2 048 characters), and parameter names SSM allows.
    const tags = Array.from({ length: 100 }, (_, i) => `customer-tag-${i}`);
    const policies = { policies: [{ name: 'lapse', match: { tags }, letLapse: true }] };
    expect(JSON.stringify(policies).length).toBeLessThan(2_048);
    const long = (what: string) => `/domain-sentinel/${what}/${'p'.repeat(600)}`;
    expect(() =>
      synthStack({
        policies,
        apiKeyParameterName: long('reseller-api-key'),
        linkSigningKeyParameterName: long('link-signing-key'),
        heartbeatUrlParameterName: long('heartbeat'),
      }),
    ).toThrow(/would have an environment of about \d+ bytes .*; Lambda allows 4096/);
  });

  it('takes fifteen webhooks, every function’s environment within 4 KB as deployed', () => {
    const sizes = deployedEnvironments({ webhooks: webhooks(15) });
    expect(sizes.size).toBeGreaterThan(2);
    for (const [id, bytes] of sizes) expect(bytes, id).toBeLessThanOrEqual(LAMBDA_ENVIRONMENT_BYTES);
    // The largest is the webhook function's, with its fifteen targets: the synth's estimate (each
    // reference at its longest) keeps a margin, the deployed size is over half the limit.
    expect(Math.max(...sizes.values())).toBeGreaterThan(LAMBDA_ENVIRONMENT_BYTES / 2);
  });
});
