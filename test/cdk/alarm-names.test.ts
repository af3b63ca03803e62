import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Construct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { DomainSentinel } from '../../lib/index';
import { AWS_LIMITS } from '../../lib/limits';

/**
 * Found by a hostile review of AWS limits: every alarm is named `<deployment>/<what>`, and the
 * deployment is the stack's name (CloudFormation allows 128 characters) with the construct's path
 * in it. A long stack name and a construct inside a group of its own made alarm names past the
 * 255 characters CloudWatch allows: the synth passed and CloudFormation failed the deploy at the
 * first alarm, rolling back. The synth now refuses it, saying what to shorten.
 */
describe('alarm names', { timeout: 120_000 }, () => {
  const ENV = { account: '123456789012', region: 'eu-west-1' };
  const sentinelIn = (stackName: string, groupId: string) => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'S', { env: ENV, stackName });
    new DomainSentinel(new Construct(stack, groupId), 'DomainSentinelProduction', {
      resellerBaseUrl: 'https://api.reseller.example',
      alertEmails: ['ops@example.nl'],
    });
    return stack;
  };

  it('fail the synth when the deployment makes one longer than CloudWatch allows', () => {
    // A deployment name of 240 characters: within the 255 of a metric dimension, which CDK checks
    // itself, but not with `/AlertDeliveryFailed` after it.
    const stack = sentinelIn(`Monitoring-${'a'.repeat(117)}`, `Brands${'B'.repeat(80)}`);
    expect(() => Template.fromStack(stack)).toThrow(
      /alarms with names longer than the 255 characters CloudWatch allows.*give the stack a shorter name or the construct a shorter id/,
    );
  });

  it('fail early, saying what to shorten, when the deployment name passes a metric dimension', () => {
    // 128 + 1 + 136 + 1 + 24 = 290 characters: every metric of the copy carries it as a dimension,
    // and CDK refused the first with its own DimensionValueLengthInvalid, naming neither stack nor id.
    let error: unknown;
    try {
      sentinelIn(`Monitoring-${'a'.repeat(117)}`, `Brands${'B'.repeat(130)}`);
    } catch (e) {
      error = e;
    }
    expect(String(error)).not.toContain('DimensionValueLengthInvalid');
    expect(String(error)).toMatch(
      /the deployment name is 290 characters \(the stack name, 128, and the construct path in it\); CloudWatch allows 255 in the metric dimension that carries it: give the stack a shorter name or the DomainSentinel and the constructs around it shorter ids/,
    );
  });

  it('pass with the longest stack name and a short construct path', () => {
    const stack = sentinelIn(`Monitoring-${'a'.repeat(117)}`, 'Brands');
    const alarms = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(5);
    for (const alarm of alarms)
      expect(String(alarm.Properties.AlarmName).length).toBeLessThanOrEqual(AWS_LIMITS.alarmNameChars);
  });
});
