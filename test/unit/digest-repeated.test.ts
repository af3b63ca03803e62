import { describe, expect, it } from 'vitest';
import { renderDigest } from '../../functions/core/alerts/digest';
import { domainFinding, reportOf } from '../support/report';

/**
 * A finding published again by its repeat cadence (compare.ts marks it `repeated: true`) is the
 * only news of a group's own message on the days nothing changes: that message must say why it came.
 */
describe('a digest whose news is a repeat', () => {
  const repeated = {
    ...domainFinding('shop.nl', 'expiring', 'critical', 2),
    change: 'ongoing',
    repeated: true,
  };
  const report = {
    ...reportOf([repeated as never]),
    source: { base_url: 'https://api.example.test', mode: 'full', read: 'full', group: 'vip' },
    changes: [],
    resolved: [],
  };

  it('marks the item as repeated and counts it, not nothing changed', () => {
    const digest = renderDigest(report as never);
    expect(digest).toMatch(/^- REPEATED shop\.nl: expires /m);
    expect(digest).toContain('Since the last scan: nothing changed; 1 repeated as a reminder.');
  });
});
