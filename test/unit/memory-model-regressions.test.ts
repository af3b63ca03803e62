import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import type { Domain } from '../../functions/core/reseller/schemas';
import { DAY, domain, heldInQuarantine, scanOf, scanUnjudged, whysAt } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE, type ScanState } from '../support/whole-state';

/** Defects the model of an account (memory-model.property.test.ts) found, each shrunk to its example. */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;

function run(domains: Parameters<typeof scanOf>[0], now: number, state: ScanState) {
  const { report, observed } = scanOf(domains, now);
  return compareWithState({ report, observed, state, policy: DEFAULT_STATE_POLICY });
}
const findingOf = (r: ReturnType<typeof run>, name: string) =>
  r.report.findings.find((f) => 'domain_name' in f && f.domain_name === name) as
    | (DomainFinding & { change: string })
    | undefined;

describe('memory after a clock that ran back a little', () => {
  it('does not announce the rung a finding already stood on as escalated again', () => {
    // A day and 23 hours left: the 1-day rung, announced as new.
    const soon = domain('soon.nl', T0, { auto_renew: false, date_expiry: T0 + 2 * DAY - HOUR });
    const first = run([soon], T0, EMPTY_STATE);
    expect(findingOf(first, 'soon.nl')).toMatchObject({ change: 'new', days_left: 1 });
    // The clock ran an hour back (--allow-clock-skew): two days left by it, the 3-day rung.
    const back = run([soon], T0 - HOUR, first.next);
    expect(findingOf(back, 'soon.nl')?.change).toBe('ongoing');
    // At the real time again nothing changed: the same expiry on the same rung is not news.
    const again = run([soon], T0 + 10 * 60_000, back.next);
    expect(findingOf(again, 'soon.nl')?.change).toBe('ongoing');
    expect(again.why).not.toContain('1 escalated');
  });
});

describe('a critical finding whose record can no longer be read', () => {
  const unreadable = (name: string) => ({
    resource: 'domain' as const,
    key: name,
    page: 1,
    reason: 'date_expiry: Invalid input',
  });
  const runWith = (domains: Parameters<typeof scanOf>[0], now: number, state: ScanState, name?: string) => {
    const { report, observed } = scanOf(domains, now, { problems: name ? [unreadable(name)] : [] });
    return compareWithState({ report, observed, state, policy: DEFAULT_STATE_POLICY });
  };

  it('is published again by the critical cadence while its record cannot be read', () => {
    const ok = domain('a.nl', T0);
    const lapsed = domain('gone.nl', T0, { auto_renew: false, date_expiry: T0 - DAY });
    const first = runWith([ok, lapsed], T0, EMPTY_STATE);
    expect(findingOf(first, 'gone.nl')).toMatchObject({ kind: 'expired', change: 'new' });
    const cut = runWith([ok], T0 + HOUR, first.next, 'gone.nl');
    expect(cut.why).toEqual(['1 new unreadable record']);
    // A day on, still unreadable: memory knows it expired, and nobody snoozed it.
    const day = runWith([ok], T0 + 22 * HOUR, cut.next, 'gone.nl');
    expect(day.publish).toBe(true);
    // Within the cadence it is not said again.
    const soon = runWith([ok], T0 + 23 * HOUR, day.next, 'gone.nl');
    expect(soon.publish).toBe(false);
  });
});

describe('a finding kept because its record could not be judged', () => {
  it('is repeated once per cadence and escalated once, not at every scan', () => {
    const policy = { ...DEFAULT_STATE_POLICY, escalation: { afterHours: 24, withinDays: 7 } };
    const runWith = (d: readonly Domain[], now: number, state: ScanState) =>
      scanUnjudged(d, now, state, policy);
    const lapsed = domain('gone.nl', T0, { auto_renew: false, date_expiry: T0 - HOUR });
    const first = runWith([lapsed], T0, EMPTY_STATE);
    // Its status is now one the API does not document, its expiry moved: memory keeps it expired.
    const odd = { ...lapsed, status: ['pendingTransfer'], date_expiry: T0 - HOUR + 10 * 60_000 };
    const state = runWith([odd], T0 + HOUR, first.next).next;
    const why = whysAt(
      [21, 22, 23, 25, 26, 27].map((hours) => T0 + hours * HOUR),
      state,
      (now, s) => runWith([odd], now, s),
    );
    expect(why).toEqual([
      ['1 critical repeated after 20 h'],
      [],
      [],
      ['1 critical not acted on, escalated'],
      [],
      [],
    ]);
  });
});

describe('a finding kept because its record could not be judged, read as another kind', () => {
  const policy = { ...DEFAULT_STATE_POLICY, repeat: { critical: 20, warning: 168, cap: 1 } };
  const runWith = (d: readonly Domain[], now: number, state: ScanState) =>
    scanUnjudged(d, now, state, policy);
  /**
   * `before` alerted at T0, then read as `odd` an hour on; whether each scan at 21, 42, 63 and 84 h
   * says a repeat.
   */
  const repeatsOf = (before: Domain, odd: Domain) => {
    const first = runWith([before], T0, EMPTY_STATE);
    expect(first.why).toEqual(['1 new']);
    const state = runWith([odd], T0 + HOUR, first.next).next;
    return whysAt(
      [21, 42, 63, 84].map((hours) => T0 + hours * HOUR),
      state,
      (now, s) => runWith([odd], now, s),
    ).map((why) => why.some((w) => w.includes('repeated')));
  };

  it('is repeated no more than its cadence cap allows', () => {
    const held = heldInQuarantine(T0, 1);
    // Its status is now one the API does not document: by its dates it reads expired, and memory
    // keeps it in quarantine (a restore is not to be believed from dates alone), with the restore-by
    // it was read with: 39 days off, not its last days, so its cap holds it as any quarantine's
    // (kept-quarantine-memory.test.ts: its last days, and a state saved before restore-by was kept).
    expect(repeatsOf(held, { ...held, status: ['pendingDelete'] })).toEqual([true, false, false, false]);
  });

  it('is held by its cap when the finding kept is not a quarantine', () => {
    const lapsed = domain('lapsed.nl', T0, { auto_renew: false, date_expiry: T0 - 2 * DAY });
    // Undocumented status, and an expiry ten days on (a warning by its dates): memory keeps it expired.
    const odd = { ...lapsed, status: ['pendingDelete'], date_expiry: T0 + 10 * DAY };
    expect(repeatsOf(lapsed, odd)).toEqual([true, false, false, false]);
  });
});
