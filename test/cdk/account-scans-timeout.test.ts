import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { AccountScans } from '../../lib/account-scans';

/**
 * Found by a review of several accounts: the state machine cut every execution at six hours, while
 * 100 accounts four at a time, each with the registry check (a 15-minute scan), a failure, its
 * retry two minutes later and the failure's metric, take 25 rounds of some 34 minutes: the
 * accounts of the last rounds were never scanned, and their alerts never sent.
 */

function timeoutSeconds(accounts: number, concurrency: number, scanTimeout: Duration): number {
  const stack = new Stack(new App(), 'Timeout');
  const scan = new lambda.Function(stack, 'Scan', {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('exports.handler = async () => ({})'),
    timeout: scanTimeout,
  });
  new AccountScans(stack, 'Accounts', {
    scan,
    scanTimeout,
    accounts: Array.from({ length: accounts }, (_, i) => ({
      account: `brand-${i}`,
      apiKeyParameter: `/domain-sentinel/brand-${i}/api-key`,
      settings: {},
    })),
    maxConcurrency: concurrency,
    deploymentName: 'timeout-test',
  });
  const [machine] = Object.values(
    Template.fromStack(stack).findResources('AWS::StepFunctions::StateMachine'),
  );
  const body = (machine as { Properties: { DefinitionString: unknown } }).Properties.DefinitionString;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  // The execution's own timeout: the largest of the definition (each task's is the scan's and 30 s).
  return Math.max(...[...text.matchAll(/"TimeoutSeconds\\?":\s{0,9}(\d{1,9})/g)].map((m) => Number(m[1])));
}

describe('the state machine of several accounts', () => {
  it('lets every account of the largest deployment fail, wait for its retry and fail again before it cuts the execution', () => {
    // Each round: a task (the scan's timeout and 30 s), the retry's 2 minutes, the task again, the metric.
    const round = 2 * (15 * 60 + 30) + 120;
    expect(timeoutSeconds(100, 4, Duration.minutes(15))).toBeGreaterThanOrEqual(25 * round);
  });

  it('keeps six hours for a deployment whose accounts all fit in them', () => {
    expect(timeoutSeconds(3, 4, Duration.minutes(5))).toBe(6 * 3600);
  });
});
