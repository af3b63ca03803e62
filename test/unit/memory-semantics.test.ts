import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { snoozeOf } from '../../functions/core/memory/actions';
import { DAY, domain, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE, type ScanState } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;

function run(domains: Parameters<typeof scanOf>[0], now: number, state: ScanState) {
  const { report, observed } = scanOf(domains, now, {});
  return compareWithState({
    report,
    observed,
    state,
    policy: DEFAULT_STATE_POLICY,
    scope: 'http://reseller.test',
  });
}
const findingOf = (r: ReturnType<typeof run>, name: string) =>
  r.report.findings.find((f) => 'domain_name' in f && f.domain_name === name) as
    | (DomainFinding & { change: string; repeated?: boolean })
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
});
