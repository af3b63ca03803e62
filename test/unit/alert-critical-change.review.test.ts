import { describe, expect, it } from 'vitest';
import { filterPolicyOf } from '../../functions/core/alerts/groups';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import { alertView } from '../../functions/core/memory/actions';
import { DAY, domain, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const scope = 'http://reseller.test';

/**
 * Review: a change memory calls critical (`left_account`: a healthy domain transferred out or
 * deleted, the hijack case) is published, but the message says nothing is critical: its `severity`
 * attribute is `info`, so the SMS subscriptions (filter `severity = critical`) never receive it,
 * and the SMS body, subject and digest heading say "no critical items".
 */
describe('review: a critical change reaches the phone', () => {
  function alertAfterDeparture() {
    const account = [domain('crown-jewel.com', T0), domain('other.nl', T0)];
    const first = compareWithState({
      ...scanOf(account, T0),
      state: EMPTY_STATE,
      policy: DEFAULT_STATE_POLICY,
      scope,
    });
    const second = compareWithState({
      ...scanOf(account.slice(1), T0 + DAY),
      state: first.next,
      policy: DEFAULT_STATE_POLICY,
      scope,
    });
    expect(second.publish).toBe(true);
    expect(second.report.changes).toContainEqual(
      expect.objectContaining({ domain_name: 'crown-jewel.com', kind: 'left_account', severity: 'critical' }),
    );
    return buildAlertMessage(alertView(second.report, second.silenced));
  }

  it('gives the message of a critical left_account change the severity an SMS subscription takes', () => {
    const alert = alertAfterDeparture();
    const smsFilter = filterPolicyOf({ sms: true }, { groups: false, quietHours: false });
    expect(smsFilter?.severity).toContain(alert.attributes.severity);
  });

  it('names the domain that left in the SMS, not "no critical items"', () => {
    const alert = alertAfterDeparture();
    const { sms } = JSON.parse(alert.message) as { sms: string };
    expect(sms).toContain('crown-jewel.com');
    expect(alert.subject).not.toMatch(/\b0 critical\b/);
  });
});
