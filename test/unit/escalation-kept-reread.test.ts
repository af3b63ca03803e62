import { describe, expect, it } from 'vitest';
import type { Problem } from '../../functions/core/reseller/paging';
import { HOUR, T0 } from '../support/account-model';
import { groupScanner } from '../support/group-scan';
import { DAY, domain } from '../support/state-scan';
import { EMPTY_STATE } from '../support/whole-state';

/**
 * Escalation (escalation.ts, docs/policies.md#escalation) of a critical domain whose record could
 * not be read for a while and is read again: the count memory kept while the record was unreadable
 * goes on once it is read, so reading it again neither holds an escalation back nor says it twice.
 */

const escalation = { afterHours: 24, withinDays: 7 };
const { scan } = groupScanner({ policies: [] });
const broken: Problem = { resource: 'domain', key: 'soon.nl', page: 1, reason: 'date_expiry: Invalid input' };
/** No auto-renew, expiring 6 days after T0: critical, on the 7-day rung, expired from day 6. */
const soon = domain('soon.nl', T0, { auto_renew: false, date_expiry: T0 + 6 * DAY });

/**
 * The times (in hours after T0) of `hours` at which soon.nl escalated: read at T0 and T0 + 25 h,
 * then at each of `hours` read when `readable(hour)`, else its record unreadable.
 */
function escalatedAt(hours: readonly number[], readable: (hour: number) => boolean): number[] {
  let state = scan([soon], T0, EMPTY_STATE, { escalation }).next;
  state = scan([soon], T0 + 25 * HOUR, state, { escalation }).next;
  const escalated: number[] = [];
  for (const h of hours) {
    const now = T0 + h * HOUR;
    const r = readable(h)
      ? scan([soon], now, state, { escalation })
      : scan([], now, state, { problems: [broken], escalation });
    if (r.result.why.includes('1 critical not acted on, escalated')) escalated.push(h);
    state = r.next;
  }
  return escalated;
}

describe('an expiring domain whose record broke before its expiry and is read again after it', () => {
  // Expiry at hour 144: expired from then, escalated as expired afterHours (24) later, at hour 168.
  const hours = [48, 72, 96, 120, 144, 150, 156, 162, 168, 174, 180, 192];

  it('escalates as expired afterHours after its expiry, as if it had stayed unreadable or been read throughout', () => {
    expect(escalatedAt(hours, () => true)).toEqual([72, 120, 168]);
    expect(escalatedAt(hours, () => false)).toEqual([72, 120, 168]);
    // Unreadable across its expiry (hours 48 to 150), read again from hour 156: not held back to 180.
    expect(escalatedAt(hours, (h) => h < 48 || h > 150)).toEqual([72, 120, 168]);
  });

  it('escalates once per rung when its record is read again after an escalation said while unreadable', () => {
    // Escalated on the 1-day rung at hour 120 unreadable, read from 144: as expired, once, at 168.
    expect(escalatedAt(hours, (h) => h < 48 || h > 120)).toEqual([72, 120, 168]);
    // Escalated as expired at hour 168 unreadable, read from 174: not again.
    expect(escalatedAt(hours, (h) => h < 48 || h > 168)).toEqual([72, 120, 168]);
  });
});
