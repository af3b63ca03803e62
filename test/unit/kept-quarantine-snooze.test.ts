import { describe, expect, it } from 'vitest';
import { renderSms } from '../../functions/core/alerts/alert';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { snoozeOf } from '../../functions/core/memory/actions';
import type { DomainMemory, Snooze } from '../../functions/core/memory/state';
import type { Domain } from '../../functions/core/reseller/schemas';
import type { Report } from '../../functions/core/scan/scan';
import { HOUR, T0 } from '../support/account-model';
import { groupScanner } from '../support/group-scan';
import {
  DAY,
  domain,
  heldInQuarantine,
  renewedUndocumented,
  scanUnjudged as run,
  undocumentedProblems,
  whysAt,
} from '../support/state-scan';
import { DEFAULT_STATE_POLICY, EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * A quarantine snoozed, then kept by memory while its record, read by its dates only (a status the
 * API does not document), gives no finding: the snooze holds for the kept quarantine as it would for
 * the quarantine finding (silent until it ends, escalation counted from its end), and survives the
 * scans that read the record so; the record is a new problem record once (read by its dates: a record to look at).
 */

/** In .nl quarantine (40 days to restore) since 10 days before T0: 30 days to restore. */
const held = heldInQuarantine(T0, 10);
const healthy: Domain = renewedUndocumented(held, T0);
const policy = { ...DEFAULT_STATE_POLICY, escalation: { afterHours: 24, withinDays: 40 } };
const iso = (ms: number) => new Date(ms).toISOString();
const snooze: Snooze = {
  until: iso(T0 + 30 * HOUR),
  at: iso(T0 + HOUR),
  kind: 'quarantine',
  severity: 'critical',
};

/** Alerted in quarantine at T0, snoozed an hour on until T0 + 30 h. */
function snoozedState(): ScanState {
  const first = run([held], T0, EMPTY_STATE, policy).next;
  const memory = first.domains['held.nl'] as DomainMemory;
  return { ...first, domains: { ...first.domains, 'held.nl': { ...memory, actions: { snooze } } } };
}

/** The state after the record read healthy with an undocumented status at T0 + 20 h. */
const keptState = (): ScanState => run([healthy], T0 + 20 * HOUR, snoozedState(), policy).next;

describe('a snoozed quarantine kept while its record gives no finding', () => {
  it('keeps its snooze in memory through the scans that read the record so', () => {
    expect(keptState().domains['held.nl']?.actions?.snooze).toEqual(snooze);
    const later = run([healthy], T0 + 25 * HOUR, keptState(), policy).next;
    expect(later.domains['held.nl']?.actions?.snooze).toEqual(snooze);
  });

  it('is not critical, nor in the SMS, until the snooze ends', () => {
    const report = run([healthy], T0 + 25 * HOUR, keptState(), policy).report as unknown as Report;
    expect(report.problems.map((p) => p.severity === 'critical')).toEqual([false]);
    expect(report.problems[0]?.reason).toMatch(/; last read in quarantine, restore by .* \(days left: 28\)$/);
    expect(renderSms(report)).not.toContain('held.nl');
    const after = run([healthy], T0 + 31 * HOUR, keptState(), policy).report as unknown as Report;
    expect(after.problems.map((p) => p.severity === 'critical')).toEqual([true]);
    expect(renderSms(after)).toContain('held.nl quarantine 28d left?');
  });

  it('is a new problem record once, news as its snooze ends, and escalates afterHours past that end, once', () => {
    const times = [20, 25, 31, 40, 50, 53, 55, 60].map((h) => T0 + h * HOUR);
    const whys = whysAt(times, snoozedState(), (now, s) => run([healthy], now, s, policy));
    expect(whys).toEqual([
      ['1 new record to look at'],
      [],
      ['1 snooze ended on a kept quarantine'],
      [],
      [],
      ['1 unreadable record in quarantine repeated after 20 h'],
      ['1 critical not acted on, escalated'],
      [],
    ]);
  });
});

describe('a kept quarantine snoozed from an alert that showed it expired, last read in quarantine', () => {
  /** The finding of held.nl a scan at `now` shows. */
  const shownAt = (read: Domain, now: number, state: ScanState) => {
    const r = run([read], now, state, policy);
    const f = r.report.findings.find((x) => 'domain_name' in x && x.domain_name === 'held.nl');
    return { next: r.next, shown: f as DomainFinding };
  };
  /** held.nl's state with `snooze` beside its memory. */
  const withSnooze = (state: ScanState, s: Snooze): ScanState => ({
    ...state,
    domains: {
      ...state.domains,
      'held.nl': { ...(state.domains['held.nl'] as DomainMemory), actions: { snooze: s } },
    },
  });

  it('holds the snooze when the record then gives no finding: nothing got worse', () => {
    // Read in quarantine at T0, then by its dates only (expired) while memory keeps the quarantine.
    const first = run([held], T0, EMPTY_STATE, policy).next;
    const { next, shown } = shownAt({ ...held, status: ['pendingDelete'] }, T0 + HOUR, first);
    expect([shown.kind, shown.remembered?.kind]).toEqual(['expired', 'quarantine']);
    // Snoozed from the alert's link, as the alert showed it; then the record gives no finding.
    const made = snoozeOf(shown, 1, T0 + 2 * HOUR);
    const r = run([healthy], T0 + 3 * HOUR, withSnooze(next, made), policy);
    expect(r.report.problems.map((p) => p.severity === 'critical')).toEqual([false]);
    expect(r.why).not.toContain('1 snooze ended on a kept quarantine');
    expect(r.next.domains['held.nl']?.actions?.snooze).toEqual(made);
  });

  it('still ends a snooze of a domain that was only expired, as it enters quarantine', () => {
    const expired = domain('held.nl', T0, { auto_renew: false, status: ['expired'], date_expiry: T0 - DAY });
    const { next, shown } = shownAt(expired, T0, EMPTY_STATE);
    expect([shown.kind, shown.remembered]).toEqual(['expired', undefined]);
    const made = snoozeOf(shown, 7, T0 + HOUR);
    const worse = run([heldInQuarantine(T0 + 2 * HOUR, 0)], T0 + 2 * HOUR, withSnooze(next, made), policy);
    expect(worse.report.findings.map((f) => [f.severity, 'snoozed_until' in f])).toEqual([
      ['critical', false],
    ]);
    expect(worse.next.domains['held.nl']?.actions).toBeUndefined();
  });
});

describe('a kept quarantine whose record gives no finding, acknowledged or snoozed into its last days', () => {
  it('has its acknowledgement lapse as its status changed, critical in that very scan, new once', () => {
    const first = run([held], T0, EMPTY_STATE, policy).next;
    const memory = first.domains['held.nl'] as DomainMemory;
    const acknowledged = {
      at: iso(T0 + HOUR),
      kind: 'quarantine' as const,
      severity: 'critical' as const,
      date_expiry: iso(held.date_expiry),
      auto_renew: false,
    };
    const state = {
      ...first,
      domains: { ...first.domains, 'held.nl': { ...memory, actions: { acknowledged } } },
    };
    const now = run([healthy], T0 + 20 * HOUR, state, policy);
    expect(now.report.problems.map((p) => p.severity)).toEqual(['critical']);
    expect(now.next.domains['held.nl']?.actions).toBeUndefined();
    const times = [20, 25, 40].map((h) => T0 + h * HOUR);
    expect(whysAt(times, state, (at, s) => run([healthy], at, s, policy))).toEqual([
      ['1 new record to look at'],
      [],
      ['1 unreadable record in quarantine repeated after 20 h'],
    ]);
  });

  it('comes back critical as its last days to restore begin, its snooze dropped', () => {
    // 10 days to restore at T0: its last 7 begin 2 days on, before the snooze ends.
    const soon = heldInQuarantine(T0, 30);
    const read = renewedUndocumented(soon, T0);
    const first = run([soon], T0, EMPTY_STATE, policy).next;
    const memory = first.domains['held.nl'] as DomainMemory;
    const long: Snooze = { ...snooze, until: iso(T0 + 5 * 24 * HOUR) };
    const state = {
      ...first,
      domains: { ...first.domains, 'held.nl': { ...memory, actions: { snooze: long } } },
    };
    const quiet = run([read], T0 + 20 * HOUR, state, policy);
    expect(quiet.report.problems.map((p) => p.severity === 'critical')).toEqual([false]);
    const late = run([read], T0 + 3 * 24 * HOUR, quiet.next, policy);
    expect(late.report.problems.map((p) => p.severity)).toEqual(['critical']);
    expect(late.next.domains['held.nl']?.actions).toBeUndefined();
    expect(late.why.filter((w) => w.includes('new unreadable'))).toEqual([]);
    // Its last alert was at T0 (three days ago), so its cadence is due too: one domain, said once.
    expect(late.why).toEqual(['1 snooze ended on a kept quarantine']);
  });
});

describe('a kept quarantine whose snooze ends soon after the account last spoke', () => {
  /** Snoozed until T0 + 30 h; another domain is new at T0 + 25 h, so the account spoke 5 h before the end. */
  const other = domain('other.nl', T0, { auto_renew: false, date_expiry: T0 + 5 * DAY });
  const chatty = (now: number, state: ScanState) =>
    run(now >= T0 + 25 * HOUR ? [healthy, other] : [healthy], now, state, policy);

  it('is news in the scan that sees the snooze end, and not again before the cadence', () => {
    const times = [20, 25, 31, 35, 44].map((h) => T0 + h * HOUR);
    const whys = whysAt(times, snoozedState(), chatty);
    expect(whys).toEqual([
      ['1 new record to look at'],
      ['1 new'],
      ['1 snooze ended on a kept quarantine'],
      [],
      [],
    ]);
  });

  it('is marked news for its group in that scan alone', () => {
    const before = run([healthy], T0 + 20 * HOUR, snoozedState(), policy).next;
    const spoke = chatty(T0 + 25 * HOUR, before).next;
    const ended = chatty(T0 + 31 * HOUR, spoke);
    expect(ended.publish).toBe(true);
    expect(ended.report.problems.map((p) => [p.severity, p.news])).toEqual([['critical', true]]);
    expect(ended.next.domains['held.nl']?.actions).toBeUndefined();
    const next = chatty(T0 + 35 * HOUR, ended.next);
    expect(next.publish).toBe(false);
    expect(next.report.problems.map((p) => p.news)).toEqual([undefined]);
  });
});

describe('a kept quarantine whose snooze ends beside another kept quarantine due on the cadence', () => {
  // Both in .nl quarantine since 20 days before T0 (not their last days); b.nl's group has recipients of its own.
  const FILE = {
    policies: [
      {
        name: 'watch',
        match: { tags: ['watch'] },
        alertEmails: ['watch@example.nl'],
        minSeverity: 'critical',
      },
    ],
  };
  const { scan: scanWith } = groupScanner(FILE);
  const scan = (read: readonly Domain[], now: number, state: ScanState) =>
    scanWith(read, now, state, { problems: undocumentedProblems(read) });
  const q = (name: string, tags: string[] = []) =>
    domain(name, T0, {
      auto_renew: false,
      status: ['quarantine'],
      date_expiry: T0 - 21 * DAY,
      date_deleted: T0 - 20 * DAY,
      tags,
    });
  const a = q('a.nl');
  const b = q('b.nl', ['watch']);
  const odd = [renewedUndocumented(a, T0, 365), renewedUndocumented(b, T0, 365)];

  it('does not take the place of the cadence: the other one is still repeated to its group', () => {
    const first = scan([a, b], T0, EMPTY_STATE).next;
    const ends: Snooze = { ...snooze, until: iso(T0 + 21 * HOUR), at: iso(T0 + HOUR) };
    const state: ScanState = {
      ...first,
      domains: {
        ...first.domains,
        'a.nl': { ...(first.domains['a.nl'] as DomainMemory), actions: { snooze: ends } },
      },
    };
    const kept = scan(odd, T0 + HOUR, state);
    const r = scan(odd, T0 + 22 * HOUR, kept.next);
    expect(r.sent).toEqual(['account', 'watch']);
    expect(r.result.why).toContain('1 snooze ended on a kept quarantine');
  });
});
