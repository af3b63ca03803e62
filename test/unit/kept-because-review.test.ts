import { describe, expect, it } from 'vitest';
import { type DomainFinding, isDomainFinding } from '../../functions/core/findings/classify';
import { nextStep } from '../../functions/core/findings/next-step';
import { withRegistryView } from '../../functions/core/findings/registry-rules';
import type { Report } from '../../functions/core/scan/scan';
import { undocumentedStatusProblem } from '../../functions/core/scan/scan-problems';
import { DAY, domain, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE } from '../support/whole-state';

/**
 * A registry finding memory keeps because the record's status is not documented, while this scan
 * did check the registry: said as kept for the status, never as a registry that could not be checked.
 */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const policy = DEFAULT_STATE_POLICY;

const withRegistry = (report: Report, checked: number): Report => ({
  ...report,
  registry: { checked, unconfirmed: [] } as unknown as Report['registry'],
});

describe('a remembered registry finding kept for an undocumented status', () => {
  it('says the status is why it is kept when the registry was checked this scan', () => {
    const d = domain('shop.com', T0, { auto_renew: false, date_expiry: T0 + 200 * DAY });
    // Scan one: the registry says the domain is on hold.
    const first = scanOf([d], T0);
    const read = first.report.findings[0] as DomainFinding;
    const held = withRegistryView(
      read,
      { ...d, quarantine: false },
      {
        kind: 'registry_hold',
        severity: 'critical',
        date_expiry: new Date(d.date_expiry).toISOString(),
        days_left: 200,
        status: ['client hold'],
        server: 'https://rdap.test',
      },
      T0,
    );
    const one = compareWithState({
      report: withRegistry(
        { ...first.report, findings: [held], summary: { critical: 1, warning: 0, info: 0 } },
        1,
      ),
      observed: first.observed,
      state: EMPTY_STATE,
      policy,
    });
    expect(one.next.domains['shop.com']?.finding?.kind).toBe('registry_hold');
    // Scan two: the registry was checked and says nothing; the record's status is not documented.
    const odd = { ...d, status: ['registered', 'clientHold'] };
    const problem = undocumentedStatusProblem(odd, 1);
    const second = scanOf([odd], T0 + DAY, { problems: problem ? [problem] : [] });
    const two = compareWithState({
      report: withRegistry(second.report, 1),
      observed: second.observed,
      state: one.next,
      policy,
    });
    const f = two.report.findings.find(isDomainFinding) as DomainFinding;
    expect(f.remembered?.kind).toBe('registry_hold');
    expect(f.remembered?.because).toBe('status_undocumented');
    expect(nextStep(f)).not.toContain('the registry could not be checked');
  });
});
