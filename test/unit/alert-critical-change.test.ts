import { describe, expect, it } from 'vitest';
import { filterPolicyOf } from '../../functions/core/alerts/groups';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import { alertView } from '../../functions/core/memory/actions';
import type { Domain } from '../../functions/core/reseller/schemas';
import { capForMessage } from '../../functions/use-cases/publish-alert';
import { DAY, domain, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const scope = 'http://reseller.test';
const smsFilter = filterPolicyOf({ sms: true }, { groups: false, quietHours: false });

/** The alert of the scan after `before`, when the account holds `after`: as publish builds it (capped). */
function alertBetween(before: readonly Domain[], after: readonly Domain[]) {
  const first = compareWithState({
    ...scanOf(before, T0),
    state: EMPTY_STATE,
    policy: DEFAULT_STATE_POLICY,
    scope,
  });
  const second = compareWithState({
    ...scanOf(after, T0 + DAY),
    state: first.next,
    policy: DEFAULT_STATE_POLICY,
    scope,
  });
  expect(second.publish).toBe(true);
  const alert = buildAlertMessage(capForMessage(alertView(second.report, second.silenced)));
  const { sms, email } = JSON.parse(alert.message) as { sms: string; email: string };
  return { report: second.report, alert, sms, email };
}

/**
 * A change memory calls critical (`left_account`: a healthy domain transferred out or deleted, the
 * hijack case) is critical wherever the alert speaks: its `severity` attribute (the SMS
 * subscriptions filter on `severity = critical`), the counts, the SMS, the digest, chat and webhooks.
 */
describe('a critical change reaches the phone', () => {
  const departure = () => {
    const account = [domain('crown-jewel.com', T0), domain('other.nl', T0)];
    const out = alertBetween(account, account.slice(1));
    expect(out.report.changes).toContainEqual(
      expect.objectContaining({ domain_name: 'crown-jewel.com', kind: 'left_account', severity: 'critical' }),
    );
    return out;
  };

  it('gives the message of a critical left_account change the severity an SMS subscription takes', () => {
    const { alert } = departure();
    expect(smsFilter?.severity).toContain(alert.attributes.severity);
    expect(alert.attributes.critical_count).toBe(1);
  });

  it('names the domain that left in the SMS and counts it in the subject and the digest', () => {
    const { alert, sms, email } = departure();
    expect(sms).toBe('1 critical: crown-jewel.com LEFT ACCOUNT');
    expect(alert.subject).toBe('domain-sentinel: 1 critical, 0 warning');
    expect(email.split('\n')[0]).toBe('domain-sentinel: 1 critical, 0 warning');
    expect(email).toContain('- crown-jewel.com: LEFT THE ACCOUNT');
    expect(email).not.toContain('Nothing critical');
  });

  it('writes an IDN that left in punycode, the SMS one line of GSM-7', () => {
    const account = [domain('café.nl', T0), domain('other.nl', T0)];
    const { sms } = alertBetween(account, account.slice(1));
    expect(sms).toBe('1 critical: xn--caf-dma.nl LEFT ACCOUNT');
  });

  it('keeps a warning change (transfer lock turned off) away from the phone', () => {
    const account = [domain('locked.com', T0)];
    const { alert, sms } = alertBetween(account, [domain('locked.com', T0, { transfer_lock: false })]);
    expect(smsFilter?.severity).not.toContain(alert.attributes.severity);
    expect(alert.attributes.critical_count).toBe(0);
    expect(sms).toBe('no critical items; 0 warning. See e-mail.');
  });
});
