import { describe, expect, it } from 'vitest';
import { planAlerts } from '../../functions/core/alerts/groups';
import { classify } from '../../functions/core/findings/classify';
import { loadStatePolicy } from '../../functions/core/memory/state-config';
import type { Domain } from '../../functions/core/reseller/schemas';
import { markFinding, parsePolicies, resolvePolicies } from '../../functions/core/scan/policies';
import { DAY, domain, scanOf } from '../support/state-scan';
import { compareWithState, EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * A policies file's groups as the comparison with memory sees them (compare.ts): what a group sets
 * for its own domains holds with memory between scans as it does without, so nothing a group asks
 * to hear of is silenced by the memory.
 */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;

/** A scan of `domains` at `now` under the policies file `file`, MIN_SEVERITY `minSeverity`, against `state`. */
function scanWith(
  file: unknown,
  minSeverity: 'warning' | 'critical',
  domains: readonly Domain[],
  now: number,
  state: ScanState,
) {
  const policies = parsePolicies(file, 'policies file p.json');
  const set = resolvePolicies(policies, {
    classify: { expiryDays: 30, criticalDays: 7 },
    minSeverity,
  });
  const { report, observed } = scanOf(domains, now);
  // As the scan does: each domain judged by its group's thresholds and marked with its name.
  const findings = domains.flatMap((d) => {
    const group = set.policyFor(d);
    const f = classify(d, now, group?.classify);
    return f ? [markFinding(f, group)] : [];
  });
  const policy = loadStatePolicy({}, minSeverity, policies);
  return compareWithState({
    report: { ...report, findings },
    observed,
    state,
    policy,
    scope: 'http://reseller.test',
  });
}

/** Expiring without auto-renew `daysLeft` after T0 (a warning beyond 7 days, critical within). */
const expiring = (name: string, daysLeft: number, tags: string[] = []) =>
  domain(name, T0, { date_expiry: T0 + daysLeft * DAY, auto_renew: false, tags });

describe('a group’s minSeverity with memory between scans', () => {
  const file = { policies: [{ name: 'vip', match: { tags: ['vip'] }, minSeverity: 'warning' }] };

  it('announces a new warning of a group whose level is warning under a deployment at critical', () => {
    // Without memory planAlerts sends the vip group's warning (its level); with memory the same
    // scan must decide to publish it, or the vip desk never hears of it.
    const first = scanWith(file, 'critical', [expiring('vip.nl', 20, ['vip'])], T0, EMPTY_STATE);
    expect(first.publish).toBe(true);
    expect(first.why).toEqual(['1 new']);
    expect(first.next.domains['vip.nl']?.alerted).toMatchObject({ severity: 'warning' });
  });

  it('repeats that warning weekly, and says nothing of an ungrouped warning under the deployment’s critical', () => {
    const domains = [expiring('vip.nl', 29, ['vip']), expiring('plain.nl', 29)];
    const first = scanWith(file, 'critical', domains, T0, EMPTY_STATE);
    expect(first.why).toEqual(['1 new']);
    expect(first.next.domains['plain.nl']?.alerted).toBeNull();
    const week = scanWith(file, 'critical', domains, T0 + 165 * HOUR, first.next);
    expect(week.why).toEqual(['1 warning repeated after 164 h']);
  });

  it('does not publish for a warning of a group whose level is critical', () => {
    const quiet = { policies: [{ name: 'nl', match: { tlds: ['nl'] }, minSeverity: 'critical' }] };
    const first = scanWith(quiet, 'warning', [expiring('shop.nl', 20)], T0, EMPTY_STATE);
    expect(first.publish).toBe(false);
  });
});

describe('a group message with memory between scans', () => {
  const file = {
    policies: [
      { name: 'vip', match: { tags: ['vip'] }, alertEmails: ['vip@example.nl'], repeat: { critical: 12 } },
    ],
  };
  const policies = resolvePolicies(parsePolicies(file, 'p.json'), {
    classify: { expiryDays: 30, criticalDays: 7 },
    minSeverity: 'warning',
  });
  const groupsOf = (result: ReturnType<typeof scanWith>) =>
    planAlerts(result.report, { minSeverity: 'warning', decided: result.publish, policies }).map(
      (p) => p.group ?? 'account',
    );

  it('goes out for its own news and repeats, and not for news of domains outside it', () => {
    const vip = expiring('vip.nl', 5, ['vip']);
    const first = scanWith(file, 'warning', [vip], T0, EMPTY_STATE);
    expect(groupsOf(first)).toEqual(['account', 'vip']);
    // An hour on, vip.nl is unchanged and not due; a new critical elsewhere is the account's news alone.
    const other = scanWith(file, 'warning', [vip, expiring('other.nl', 5)], T0 + HOUR, first.next);
    expect(other.why).toEqual(['1 new']);
    expect(groupsOf(other)).toEqual(['account']);
    // The group did not hear of it then: its 12 hours run from its own alert, not from that message.
    expect(other.next.domains['vip.nl']?.alerted?.at).toBe(new Date(T0).toISOString());
    const due = scanWith(file, 'warning', [vip, expiring('other.nl', 5)], T0 + 12.5 * HOUR, other.next);
    expect(due.why).toEqual(['1 critical repeated after 12 h']);
    expect(groupsOf(due)).toEqual(['account', 'vip']);
    expect(due.report.findings.find((f) => 'domain_name' in f && f.domain_name === 'vip.nl')).toMatchObject({
      change: 'ongoing',
      repeated: true,
    });
  });
});

describe('a group message that goes out, with memory between scans', () => {
  const policyOf = (criticalDays: number) => ({
    policies: [{ name: 'vip', match: { tags: ['vip'] }, criticalDays, alertEmails: ['vip@example.nl'] }],
  });
  const groupsOf = (file: unknown, result: ReturnType<typeof scanWith>) =>
    planAlerts(result.report, {
      minSeverity: 'warning',
      decided: result.publish,
      policies: resolvePolicies(parsePolicies(file, 'p.json'), {
        classify: { expiryDays: 30, criticalDays: 7 },
        minSeverity: 'warning',
      }),
    }).map((p) => p.group ?? 'account');

  it('starts the hours of the findings it lists: one that fell to a warning is not repeated an hour on', () => {
    const vip = expiring('vip.nl', 5, ['vip']);
    const first = scanWith(policyOf(7), 'warning', [vip], T0, EMPTY_STATE);
    expect(groupsOf(policyOf(7), first)).toEqual(['account', 'vip']);
    // criticalDays 3: the critical falls to a warning, resolved in the group message that lists it.
    const fell = scanWith(policyOf(3), 'warning', [vip], T0 + HOUR, first.next);
    expect(fell.why).toEqual(['1 resolved']);
    expect(groupsOf(policyOf(3), fell)).toEqual(['account', 'vip']);
    const after = scanWith(policyOf(3), 'warning', [vip], T0 + 2 * HOUR, fell.next);
    expect(after.why).toEqual(['nothing new, escalated, changed or resolved at warning or above']);
    expect(after.publish).toBe(false);
  });
});

describe('a domain let lapse, with memory between scans', () => {
  const file = {
    policies: [{ name: 'lapse', match: { tags: ['let-lapse'] }, letLapse: true }],
    escalation: { afterHours: 24, withinDays: 7 },
  };

  it('is alerted as any other once its tag is taken away, though a message went out for others while it lapsed', () => {
    // docs/policies.md: "Take its tag away and the next scan ... alerts about it as about any
    // other". No message spoke of it while it lapsed, so its memory must not say it was alerted.
    const lapsing = [expiring('lost.nl', 5, ['let-lapse']), expiring('other.nl', 20)];
    const first = scanWith(file, 'warning', lapsing, T0, EMPTY_STATE);
    expect(first.why).toEqual(['1 new']);
    const untagged = [expiring('lost.nl', 5), expiring('other.nl', 20)];
    const next = scanWith(file, 'warning', untagged, T0 + 2 * HOUR, first.next);
    expect(next.publish).toBe(true);
    expect(next.next.domains['lost.nl']?.alerted).toMatchObject({
      at: new Date(T0 + 2 * HOUR).toISOString(),
    });
  });

  it('sends no message for it alone, and remembers no alert of it', () => {
    const alone = scanWith(file, 'warning', [expiring('lost.nl', 5, ['let-lapse'])], T0, EMPTY_STATE);
    expect(alone.publish).toBe(false);
    expect(alone.next.domains['lost.nl']?.alerted).toBeNull();
  });

  it('is never escalated once let lapse, though it was alerted before', () => {
    const before = scanWith(file, 'warning', [expiring('lost.nl', 5)], T0, EMPTY_STATE);
    expect(before.why).toEqual(['1 new']);
    const tagged = [expiring('lost.nl', 5, ['let-lapse'])];
    const later = scanWith(file, 'warning', tagged, T0 + 25 * HOUR, before.next);
    expect([later.publish, later.report.findings[0]]).toEqual([
      false,
      expect.not.objectContaining({ escalated_after_hours: expect.anything() }),
    ]);
  });
});

describe('a group’s alertThresholds with memory between scans', () => {
  const file = {
    policies: [{ name: 'vip', match: { tags: ['vip'] }, expiryDays: 60, alertThresholds: [50, 40] }],
  };

  it('escalates a group’s finding at its own rungs, and remembers the rung it stands on by them', () => {
    // 45 days left: the vip 50-day rung (ALERT_THRESHOLDS' 30 is below it: off that ladder).
    const domains = (now: number) => [
      domain('vip.nl', now, { date_expiry: T0 + 45 * DAY, auto_renew: false, tags: ['vip'] }),
    ];
    const first = scanWith(file, 'warning', domains(T0), T0, EMPTY_STATE);
    expect(first.next.domains['vip.nl']?.finding).toMatchObject({ stage: 50 });
    // Six days on, 39 days left: its 40-day rung, news to the vip desk once.
    const later = scanWith(file, 'warning', domains(T0 + 6 * DAY), T0 + 6 * DAY, first.next);
    expect(later.report.findings[0]).toMatchObject({ change: 'escalated' });
    expect(later.why).toEqual(['1 escalated']);
  });
});

describe('a group renamed between scans', () => {
  it('keeps its domains’ memory: an ongoing finding is neither new again nor silenced, and repeats on the new group’s cadence', () => {
    const before = { policies: [{ name: 'vip', match: { tags: ['vip'] }, repeat: { critical: 12 } }] };
    const after = { policies: [{ name: 'gold', match: { tags: ['vip'] }, repeat: { critical: 6 } }] };
    const domains = [expiring('vip.nl', 5.5, ['vip'])];
    const first = scanWith(before, 'warning', domains, T0, EMPTY_STATE);
    expect(first.why).toEqual(['1 new']);
    const renamed = scanWith(after, 'warning', domains, T0 + 2 * HOUR, first.next);
    expect([renamed.publish, renamed.report.findings[0]]).toEqual([
      false,
      expect.objectContaining({ change: 'ongoing', policy: 'gold' }),
    ]);
    const due = scanWith(after, 'warning', domains, T0 + 7 * HOUR, renamed.next);
    expect(due.why).toEqual(['1 critical repeated after 6 h']);
  });
});
