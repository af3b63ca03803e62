import { describe, expect, it } from 'vitest';
import { SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import { renderDigest } from '../../functions/core/alerts/digest';
import { buildAlertMessage, snsPublishBytes } from '../../functions/core/alerts/message';
import { capForMessage } from '../../functions/use-cases/publish-alert';
import { DAY, domain, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');

function twoScans() {
  const before = [
    domain('stays.nl', T0, { auto_renew: false, date_expiry: T0 + 20 * DAY + 3_600_000 }),
    domain('fixed.nl', T0, { auto_renew: false, date_expiry: T0 + 5 * DAY + 3_600_000 }),
    domain('gone.nl', T0),
    domain('locked.com', T0),
  ];
  const first = compareWithState({ ...scanOf(before, T0), state: EMPTY_STATE, policy: DEFAULT_STATE_POLICY });
  const after = [
    before[0] as (typeof before)[number],
    { ...(before[1] as (typeof before)[number]), auto_renew: true },
    domain('locked.com', T0, { transfer_lock: false, nsgroup: 'ns\nevil', dns_hosted: false }),
    domain('late.nl', T0, { auto_renew: false, date_expiry: T0 + 10 * DAY }),
  ];
  return compareWithState({ ...scanOf(after, T0 + DAY), state: first.next, policy: DEFAULT_STATE_POLICY });
}

describe('digest with memory', () => {
  it('opens with the changes, marks each item, and ends with what was resolved', () => {
    const digest = renderDigest(twoScans().report);
    const lines = digest.split('\n');
    expect(lines[2]).toBe('Since the last scan: 3 changed, 1 new, 1 resolved.');
    // Each change ends with its next step.
    expect(lines.slice(4, 11)).toEqual([
      'CHANGES (3)',
      '- gone.nl: LEFT THE ACCOUNT: no longer listed (transferred out or deleted?) [critical]',
      "  Next: Check in the reseller's control panel whether it was transferred out or deleted on purpose; if not, contact the reseller today.",
      '- locked.com: nameservers changed (hosted DNS → nsgroup ns evil) [warning]',
      "  Next: Check that the new nameservers are yours (website and mail follow them); if not, set them back in the reseller's control panel now.",
      '- locked.com: transfer lock turned OFF [warning]',
      "  Next: If nobody here turned it off, turn the transfer lock on again in the reseller's control panel today.",
    ]);
    expect(digest).toMatch(/^- NEW late\.nl: expires /m);
    expect(digest).toMatch(/^- ongoing stays\.nl: expires /m);
    const resolved = digest.indexOf('Resolved since the last alert (1)');
    expect(resolved).toBeGreaterThan(digest.indexOf('WARNING ('));
    expect(resolved).toBeLessThan(digest.indexOf('\n--\n'));
    expect(digest).toContain('- fixed.nl: expiring [critical]: auto-renew turned on; now info (expiring)');
  });

  it('says a domain that left the account is back, in the digest and the JSON report', () => {
    const both = [domain('back.nl', T0), domain('a.nl', T0)];
    const first = compareWithState({ ...scanOf(both, T0), state: EMPTY_STATE, policy: DEFAULT_STATE_POLICY });
    const gone = compareWithState({
      ...scanOf([domain('a.nl', T0)], T0 + DAY),
      state: first.next,
      policy: DEFAULT_STATE_POLICY,
    });
    const back = compareWithState({
      ...scanOf(both, T0 + 2 * DAY),
      state: gone.next,
      policy: DEFAULT_STATE_POLICY,
    });
    expect(back.publish).toBe(true);
    const digest = renderDigest(back.report);
    expect(digest).toContain('- back.nl: back in the account (it had left it) [warning]\n  Next: Check in');
    expect(JSON.parse(JSON.stringify(back.report)).changes).toEqual([
      {
        domain_name: 'back.nl',
        kind: 'returned',
        severity: 'warning',
        before: 'not in the account',
        after: 'in the account',
      },
    ]);
  });

  // Whoever controls a record writes its nameserver group: a URL there must be no link in our e-mail.
  it('shows a URL in a changed value as text no mail client links, and a real name as it is', () => {
    const before = [domain('held.nl', T0, { nsgroup: 'ns-a' })];
    const first = compareWithState({
      ...scanOf(before, T0),
      state: EMPTY_STATE,
      policy: DEFAULT_STATE_POLICY,
    });
    const after = [domain('held.nl', T0, { nsgroup: 'see https://pay.example/now' })];
    const { report } = compareWithState({
      ...scanOf(after, T0 + DAY),
      state: first.next,
      policy: DEFAULT_STATE_POLICY,
    });
    const digest = renderDigest(report);
    expect(digest).toContain(
      '- held.nl: nameservers changed (nsgroup ns-a, hosted DNS → nsgroup see https[:]//pay[.]example/now, hosted DNS) [warning]',
    );
    expect(digest).not.toMatch(/https:\/\/pay|pay\.example/);
  });

  it('escapes bidi and invisible characters in the values its changes show, as every other digest line does', () => {
    // A registrant handle from the API that turns the rest of its line around, with a zero-width space.
    const before = [domain('held.nl', T0, { registrant_handle: 'C1' })];
    const first = compareWithState({
      ...scanOf(before, T0),
      state: EMPTY_STATE,
      policy: DEFAULT_STATE_POLICY,
    });
    const after = [domain('held.nl', T0, { registrant_handle: 'C2\u202Elive\u200B' })];
    const { report } = compareWithState({
      ...scanOf(after, T0 + DAY),
      state: first.next,
      policy: DEFAULT_STATE_POLICY,
    });
    const digest = renderDigest(report);
    expect(digest).toContain('- held.nl: registrant changed (C1 → C2\\u202elive\\u200b) [warning]');
    expect(digest).not.toMatch(/[\u202E\u200B]/);
  });

  it('leaves the digest of a scan without memory as it was', () => {
    const { report } = scanOf([domain('a.nl', T0, { auto_renew: false, date_expiry: T0 + 3 * DAY })], T0);
    const digest = renderDigest(report);
    expect(digest).not.toMatch(/Since the last scan|NEW|ongoing|Resolved since/);
    expect(digest).toMatch(/^- a\.nl: expires /m);
  });

  it('keeps an account emptied at once within one SNS message, every departure counted', () => {
    const many = Array.from({ length: 5_000 }, (_, i) =>
      domain(`gone-${i}.nl`, T0, i % 2 ? {} : { auto_renew: false, date_expiry: T0 + 10 * DAY }),
    );
    const first = compareWithState({ ...scanOf(many, T0), state: EMPTY_STATE, policy: DEFAULT_STATE_POLICY });
    const emptied = compareWithState({
      ...scanOf([], T0 + DAY),
      state: first.next,
      policy: DEFAULT_STATE_POLICY,
    });
    expect(emptied.report.changes).toHaveLength(5_000);
    const capped = capForMessage(emptied.report);
    const alert = buildAlertMessage(capped);
    expect(snsPublishBytes(alert)).toBeLessThan(SNS_MAX_BYTES);
    const { email, default: json } = JSON.parse(alert.message) as { email: string; default: string };
    expect(email).toContain('Since the last scan: 5000 changed, 2500 resolved.');
    expect(email).toContain('CHANGES (5000)');
    // Said of the changes the e-mail leaves out: how many of them are critical (found by the alerts review).
    expect(email).toContain(
      '- and 4900 more changes, 4900 of them critical (run a scan with --json for all of them)',
    );
    expect(email).toContain('Resolved since the last alert (2500)');
    expect(JSON.parse(json).changes_truncated).toEqual({
      changes_omitted: 4_900,
      resolved_omitted: 2_400,
      critical_changes_omitted: 4_900,
    });
    expect(alert.subject).toBe('domain-sentinel: 5000 critical, 0 warning');
  });
});
