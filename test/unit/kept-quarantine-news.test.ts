import { describe, expect, it } from 'vitest';
import { criticalRepeats, keptNews } from '../../functions/core/memory/kept-quarantine';
import { ScanMemory } from '../../functions/core/memory/scan-memory';
import { boundedProblemKeys, isNewProblemKey, problemKeysOf } from '../../functions/core/memory/state-bounds';
import type { Problem } from '../../functions/core/reseller/client';
import { reportOf } from '../support/report';

/**
 * When a kept quarantine's problem record is news (keptNews): new since the last message, asked of
 * the whole set of unreadable records at once, as the digest's "new unreadable records" count is.
 */

const kept: Problem = {
  resource: 'domain',
  key: 'zz-kept.nl',
  page: 1,
  reason: 'read by its dates only',
  severity: 'critical',
  dates_only: true,
  kept_quarantine: true,
  restore_by: '2026-12-20T06:00:00.000Z',
};
const broken = (n: number): Problem[] =>
  Array.from({ length: n }, (_, i) => ({
    resource: 'domain',
    key: `broken-${i}.nl`,
    page: 1,
    reason: 'missing date_expiry',
  }));

/** keptNews of `problems` after a message that saved `saved`'s keys, publishing now (no cadence). */
function newsOf(problems: Problem[], saved: Problem[]) {
  const { kept: keys, digest } = boundedProblemKeys(problemKeysOf(saved, undefined));
  const head = {
    problem_keys: keys,
    ...(digest ? { problem_keys_digest: digest } : {}),
    last_published_at: '2026-11-22T05:00:00.000Z',
  };
  const report = reportOf([], problems);
  // As decidePublish asks it (compare.ts): of the whole set of this scan's keys at once.
  const now = problemKeysOf(problems, undefined);
  const out = keptNews(report, {
    publish: true,
    due: new Set(),
    lastDays: new Set(),
    ended: new Set(),
    worse: new Set(),
    keys: now,
    isNew: isNewProblemKey(head, now),
  });
  return out.problems.find((p) => p.key === 'zz-kept.nl')?.news;
}

describe('a kept quarantine as news', () => {
  it('is not news again among more unreadable records than the state keeps keys of, the set unchanged', () => {
    // 1 500 records: the state keeps the first 1 000 keys and a digest of all; the kept one sorts last.
    const problems = [...broken(1500), kept];
    expect(newsOf(problems, problems)).toBeUndefined();
  });

  it('is news the first time it is unreadable, among many records or few', () => {
    expect(newsOf([...broken(1500), kept], broken(1500))).toBe(true);
    expect(newsOf([...broken(3), kept], broken(3))).toBe(true);
  });

  it('is not news again among few records', () => {
    const problems = [...broken(3), kept];
    expect(newsOf(problems, problems)).toBeUndefined();
  });
});

describe('criticalRepeats', () => {
  const at = (findings: () => never[]) => ({
    policy: { repeat: { critical: 20 } },
    lastPublished: '2026-11-21T05:00:00.000Z',
    findings,
  });
  const now = Date.parse('2026-11-22T06:00:00.000Z');
  const never = () => false;

  it('does not ask which findings its records are said with when no record that says quarantine is critical', () => {
    const asked: string[] = [];
    const findings = () => {
      asked.push('findings');
      return [];
    };
    const { lines } = criticalRepeats(
      [kept, ...broken(2)],
      new ScanMemory(),
      now,
      at(findings),
      never,
      never,
    );
    expect(asked).toEqual([]);
    // The kept quarantine is due by its own (no alert remembered: the last message's) cadence.
    expect(lines.map(([n]) => n)).toEqual([1, 0, 0, 0]);
  });

  it('asks once a record that says quarantine, not one memory stands for, is critical and due', () => {
    const says: Problem = { ...(broken(1)[0] as Problem), severity: 'critical' };
    const asked: string[] = [];
    const findings = () => {
      asked.push('findings');
      return [];
    };
    const { lines } = criticalRepeats([says], new ScanMemory(), now, at(findings), never, never);
    expect(asked).toEqual(['findings']);
    expect(lines[0]).toEqual([
      1,
      'unreadable record in quarantine repeated after 20 h',
      'unreadable records in quarantine repeated after 20 h',
    ]);
  });
});
