import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { stageOf } from '../../functions/core/memory/escalation';
import { StateError } from '../../functions/core/memory/state';
import { DAY, domain, scanOf, scanWithState } from '../support/state-scan';
import {
  compareWithState,
  DEFAULT_STATE_POLICY,
  EMPTY_STATE,
  parseState,
  type WholeCompareResult,
} from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;
const policy = DEFAULT_STATE_POLICY;

const run = scanWithState;
const changeOf = (r: WholeCompareResult, name: string) =>
  r.report.findings.find((f) => 'domain_name' in f && f.domain_name === name)?.change;

describe('stageOf', () => {
  const finding = (kind: DomainFinding['kind'], days_left: number) =>
    ({ domain_name: 'a.nl', kind, severity: 'critical', days_left }) as DomainFinding;
  it('puts an expiring finding on the smallest rung at or above its days left', () => {
    expect(stageOf(finding('expiring', 25), [30, 14, 7, 3, 1])).toBe(30);
    expect(stageOf(finding('expiring', 14), [30, 14, 7, 3, 1])).toBe(14);
    expect(stageOf(finding('expiring', 5), [30, 14, 7, 3, 1])).toBe(7);
    expect(stageOf(finding('expiring', 0), [30, 14, 7, 3, 1])).toBe(1);
    expect(stageOf(finding('expiring', 45), [30, 14, 7, 3, 1])).toBeNull();
  });
  it('puts expired below every rung and quarantine below that', () => {
    expect(stageOf(finding('expired', -3), [30, 14])).toBe(0);
    expect(stageOf(finding('quarantine', -20), [30, 14])).toBe(-1);
    expect(stageOf(finding('auto_renew_off', 200), [30, 14])).toBeNull();
  });
});

describe('compareWithState', () => {
  const account = [
    domain('critical.nl', T0, { auto_renew: false, date_expiry: T0 + 5 * DAY + HOUR }),
    domain('warning.nl', T0, { auto_renew: false, date_expiry: T0 + 20 * DAY + HOUR }),
    domain('renews.nl', T0, { date_expiry: T0 + 10 * DAY }),
    domain('healthy.nl', T0),
  ];

  it('marks everything new on the first run, infers no departures and publishes', () => {
    const first = run(account, T0, EMPTY_STATE);
    expect(first.report.findings.map((f) => f.change)).toEqual(['new', 'new', 'new']);
    expect(first.report.changes).toEqual([]);
    expect(first.report.resolved).toEqual([]);
    expect(first.publish).toBe(true);
    expect(first.why).toEqual(['2 new']);
    expect(Object.keys(first.next.domains).sort()).toEqual([
      'critical.nl',
      'healthy.nl',
      'renews.nl',
      'warning.nl',
    ]);
    expect(first.next.domains['critical.nl']?.alerted).toEqual({
      kind: 'expiring',
      severity: 'critical',
      stage: 7,
      at: '2026-11-22T06:00:00.000Z',
      // The first alert: escalation (docs/policies.md) counts from it.
      first_at: '2026-11-22T06:00:00.000Z',
    });
    // Info is below the minimum severity: remembered, but not alerted.
    expect(first.next.domains['renews.nl']?.alerted).toBeNull();
    expect(first.next.scope).toBe('http://reseller.test');
  });

  it('says nothing when the next run finds the same, and repeats a critical after 20 hours', () => {
    const first = run(account, T0, EMPTY_STATE);
    const second = run(account, T0 + 2 * HOUR, first.next);
    expect(second.report.findings.map((f) => f.change)).toEqual(['ongoing', 'ongoing', 'ongoing']);
    expect(second.publish).toBe(false);
    expect(second.why).toEqual(['nothing new, escalated, changed or resolved at warning or above']);
    const third = run(account, T0 + 20 * HOUR, second.next);
    expect(third.publish).toBe(true);
    expect(third.why).toEqual(['1 critical repeated after 20 h']);
    expect(changeOf(third, 'critical.nl')).toBe('ongoing');
    expect(third.next.domains['critical.nl']?.alerted?.at).toBe(new Date(T0 + 20 * HOUR).toISOString());
  });

  it('escalates once to the rung reached when runs were missed (alerted at 30 days, now 5 left)', () => {
    const d = (now: number) => [
      domain('late.nl', T0, { auto_renew: false, date_expiry: T0 + 25 * DAY + HOUR }),
      domain('x.nl', now),
    ];
    const first = run(d(T0), T0, EMPTY_STATE);
    expect(first.next.domains['late.nl']?.alerted?.stage).toBe(30);
    const later = run(d(T0 + 20 * DAY), T0 + 20 * DAY, first.next);
    expect(changeOf(later, 'late.nl')).toBe('escalated');
    expect(later.why).toEqual(['1 escalated']);
    expect(later.next.domains['late.nl']?.alerted).toMatchObject({ stage: 7, severity: 'critical' });
    // A day later: still on the 7-day rung, so ongoing; a critical repeats once 20 h have passed.
    const next = run(d(T0 + 21 * DAY), T0 + 21 * DAY, later.next);
    expect(changeOf(next, 'late.nl')).toBe('ongoing');
    expect(next.why).toEqual(['1 critical repeated after 20 h']);
    const rung3 = run(d(T0 + 23 * DAY), T0 + 23 * DAY, next.next);
    expect(changeOf(rung3, 'late.nl')).toBe('escalated');
    expect(rung3.next.domains['late.nl']?.alerted?.stage).toBe(3);
  });

  it('escalates a warning that rose to critical and expired that went to quarantine', () => {
    const before = run(
      [domain('q.nl', T0, { auto_renew: false, date_expiry: T0 - 2 * DAY })],
      T0,
      EMPTY_STATE,
    );
    const after = run(
      [
        domain('q.nl', T0, {
          auto_renew: false,
          date_expiry: T0 - 2 * DAY,
          status: ['quarantine'],
          date_deleted: T0,
        }),
      ],
      T0 + HOUR,
      before.next,
    );
    expect(changeOf(after, 'q.nl')).toBe('escalated');
  });

  it('notices a domain that left the account, from a full read only', () => {
    const first = run(account, T0, EMPTY_STATE);
    const without = account.filter((d) => d.domain_name !== 'warning.nl' && d.domain_name !== 'healthy.nl');
    const full = run(without, T0 + HOUR, first.next);
    expect(full.report.changes).toEqual([
      {
        domain_name: 'healthy.nl',
        kind: 'left_account',
        severity: 'critical',
        before: 'in the account',
        after: 'not in the account',
      },
      {
        domain_name: 'warning.nl',
        kind: 'left_account',
        severity: 'critical',
        before: 'in the account',
        after: 'not in the account',
      },
    ]);
    expect(full.report.resolved).toEqual([
      { domain_name: 'warning.nl', kind: 'expiring', severity: 'warning', reason: 'left_account', now: null },
    ]);
    expect(full.publish).toBe(true);
    expect(full.next.domains['warning.nl']).toBeUndefined();

    const filtered = run(without, T0 + HOUR, first.next, { mode: 'filtered' });
    expect(filtered.complete).toBe(false);
    expect(filtered.report.changes).toEqual([]);
    expect(filtered.next.domains['warning.nl']).toEqual(first.next.domains['warning.nl']);
  });

  it('does not call a domain gone when a record it may be could not be read', () => {
    const first = run(account, T0, EMPTY_STATE);
    const without = account.filter((d) => d.domain_name !== 'healthy.nl');
    const named = run(without, T0 + HOUR, first.next, {
      problems: [{ resource: 'domain', key: 'HEALTHY.nl', page: 1, reason: 'date_expiry: bad' }],
    });
    expect(named.report.changes).toEqual([]);
    expect(named.next.domains['healthy.nl']).toEqual(first.next.domains['healthy.nl']);
    expect(named.why).toEqual(['1 new unreadable record']);
    const anonymous = run(without, T0 + HOUR, first.next, {
      problems: [{ resource: 'domain', key: null, page: 2, reason: 'domain_name: missing' }],
    });
    expect(anonymous.complete).toBe(false);
    expect(anonymous.report.changes).toEqual([]);
  });

  it('reports each watched-field change as a warning', () => {
    const before = domain('w.nl', T0);
    const first = run([before], T0, EMPTY_STATE);
    const after = domain('w.nl', T0, {
      transfer_lock: false,
      auth_code_present: true,
      registrant_handle: 'C2',
      nsgroup: 'ns-elsewhere',
      dns_hosted: false,
      dnssec: 'unsigned',
    });
    const second = run([after], T0 + HOUR, first.next);
    expect(second.report.changes.map((c) => [c.kind, c.severity, c.before, c.after])).toEqual([
      ['auth_code_issued', 'warning', false, true],
      ['dnssec_unsigned', 'warning', 'signed', 'unsigned'],
      [
        'nameservers_changed',
        'warning',
        { nsgroup: null, dns_hosted: true },
        { nsgroup: 'ns-elsewhere', dns_hosted: false },
      ],
      ['registrant_changed', 'warning', 'C1', 'C2'],
      ['transfer_lock_off', 'warning', true, false],
    ]);
    expect(second.why).toEqual(['5 changed']);
    const third = run([after], T0 + 2 * HOUR, second.next);
    expect(third.report.changes).toEqual([]);
  });

  it('reports auto-renew turned off, and infers nothing from a field the record left out', () => {
    const first = run([domain('a.nl', T0)], T0, EMPTY_STATE);
    const off = run([domain('a.nl', T0, { auto_renew: false })], T0 + HOUR, first.next);
    expect(off.report.changes.map((c) => c.kind)).toEqual(['auto_renew_turned_off']);
    const { transfer_lock: _t, dnssec: _d, ...partial } = domain('a.nl', T0, { auto_renew: false });
    const unknown = run([partial], T0 + 2 * HOUR, off.next);
    expect(unknown.report.changes).toEqual([]);
  });

  it('resolves an expiring domain whose auto-renew was turned on, keeping its info finding ongoing', () => {
    const first = run(account, T0, EMPTY_STATE);
    const fixed = account.map((d) => (d.domain_name === 'critical.nl' ? { ...d, auto_renew: true } : d));
    const second = run(fixed, T0 + HOUR, first.next);
    expect(second.report.resolved).toEqual([
      {
        domain_name: 'critical.nl',
        kind: 'expiring',
        severity: 'critical',
        reason: 'auto_renew_on',
        now: { kind: 'expiring', severity: 'info' },
      },
    ]);
    expect(changeOf(second, 'critical.nl')).toBe('ongoing');
    expect(second.why).toEqual(['1 resolved']);
    expect(second.next.domains['critical.nl']?.alerted).toBeNull();
  });

  it('resolves a renewed and a restored domain with their reasons', () => {
    const q = domain('q.nl', T0, {
      status: ['quarantine'],
      auto_renew: false,
      date_expiry: T0 - 10 * DAY,
      date_deleted: T0 - 9 * DAY,
    });
    const first = run([account[1] as never, q], T0, EMPTY_STATE);
    const renewed = { ...(account[1] as (typeof account)[number]), date_expiry: T0 + 385 * DAY };
    const restored = {
      ...q,
      status: ['registered'],
      date_expiry: T0 + 355 * DAY,
      auto_renew: true,
      date_deleted: null,
    };
    const second = run([renewed, restored], T0 + HOUR, first.next);
    expect(second.report.resolved.map((r) => [r.domain_name, r.reason])).toEqual([
      ['q.nl', 'restored'],
      ['warning.nl', 'renewed'],
    ]);
    expect(second.report.findings).toEqual([
      { ...second.report.findings[0], domain_name: 'warning.nl', kind: 'auto_renew_off', change: 'new' },
    ]);
  });

  it('publishes a summary when nothing was published for seven days, and only then', () => {
    const quiet = [domain('renews.nl', T0, { date_expiry: T0 + 10 * DAY })];
    const first = run(quiet, T0, EMPTY_STATE);
    expect(first.publish).toBe(false);
    expect(first.why).toEqual(['first scan: nothing at warning or above']);
    const sixDays = run(quiet, T0 + 6 * DAY, first.next);
    expect(sixDays.publish).toBe(false);
    const week = run(quiet, T0 + 7 * DAY, sixDays.next);
    expect(week.why).toEqual(['summary: nothing published for 7 days']);
    expect(week.next.last_published_at).toBe(new Date(T0 + 7 * DAY).toISOString());
    expect(run(quiet, T0 + 8 * DAY, week.next).publish).toBe(false);
  });

  it('does not publish for changes below the minimum severity', () => {
    const first = run([domain('a.nl', T0)], T0, EMPTY_STATE);
    const quiet = compareWithState({
      ...scanOf([domain('a.nl', T0, { transfer_lock: false })], T0 + HOUR),
      state: first.next,
      policy: { ...policy, minSeverity: 'critical' },
    });
    expect(quiet.report.changes).toHaveLength(1);
    expect(quiet.publish).toBe(false);
  });
});

describe('parseState', () => {
  it('accepts what compareWithState saves', () => {
    const { next } = run([domain('a.nl', T0, { auto_renew: false, date_expiry: T0 + DAY })], T0, EMPTY_STATE);
    expect(parseState(JSON.parse(JSON.stringify(next)), 'test')).toEqual(next);
  });
  it('names the place and the first problem of anything else', () => {
    expect(() => parseState({ version: 2 }, '/tmp/state.json')).toThrow(StateError);
    expect(() => parseState({ version: 2 }, '/tmp/state.json')).toThrow(
      /state in \/tmp\/state.json .*version/,
    );
  });
});

describe('compareWithState and records that may be quarantined', () => {
  const healthy = [domain('healthy.nl', T0)];
  const quarantinedButUnreadable = [
    {
      resource: 'domain' as const,
      key: 'odd.nl',
      page: 1,
      reason: 'date_expiry: not a date',
      severity: 'critical' as const,
    },
  ];

  it('repeats an unreadable record that says quarantine after the critical repeat, like a quarantine finding', () => {
    const first = run(healthy, T0, EMPTY_STATE, { problems: quarantinedButUnreadable });
    expect(first.publish).toBe(true);
    const sameDay = run(healthy, T0 + 4 * HOUR, first.next, { problems: quarantinedButUnreadable });
    expect(sameDay.publish).toBe(false);
    const nextDay = run(healthy, T0 + 21 * HOUR, first.next, { problems: quarantinedButUnreadable });
    expect(nextDay.publish).toBe(true);
    expect(nextDay.why).toEqual(['1 unreadable record in quarantine repeated after 20 h']);
  });

  it('counts a record that first says quarantine a day after the last message as new, not also as repeated', () => {
    const expiring = [...healthy, domain('soon.nl', T0, { auto_renew: false, date_expiry: T0 + 20 * DAY })];
    const spoke = run(expiring, T0, EMPTY_STATE);
    expect(spoke.publish).toBe(true);
    const broke = run(expiring, T0 + 21 * HOUR, spoke.next, { problems: quarantinedButUnreadable });
    expect(broke.why).toEqual(['1 new unreadable record']);
  });

  it('does not repeat an ordinary unreadable record', () => {
    const ordinary = [
      { resource: 'domain' as const, key: 'odd.nl', page: 1, reason: 'date_expiry: not a date' },
    ];
    const first = run(healthy, T0, EMPTY_STATE, { problems: ordinary });
    const nextDay = run(healthy, T0 + 21 * HOUR, first.next, { problems: ordinary });
    expect(nextDay.publish).toBe(false);
  });
});
