import { describe, expect, it } from 'vitest';
import type { ContactFinding } from '../../functions/core/findings/classify';
import type { Report } from '../../functions/core/scan/scan';
import { DAY, domain, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const scope = 'http://reseller.test';

const pending: ContactFinding = {
  handle: 'C00001',
  kind: 'contact_pending_validation',
  severity: 'warning',
  name: 'Anna Peters',
  company_name: 'Polder IT',
  email: 'anna@example.nl',
};

/** A full scan of one healthy domain, with the contact findings and problems given. */
function scan(now: number, contactFindings: ContactFinding[], problems: Report['problems']) {
  const { report, observed } = scanOf([domain('healthy.nl', now)], now);
  const summary = { ...report.summary, warning: report.summary.warning + contactFindings.length };
  return {
    report: { ...report, findings: [...report.findings, ...contactFindings], summary, problems },
    observed,
  };
}

/**
 * Found by a review: when the contact list cannot be read at all (a 5xx, a timeout, a key without access to
 * contacts), the scan carries on and adds one problem `{resource: 'contact', key: null}` (scan.ts
 * readContacts). Memory then resolves every remembered pending-validation contact as
 * "no longer pending" and forgets it, although nothing was learnt about it: the person is told the
 * validation is done while the registry may still suspend the contact's domains.
 */
describe('a contact list that could not be read resolves nothing', () => {
  it('keeps a remembered pending-validation contact unresolved when no contact could be read', () => {
    const first = compareWithState({
      ...scan(T0, [pending], []),
      state: EMPTY_STATE,
      policy: DEFAULT_STATE_POLICY,
      scope,
    });
    expect(first.next.contacts.C00001).toBeDefined();

    const unread: Report['problems'] = [
      {
        resource: 'contact',
        key: null,
        page: 0,
        reason:
          'the contact list could not be read (the reseller API failed (HTTP 503)); registrants are not named and contacts pending validation are not checked',
      },
    ];
    const second = compareWithState({
      ...scan(T0 + DAY, [], unread),
      state: first.next,
      policy: DEFAULT_STATE_POLICY,
      scope,
    });
    expect(second.report.resolved).not.toContainEqual(
      expect.objectContaining({ handle: 'C00001', reason: 'no_longer_pending' }),
    );
    expect(second.next.contacts.C00001).toEqual(first.next.contacts.C00001);
  });
});
