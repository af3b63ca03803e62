import { describe, expect, it } from 'vitest';
import type { StatePolicy } from '../../functions/core/memory/state';
import type { Domain } from '../../functions/core/reseller/schemas';
import { HOUR, T0 } from '../support/account-model';
import { groupScanner } from '../support/group-scan';
import { DAY, heldInQuarantine, renewedUndocumented, undocumentedProblems } from '../support/state-scan';
import { EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * A quarantine kept as remembered (its record read with a status the API does not document) in a
 * policy group with recipients of its own that hears critical news alone: its repeats and its
 * escalation are judged at the remembered quarantine's level, so the group is sent them too, even
 * while the record reads as a warning or info finding.
 */

const FILE = {
  policies: [
    { name: 'watch', match: { tags: ['watch'] }, alertEmails: ['watch@example.nl'], minSeverity: 'critical' },
  ],
};
const { scan: scanWith } = groupScanner(FILE);

type Escalation = StatePolicy['escalation'];

const scan = (read: readonly Domain[], now: number, state: ScanState, escalation?: Escalation) =>
  scanWith(read, now, state, { problems: undocumentedProblems(read), ...(escalation ? { escalation } : {}) });

/** In .nl quarantine (40 days to restore) since 35 days before T0, in the group: restore by T0 + 5 days. */
const held: Domain = { ...heldInQuarantine(T0, 35), tags: ['watch'] };

/** Two groups with recipients of their own: ops hears every finding, watch critical ones alone. */
const OPS_AND_WATCH = [
  { name: 'ops', match: { tags: ['ops'] }, alertEmails: ['ops@example.nl'] },
  { name: 'watch', match: { tags: ['watch'] }, alertEmails: ['watch@example.nl'], minSeverity: 'critical' },
];

/** `name`, in good standing (no quarantine) under `tags`, expiring `days` after T0: news, not kept. */
const healthyDomain = (like: Domain, name: string, tags: string[], days: number): Domain => ({
  ...like,
  domain_name: name,
  tags,
  status: ['ok'],
  date_deleted: null,
  date_expiry: T0 + days * DAY,
});

/** The record read with an undocumented status, its expiry `days` on and auto-renew off. */
const renewedOdd = (days: number): Domain => renewedUndocumented(held, T0, days, false);

/** Alerted at T0, then read as `odd` at each of `hours`: who was sent each scan. */
function sentAt(odd: Domain, hours: readonly number[], escalation?: Escalation) {
  const first = scan([held], T0, EMPTY_STATE, escalation);
  expect(first.sent).toEqual(['account', 'watch']);
  let state = first.next;
  return hours.map((h) => {
    const r = scan([odd], T0 + h * HOUR, state, escalation);
    state = r.next;
    expect(state.domains['held.nl']?.finding?.kind).toBe('quarantine');
    return { why: r.result.why, sent: r.sent };
  });
}

describe('a kept quarantine in a group that hears critical news alone', () => {
  it('is repeated to the group while its record reads as an info finding', () => {
    const runs = sentAt(renewedOdd(300), [1, 22]);
    expect(runs[1]?.why).toEqual(['1 critical repeated after 20 h']);
    expect(runs[1]?.sent).toEqual(['account', 'watch']);
  });

  it('is repeated to the group while its record reads as a warning', () => {
    const runs = sentAt(renewedOdd(20), [1, 22]);
    expect(runs[1]?.sent).toEqual(['account', 'watch']);
  });

  it('is escalated to the group while its record reads as an info finding', () => {
    const escalated = sentAt(renewedOdd(300), [1, 25], { afterHours: 24, withinDays: 7 });
    expect(escalated[1]?.why).toContain('1 critical not acted on, escalated');
    expect(escalated[1]?.sent).toEqual(['account', 'watch']);
  });

  it('is not repeated to the group every scan once the group heard it', () => {
    const runs = sentAt(renewedOdd(300), [1, 22, 23]);
    expect(runs[2]?.why.join()).not.toMatch(/repeated/);
    expect(runs[2]?.sent).toEqual([]);
  });
});

describe('a kept quarantine whose record gives no finding, in a group with recipients of its own', () => {
  const healthy = renewedUndocumented(held, T0, 365);

  it('is repeated to the group in its last days as it is to the account', () => {
    const runs = sentAt(healthy, [1, 22, 46, 70]);
    for (const run of runs.slice(1)) expect(run.sent).toEqual(['account', 'watch']);
  });

  it('is in the group message as a critical problem record of the group', () => {
    const first = scan([held], T0, EMPTY_STATE);
    const kept = scan([healthy], T0 + HOUR, first.next);
    const r = scan([healthy], T0 + 22 * HOUR, kept.next);
    const group = r.plan.find((p) => p.group === 'watch');
    expect(group?.report.problems).toEqual([
      expect.objectContaining({ key: 'held.nl', severity: 'critical', policy: 'watch' }),
    ]);
  });

  it('is repeated to the group on the critical cadence before its last days, as to the account', () => {
    // Restore by T0 + 20 days: not its last days, so repeated on the 20 h critical cadence alone.
    const early: Domain = { ...heldInQuarantine(T0, 20), tags: ['watch'] };
    const fine = renewedUndocumented(early, T0, 365);
    const first = scan([early], T0, EMPTY_STATE);
    expect(first.sent).toEqual(['account', 'watch']);
    const kept = scan([fine], T0 + HOUR, first.next);
    const r = scan([fine], T0 + 22 * HOUR, kept.next);
    expect(r.result.why).toEqual(['1 unreadable record in quarantine repeated after 20 h']);
    expect(r.sent).toEqual(['account', 'watch']);
  });

  it('sends the group nothing when the account publishes nothing of it', () => {
    const runs = sentAt(healthy, [1, 22, 23]);
    expect(runs[2]?.sent).toEqual([]);
  });

  it('sends the group nothing when the account speaks only of another domain', () => {
    const first = scan([held], T0, EMPTY_STATE);
    const kept = scan([healthy], T0 + HOUR, first.next);
    const other: Domain = {
      ...held,
      domain_name: 'other.nl',
      tags: [],
      status: ['ok'],
      date_deleted: null,
      date_expiry: T0 + 5 * DAY,
    };
    const r = scanWith([healthy, other], T0 + 2 * HOUR, kept.next, {
      problems: undocumentedProblems([healthy]),
    });
    expect(r.result.why).toEqual(['1 new']);
    expect(r.sent).toEqual(['account']);
    expect(r.result.report.problems.every((p) => p.news === undefined)).toBe(true);
  });
});

describe('a kept quarantine due for its repeat while another group has news', () => {
  // Two groups with recipients of their own: b.nl (watch) is kept in quarantine, a.nl (ops) has news.
  const { scan: scanTwo } = groupScanner({
    policies: OPS_AND_WATCH,
  });
  // In .nl quarantine, restore by T0 + 20 days: not its last days, so repeated on the 20 h cadence alone.
  const b: Domain = { ...heldInQuarantine(T0, 20), domain_name: 'b.nl', tags: ['watch'] };
  const fine = renewedUndocumented(b, T0, 365);
  const a = (expiresInDays: number): Domain => healthyDomain(b, 'a.nl', ['ops'], expiresInDays);
  const run = (read: readonly Domain[], hours: number, state: ScanState) =>
    scanTwo(read, T0 + hours * HOUR, state, { problems: undocumentedProblems([fine]) });

  /** b.nl alerted at T0 and kept from T0 + 1 h (new unreadable record, heard by its group then). */
  function kept() {
    const first = scanTwo([b, a(200)], T0, EMPTY_STATE);
    const k = run([fine, a(200)], 1, first.next);
    expect(k.sent).toEqual(['account', 'watch']);
    return k.next;
  }

  it('is repeated to its group in a scan where another group has news', () => {
    const r = run([fine, a(20)], 22, kept());
    expect(r.result.why).toEqual(['1 escalated', '1 unreadable record in quarantine repeated after 20 h']);
    expect(r.sent).toEqual(['account', 'ops', 'watch']);
  });

  it('is repeated to its group 20 h after the group last heard it, though the account spoke since', () => {
    const news = run([fine, a(20)], 10, kept());
    expect(news.sent).toEqual(['account', 'ops']);
    const r = run([fine, a(20)], 22, news.next);
    expect(r.result.why).toEqual(['1 unreadable record in quarantine repeated after 20 h']);
    expect(r.sent).toEqual(['account', 'watch']);
    // Heard now: not again at the next scan.
    expect(run([fine, a(20)], 23, r.next).sent).toEqual([]);
  });
});

describe('a kept quarantine in its last days, in a group with recipients of its own, while another group has news every scan', () => {
  // A critical cadence of 48 h: in its last days (restore by T0 + 5 days) it is repeated daily before that.
  const { scan: scanTwo } = groupScanner({
    repeat: { critical: 48 },
    policies: OPS_AND_WATCH,
  });
  const b: Domain = { ...heldInQuarantine(T0, 35), domain_name: 'b.nl', tags: ['watch'] };
  const fine = renewedUndocumented(b, T0, 365);
  /** A new domain of ops at each scan, expiring in 20 days: news to ops, and the account speaks. */
  const newsAt = (hours: number): Domain => healthyDomain(b, `a-${hours}.nl`, ['ops'], 20);

  it('is said to its group every day, though the account speaks every six hours', () => {
    const first = scanTwo([b], T0, EMPTY_STATE);
    let state = scanTwo([fine], T0 + HOUR, first.next, { problems: undocumentedProblems([fine]) }).next;
    const heard: number[] = [];
    for (let hours = 7; hours <= 73; hours += 6) {
      const r = scanTwo([fine, newsAt(hours)], T0 + hours * HOUR, state, {
        problems: undocumentedProblems([fine]),
      });
      expect(r.sent).toContain('ops');
      if (r.sent.includes('watch')) heard.push(hours);
      state = r.next;
    }
    // Heard at T0 + 1 h, then at the first scan 20 h or more after each time it heard.
    expect(heard).toEqual([25, 49, 73]);
  });
});

describe('a kept quarantine whose group hears other news of its own in between', () => {
  // One group with recipients of its own that hears warnings: b.nl kept in quarantine, c.nl new news.
  const { scan: scanOne } = groupScanner({
    policies: [{ name: 'watch', match: { tags: ['watch'] }, alertEmails: ['watch@example.nl'] }],
  });
  // Restore by T0 + 20 days: not its last days, so repeated on the 20 h critical cadence alone.
  const b: Domain = { ...heldInQuarantine(T0, 20), domain_name: 'b.nl', tags: ['watch'] };
  const fine = renewedUndocumented(b, T0, 365);
  const c = healthyDomain(b, 'c.nl', ['watch'], 20);
  const run = (read: readonly Domain[], hours: number, state: ScanState) =>
    scanOne(read, T0 + hours * HOUR, state, { problems: undocumentedProblems([fine]) });

  it('is repeated to the group 20 h after the group last heard it, not 20 h after news without it', () => {
    const first = scanOne([b], T0, EMPTY_STATE);
    const kept = run([fine], 1, first.next);
    expect(kept.sent).toEqual(['account', 'watch']);
    // The group hears of c.nl alone: its message carries no line of b.nl.
    const other = run([fine, c], 10, kept.next);
    expect(other.sent).toEqual(['account', 'watch']);
    expect(other.plan.find((p) => p.group === 'watch')?.report.problems).toEqual([]);
    // 21 h after the group last heard of b.nl: due, as it is to a group that heard nothing in between.
    const r = run([fine, c], 22, other.next);
    expect(r.result.why).toEqual(['1 unreadable record in quarantine repeated after 20 h']);
    expect(r.sent).toEqual(['account', 'watch']);
  });
});

describe('a kept quarantine in its last days, in a group with recipients of its own, critical repeated weekly', () => {
  const { scan: scanWeekly } = groupScanner({ ...FILE, repeat: { critical: 'weekly' } });
  const healthy = renewedUndocumented(held, T0, 365);
  /** A domain of no group that is news to the account alone: new, so the account speaks every scan. */
  const news = (i: number): Domain => healthyDomain(held, `news${i}.nl`, [], 20);

  it('is repeated to the group daily by when the group last heard it, though the account speaks more often', () => {
    const first = scanWeekly([held], T0, EMPTY_STATE);
    let state = scanWeekly([healthy], T0 + HOUR, first.next, {
      problems: undocumentedProblems([healthy]),
    }).next;
    const heard: number[] = [];
    for (const h of [12, 24, 36, 48]) {
      const read = [healthy, ...[12, 24, 36, 48].filter((n) => n <= h).map(news)];
      const r = scanWeekly(read, T0 + h * HOUR, state, { problems: undocumentedProblems([healthy]) });
      expect(r.sent[0]).toBe('account');
      if (r.sent.includes('watch')) heard.push(h);
      state = r.next;
    }
    // Restore by T0 + 5 days: its group hears it daily (20 h after it last did), not a week on.
    expect(heard).toEqual([24, 48]);
  });
});

describe('a kept quarantine in a group with a critical cadence of its own', () => {
  // vip repeats its critical findings every 12 h; the top level every 20 h (the default).
  const { scan: scanVip } = groupScanner({
    policies: [
      { name: 'vip', match: { tags: ['vip'] }, alertEmails: ['vip@example.nl'], repeat: { critical: 12 } },
    ],
  });
  // Restore by T0 + 20 days: not its last days, so repeated on the critical cadence alone.
  const b: Domain = { ...heldInQuarantine(T0, 20), domain_name: 'b.nl', tags: ['vip'] };
  const fine = renewedUndocumented(b, T0, 365);
  const run = (hours: number, state: ScanState) =>
    scanVip([fine], T0 + hours * HOUR, state, { problems: undocumentedProblems([fine]) });

  it("is repeated on its group's cadence, as its quarantine finding was, not the top level's", () => {
    const first = scanVip([b], T0, EMPTY_STATE);
    // Read in quarantine: its finding repeats every 12 h.
    const judged = scanVip([b], T0 + 13 * HOUR, first.next);
    expect(judged.result.why).toEqual(['1 critical repeated after 12 h']);
    const kept = run(14, judged.next);
    expect(kept.sent).toEqual(['account', 'vip']);
    // 13 h after the group last heard it: due on vip's 12 h, as the finding was.
    const r = run(27, kept.next);
    expect(r.result.why).toEqual(["1 unreadable record in quarantine repeated on its group's cadence"]);
    expect(r.sent).toEqual(['account', 'vip']);
  });
});

describe('a kept quarantine in a group whose repeats are capped at 0', () => {
  // vip's critical findings are never repeated ("cap": 0); its record can no longer be judged.
  const { scan: scanCapped } = groupScanner({
    policies: [
      {
        name: 'vip',
        match: { tags: ['vip'] },
        alertEmails: ['vip@example.nl'],
        repeat: { critical: 12, cap: 0 },
      },
    ],
  });
  // Restore by T0 + 20 days: not its last days, so only the critical cadence repeats it.
  const b: Domain = { ...heldInQuarantine(T0, 20), domain_name: 'b.nl', tags: ['vip'] };
  const fine = renewedUndocumented(b, T0, 365);

  it("is repeated on the group's cadence all the same, as docs/policies.md says", () => {
    const first = scanCapped([b], T0, EMPTY_STATE);
    const kept = scanCapped([fine], T0 + HOUR, first.next, { problems: undocumentedProblems([fine]) });
    const r = scanCapped([fine], T0 + 13 * HOUR, kept.next, { problems: undocumentedProblems([fine]) });
    expect(r.result.why).toEqual(["1 unreadable record in quarantine repeated on its group's cadence"]);
    expect(r.sent).toEqual(['account', 'vip']);
  });
});
