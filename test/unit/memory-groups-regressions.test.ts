import { describe, expect, it } from 'vitest';
import type { Severity } from '../../functions/core/findings/classify';
import type { Problem } from '../../functions/core/reseller/paging';
import type { Domain } from '../../functions/core/reseller/schemas';
import { groupScanner } from '../support/group-scan';
import { DAY, domain } from '../support/state-scan';
import { EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * Defects the policy-group model (memory-groups.property.test.ts) found, each as the smallest
 * sequence of scans: the domains under a policies file, compared with memory, and the messages
 * alerts/groups.ts plans from that.
 */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;
const FILE = {
  policies: [
    {
      name: 'watch',
      match: { tags: ['watch'] },
      alertEmails: ['watch@example.nl'],
      minSeverity: 'critical',
    },
    { name: 'lapse', match: { tags: ['lapse'] }, letLapse: true },
  ],
};
const { scan: scanWith } = groupScanner(FILE);
const scan = (
  read: readonly Domain[],
  now: number,
  state: ScanState,
  problems: Problem[] = [],
  minSeverity: Severity = 'warning',
) => scanWith(read, now, state, { problems, minSeverity });

describe('memory with policy groups', () => {
  it('tells a group that hears only critical news that its domain it was told had left is back', () => {
    const kept = domain('kept.nl', T0);
    const watched = domain('shop.nl', T0, { tags: ['watch'] });
    const first = scan([kept, watched], T0, EMPTY_STATE);
    const left = scan([kept], T0 + DAY, first.next);
    // The departure (critical) reached the group.
    expect(left.sent).toEqual(['account', 'watch']);
    const back = scan([kept, watched], T0 + DAY + HOUR, left.next);
    expect(back.result.report.changes.map((c) => `${c.domain_name} ${c.kind} ${c.policy}`)).toEqual([
      'shop.nl returned watch',
    ]);
    expect(back.sent).toEqual(['account', 'watch']);
  });

  it('tells a deployment that hears only critical news that a domain it was told had left is back', () => {
    const kept = domain('kept.nl', T0);
    const gone = domain('gone.nl', T0);
    const first = scan([kept, gone], T0, EMPTY_STATE, [], 'critical');
    const left = scan([kept], T0 + DAY, first.next, [], 'critical');
    expect(left.sent).toEqual(['account']);
    const back = scan([kept, gone], T0 + DAY + HOUR, left.next, [], 'critical');
    expect(back.result.why).toEqual(['1 changed']);
    expect(back.sent).toEqual(['account']);
  });

  it('does not repeat daily the unreadable quarantine record of a domain let lapse', () => {
    const lost = domain('lost.nl', T0, {
      tags: ['lapse'],
      status: ['quarantine'],
      auto_renew: false,
      date_expiry: T0 - 10 * DAY,
      date_deleted: T0 - 5 * DAY,
    });
    const first = scan([lost], T0, EMPTY_STATE);
    const unreadable: Problem = {
      resource: 'domain',
      key: 'lost.nl',
      page: 1,
      reason: 'date_expiry: Invalid input',
      severity: 'critical',
    };
    // An unreadable record is said once, as new (it belongs to no group).
    const broke = scan([], T0 + HOUR, first.next, [unreadable]);
    expect(broke.result.why).toEqual(['1 new unreadable record']);
    const later = scan([], T0 + 22 * HOUR, broke.next, [unreadable]);
    expect(later.result.why.join()).not.toMatch(/repeated/);
    expect(later.result.publish).toBe(false);
  });
});

describe('a critical domain of a group with recipients of its own whose record breaks', () => {
  it('tells the group, as the account is told, that its record can no longer be read', () => {
    const expired = domain('shop.nl', T0, { tags: ['watch'], auto_renew: false, date_expiry: T0 - DAY });
    const first = scan([expired], T0, EMPTY_STATE);
    expect(first.sent).toEqual(['account', 'watch']);
    const broken: Problem = {
      resource: 'domain',
      key: 'shop.nl',
      page: 1,
      reason: 'date_expiry: Invalid input',
    };
    const broke = scan([], T0 + HOUR, first.next, [broken]);
    expect(broke.result.why).toEqual(['1 new unreadable record']);
    expect(broke.sent).toEqual(['account', 'watch']);
    const group = broke.plan.find((p) => p.group === 'watch');
    expect(group?.report.problems.map((p) => p.key)).toEqual(['shop.nl']);
  });
});
