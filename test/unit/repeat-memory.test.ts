import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import type { StatePolicy } from '../../functions/core/memory/state';
import type { Domain } from '../../functions/core/reseller/schemas';
import { DAY, domain, scanOf } from '../support/state-scan';
import {
  compareWithState,
  DEFAULT_STATE_POLICY,
  EMPTY_STATE,
  parseState,
  type ScanState,
} from '../support/whole-state';

/**
 * The repeat cadence in the comparison with memory (compare.ts with repeat.ts): a policy's cadence
 * for its findings, the cap holding back repeats but neither escalation nor the daily repeat in
 * the last days to restore, and nothing repeated for a domain let lapse.
 */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;

function run(
  domains: readonly Domain[],
  now: number,
  state: ScanState,
  policy: StatePolicy,
  mark: (f: DomainFinding) => void = () => undefined,
) {
  const { report, observed } = scanOf(domains, now);
  for (const f of report.findings) mark(f as DomainFinding);
  return compareWithState({ report, observed, state, policy, scope: 'http://reseller.test' });
}

/** Expiring without auto-renew, `daysLeft` at T0: critical within 7 days. */
const expiring = (name: string, daysLeft: number) =>
  domain(name, T0, { date_expiry: T0 + daysLeft * DAY, auto_renew: false });

const capped: StatePolicy = {
  ...DEFAULT_STATE_POLICY,
  repeat: { critical: 12, warning: 164, cap: 0 },
};

describe('repeat cadence with memory', () => {
  it('repeats a policy’s findings on its cadence, the others on the deployment’s', () => {
    const policy: StatePolicy = {
      ...DEFAULT_STATE_POLICY,
      repeatByGroup: new Map([['vip', { critical: 12, warning: 164 }]]),
    };
    const domains = [expiring('vip.nl', 5.5), expiring('plain.nl', 5.5)];
    const vip = (f: DomainFinding) => {
      if (f.domain_name === 'vip.nl') f.policy = 'vip';
    };
    const first = run(domains, T0, EMPTY_STATE, policy, vip);
    expect(first.why).toEqual(['2 new']);
    const half = run(domains, T0 + 12 * HOUR, first.next, policy, vip);
    expect(half.why).toEqual(['1 critical repeated after 12 h']);
    expect(half.next.domains['vip.nl']?.alerted?.repeats).toBe(1);
    // Carried in that message for other news: its last alert moved, its count did not.
    expect(half.next.domains['plain.nl']?.alerted).toMatchObject({
      at: new Date(T0 + 12 * HOUR).toISOString(),
    });
    expect(half.next.domains['plain.nl']?.alerted?.repeats).toBeUndefined();
    const day = run(domains, T0 + 32 * HOUR, half.next, policy, vip);
    expect(day.why).toEqual(['1 critical repeated after 12 h', '1 critical repeated after 20 h']);
  });

  it('holds a repeat back at the cap but never an escalation (issue 36 item 2)', () => {
    const policy = { ...capped, escalation: { afterHours: 24, withinDays: 7 } };
    // 3.5 days left: critical on the 3-day rung for the next 36 hours.
    const domains = [expiring('late.nl', 3.5)];
    const first = run(domains, T0, EMPTY_STATE, policy);
    expect(first.publish).toBe(true);
    const held = run(domains, T0 + 12 * HOUR, first.next, policy);
    expect([held.publish, held.why]).toEqual([
      false,
      ['nothing new, escalated, changed or resolved at warning or above'],
    ]);
    const escalated = run(domains, T0 + 25 * HOUR, held.next, policy);
    expect(escalated.why).toEqual(['1 critical not acted on, escalated']);
  });

  it('holds a repeat back at the cap but not the daily repeat of a quarantine in its last days to restore', () => {
    // Deleted 24 days ago: 6 days to restore.
    const lost = [
      domain('lost.de', T0, {
        status: ['quarantine'],
        date_expiry: T0 - 40 * DAY,
        auto_renew: false,
        date_deleted: T0 - 24 * DAY,
      }),
    ];
    const first = run(lost, T0, EMPTY_STATE, capped);
    expect(first.publish).toBe(true);
    expect(run(lost, T0 + 12 * HOUR, first.next, capped).publish).toBe(false);
    const daily = run(lost, T0 + 21 * HOUR, first.next, capped);
    expect(daily.why).toEqual(['1 in the last days to restore, repeated daily']);
  });

  it('announces a finding that became another kind at the same severity and rung, and counts it from 0', () => {
    // docs/policies.md: "A finding that changes (another kind, a higher severity, a lower rung ...)
    // is a new one: announced as new or escalated". Expiring and critical at T0 without auto-renew;
    // auto-renew turned on and its renewal failed before the next scan: renewal_failed, critical,
    // on the same 7-day rung.
    const domains = [expiring('soon.nl', 5.5)];
    const first = run(domains, T0, EMPTY_STATE, capped);
    const failed = (f: DomainFinding) => {
      Object.assign(f, {
        kind: 'renewal_failed',
        auto_renew: true,
        date_renewal: new Date(T0).toISOString(),
      });
    };
    const next = run(domains, T0 + 2 * HOUR, first.next, capped, failed);
    expect([next.why, next.report.findings[0]?.change]).toEqual([['1 escalated'], 'escalated']);
    expect(next.next.domains['soon.nl']?.alerted).toMatchObject({ kind: 'renewal_failed' });
    expect(next.next.domains['soon.nl']?.alerted?.repeats).toBeUndefined();
  });

  it('repeats daily whatever the cap a quarantine whose restore deadline is unknown: it may be in its last days', () => {
    // No date_deleted: restore_by unknown (docs/deadlines.md "Unknown, never guessed"). Nothing
    // shows the domain is further than 7 days from loss, so the cap must not end its alerts.
    const lost = [
      domain('lost.de', T0, {
        status: ['quarantine'],
        date_expiry: T0 - 40 * DAY,
        auto_renew: false,
        date_deleted: null,
      }),
    ];
    const first = run(lost, T0, EMPTY_STATE, capped);
    expect(first.report.findings[0]).toMatchObject({ kind: 'quarantine', restore_by: null });
    expect(run(lost, T0 + 12 * HOUR, first.next, capped).publish).toBe(false);
    const daily = run(lost, T0 + 21 * HOUR, first.next, capped);
    expect(daily.why).toEqual(['1 in the last days to restore, repeated daily']);
  });

  it('repeats nothing of a domain let lapse', () => {
    const domains = [expiring('gone.nl', 5.5)];
    const first = run(domains, T0, EMPTY_STATE, DEFAULT_STATE_POLICY);
    const lapse = (f: DomainFinding) => {
      f.let_lapse = true;
    };
    expect(run(domains, T0 + 21 * HOUR, first.next, DEFAULT_STATE_POLICY).why).toEqual([
      '1 critical repeated after 20 h',
    ]);
    expect(run(domains, T0 + 21 * HOUR, first.next, DEFAULT_STATE_POLICY, lapse).publish).toBe(false);
  });

  it('reads its count back as stored, and refuses a count that is not one, naming its place', () => {
    const domains = [expiring('vip.nl', 5.5)];
    const first = run(domains, T0, EMPTY_STATE, capped);
    const again = run(domains, T0 + 12 * HOUR, first.next, {
      ...capped,
      repeat: { ...capped.repeat, cap: 3 },
    });
    const stored = JSON.parse(JSON.stringify(again.next)) as ScanState;
    expect(parseState(stored, 'test').domains['vip.nl']?.alerted?.repeats).toBe(1);
    const tampered = JSON.parse(JSON.stringify(stored));
    tampered.domains['vip.nl'].alerted.repeats = -1;
    expect(() => parseState(tampered, 'test')).toThrow(/domains\["vip\.nl"\]\.alerted\.repeats: /);
    tampered.domains['vip.nl'].alerted.repeats = 'two';
    expect(() => parseState(tampered, 'test')).toThrow(/domains\["vip\.nl"\]\.alerted\.repeats: /);
  });
});
