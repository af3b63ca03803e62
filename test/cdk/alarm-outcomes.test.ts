import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { executionTimeout } from '../../lib/account-scans';
import { type AlarmProperties, alarmStates, at, type Series, transitions } from '../support/alarm-eval';
import { synthStack } from '../support/stack';

/**
 * Found by a review of the alarms: each alarm run over hours of made-up metrics as CloudWatch
 * evaluates it (test/support/alarm-eval.ts), to see when it fires, when it clears, and whom it tells.
 */

const dir = mkdtempSync(join(tmpdir(), 'sentinel-alarm-outcomes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ACCOUNTS = ['brand-a', 'brand-b', 'test-env'].map((name) => ({
  name,
  apiKeyParameter: `/domain-sentinel/${name}/api-key`,
}));
const accountsPath = join(dir, 'accounts.json');
writeFileSync(accountsPath, JSON.stringify({ accounts: ACCOUNTS }));

const single = synthStack();
const several = synthStack({ accounts: accountsPath });

/** Every alarm of the deployment and its nested stacks (the accounts' groups), by name. */
function alarmsOf(stack: Stack): Map<string, AlarmProperties & Record<string, unknown>> {
  const out = new Map<string, AlarmProperties & Record<string, unknown>>();
  for (const s of [stack, ...stack.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack)])
    for (const r of Object.values(Template.fromStack(s).findResources('AWS::CloudWatch::Alarm')))
      out.set(String(r.Properties.AlarmName), r.Properties);
  return out;
}
const alarm = (stack: Stack, name: string) => {
  const found = alarmsOf(stack).get(`DomainSentinel/${name}`);
  if (!found) throw new Error(`no alarm ${name}`);
  return found;
};
const DAYS = 3 * 24;

describe('the scan errors alarm of one account', () => {
  const scanErrors = alarm(single.stack, 'ScanErrors');
  // A run at 06:00 each day; Lambda retries a failed run twice, a minute or two later (same hour).
  const states = (errors: Series, completed: Series) =>
    alarmStates(scanErrors, { Errors: errors, errors, completed }, DAYS);

  it('stays quiet when a retry completes the run that failed in the same hour', () => {
    expect(transitions(states(at([6]), at([6, 30, 54])))).toEqual([[6, 'OK']]);
  });

  it('fires when no attempt of the run completed, and keeps firing through the hours without a run until one completes', () => {
    const s = states(at([30], 3), at([6, 54]));
    expect(transitions(s)).toEqual([
      [6, 'OK'],
      [30, 'ALARM'],
      [54, 'OK'],
    ]);
  });
});

describe('the alarm on the state machine of several accounts', () => {
  const failed = alarm(several.stack, 'AccountScansFailed');
  const states = (data: Record<string, Series>) => alarmStates(failed, data, DAYS);

  it('stays in alarm after an execution failed until one succeeds, not an hour later', () => {
    expect(transitions(states({ succeeded: at([6, 54]), failed: at([30]) }))).toEqual([
      [6, 'OK'],
      [30, 'ALARM'],
      [54, 'OK'],
    ]);
  });

  it('counts an execution that timed out or was aborted as failed', () => {
    for (const id of ['timedOut', 'aborted']) expect(states({ [id]: at([30]) })[40]).toBe('ALARM');
  });
});

describe('the dead-man switch of each account', () => {
  const deadMan = alarm(several.stack, 'ScanNotCompleted-brand-a');
  const states = (completed: Series) => alarmStates(deadMan, { armed: at([0]), completed }, 5 * 24);
  // The longest an execution of these three accounts may run, whole hours.
  const task = single.stack.scan.metrics.timeout.plus(Duration.seconds(30));
  const runHours = Math.ceil(executionTimeout(3, 4, task).toHours({ integral: false }));

  it('does not fire when the account is scanned early one day and late in the run the next', () => {
    // Day 1 at 06:00, first of the run; day 2 at the end of a run that took all its time.
    const late = 6 + 24 + runHours - 1;
    expect(states(at([6, late, late + 24 - runHours + 1, 6 + 72, 6 + 96]))).not.toContain('ALARM');
  });

  it('fires when the account stopped being scanned, within the interval and the run', () => {
    const s = states(at([6]));
    const fired = s.indexOf('ALARM');
    expect(fired).toBeGreaterThan(6 + 24);
    expect(fired).toBeLessThanOrEqual(6 + 24 + runHours + 3);
  });

  it('refuses a schedule whose gap and run together pass the 7 days a CloudWatch alarm can watch', () => {
    expect(() => synthStack({ accounts: accountsPath, scanIntervalHours: 167 })).toThrow(
      `invalid accounts: the dead-man alarm of account brand-a would wait 167 hours between scans and ${runHours} more for an execution of the accounts' state machine (its timeout), ${167 + runHours} in all, and a CloudWatch alarm watches at most 168 hours (7 days): scan at least every ${168 - runHours} hours`,
    );
    // The deployment's own switch waits its one hour: 167 hours are fine.
    expect(() => synthStack({ scanIntervalHours: 167 })).not.toThrow();
  });
});

describe('ok notifications', () => {
  it('are sent by the deployment alarms, not by each account’s: a new deployment of many accounts would send one per alarm', () => {
    const alarms = alarmsOf(several.stack);
    for (const { name } of ACCOUNTS)
      for (const id of [`ScanFailed-${name}`, `ScanNotCompleted-${name}`]) {
        const props = alarms.get(`DomainSentinel/${id}`);
        expect(props?.AlarmActions, id).toHaveLength(1);
        expect(props?.OKActions, id).toBeUndefined();
      }
    expect(alarms.get('DomainSentinel/AccountScansFailed')?.OKActions).toHaveLength(1);
  });
});

describe('a deployment of several accounts', () => {
  it('has no scan errors alarm: each account’s failure alarm judges its scan after the state machine’s retry', () => {
    expect([...alarmsOf(several.stack).keys()]).not.toContain('DomainSentinel/ScanErrors');
  });
});
