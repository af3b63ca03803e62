import { describe, expect, it } from 'vitest';
import { restoreByLine } from '../../bin/commands/restore';
import { restoreDeadline } from '../../functions/core/findings/quarantine-periods';

const DAY = 86_400_000;
const DELETED = '2026-10-17T06:00:00Z'; // .com: restore by 2026-11-16 06:00 UTC
const at = (iso: string) => restoreDeadline('example.com', Date.parse(DELETED), Date.parse(iso));

describe('what sentinel restore says of the restore-by date before it asks', () => {
  it('counts the days left while there are some', () => {
    expect(restoreByLine(at('2026-11-12T06:00:00Z'))).toBe('restore by 2026-11-16 06:00 UTC (4 days left)');
    expect(restoreByLine(at('2026-11-15T00:00:00Z'))).toBe('restore by 2026-11-16 06:00 UTC (1 day left)');
    expect(restoreByLine(at('2026-11-16T00:00:00Z'))).toBe(
      'restore by 2026-11-16 06:00 UTC (less than a day left)',
    );
  });

  it('says a restore-by date that has passed, not a negative count of days left', () => {
    const past = at(new Date(Date.parse('2026-11-16T06:00:00Z') + 1.5 * DAY).toISOString());
    expect(restoreByLine(past)).toBe(
      'its restore-by date 2026-11-16 06:00 UTC has passed: the registry may release it at any moment',
    );
  });

  it('says why when the deadline is not known', () => {
    const unknown = restoreDeadline('example.zz', Date.parse(DELETED), Date.parse('2026-11-12T06:00:00Z'));
    expect(restoreByLine(unknown)).toMatch(/^restore deadline unknown: /);
  });
});
