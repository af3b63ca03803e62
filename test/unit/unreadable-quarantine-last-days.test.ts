import { describe, expect, it } from 'vitest';
import type { Problem } from '../../functions/core/reseller/client';
import { HOUR, T0 } from '../support/account-model';
import { groupScanner } from '../support/group-scan';
import { heldInQuarantine } from '../support/state-scan';
import { EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * A domain in its last days to restore whose record can no longer be read is repeated daily, as
 * it was while its record read quarantine (docs/policies.md: the daily repeat in the last days is a
 * deadline, not a reminder), whatever the critical cadence: with a weekly one it was said once, as
 * a new unreadable record, and then not again before its restore-by had passed.
 */

const { scan } = groupScanner({ repeat: { critical: 'weekly' }, policies: [] });
/** In .nl quarantine (40 days to restore) since 35 days before T0: restore by 27 Nov 2026 06:00 UTC. */
const held = heldInQuarantine(T0, 35);
const broken: Problem = { resource: 'domain', key: 'held.nl', page: 1, reason: 'date_expiry: Invalid input' };

/** Which of the scans at `hours` after T0 published, the record broken from the first on. */
function publishedAt(hours: readonly number[]): number[] {
  let state: ScanState = scan([held], T0, EMPTY_STATE).next;
  return hours.filter((h) => {
    const s = scan([], T0 + h * HOUR, state, { problems: [broken] });
    state = s.next;
    return s.result.publish;
  });
}

describe('a quarantine in its last days whose record can no longer be read', () => {
  it('is repeated daily under a weekly critical cadence, each day once', () => {
    expect(publishedAt([1, 12, 20, 22, 30, 42, 50, 62, 70, 82])).toEqual([1, 22, 42, 62, 82]);
  });
});
