import { describe, expect, it } from 'vitest';
import { planAlerts } from '../../functions/core/alerts/groups';
import { classify, type DomainFinding, type Severity } from '../../functions/core/findings/classify';
import { alertView } from '../../functions/core/memory/actions';
import { compareMemory } from '../../functions/core/memory/compare';
import { ScanMemory } from '../../functions/core/memory/scan-memory';
import type { StatePolicy } from '../../functions/core/memory/state';
import { loadStatePolicy } from '../../functions/core/memory/state-config';
import type { Domain } from '../../functions/core/reseller/schemas';
import { markFinding, parsePolicies, resolvePolicies } from '../../functions/core/scan/policies';
import { undocumentedStatusProblem } from '../../functions/core/scan/scan-problems';
import { DAY, domain, scanOf } from '../support/state-scan';
import { EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * A quarantine kept as remembered (its record read with a status the API does not document) in a
 * policy group with recipients of its own that hears critical news alone: its repeats and its
 * escalation are judged at the remembered quarantine's level, so the group is sent them too, even
 * while the record reads as a warning or info finding.
 */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;
const FILE = {
  policies: [
    { name: 'watch', match: { tags: ['watch'] }, alertEmails: ['watch@example.nl'], minSeverity: 'critical' },
  ],
};
const POLICIES = parsePolicies(FILE, 'policies file p.json');
const SET = resolvePolicies(POLICIES, {
  classify: { expiryDays: 30, criticalDays: 7 },
  minSeverity: 'warning',
});

type Escalation = StatePolicy['escalation'];

function scan(read: readonly Domain[], now: number, state: ScanState, escalation?: Escalation) {
  const odd = read.filter((x) => x.status.includes('pendingDelete'));
  const problems = odd.map((x) => undocumentedStatusProblem(x, 1)).filter((p) => p !== null);
  const { report } = scanOf(read, now, { problems });
  const findings: DomainFinding[] = [];
  const memory = new ScanMemory();
  for (const [key, value] of Object.entries(state.domains)) memory.remember(key, value);
  for (const d of read) {
    const g = SET.policyFor(d);
    const f = classify(d, now, g?.classify);
    if (f) findings.push(markFinding(f, g));
    memory.observe(d, 1, g?.policy.name);
  }
  const { domains: _d, ...head } = state;
  const minSeverity: Severity = 'warning';
  const result = compareMemory({
    report: { ...report, findings },
    memory,
    head,
    policy: { ...loadStatePolicy({}, minSeverity, POLICIES), ...(escalation ? { escalation } : {}) },
  });
  const next: ScanState = { ...result.next.head, domains: Object.fromEntries(result.next.domains) };
  const plan = result.publish
    ? planAlerts(alertView(result.report, result.silenced), { minSeverity, policies: SET, decided: true })
    : [];
  return { result, next, sent: plan.map((p) => p.group ?? 'account') };
}

/** In .nl quarantine (40 days to restore) since 35 days before T0, in the group: restore by T0 + 5 days. */
const held = domain('held.nl', T0, {
  tags: ['watch'],
  auto_renew: false,
  status: ['quarantine'],
  date_expiry: T0 - 36 * DAY,
  date_deleted: T0 - 35 * DAY,
});

/** The record read with an undocumented status, its expiry `days` on and auto-renew off. */
const renewedOdd = (days: number): Domain => ({
  ...held,
  status: ['pendingDelete'],
  date_expiry: T0 + days * DAY,
  date_deleted: null,
});

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
