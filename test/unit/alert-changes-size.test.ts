import { describe, expect, it } from 'vitest';
import { SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import { chatNotificationOf } from '../../functions/core/alerts/chat';
import { buildAlertMessage, reportJsonOf, snsPublishBytes } from '../../functions/core/alerts/message';
import type { DomainChange } from '../../functions/core/memory/state';
import { capForMessage } from '../../functions/use-cases/publish-alert';
import { domainFinding, reportOf } from '../support/report';

/**
 * The changes a report with memory carries go into the message's JSON as they are, capped at 100
 * (capForMessage). Memory keeps a watched field of up to 256 characters, and a registrant handle
 * or nameserver group of control characters is written `\u0001` inside the JSON, then escaped once
 * more inside the message: seven bytes each. A hundred such changes are more than SNS takes, SNS
 * refuses the publish, and the scan's critical findings reach nobody, on every run while they stay.
 */
describe('changes with values that escape long', () => {
  const value = '\u0001'.repeat(256);
  const changeOf = (i: number): DomainChange => ({
    domain_name: `d${i}.nl`,
    kind: 'registrant_changed',
    severity: 'warning',
    before: value,
    after: `${value.slice(1)}x`,
  });
  const departure: DomainChange = {
    domain_name: 'crown-jewel.nl',
    kind: 'left_account',
    severity: 'critical',
    before: null,
    after: null,
  };
  const report = () =>
    capForMessage({
      ...reportOf([domainFinding('shop.nl', 'expiring', 'critical', 2)]),
      changes: [...Array.from({ length: 150 }, (_, i) => changeOf(i)), departure],
      resolved: [],
    } as never);

  it('stays within 256 KB, the changes left out of the JSON counted', () => {
    const alert = buildAlertMessage(report());
    expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
    const json = JSON.parse(reportJsonOf(alert));
    expect(json.changes.length + json.changes_truncated.changes_omitted).toBe(151);
  });

  it('still names the critical finding and counts the departure everywhere', () => {
    const alert = buildAlertMessage(report());
    const { email, sms } = JSON.parse(alert.message) as { email: string; sms: string };
    expect(alert.attributes.critical_count).toBe(2);
    expect(email.split('\n')[0]).toBe('domain-sentinel: 2 critical, 0 warning');
    expect(email).toContain('- shop.nl: expires');
    expect(sms).toContain('shop.nl');
    expect(chatNotificationOf(alert).content.title).toBe('domain-sentinel: 2 critical, 0 warning');
  });
});
