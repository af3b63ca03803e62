import { describe, expect, it } from 'vitest';
import { describeDomainFinding } from '../../functions/core/alerts/alert';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { nextStep, utcDay } from '../../functions/core/findings/next-step';
import { keptFindingOf } from '../../functions/core/memory/kept-quarantine';
import type { Problem } from '../../functions/core/reseller/paging';
import type { Domain } from '../../functions/core/reseller/schemas';
import { HOUR, T0, withAction } from '../support/account-model';
import { groupScanner } from '../support/group-scan';
import { DAY, domain, undocumentedProblems } from '../support/state-scan';
import { EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * Escalation (escalation.ts, docs/policies.md#escalation) of a critical domain whose record could
 * not be read or judged for a while: memory keeps its finding, which escalates as its readable
 * record's would, and reading its record again neither holds an escalation back nor says it twice.
 */

const escalation = { afterHours: 24, withinDays: 7 };
const { scan } = groupScanner({ policies: [] });
const broken: Problem = { resource: 'domain', key: 'soon.nl', page: 1, reason: 'date_expiry: Invalid input' };
/** No auto-renew, expiring 6 days after T0: critical, on the 7-day rung, 3-day from hour 72, 1-day from 120, expired from 144. */
const soon = domain('soon.nl', T0, { auto_renew: false, date_expiry: T0 + 6 * DAY });
/** The scans after T0 + 25 h, in hours after T0. */
const HOURS = [48, 72, 96, 120, 144, 150, 156, 162, 168, 174, 180, 192];
/** What the escalations of soon.nl's readable record are at HOURS: each lower rung at once, expired 24 h after its expiry. */
const READABLE = [72, 120, 168];

/** The hours of HOURS soon.nl escalated at: read at T0 and T0 + 25 h (escalated on the 7-day rung), then as `record(hour)` says. */
function escalatedAt(record: (hour: number) => Domain | null): number[] {
  let state = scan([soon], T0, EMPTY_STATE, { escalation }).next;
  state = scan([soon], T0 + 25 * HOUR, state, { escalation }).next;
  const escalated: number[] = [];
  for (const h of HOURS) {
    const read = record(h);
    const problems = read ? undocumentedProblems([read]) : [broken];
    const r = scan(read ? [read] : [], T0 + h * HOUR, state, { problems, escalation });
    if (r.result.why.includes('1 critical not acted on, escalated')) escalated.push(h);
    state = r.next;
  }
  return escalated;
}

describe('an expiring domain whose record broke before its expiry and is read again after it', () => {
  it('escalates as expired afterHours after its expiry, as if it had stayed unreadable or been read throughout', () => {
    expect(escalatedAt(() => soon)).toEqual(READABLE);
    expect(escalatedAt(() => null)).toEqual(READABLE);
    // Unreadable across its expiry (hours 48 to 150), read again from hour 156: not held back to 180.
    expect(escalatedAt((h) => (h < 48 || h > 150 ? soon : null))).toEqual(READABLE);
  });

  it('escalates once per rung when its record is read again after an escalation said while unreadable', () => {
    // Escalated on the 1-day rung at hour 120 unreadable, read from 144: as expired, once, at 168.
    expect(escalatedAt((h) => (h < 48 || h > 120 ? soon : null))).toEqual(READABLE);
    // Escalated as expired at hour 168 unreadable, read from 174: not again.
    expect(escalatedAt((h) => (h < 48 || h > 168 ? soon : null))).toEqual(READABLE);
  });
});

describe('an expiring domain whose record reads a status the API does not document, with a lesser finding', () => {
  // Memory keeps the critical finding it would otherwise resolve (unjudged-memory.ts unjudgedKeys).
  // Auto-renew read on: an info finding until it expires (classify), the status undocumented.
  const odd: Domain = { ...soon, status: ['pendingRenew'], auto_renew: true };

  it('escalates on each lower rung and once expired, as its readable record would', () => {
    expect(escalatedAt(() => odd)).toEqual(READABLE);
  });

  it('escalates once expired when its record reads a later expiry, as its record unreadable would', () => {
    // A year on, auto-renew off: an info finding memory does not take for a renewal (unjudgedKeys).
    const moved: Domain = { ...odd, auto_renew: false, date_expiry: T0 + 400 * DAY };
    expect(escalatedAt(() => moved)).toEqual(READABLE);
  });

  it('escalates as the critical finding memory judges, in the SMS the escalation recipients get', () => {
    let state = scan([soon], T0, EMPTY_STATE, { escalation }).next;
    state = scan([soon], T0 + 25 * HOUR, state, { escalation }).next;
    const problems = undocumentedProblems([odd]);
    state = scan([odd], T0 + 48 * HOUR, state, { problems, escalation }).next;
    const r = scan([odd], T0 + 72 * HOUR, state, { problems, escalation });
    const planned = r.plan.find((p) => p.group === undefined);
    if (!planned) throw new Error('no message for the account');
    const alert = buildAlertMessage(planned.report);
    expect(alert.attributes).toEqual(
      expect.objectContaining({ escalation: 'true', severity: 'critical', critical_count: 1 }),
    );
    expect(JSON.parse(alert.message).sms).toContain('soon.nl');
    expect(r.result.report.findings[0]).toEqual(
      expect.objectContaining({
        severity: 'critical',
        escalated_after_hours: 72,
        remembered: expect.objectContaining({ kind: 'expiring', severity: 'critical' }),
      }),
    );
  });

  it('is news at once on each lower rung and once past its remembered expiry, as its readable record is', () => {
    // No escalation: what is said of it is its change, not the afterHours of its first alert.
    const moved: Domain = { ...odd, auto_renew: false, date_expiry: T0 + 400 * DAY };
    /** The hours, every 4 up to hour 168, a message said soon.nl escalated, read as `read` is. */
    const escalatedEvery4h = (read: Domain) => {
      let state = scan([soon], T0, EMPTY_STATE).next;
      const hours: number[] = [];
      for (let h = 4; h <= 168; h += 4) {
        const r = scan([read], T0 + h * HOUR, state, { problems: undocumentedProblems([read]) });
        if (r.result.why.includes('1 escalated')) hours.push(h);
        state = r.next;
      }
      return hours;
    };
    // Days left counted down (floored): the 3-day rung from hour 52, the 1-day rung from 100, expired at 144.
    expect(escalatedEvery4h(soon)).toEqual([52, 100, 144]);
    expect(escalatedEvery4h(odd)).toEqual([52, 100, 144]);
    expect(escalatedEvery4h(moved)).toEqual([52, 100, 144]);
  });

  it('snoozed, is not marked escalated scan after scan on a lower rung, and is said so once the snooze ends', () => {
    const first = scan([soon], T0, EMPTY_STATE);
    const shown = first.result.report.findings[0] as DomainFinding;
    let state = withAction(first.next, 'soon.nl', 'snooze', shown, 3, T0, T0) as ScanState;
    const changes: string[] = [];
    // The 3-day rung from hour 52; the snooze ends at hour 72.
    for (const h of [52, 56, 60, 76, 80]) {
      const r = scan([odd], T0 + h * HOUR, state, { problems: undocumentedProblems([odd]) });
      changes.push((r.result.report.findings[0] as { change: string }).change);
      state = r.next;
    }
    expect(changes).toEqual(['ongoing', 'ongoing', 'ongoing', 'escalated', 'ongoing']);
  });

  it('is repeated once per rung under a repeat cap, as its readable record is, not silenced by the cap nor repeated past it', () => {
    const { scan: capped } = groupScanner({ policies: [], repeat: { cap: 1 } });
    /** The hours, every 20 up to its expiry at hour 144, a message went out, soon.nl read as `record(hour)` says. */
    const published = (record: (hour: number) => Domain) => {
      let state = capped([soon], T0, EMPTY_STATE).next;
      const hours: number[] = [];
      for (let h = 20; h < 144; h += 20) {
        const read = record(h);
        const r = capped([read], T0 + h * HOUR, state, { problems: undocumentedProblems([read]) });
        if (r.result.publish) hours.push(h);
        state = r.next;
      }
      return hours;
    };
    // First said at T0, repeated once (hour 20); said on the 3-day (60) and 1-day (100) rungs, repeated once on each.
    expect(published(() => soon)).toEqual([20, 60, 80, 100, 120]);
    expect(published(() => odd)).toEqual([20, 60, 80, 100, 120]);
  });
});

describe('a warning domain whose record reads a status the API does not document, with a lesser finding', () => {
  // 20 days left, no auto-renew: a warning (critical within 7 days). Its record then reads pendingRenew
  // and an expiry a year on, an info finding memory does not take for a renewal: it keeps the warning.
  const far = domain('far.nl', T0, { auto_renew: false, date_expiry: T0 + 20 * DAY });
  const odd: Domain = { ...far, status: ['pendingRenew'], date_expiry: T0 + 400 * DAY };

  it('is published critical once its remembered expiry has passed, as its readable record is', () => {
    let state = scan([far], T0, EMPTY_STATE).next;
    state = scan([odd], T0 + DAY, state, { problems: undocumentedProblems([odd]) }).next;
    const after = T0 + 20 * DAY + HOUR;
    const readable = scan([far], after, state).result.report.findings[0];
    expect(readable).toEqual(expect.objectContaining({ kind: 'expired', severity: 'critical' }));
    const r = scan([odd], after, state, { problems: undocumentedProblems([odd]) });
    expect(r.result.publish).toBe(true);
    expect(r.result.report.findings[0]).toEqual(
      expect.objectContaining({
        domain_name: 'far.nl',
        severity: 'critical',
        remembered: expect.objectContaining({ kind: 'expired', severity: 'critical' }),
      }),
    );
  });
});

describe('a remembered warning whose record gives no finding (keptFindingOf)', () => {
  it('stands as expired and critical once its remembered expiry has passed', () => {
    const was = {
      kind: 'expiring',
      severity: 'warning',
      stage: 0,
      date_expiry: new Date(T0).toISOString(),
    } as const;
    expect(keptFindingOf('far.nl', was, T0 - HOUR)).toEqual(
      expect.objectContaining({ kind: 'expiring', severity: 'warning' }),
    );
    expect(keptFindingOf('far.nl', was, T0 + HOUR)).toEqual(
      expect.objectContaining({ kind: 'expired', severity: 'critical' }),
    );
  });
});

describe('the words of a critical domain memory keeps while its record reads a later expiry', () => {
  // soon.nl expires at T0 + 6 days; its record then reads pendingRenew, no auto-renew, a year on.
  const moved: Domain = { ...soon, status: ['pendingRenew'], date_expiry: T0 + 400 * DAY };

  it('say it probably expired on its remembered expiry, not that it was read expired, nor a future day', () => {
    let state = scan([soon], T0, EMPTY_STATE).next;
    state = scan([moved], T0 + DAY, state, { problems: undocumentedProblems([moved]) }).next;
    const now = T0 + 7 * DAY;
    const f = scan([moved], now, state, { problems: undocumentedProblems([moved]) }).result.report
      .findings[0];
    if (!f || !('domain_name' in f)) throw new Error('no finding for soon.nl');
    const words = describeDomainFinding(f, new Date(now).toISOString(), utcDay);
    const step = nextStep(f, utcDay);
    const remembered = utcDay(new Date(T0 + 6 * DAY).toISOString());
    const read = utcDay(new Date(T0 + 400 * DAY).toISOString());
    expect(words).toContain(`probably expired: its expiry date memory last read, ${remembered}, has passed`);
    expect(words).not.toContain('last read expired');
    expect(step).toContain(`its expiry date memory last read, ${remembered}, has passed`);
    expect(step).not.toContain(`expired ${read}`);
    expect(step).not.toContain('last read expired');
  });
});
