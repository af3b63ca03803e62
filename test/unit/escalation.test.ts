import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { acknowledgementOf, snoozeOf } from '../../functions/core/memory/actions';
import { escalationHours, nextAlertMemory } from '../../functions/core/memory/escalation';
import type { AlertMemory } from '../../functions/core/memory/state';
import { domain, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE, type ScanState } from '../support/whole-state';

const NOW = Date.parse('2026-11-23T07:00:00Z');
const HOUR = 3_600_000;
const DAY = 86_400_000;
const POLICY = { afterHours: 24, withinDays: 7 };

const quarantine = (restoreInDays: number, severity: DomainFinding['severity'] = 'critical') =>
  ({
    kind: 'quarantine',
    severity,
    domain_name: 'lost.de',
    date_expiry: new Date(NOW - 40 * DAY).toISOString(),
    days_left: -40,
    restore_by: new Date(NOW + restoreInDays * DAY).toISOString(),
  }) as unknown as DomainFinding;

const alerted = (hoursAgo: number, more: Partial<AlertMemory> = {}): AlertMemory => {
  const at = new Date(NOW - hoursAgo * HOUR).toISOString();
  return { kind: 'quarantine', severity: 'critical', stage: -1, at, first_at: at, ...more };
};

const input = (more: Partial<Parameters<typeof escalationHours>[2]> = {}) => ({
  policy: POLICY,
  nowMs: NOW,
  stage: -1,
  silenced: false,
  ...more,
});

/** When lost.de's scans start: in quarantine since LOST_T0 − 20 days, restore by LOST_T0 + 10 days, its last days from LOST_T0 + 2 days. */
const LOST_T0 = Date.parse('2026-11-22T06:00:00Z');
const lost = domain('lost.de', LOST_T0, {
  status: ['quarantine'],
  date_expiry: LOST_T0 - 40 * DAY,
  auto_renew: false,
  date_deleted: LOST_T0 - 20 * DAY,
});
type LostScan = { result: ReturnType<typeof compareWithState>; finding: DomainFinding & { change: string } };

/** lost.de scanned at `now` over `state`, escalated 24 h after its first alert within 9 days of its deadline. */
function scanLost(now: number, state: ScanState): LostScan {
  const policy = { ...DEFAULT_STATE_POLICY, escalation: { afterHours: 24, withinDays: 9 } };
  const { report, observed } = scanOf([lost], now);
  const result = compareWithState({ report, observed, state, policy });
  return { result, finding: result.report.findings[0] as DomainFinding & { change: string } };
}

/** The state `scanned` saved, with lost.de acknowledged at `at` as that scan showed it. */
function acknowledgedAt(scanned: LostScan, at: number): ScanState {
  const next = scanned.result.next;
  return {
    ...next,
    domains: {
      ...next.domains,
      'lost.de': {
        ...next.domains['lost.de'],
        actions: { acknowledged: acknowledgementOf(scanned.finding, at) },
      } as never,
    },
  };
}

describe('escalationHours', () => {
  it('escalates a critical finding first alerted afterHours ago or more, its restore-by within withinDays', () => {
    expect(escalationHours(quarantine(5), alerted(25), input())).toBe(25);
    // The first alert counts, not the last repeat.
    expect(
      escalationHours(
        quarantine(5),
        alerted(2, { first_at: new Date(NOW - 30 * HOUR).toISOString() }),
        input(),
      ),
    ).toBe(30);
  });

  it('judges an expiry mismatch by the registry’s date, and a redemption or hold at the registry as due now', () => {
    // The reseller says renewed to next year; the registry still ends the domain in 3 days
    // (docs/registry.md): critical, and its deadline is the registry's, as quiet hours judge it.
    const mismatch = {
      kind: 'registry_expiry_mismatch',
      severity: 'critical',
      domain_name: 'drift.com',
      date_expiry: new Date(NOW + 365 * DAY).toISOString(),
      days_left: 365,
      registry: {
        kind: 'registry_expiry_mismatch',
        severity: 'critical',
        date_expiry: new Date(NOW + 3 * DAY).toISOString(),
        days_left: 3,
        status: [],
        server: 'https://rdap.example',
      },
    } as unknown as DomainFinding;
    const prev = alerted(25, { kind: 'registry_expiry_mismatch', stage: 3 });
    expect(escalationHours(mismatch, prev, input({ stage: 3 }))).toBe(25);
    // In redemption at the registry: the domain is being deleted now, whatever the reseller's date.
    const redemption = { ...mismatch, kind: 'registry_redemption' } as DomainFinding;
    const before = alerted(25, { kind: 'registry_redemption', stage: null });
    expect(escalationHours(redemption, before, input({ stage: null }))).toBe(25);
  });

  it('does not escalate too early, too far from the deadline, silenced, below critical, never alerted, or without a policy', () => {
    expect(escalationHours(quarantine(5), alerted(23), input())).toBeNull();
    expect(escalationHours(quarantine(8), alerted(25), input())).toBeNull();
    expect(escalationHours(quarantine(5), alerted(25), input({ silenced: true }))).toBeNull();
    expect(escalationHours(quarantine(5, 'warning'), alerted(25), input())).toBeNull();
    expect(escalationHours(quarantine(5), null, input())).toBeNull();
    expect(escalationHours(quarantine(5), alerted(25), input({ policy: undefined }))).toBeNull();
  });

  it('escalates once per rung: not again at the rung it escalated at, again at a lower one', () => {
    expect(escalationHours(quarantine(5), alerted(25, { escalated: -1 }), input())).toBeNull();
    const expiring = { ...quarantine(5), kind: 'expiring', days_left: 3 } as unknown as DomainFinding;
    const was = alerted(48, { kind: 'expiring', stage: 7, escalated: 7 });
    expect(escalationHours(expiring, was, input({ stage: 7 }))).toBeNull();
    expect(escalationHours(expiring, was, input({ stage: 3 }))).toBe(48);
  });

  it('counts from the first alert as critical: a finding alerted as a warning that turns critical is not escalated at once', () => {
    // Alerted as a warning 49 hours ago (expiring, 9 days left); now 6 days left, critical.
    const expiring = {
      ...quarantine(5),
      kind: 'expiring',
      days_left: 6,
      date_expiry: new Date(NOW + 6 * DAY).toISOString(),
    } as unknown as DomainFinding;
    const asWarning = alerted(49, { kind: 'expiring', severity: 'warning', stage: 14 });
    expect(escalationHours(expiring, asWarning, input({ stage: 7 }))).toBeNull();
    // Its first critical alert starts the count: this scan's, escalated afterHours later.
    const at = new Date(NOW).toISOString();
    const next = nextAlertMemory(expiring, asWarning, { at, stage: 7, escalatedNow: false });
    expect(next).toEqual({ kind: 'expiring', severity: 'critical', stage: 7, at, first_at: at });
    const later = NOW + 25 * HOUR;
    expect(escalationHours(expiring, next, input({ stage: 7, nowMs: later }))).toBe(25);
  });

  it('counts an alert of another kind as another finding, and a first alert stored in the future as due', () => {
    expect(escalationHours(quarantine(5), alerted(25, { kind: 'expiring' }), input())).toBeNull();
    const future = alerted(-100);
    expect(escalationHours(quarantine(5), future, input())).toBe(POLICY.afterHours);
  });
});

describe('nextAlertMemory', () => {
  it('keeps the first alert and the escalated rung while the finding stays its kind, and starts over for another kind', () => {
    const at = new Date(NOW).toISOString();
    const first = new Date(NOW - 30 * HOUR).toISOString();
    const f = quarantine(5);
    expect(nextAlertMemory(f, null, { at, stage: -1, escalatedNow: false })).toEqual({
      kind: 'quarantine',
      severity: 'critical',
      stage: -1,
      at,
      first_at: at,
    });
    expect(
      nextAlertMemory(f, alerted(30, { first_at: first }), { at, stage: -1, escalatedNow: true }),
    ).toMatchObject({ at, first_at: first, escalated: -1 });
    expect(
      nextAlertMemory(f, alerted(30, { first_at: first, escalated: -1 }), {
        at,
        stage: -1,
        escalatedNow: false,
      }),
    ).toMatchObject({ first_at: first, escalated: -1 });
    expect(
      nextAlertMemory(f, alerted(30, { kind: 'expiring', escalated: 7 }), {
        at,
        stage: -1,
        escalatedNow: false,
      }),
    ).toEqual({ kind: 'quarantine', severity: 'critical', stage: -1, at, first_at: at });
  });
});

describe('escalation through the comparison with memory', () => {
  const T0 = Date.parse('2026-11-22T06:00:00Z');
  const policy = { ...DEFAULT_STATE_POLICY, escalation: POLICY };
  /** A scanner of one domain, soon.nl without auto-renew expiring `expiresIn` after T0, with memory. */
  const scannerOf = (expiresIn: number) => {
    const soon = domain('soon.nl', T0, { auto_renew: false, date_expiry: T0 + expiresIn });
    return (now: number, state: ScanState) => {
      const { report, observed } = scanOf([soon], now);
      const result = compareWithState({ report, observed, state, policy, scope: 'http://reseller.test' });
      return { result, finding: result.report.findings[0] as DomainFinding & { change: string } };
    };
  };

  it('does not page the escalation recipients the moment a domain alerted as a warning turns critical', () => {
    // MIN_SEVERITY warning (the default): soon.nl is alerted at 9 days left, a warning, and turns
    // critical at 7. That first critical alert is no escalation; one afterHours later is.
    const scan = scannerOf(9 * DAY);
    const first = scan(T0, EMPTY_STATE);
    expect(first.finding).toMatchObject({ severity: 'warning', change: 'new' });
    const critical = scan(T0 + 2 * DAY + HOUR, first.result.next);
    expect(critical.finding).toMatchObject({ severity: 'critical', change: 'escalated' });
    expect(critical.finding).not.toHaveProperty('escalated_after_hours');
    const unanswered = scan(T0 + 3 * DAY + 2 * HOUR, critical.result.next);
    expect(unanswered.finding).toMatchObject({ severity: 'critical', escalated_after_hours: 25 });
  });

  it('counts again from the end of a snooze: a domain snoozed for a day is not escalated the scan after', () => {
    // docs/policies.md: a finding snoozed within afterHours of its first alert is not escalated. A
    // snooze that ends gives the team afterHours again; only then is it escalated, once.
    const scan = scannerOf(6 * DAY + 12 * HOUR);
    const first = scan(T0, EMPTY_STATE);
    expect(first.finding).toMatchObject({ severity: 'critical', change: 'new' });
    const memory = first.result.next.domains['soon.nl'];
    const snoozed: ScanState = {
      ...first.result.next,
      domains: {
        ...first.result.next.domains,
        'soon.nl': { ...memory, actions: { snooze: snoozeOf(first.finding, 1, T0 + HOUR) } } as never,
      },
    };
    const during = scan(T0 + 20 * HOUR, snoozed);
    expect(during.finding).not.toHaveProperty('escalated_after_hours');
    const after = scan(T0 + 26 * HOUR, during.result.next);
    expect(after.finding).not.toHaveProperty('escalated_after_hours');
    const unanswered = scan(T0 + 50 * HOUR, after.result.next);
    expect(unanswered.finding).toMatchObject({ escalated_after_hours: 25 });
  });
  it('counts again from the end of an acknowledgement: a quarantine acknowledged early is not escalated the moment its last days begin', () => {
    // Acknowledged within afterHours of its first alert, so acted on (docs/policies.md); the
    // acknowledgement of a quarantine ends as its last 7 days to restore begin (deadlines.md). The
    // team then has afterHours again, as after a snooze, before the escalation recipients are paged.
    const scan = scanLost;
    const first = scan(T0, EMPTY_STATE);
    const during = scan(T0 + 30 * HOUR, acknowledgedAt(first, T0 + HOUR));
    expect(during.finding).not.toHaveProperty('escalated_after_hours');
    const lastDays = scan(T0 + 2 * DAY + HOUR, during.result.next);
    expect(lastDays.result.publish).toBe(true);
    expect(lastDays.finding).not.toHaveProperty('escalated_after_hours');
    const unanswered = scan(T0 + 3 * DAY + 2 * HOUR, lastDays.result.next);
    expect(unanswered.finding).toMatchObject({ escalated_after_hours: 25 });
  });
});

describe('escalation after an acknowledgement that ends', () => {
  // Found by a hostile review: a quarantine escalated, then acknowledged, kept `escalated` at its
  // one rung, so once the acknowledgement ended (its last days to restore) and nobody acted again,
  // the escalation recipients were never paged again, though docs/policies.md says the team has
  // afterHours once more before anyone is paged.
  it('pages the escalation recipients again afterHours after the acknowledgement ends, once', () => {
    const T0 = LOST_T0;
    const scan = scanLost;
    const first = scan(T0, EMPTY_STATE);
    const escalated = scan(T0 + 25 * HOUR, first.result.next);
    expect(escalated.finding).toMatchObject({ escalated_after_hours: 25 });
    const during = scan(T0 + 30 * HOUR, acknowledgedAt(escalated, T0 + 26 * HOUR));
    expect(during.finding).not.toHaveProperty('escalated_after_hours');
    const lastDays = scan(T0 + 2 * DAY + HOUR, during.result.next);
    expect(lastDays.finding).not.toHaveProperty('escalated_after_hours');
    const unanswered = scan(T0 + 3 * DAY + 2 * HOUR, lastDays.result.next);
    expect(unanswered.finding).toMatchObject({ escalated_after_hours: 25 });
    const next = scan(T0 + 3 * DAY + 3 * HOUR, unanswered.result.next);
    expect(next.finding).not.toHaveProperty('escalated_after_hours');
  });
});
