import { describe, expect, it } from 'vitest';
import { criticalCount, unreadableCount } from '../../functions/core/alerts/alert';
import { truncateReport } from '../../functions/core/alerts/message';
import type { Report } from '../../functions/core/scan/scan';
import { reportOf } from '../support/report';

type Problem = Report['problems'][number];
const unreadable = (key: string): Problem => ({
  resource: 'domain',
  key,
  page: 1,
  reason: 'unreadable record',
});
const inQuarantine = (key: string): Problem => ({ ...unreadable(key), severity: 'critical' });

describe('truncateReport (the report the scan log carries)', () => {
  it('says how many of the problem records it left out are critical, as the cut alert JSON does', () => {
    // Prepare: one record kept, one unreadable and two in quarantine left out.
    const report = reportOf(
      [],
      [unreadable('a.nl'), unreadable('b.nl'), inQuarantine('c.nl'), inQuarantine('d.nl')],
    );

    // Act
    const cut = truncateReport(report, 0, 1);

    // Assess: the log's cut counts what the alert counted.
    expect(cut.omitted).toEqual({ findings: 0, problems: 3, unread_problems: 3, critical_problems: 2 });
    expect(criticalCount(cut)).toBe(criticalCount(report));
    expect(unreadableCount(cut)).toBe(unreadableCount(report));
  });
});
