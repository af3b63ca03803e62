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

  it('pass with the longest stack name and a short construct path', () => {
    const stack = sentinelIn(`Monitoring-${'a'.repeat(117)}`, 'Brands');
    const alarms = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(5);
    for (const alarm of alarms)
      expect(String(alarm.Properties.AlarmName).length).toBeLessThanOrEqual(AWS_LIMITS.alarmNameChars);
  });
});
