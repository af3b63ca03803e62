import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { snoozeOf } from '../../functions/core/memory/actions';
import { readStateHead } from '../../functions/core/memory/state-header';
import type { Domain } from '../../functions/core/reseller/schemas';
import {
  registrantConflictProblem,
  undocumentedStatusProblem,
} from '../../functions/core/scan/scan-problems';
import { DAY, domain, scanOf, scanWithState } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE, type ScanState } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;

const run = scanWithState;
const findingOf = (r: ReturnType<typeof run>, name: string) =>
  r.report.findings.find((f) => 'domain_name' in f && f.domain_name === name) as
    | (DomainFinding & { change: string; repeated?: boolean; escalated_after_hours?: number })
    | undefined;

describe('memory over sequences of scans', () => {
  it('announces a rung crossed while snoozed once the snooze ends', () => {
    const warning = domain('warning.nl', T0, { auto_renew: false, date_expiry: T0 + 15 * DAY + HOUR });
    const first = run([warning], T0, EMPTY_STATE);
    const w = findingOf(first, 'warning.nl') as DomainFinding;
    const memory = first.next.domains['warning.nl'];
    if (!memory) throw new Error('no memory');
    const state = {
      ...first.next,
      domains: {
        ...first.next.domains,
        'warning.nl': { ...memory, actions: { snooze: snoozeOf(w, 3, T0 + HOUR) } },
      },
    };
    // Two days on, 13 days left: the 14 rung, while snoozed: silent.
    const during = run([warning], T0 + 2 * DAY, state);
    expect(during.publish).toBe(false);
    // Four days on the snooze is over: the 14-day rung was never announced.
    const after = run([warning], T0 + 4 * DAY, during.next);
    expect(after.publish).toBe(true);
    expect(findingOf(after, 'warning.nl')?.change).toBe('escalated');
  });

  it('announces a transfer lock turned off in a scan that could not read one record, or keeps it for the next', () => {
    const a = domain('a.nl', T0);
    const b = domain('b.nl', T0);
    const first = run([a, b], T0, EMPTY_STATE);
    const unlocked = { ...a, transfer_lock: false, auth_code_present: true };
    const lost = { resource: 'domain' as const, key: null, page: 2, reason: 'page 2 could not be read' };
    const cut = run([unlocked], T0 + DAY, first.next, { problems: [lost] });
    // b.nl is not announced as gone (the read was not whole) ...
    expect(cut.report.changes.filter((c) => c.kind === 'left_account')).toEqual([]);
    const whole = run([unlocked, b], T0 + 2 * DAY, cut.next);
    // ... but what the scan did read of a.nl is said, now or at the next whole read.
    const kinds = [...cut.report.changes, ...whole.report.changes].map((c) => `${c.domain_name} ${c.kind}`);
    expect(kinds).toEqual(['a.nl auth_code_issued', 'a.nl transfer_lock_off']);
  });

  it('says a quarantine restored without a later expiry was restored, not escalated, and a second quarantine escalates', () => {
    const gone = { status: ['quarantine'], date_expiry: T0 - 10 * DAY, auto_renew: false };
    const q = domain('q.nl', T0, { ...gone, date_deleted: T0 - 9 * DAY });
    const first = run([q], T0, EMPTY_STATE);
    const restored = run([{ ...q, status: ['registered'], date_deleted: null }], T0 + DAY, first.next);
    expect(restored.report.resolved).toMatchObject([
      { domain_name: 'q.nl', kind: 'quarantine', reason: 'restored', now: { kind: 'expired' } },
    ]);
    expect(findingOf(restored, 'q.nl')).toMatchObject({ kind: 'expired', change: 'new' });
    const again = run([{ ...q, date_deleted: T0 + 2 * DAY }], T0 + 2 * DAY, restored.next);
    expect(findingOf(again, 'q.nl')).toMatchObject({ kind: 'quarantine', change: 'escalated' });
  });

  it('publishes an unreadable record again when what it says changes: it now says quarantine, or another status', () => {
    const problem = (reason: string, critical = false) => ({
      resource: 'domain' as const,
      key: 'x.nl',
      page: 1,
      reason,
      ...(critical ? { severity: 'critical' as const } : {}),
    });
    const ok = [domain('a.nl', T0)];
    const bad = 'date_expiry: Invalid input';
    const first = run(ok, T0, EMPTY_STATE, { problems: [problem(bad)] });
    expect(first.publish).toBe(true);
    const same = run(ok, T0 + HOUR, first.next, { problems: [problem(bad)] });
    expect(same.publish).toBe(false);
    // Two hours on, the same record says quarantine: critical, and news now, not 20 hours on.
    const worse = run(ok, T0 + 2 * HOUR, same.next, { problems: [problem(bad, true)] });
    expect(worse.why).toEqual(['1 new unreadable record']);
    const status = (s: string) => `status "${s}" is not one the API documents (registered, quarantine)`;
    const a = run(ok, T0 + 3 * HOUR, worse.next, { problems: [problem(status('pendingTransfer'))] });
    const b = run(ok, T0 + 4 * HOUR, a.next, { problems: [problem(status('transferredOut'))] });
    expect(b.why).toEqual(['1 new unreadable record']);
    const again = run(ok, T0 + 5 * HOUR, b.next, { problems: [problem(status('transferredOut'))] });
    expect(again.publish).toBe(false);
  });

  it('says a new record that was read (its registrant given twice) is one to look at, not an unreadable one', () => {
    const twice = registrantConflictProblem(
      { ...domain('twice.nl', T0), registrant_conflict: ['H-1', 'H-2'] } as Domain,
      1,
    );
    if (!twice) throw new Error('the scan made no problem of that record');
    const broken = {
      resource: 'domain' as const,
      key: 'x.nl',
      page: 1,
      reason: 'date_expiry: Invalid input',
    };
    const first = run([domain('a.nl', T0)], T0, EMPTY_STATE, { problems: [twice, broken] });
    expect(first.why).toEqual(['1 new unreadable record', '1 new record to look at']);
  });
});

describe('memory after a clock that ran ahead', () => {
  const policy = { ...DEFAULT_STATE_POLICY, escalation: { afterHours: 24, withinDays: 7 } };
  const runWith = (d: Parameters<typeof scanOf>[0], now: number, state: ScanState) => {
    const { report, observed } = scanOf(d, now);
    return compareWithState({ report, observed, state, policy, scope: 'http://reseller.test' });
  };

  it('counts escalation from the end of a snooze made after a scan whose clock ran ahead', () => {
    const expiring = domain('soon.nl', T0, { auto_renew: false, date_expiry: T0 + 5 * DAY });
    // The clock ran two days ahead: the finding's first alert is saved two days in the future.
    const ahead = runWith([expiring], T0 + 2 * DAY, EMPTY_STATE);
    const f = findingOf(ahead, 'soon.nl') as DomainFinding;
    expect(f.severity).toBe('critical');
    const memory = ahead.next.domains['soon.nl'];
    if (!memory) throw new Error('no memory');
    // Back at the real time (--allow-clock-skew), someone snoozes it for a day.
    const state = {
      ...ahead.next,
      domains: { 'soon.nl': { ...memory, actions: { snooze: snoozeOf(f, 1, T0 + HOUR) } } },
    };
    const during = runWith([expiring], T0 + 2 * HOUR, state);
    expect(findingOf(during, 'soon.nl')?.escalated_after_hours).toBeUndefined();
    // An hour after the snooze ended the team has its 24 hours again.
    const after = runWith([expiring], T0 + DAY + 2 * HOUR, during.next);
    expect(findingOf(after, 'soon.nl')?.escalated_after_hours).toBeUndefined();
    const later = runWith([expiring], T0 + 2 * DAY + 2 * HOUR, after.next);
    expect(findingOf(later, 'soon.nl')?.escalated_after_hours).toBe(25);
  });

  it('brings the first alert and the first scan back to the clock once a scan at the real time publishes', () => {
    const expiring = domain('soon.nl', T0, { auto_renew: false, date_expiry: T0 + 5 * DAY });
    const ahead = runWith([expiring], T0 + 2 * DAY, EMPTY_STATE);
    const back = runWith([expiring], T0, ahead.next);
    expect(back.publish).toBe(true);
    const alerted = back.next.domains['soon.nl']?.alerted;
    expect(alerted?.at).toBe(new Date(T0).toISOString());
    expect(alerted?.first_at).toBe(new Date(T0).toISOString());
    expect(back.next.started_at).toBe(new Date(T0).toISOString());
  });
});

describe('memory of a record the scan could not judge', () => {
  const expiring = domain('odd.nl', T0, { auto_renew: false, date_expiry: T0 + 5 * DAY });
  const undocumented = (d: Domain) => {
    const problem = undocumentedStatusProblem(d, 1);
    if (!problem) throw new Error('documented status');
    return [problem];
  };

  it('resolves nothing of a domain whose status the API does not document, until a record it can judge does', () => {
    const first = run([expiring], T0, EMPTY_STATE);
    // Its status is one the API does not document and its expiry moved a year on: checked by dates only.
    const odd = { ...expiring, status: ['pendingTransfer'], date_expiry: T0 + 365 * DAY };
    const unjudged = run([odd], T0 + DAY, first.next, { problems: undocumented(odd) });
    expect(unjudged.report.resolved).toEqual([]);
    expect(unjudged.next.domains['odd.nl']?.finding).toMatchObject({
      kind: 'expiring',
      severity: 'critical',
    });
    // Moved forward but still flagged: kept, not resolved and new; on the 3-day rung by its
    // remembered expiry (7-day when last said), escalated as its readable record would be.
    const soon = { ...odd, date_expiry: T0 + 20 * DAY };
    const still = run([soon], T0 + 2 * DAY, first.next, { problems: undocumented(soon) });
    expect(still.report.resolved).toEqual([]);
    expect(findingOf(still, 'odd.nl')?.change).toBe('escalated');
    // The status is documented again: the record can be judged, and it is renewed.
    const judged = run([{ ...odd, status: ['registered'] }], T0 + 3 * DAY, unjudged.next);
    expect(judged.report.resolved).toMatchObject([
      { domain_name: 'odd.nl', kind: 'expiring', reason: 'renewed' },
    ]);
  });
});

describe('a snooze over a record the scan could not judge', () => {
  it('keeps the snooze of a finding kept because its record could not be judged', () => {
    const expiring = domain('odd.nl', T0, { auto_renew: false, date_expiry: T0 + 5 * DAY });
    const first = run([expiring], T0, EMPTY_STATE);
    const f = findingOf(first, 'odd.nl') as DomainFinding;
    const memory = first.next.domains['odd.nl'];
    if (!memory) throw new Error('no memory');
    const state = {
      ...first.next,
      domains: { 'odd.nl': { ...memory, actions: { snooze: snoozeOf(f, 3, T0 + HOUR) } } },
    };
    const odd = { ...expiring, status: ['pendingTransfer'], date_expiry: T0 + 365 * DAY };
    const problems = [undocumentedStatusProblem(odd, 1)].filter((p) => p !== null);
    const unjudged = run([odd], T0 + DAY, state, { problems });
    expect(unjudged.next.domains['odd.nl']?.actions?.snooze).toBeDefined();
    // The transfer did not happen: the same record, judged again, is still snoozed.
    const back = run([expiring], T0 + 2 * DAY, unjudged.next);
    expect(findingOf(back, 'odd.nl')).toMatchObject({ snoozed_until: snoozeOf(f, 3, T0 + HOUR).until });
  });
});

describe('memory of a read cut short', () => {
  /** A scan whose domain list moved while it was read, cut at `page`: one unnamed problem saying so. */
  const cutAt = (page: number, now: number, state: ScanState) => {
    const reason = `the domain list changed while it was read (page ${page} held fewer records than page 1 promised): the domains read were checked, but domains may be missing from what was read, so none is judged to have left the account`;
    const { report, observed } = scanOf([domain('a.nl', T0)], now, {
      problems: [{ resource: 'domain', key: null, page, reason }],
    });
    const cut = { ...report, source: { ...report.source, incomplete: reason } };
    return compareWithState({ report: cut, observed, state, policy: DEFAULT_STATE_POLICY });
  };

  it('says a read cut short once, not again each day it is cut at another page', () => {
    const first = cutAt(3, T0, EMPTY_STATE);
    expect(first.why).toContain('1 new unreadable record');
    const next = cutAt(5, T0 + DAY, first.next);
    expect(next.why).not.toContain('1 new unreadable record');
    const again = cutAt(2, T0 + 2 * DAY, next.next);
    expect(again.publish).toBe(false);
  });

  it('still says a record without a name that cannot be read on another page', () => {
    const bad = (page: number) => ({
      resource: 'domain' as const,
      key: null,
      page,
      reason: 'domain_name: Invalid input',
    });
    const first = run([domain('a.nl', T0)], T0, EMPTY_STATE, { problems: [bad(3)] });
    const next = run([domain('a.nl', T0)], T0 + DAY, first.next, { problems: [bad(3), bad(5)] });
    expect(next.why).toEqual(['1 new unreadable record']);
  });
});

describe('a domain that left the account and comes back', () => {
  it('says it returned, brings its snooze back, and forgets it after 90 days', () => {
    const expiring = domain('back.nl', T0, { auto_renew: false, date_expiry: T0 + 20 * DAY });
    const other = domain('a.nl', T0);
    const first = run([expiring, other], T0, EMPTY_STATE);
    const f = findingOf(first, 'back.nl') as DomainFinding;
    const memory = first.next.domains['back.nl'];
    if (!memory) throw new Error('no memory');
    const snooze = snoozeOf(f, 30, T0 + HOUR);
    const state = {
      ...first.next,
      domains: { ...first.next.domains, 'back.nl': { ...memory, actions: { snooze } } },
    };
    const gone = run([other], T0 + DAY, state);
    expect(gone.report.changes.map((c) => `${c.domain_name} ${c.kind}`)).toEqual(['back.nl left_account']);
    // The departure is kept as a store writes and reads the account-wide part back.
    const { domains: _d, contacts: _c, ...stored } = gone.next;
    const read = readStateHead(JSON.parse(JSON.stringify(stored)), {}, 'state.json');
    expect(read.departed).toEqual({
      'back.nl': { at: new Date(T0 + DAY).toISOString(), actions: { snooze } },
    });
    const back = run([expiring, other], T0 + 2 * DAY, gone.next);
    expect(back.report.changes).toMatchObject([
      { domain_name: 'back.nl', kind: 'returned', severity: 'warning', after: 'in the account' },
    ]);
    expect(back.why).toContain('1 changed');
    // Its finding is new, and the snooze it had holds again: not announced.
    expect(findingOf(back, 'back.nl')).toMatchObject({ change: 'new', snoozed_until: snooze.until });
    expect(back.next.domains['back.nl']?.actions?.snooze).toEqual(snooze);
    expect(back.next.departed).toBeUndefined();
    // Gone again, and back after more than 90 days: seen for the first time.
    const again = run([other], T0 + 3 * DAY, back.next);
    expect(again.next.departed?.['back.nl']).toBeDefined();
    const late = run([other], T0 + 94 * DAY, again.next);
    expect(late.next.departed).toBeUndefined();
  });
});
