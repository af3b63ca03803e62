import { describe, expect, it } from 'vitest';
import { chatNotificationOf } from '../../functions/core/alerts/chat';
import { buildAlertMessage, reportJsonOf } from '../../functions/core/alerts/message';
import type { DomainFinding } from '../../functions/core/findings/classify';
import type { StatePolicy } from '../../functions/core/memory/state';
import type { Problem } from '../../functions/core/reseller/paging';
import type { Domain } from '../../functions/core/reseller/schemas';
import { registrantConflictProblem } from '../../functions/core/scan/scan-problems';
import { HOUR, T0, withAction } from '../support/account-model';
import { groupScanner } from '../support/group-scan';
import { DAY, domain, heldInQuarantine, undocumentedProblems } from '../support/state-scan';
import { EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * A domain memory last knew as critical (expired: days from being lost) whose record can no longer
 * be read is a critical item in every channel of the account's message and its group's, said by
 * what memory last knew: a broken record must not drop it to a warning, out of the SMS.
 */

const FILE = {
  policies: [{ name: 'watch', match: { tags: ['watch'] }, alertEmails: ['watch@example.nl'] }],
};
const { scan } = groupScanner(FILE);

const broken = (name: string): Problem => ({
  resource: 'domain',
  key: name,
  page: 1,
  reason: 'date_expiry: Invalid input',
});

/** Each channel of the message planned for `group` (the account's when undefined). */
function channels(plan: ReturnType<typeof scan>['plan'], group?: string) {
  const planned = plan.find((p) => p.group === group);
  if (!planned) throw new Error(`no message for ${group ?? 'the account'}`);
  const alert = buildAlertMessage(planned.report);
  const { sms, email } = JSON.parse(alert.message) as { sms: string; email: string };
  const chat = chatNotificationOf(alert);
  return { alert, sms, email, chat: JSON.stringify(chat), json: JSON.parse(reportJsonOf(alert)) };
}

describe('an expired domain whose record can no longer be read', () => {
  const expired = (tags: string[] = []): Domain =>
    domain('gone.nl', T0, { auto_renew: false, date_expiry: T0 - 2 * DAY, tags });

  it('is critical in the SMS, the subject, the digest, chat and the JSON, said as what memory last knew', () => {
    const first = scan([expired(), domain('ok.nl', T0)], T0, EMPTY_STATE);
    const broke = scan([domain('ok.nl', T0)], T0 + HOUR, first.next, { problems: [broken('gone.nl')] });
    const { alert, sms, email, chat, json } = channels(broke.plan);
    expect(alert.attributes.severity).toBe('critical');
    expect(alert.attributes.critical_count).toBe(1);
    expect(sms).toContain('1 critical: gone.nl expired?');
    expect(alert.subject).toContain('1 critical');
    expect(email).toContain(
      '- gone.nl: was expired at the last scan; its record could not be read now, so it was not checked',
    );
    expect(chat).toContain('was expired at the last scan');
    expect(json.problems).toEqual([
      expect.objectContaining({ key: 'gone.nl', severity: 'critical', remembered_kind: 'expired' }),
    ]);
  });

  it('is critical in the message of its policy group too', () => {
    const first = scan([expired(['watch'])], T0, EMPTY_STATE);
    const broke = scan([], T0 + HOUR, first.next, { problems: [broken('gone.nl')] });
    expect(broke.sent).toEqual(['account', 'watch']);
    const { alert, sms } = channels(broke.plan, 'watch');
    expect(alert.attributes.severity).toBe('critical');
    expect(sms).toContain('gone.nl expired?');
  });

  it('is one critical item when a record of its domain says quarantine already: its second record is left as it is', () => {
    const first = scan([expired()], T0, EMPTY_STATE);
    const says = { ...broken('gone.nl'), severity: 'critical' as const };
    for (const twins of [
      [says, broken('GONE.nl.')],
      [broken('GONE.nl.'), says],
    ]) {
      const broke = scan([], T0 + HOUR, first.next, { problems: twins });
      const { alert, json } = channels(broke.plan);
      expect(alert.attributes.critical_count).toBe(1);
      const marked = (json.problems as Problem[]).filter((p) => p.remembered_kind !== undefined);
      expect(marked).toEqual([]);
    }
  });

  it('stays a warning while a snooze memory holds for it', () => {
    const first = scan([expired()], T0, EMPTY_STATE);
    const state = {
      ...first.next,
      domains: Object.fromEntries(
        Object.entries(first.next.domains).map(([k, v]) => [
          k,
          {
            ...v,
            actions: {
              snooze: {
                until: new Date(T0 + 5 * DAY).toISOString(),
                at: new Date(T0).toISOString(),
                kind: 'expired' as const,
                severity: 'critical' as const,
              },
            },
          },
        ]),
      ),
    };
    const broke = scan([], T0 + HOUR, state, { problems: [broken('gone.nl')] });
    const { alert } = channels(broke.plan);
    expect(alert.attributes.severity).toBe('warning');
  });
});

describe('an expired domain whose record broke, under "cap": 0', () => {
  // docs/policies.md: its record no longer says whether it is still expired, so no cap lets it fall silent.
  const { scan: capped } = groupScanner({ policies: [], repeat: { cap: 0 } });
  const expired = domain('gone.nl', T0, { auto_renew: false, date_expiry: T0 - 2 * DAY });

  it('is repeated on the critical cadence all the same, as a kept quarantine is', () => {
    const first = capped([expired, domain('ok.nl', T0)], T0, EMPTY_STATE);
    const broke = capped([domain('ok.nl', T0)], T0 + HOUR, first.next, { problems: [broken('gone.nl')] });
    expect(broke.result.publish).toBe(true);
    const soon = capped([domain('ok.nl', T0)], T0 + 2 * HOUR, broke.next, { problems: [broken('gone.nl')] });
    expect(soon.result.publish).toBe(false);
    const due = capped([domain('ok.nl', T0)], T0 + 22 * HOUR, soon.next, { problems: [broken('gone.nl')] });
    expect(due.result.why).toEqual(['1 unreadable record of a critical finding repeated after 20 h']);
  });
});

describe('an expired domain read again with its registrant handle given twice', () => {
  // Never repeated (`cap: 0`), so the critical cadence has nothing of its own to say of it.
  const { scan: quiet } = groupScanner({ policies: [], repeat: { cap: 0 } });
  const read = (): Domain =>
    domain('gone.nl', T0, {
      auto_renew: false,
      date_expiry: T0 - 2 * DAY,
      registrant_conflict: ['C1', 'C2'],
    });
  const conflict = (d: Domain) => registrantConflictProblem(d, 1) as Problem;

  it('is no unreadable record of a critical finding: its record was read, and nothing is published for it', () => {
    const first = quiet([read()], T0, EMPTY_STATE, { problems: [conflict(read())] });
    expect(first.result.publish).toBe(true);
    // The critical cadence is due (21 h): only a record memory must stand for would be repeated.
    const again = quiet([read()], T0 + 21 * HOUR, first.next, { problems: [conflict(read())] });
    expect(again.result.report.problems).toEqual([
      expect.not.objectContaining({ remembered_kind: expect.anything() }),
    ]);
    expect(again.result.why.join('; ')).not.toMatch(/unreadable records? of (a )?critical findings?/);
    expect(again.result.publish).toBe(false);
  });

  it('renewed since, is said resolved, with no unreadable record of a critical finding in the log', () => {
    const first = quiet([read()], T0, EMPTY_STATE, { problems: [conflict(read())] });
    const renewed = domain('gone.nl', T0, { registrant_conflict: ['C1', 'C2'] });
    const again = quiet([renewed], T0 + 21 * HOUR, first.next, { problems: [conflict(renewed)] });
    expect(again.result.why).toEqual(['1 resolved']);
  });
});

describe('a group’s expired domain read again with its registrant handle given twice', () => {
  it('sends the group nothing for that record: it was read, and its finding is ongoing', () => {
    const read = domain('gone.nl', T0, {
      auto_renew: false,
      date_expiry: T0 - 2 * DAY,
      tags: ['watch'],
      registrant_conflict: ['C1', 'C2'],
    });
    const first = scan([{ ...read, registrant_conflict: undefined }], T0, EMPTY_STATE);
    expect(first.sent).toEqual(['account', 'watch']);
    // The record is new: the account's message says it; the group's domain was read and judged.
    const again = scan([read], T0 + HOUR, first.next, {
      problems: [registrantConflictProblem(read, 1) as Problem],
    });
    expect(again.sent).toEqual(['account']);
    expect(again.result.report.problems).toEqual([expect.not.objectContaining({ news: true })]);
  });
});

describe("a group's expired domain whose record broke, its group with a critical cadence of its own", () => {
  // vip repeats its critical findings every 6 h; the account every 24 h.
  const { scan: scanVip } = groupScanner({
    repeat: { critical: 24 },
    policies: [
      { name: 'vip', match: { tags: ['vip'] }, alertEmails: ['vip@example.nl'], repeat: { critical: 6 } },
    ],
  });
  const expired = domain('gone.nl', T0, { auto_renew: false, date_expiry: T0 - 2 * DAY, tags: ['vip'] });
  const run = (hours: number, state: ScanState, escalation?: StatePolicy['escalation']) =>
    scanVip([], T0 + hours * HOUR, state, {
      problems: [broken('gone.nl')],
      ...(escalation ? { escalation } : {}),
    });

  it("is repeated on its group's cadence by its own last alert, as its expired finding was, not the account's", () => {
    const first = scanVip([expired], T0, EMPTY_STATE);
    expect(first.sent).toEqual(['account', 'vip']);
    const broke = run(1, first.next);
    expect(broke.sent).toEqual(['account', 'vip']);
    expect(run(6, broke.next).result.publish).toBe(false);
    const due = run(8, broke.next);
    expect(due.result.why).toEqual([
      "1 unreadable record of a critical finding repeated on its group's cadence",
    ]);
    expect(due.sent).toEqual(['account', 'vip']);
    expect(due.plan.find((p) => p.group === 'vip')?.report.problems).toEqual([
      expect.objectContaining({
        key: 'gone.nl',
        severity: 'critical',
        policy: 'vip',
        remembered_kind: 'expired',
      }),
    ]);
    // Heard now: its hours start again.
    expect(run(9, due.next).result.publish).toBe(false);
  });

  it('escalates once, afterHours past its first critical alert, its expiry within withinDays', () => {
    const escalation = { afterHours: 24, withinDays: 7 };
    let state = run(1, scanVip([expired], T0, EMPTY_STATE, { escalation }).next, escalation).next;
    const runs = [20, 25, 30, 49].map((h) => {
      const r = run(h, state, escalation);
      state = r.next;
      return r;
    });
    const escalated = runs.map((r) => r.result.why.includes('1 critical not acted on, escalated'));
    expect(escalated).toEqual([false, true, false, false]);
    expect(runs[1]?.result.report.problems).toEqual([
      expect.objectContaining({ key: 'gone.nl', escalated_after_hours: 25, news: true }),
    ]);
    expect(runs[1]?.sent).toEqual(['account', 'vip']);
    const { alert, email } = channels((runs[1] as (typeof runs)[number]).plan);
    expect(alert.attributes.escalation).toBe('true');
    expect(email).toContain('  escalated: not acted on for 25 hours');
  });
});

describe('an acknowledged quarantine whose record can no longer be read', () => {
  // Restore by T0 + 15 days: its last 7 days to restore begin at T0 + 8 days.
  const { scan: plain } = groupScanner({ policies: [] });

  it('is critical and heard daily in its last days to restore, as its quarantine finding would be', () => {
    const first = plain([heldInQuarantine(T0, 25)], T0, EMPTY_STATE);
    const shown = first.result.report.findings[0] as DomainFinding;
    let state = withAction(first.next, 'held.nl', 'ack', shown, 0, T0, T0);
    if (!state) throw new Error('held.nl could not be acknowledged');
    const heard: boolean[] = [];
    for (let day = 1; day <= 12; day++) {
      const r = plain([], T0 + day * DAY, state, { problems: [broken('held.nl')] });
      if (day >= 9) heard.push(r.result.publish && r.result.report.problems[0]?.severity === 'critical');
      state = r.next;
    }
    expect(heard).toEqual([true, true, true, true]);
  });

  it('escalates once in its last days, afterHours after its acknowledgement lapsed, as its finding would', () => {
    const escalation = { afterHours: 24, withinDays: 7 };
    const first = plain([heldInQuarantine(T0, 25)], T0, EMPTY_STATE, { escalation });
    const shown = first.result.report.findings[0] as DomainFinding;
    let state = withAction(first.next, 'held.nl', 'ack', shown, 0, T0, T0);
    if (!state) throw new Error('held.nl could not be acknowledged');
    const escalated: number[] = [];
    for (let day = 1; day <= 12; day++) {
      const r = plain([], T0 + day * DAY, state, { problems: [broken('held.nl')], escalation });
      if (r.result.why.includes('1 critical not acted on, escalated')) escalated.push(day);
      state = r.next;
    }
    // Its last days begin at day 8, the acknowledgement lapsing then: 24 hours on, day 9.
    expect(escalated).toEqual([9]);
  });
});

describe('an expiring domain whose record can no longer be read', () => {
  // 6 days left at T0: on the 7-day rung, the 3-day rung from day 3, the 1-day rung from day 5, expired from day 6.
  const escalation = { afterHours: 24, withinDays: 7 };
  const soon = (tags: string[] = []) =>
    domain('soon.nl', T0, { auto_renew: false, date_expiry: T0 + 6 * DAY, tags });

  /** The days from 2 to 9 a scan escalated soon.nl on, read at T0 and T0 + 25 h, then read (`readable`) or not. */
  function escalatedDays(scanner: typeof scan, read: Domain, readable: boolean): number[] {
    let state = scanner([read], T0, EMPTY_STATE, { escalation }).next;
    state = scanner([read], T0 + 25 * HOUR, state, { escalation }).next;
    const days: number[] = [];
    for (let day = 2; day <= 9; day++) {
      const now = T0 + day * DAY;
      const r = readable
        ? scanner([read], now, state, { escalation })
        : scanner([], now, state, { problems: [broken('soon.nl')], escalation });
      if (r.result.why.includes('1 critical not acted on, escalated')) days.push(day);
      state = r.next;
    }
    return days;
  }

  it('escalates on each lower rung and once expired, on the same days as its readable record would', () => {
    const { scan: plain } = groupScanner({ policies: [] });
    expect(escalatedDays(plain, soon(), true)).toEqual([3, 5, 7]);
    expect(escalatedDays(plain, soon(), false)).toEqual([3, 5, 7]);
  });

  it("steps down its group's alertThresholds, not the deployment's", () => {
    const { scan: slow } = groupScanner({
      policies: [{ name: 'slow', match: { tags: ['slow'] }, alertThresholds: [2] }],
    });
    expect(escalatedDays(slow, soon(['slow']), true)).toEqual([4, 7]);
    expect(escalatedDays(slow, soon(['slow']), false)).toEqual([4, 7]);
  });
});

describe('a silenced expiring domain whose record can no longer be read', () => {
  // Expires at T0 + 3 days (critical: no auto-renew), silenced at T0 for 10 days; unreadable from day 1.
  const { scan: plain } = groupScanner({ policies: [] });
  const soon = domain('soon.nl', T0, { auto_renew: false, date_expiry: T0 + 3 * DAY });

  /** The days from 1 to 6 soon.nl was published critical on, silenced by `action`, then read (`readable`) or not. */
  function criticalDays(action: 'snooze' | 'ack', readable: boolean): number[] {
    const first = plain([soon], T0, EMPTY_STATE);
    const shown = first.result.report.findings[0] as DomainFinding;
    const silenced = withAction(first.next, 'soon.nl', action, shown, 10, T0, T0);
    if (!silenced) throw new Error(`soon.nl could not be silenced (${action})`);
    let state: ScanState = silenced;
    const days: number[] = [];
    for (let day = 1; day <= 6; day++) {
      const now = T0 + day * DAY + HOUR;
      const r = readable
        ? plain([soon], now, state)
        : plain([], now, state, { problems: [broken('soon.nl')] });
      if (r.result.publish && channels(r.plan).alert.attributes.severity === 'critical') days.push(day);
      state = r.next;
    }
    return days;
  }

  it('snoozed past its expiry, is critical from the first scan past it, as its readable record is', () => {
    expect(criticalDays('snooze', true)).toEqual([3, 4, 5, 6]);
    expect(criticalDays('snooze', false)).toEqual([3, 4, 5, 6]);
  });

  it('snoozed, whose record reads a status the API does not document and a later expiry, is critical from the first scan past its remembered expiry', () => {
    // Memory keeps the critical finding (unjudgedKeys: a later expiry may be a transfer out), and
    // turns it expired at its remembered expiry (judgedAs): worse than what was snoozed.
    const moved: Domain = { ...soon, status: ['pendingTransfer'], date_expiry: T0 + 400 * DAY };
    const first = plain([soon], T0, EMPTY_STATE);
    const shown = first.result.report.findings[0] as DomainFinding;
    let state = withAction(first.next, 'soon.nl', 'snooze', shown, 10, T0, T0) as ScanState;
    const days: number[] = [];
    for (let day = 1; day <= 6; day++) {
      const r = plain([moved], T0 + day * DAY + HOUR, state, { problems: undocumentedProblems([moved]) });
      if (r.result.publish && channels(r.plan).alert.attributes.severity === 'critical') days.push(day);
      state = r.next;
    }
    expect(days).toEqual([3, 4, 5, 6]);
  });

  it('acknowledged, is critical from the first scan past its expiry, as its readable record is', () => {
    expect(criticalDays('ack', true)).toEqual([3, 4, 5, 6]);
    expect(criticalDays('ack', false)).toEqual([3, 4, 5, 6]);
  });
});

describe('an expiring domain whose record can no longer be read, once its remembered expiry passes', () => {
  // Expires at T0 + 12 h (critical: no auto-renew); unreadable from T0 + 1 h, when that is said.
  // The critical cadence (20 h) is not due again before T0 + 21 h: the passing must not wait for it.
  const EXPIRY = T0 + 12 * HOUR;
  const soon = (tags: string[] = []) =>
    domain('soon.nl', T0, { auto_renew: false, date_expiry: EXPIRY, tags });
  const unread = (hours: number, state: ScanState) =>
    scan([], T0 + hours * HOUR, state, { problems: [broken('soon.nl')] });
  const brokenAt1h = (tags?: string[]) => unread(1, scan([soon(tags)], T0, EMPTY_STATE).next);

  it('is said expiring until then', () => {
    const { sms, email, json } = channels(brokenAt1h().plan);
    expect(sms).toContain('soon.nl expiring?');
    expect(email).toContain('- soon.nl: was expiring at the last scan;');
    expect(json.problems).toEqual([expect.objectContaining({ remembered_kind: 'expiring' })]);
  });

  it('is said expired, by the expiry memory read, in the SMS, the digest, chat and the JSON', () => {
    const past = unread(13, brokenAt1h().next);
    const { alert, sms, email, chat, json } = channels(past.plan);
    expect(alert.attributes.severity).toBe('critical');
    expect(sms).toContain('1 critical: soon.nl expired?');
    expect(email).toContain(
      '- soon.nl: probably expired: its expiry date memory last read, 22 Nov 2026, has passed; its record could not be read now, so it was not checked',
    );
    expect(email).not.toContain('was expiring');
    expect(chat).toContain('probably expired: its expiry date memory last read, 22 Nov 2026, has passed');
    expect(chat).not.toContain('was expiring');
    expect(json.problems).toEqual([
      expect.objectContaining({
        key: 'soon.nl',
        severity: 'critical',
        remembered_kind: 'expired',
        remembered_expiry: new Date(EXPIRY).toISOString(),
      }),
    ]);
  });

  it('is news in the first scan past its expiry, as its readable record turning expired is, and only then', () => {
    const read = scan(
      [soon()],
      T0 + 13 * HOUR,
      scan([soon()], T0 + HOUR, scan([soon()], T0, EMPTY_STATE).next).next,
    );
    expect(read.result.publish).toBe(true);
    const past = unread(13, brokenAt1h().next);
    expect(past.result.why).toEqual(['1 unreadable record past its remembered expiry']);
    expect(past.result.report.problems).toEqual([expect.objectContaining({ key: 'soon.nl', news: true })]);
    expect(unread(14, past.next).result.publish).toBe(false);
    // Its critical cadence counts from the message that said it expired.
    expect(unread(32, past.next).result.publish).toBe(false);
    expect(unread(34, past.next).result.why).toEqual([
      '1 unreadable record of a critical finding repeated after 20 h',
    ]);
  });

  it("is news to its group's own recipients in that scan too", () => {
    const past = unread(13, brokenAt1h(['watch']).next);
    expect(past.sent).toEqual(['account', 'watch']);
    expect(channels(past.plan, 'watch').sms).toContain('soon.nl expired?');
  });
});

describe('an expiring domain whose record can no longer be read, on a lower rung by its remembered expiry', () => {
  // Two days and 3 hours left at T0 (the 3-day rung), one day and 20 hours at T0 + 7 h (the 1-day
  // rung); unreadable from T0 + 1 h. The critical cadence (20 h) is not due again before T0 + 21 h.
  const soon = domain('soon.nl', T0, { auto_renew: false, date_expiry: T0 + 2 * DAY + 3 * HOUR });
  const first = () => scan([soon], T0, EMPTY_STATE);

  it('is news in the first scan on that rung, as its readable record is escalated, and only then', () => {
    const read = scan([soon], T0 + 7 * HOUR, scan([soon], T0 + HOUR, first().next).next);
    expect(read.result.why).toEqual(['1 escalated']);
    const broke = scan([], T0 + HOUR, first().next, { problems: [broken('soon.nl')] });
    const lower = scan([], T0 + 7 * HOUR, broke.next, { problems: [broken('soon.nl')] });
    expect(lower.result.why).toEqual(['1 unreadable record on a lower rung by its remembered expiry']);
    expect(lower.result.report.problems).toEqual([expect.objectContaining({ key: 'soon.nl', news: true })]);
    expect(channels(lower.plan).sms).toContain('soon.nl expiring?');
    const again = scan([], T0 + 8 * HOUR, lower.next, { problems: [broken('soon.nl')] });
    expect(again.result.publish).toBe(false);
  });
});
