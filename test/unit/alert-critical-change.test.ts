import { describe, expect, it } from 'vitest';
import { gsm7Length, reportReaches, smsAsDelivered } from '../../functions/core/alerts/alert';
import { chatNotificationOf } from '../../functions/core/alerts/chat';
import { filterPolicyOf } from '../../functions/core/alerts/groups';
import { buildAlertMessage, reportJsonOf } from '../../functions/core/alerts/message';
import {
  parseAlertReport,
  renderSlackMessage,
  renderTeamsMessage,
} from '../../functions/core/alerts/webhook-formats';
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

  it('makes scan --fail-on critical exit 3 on it, though no finding is critical', () => {
    const { report } = departure();
    expect(report.findings.filter((f) => f.severity === 'critical')).toEqual([]);
    expect(reportReaches(report, 'critical')).toBe(true);
  });

  it('leaves --fail-on alone for a departure its policy let lapse', () => {
    const { report } = departure();
    const lapsed = {
      ...report,
      changes: report.changes.map((c) => ({ ...c, policy: 'lapse', let_lapse: true as const })),
    };
    expect(reportReaches(lapsed, 'critical')).toBe(false);
  });

  it('names the domain that left in the SMS and counts it in the subject and the digest', () => {
    const { alert, sms, email } = departure();
    expect(sms).toBe('1 critical: crown-jewel.com LEFT ACCOUNT');
    expect(alert.subject).toBe('domain-sentinel: 1 critical, 0 warning');
    expect(email.split('\n')[0]).toBe('domain-sentinel: 1 critical, 0 warning');
    expect(email).toContain('- crown-jewel.com: LEFT THE ACCOUNT');
    expect(email).not.toContain('Nothing critical');
  });

  it('names it in chat, Slack and Teams as a critical item, not "Nothing critical or urgent"', () => {
    const { alert } = departure();
    const chat = chatNotificationOf(alert);
    expect(chat.content.title).toBe('domain-sentinel: 1 critical, 0 warning');
    expect(chat.content.description).toMatch(
      /^CRITICAL \(1\)\n- `crown-jewel\.com`: LEFT THE ACCOUNT: .*\?\)\n/,
    );
    expect(chat.content.keywords).toContain('1 critical');
    expect(chat.metadata.additionalContext.critical).toBe('1');
    const report = parseAlertReport(reportJsonOf(alert));
    const slack = JSON.stringify(renderSlackMessage(report));
    const teams = JSON.stringify(renderTeamsMessage(report));
    for (const body of [slack, teams]) {
      expect(body).toContain('CRITICAL (1)');
      expect(body).toContain('crown-jewel.com');
      expect(body).not.toContain('Nothing critical');
    }
  });

  it('writes an IDN that left in punycode, the SMS one line of GSM-7', () => {
    const account = [domain('café.nl', T0), domain('other.nl', T0)];
    const { sms } = alertBetween(account, account.slice(1));
    expect(sms).toBe('1 critical: xn--caf-dma.nl LEFT ACCOUNT');
  });

  it('counts every departure of an emptied account, those the message cut included, within the SMS budget', () => {
    const account = Array.from({ length: 300 }, (_, i) =>
      domain(`gone-${String(i).padStart(3, '0')}.nl`, T0),
    );
    const { alert, sms, email } = alertBetween(account, []);
    const json = JSON.parse(reportJsonOf(alert)) as { changes: unknown[]; changes_truncated: unknown };
    expect(json.changes).toHaveLength(100);
    expect(json.changes_truncated).toEqual({
      changes_omitted: 200,
      resolved_omitted: 0,
      critical_changes_omitted: 200,
    });
    expect(alert.subject).toBe('domain-sentinel: 300 critical, 0 warning');
    expect(alert.attributes).toMatchObject({ severity: 'critical', critical_count: 300 });
    expect(email.split('\n')[0]).toBe('domain-sentinel: 300 critical, 0 warning');
    expect(gsm7Length(smsAsDelivered(sms))).toBeLessThanOrEqual(160);
    const named = sms.match(/gone-\d{3}\.nl LEFT ACCOUNT/g) ?? [];
    expect(named.length).toBeGreaterThan(2);
    expect(sms).toMatch(/^300 critical: gone-000\.nl LEFT ACCOUNT; /);
    expect(sms.endsWith(` +${300 - named.length} more`)).toBe(true);
    const { description } = chatNotificationOf(alert).content;
    expect(description).toMatch(/^CRITICAL \(300\)\n/);
    const shown = description.match(/LEFT THE ACCOUNT/g)?.length ?? 0;
    expect(shown).toBeGreaterThan(2);
    expect(description).toContain(`… and ${300 - shown} more (${300 - shown} critical, 0 warning)`);
  });

  it('keeps a warning change (transfer lock turned off) away from the phone', () => {
    const account = [domain('locked.com', T0)];
    const { alert, sms } = alertBetween(account, [domain('locked.com', T0, { transfer_lock: false })]);
    expect(smsFilter?.severity).not.toContain(alert.attributes.severity);
    // The highest in the message: a warning, though no finding is one.
    expect(alert.attributes.severity).toBe('warning');
    expect(alert.attributes.critical_count).toBe(0);
    expect(sms).toBe('no critical items; 0 warning. See e-mail.');
  });
});
