import { describe, expect, it } from 'vitest';
import { renderSms } from '../../functions/core/alerts/alert';
import { chatItems } from '../../functions/core/alerts/chat';
import { renderDigest } from '../../functions/core/alerts/digest';
import type { Domain } from '../../functions/core/reseller/schemas';
import type { Report } from '../../functions/core/scan/scan';
import { registrantConflictProblem } from '../../functions/core/scan/scan-problems';
import { HOUR, T0 } from '../support/account-model';
import {
  heldInQuarantine,
  renewedUndocumented,
  scanUnjudged as run,
  scanWithState,
  undocumentedProblems,
  whysAt,
} from '../support/state-scan';
import { DEFAULT_STATE_POLICY, EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * A quarantine kept as remembered while its record, read by its dates only (a status the API does
 * not document), gives no finding at all: renewed a year on, auto-renew on. Memory keeps the
 * quarantine; its problem record is published as one that says quarantine (critical), with the
 * restore-by memory knows, and repeated daily in its last days as a quarantine finding is. The
 * calendar feed keeps its restore-by event (calendar-kept-no-finding.test.ts).
 */

/** In .nl quarantine (40 days to restore) since 35 days before T0: restore by 27 Nov 2026 06:00 UTC. */
const held = heldInQuarantine(T0, 35);
const healthy: Domain = renewedUndocumented(held, T0);

/** Alerted at T0 in quarantine, then read healthy with an undocumented status an hour on. */
function keptState(): ScanState {
  const first = run([held], T0, EMPTY_STATE);
  return run([healthy], T0 + HOUR, first.next).next;
}

const keptReport = (): Report => run([healthy], T0 + 25 * HOUR, keptState()).report as unknown as Report;

describe('a quarantine kept while its record, read by its dates only, gives no finding', () => {
  it('is a critical problem record saying the remembered restore-by', () => {
    const report = keptReport();
    expect(report.findings).toEqual([]);
    expect(report.problems).toEqual([
      expect.objectContaining({
        key: 'held.nl',
        severity: 'critical',
        reason: expect.stringMatching(
          /checked by its dates only.*; last read in quarantine, restore by 2026-11-27 06:00 UTC \(days left: 3\)$/,
        ),
      }),
    ]);
  });

  it('is counted critical in the digest header and named with its restore-by', () => {
    const digest = renderDigest(keptReport());
    expect(digest).toContain('1 critical');
    expect(digest).not.toContain('Nothing critical or urgent');
    expect(digest).toContain('last read in quarantine, restore by 2026-11-27 06:00 UTC');
  });

  it('is named in the SMS by its days left to restore, as a kept quarantine finding is', () => {
    expect(renderSms(keptReport())).toContain('held.nl LAST DAYS 3d to restore?');
  });

  it('is named in the SMS as a quarantine when its restore-by is not known, and PASSED past it', () => {
    const report = keptReport();
    const unknown = { ...report, problems: report.problems.map((p) => ({ ...p, restore_by: null })) };
    expect(renderSms(unknown)).toContain('held.nl quarantine?');
    const past = renderSms(run([healthy], T0 + 6 * 24 * HOUR, keptState()).report as unknown as Report);
    expect(past).toContain('held.nl restore-by PASSED?');
  });

  it('is announced as a new unreadable record once, not again as its days left fall', () => {
    const times = [2, 26, 50, 74, 98].map((h) => T0 + h * HOUR);
    const reasons = times.map((now) => run([healthy], now, keptState()).report.problems[0]?.reason);
    expect(new Set(reasons).size).toBe(5);
    const whys = whysAt(times, keptState(), (now, s) => run([healthy], now, s)).flat();
    expect(whys.filter((w) => w.includes('new unreadable record'))).toEqual([]);
  });

  it('is repeated daily in its last days to restore, whatever a longer critical cadence', () => {
    const policy = { ...DEFAULT_STATE_POLICY, repeat: { critical: 48, warning: 168 } };
    const first = run([held], T0, EMPTY_STATE, policy);
    const state = run([healthy], T0 + HOUR, first.next, policy).next;
    const times = [22, 43, 64].map((h) => T0 + h * HOUR);
    expect(whysAt(times, state, (now, s) => run([healthy], now, s, policy))).toEqual([
      ['1 in the last days to restore, repeated daily'],
      ['1 in the last days to restore, repeated daily'],
      ['1 in the last days to restore, repeated daily'],
    ]);
  });
});

describe('a kept quarantine whose domain has a second problem record (its registrant handle twice)', () => {
  const conflict: Domain = { ...healthy, registrant_conflict: ['C1', 'C2'] } as Domain;
  const problems = [
    ...undocumentedProblems([conflict]),
    registrantConflictProblem(conflict, 1) as Report['problems'][number],
  ];
  const scan = (now: number, state: ScanState) => scanWithState([conflict], now, state, { problems });

  it('is counted once in the repeats on the critical cadence, as one domain', () => {
    const first = run([held], T0, EMPTY_STATE);
    const state = scan(T0 + HOUR, first.next).next;
    expect(scan(T0 + 22 * HOUR, state).why).toEqual([
      '1 unreadable record in quarantine repeated after 20 h',
    ]);
  });
});

describe('the words of a kept quarantine whose record was read by its dates only', () => {
  it('say it was last read in quarantine and read now under an undocumented status, not that it could not be read', () => {
    const digest = renderDigest(keptReport());
    expect(digest).toContain(
      '- held.nl: last read in quarantine; its record now reads as nothing to report, with a status the API does not document',
    );
    expect(digest).not.toContain('could not be read, so it was not checked');
    const [item] = chatItems(keptReport());
    expect(item?.what).toContain('last read in quarantine; its record now reads as nothing to report');
    expect(item?.what).not.toContain('could not be read');
    expect(item?.next).toContain('restore it there by 27 Nov 2026');
  });

  it('send the reader to the control panel once in the digest line under it, not twice', () => {
    const detail = renderDigest(keptReport())
      .split('\n')
      .find((line) => line.includes('last read in quarantine, restore by'));
    expect(detail?.match(/control panel/g)).toEqual(['control panel']);
  });

  it('send the reader to the control panel once in its chat item, as in the digest', () => {
    const [item] = chatItems(keptReport());
    expect(`${item?.what} ${item?.next}`.match(/control panel/g)).toEqual(['control panel']);
  });
});

describe('the chat line of a kept quarantine past its restore-by', () => {
  it('says the restore-by has passed, not to restore it there by a day gone', () => {
    // Restore by 27 Nov 2026 06:00 UTC; read kept a week past it.
    const past = run([healthy], T0 + 25 * HOUR, keptState());
    const later = run([healthy], T0 + 8 * 24 * HOUR, past.next).report as unknown as Report;
    const item = chatItems(later).find((i) => i.name.includes('held.nl'));
    expect(item?.next).toContain('has passed');
    expect(item?.next).not.toMatch(/restore it there by 27 Nov 2026/);
  });
});
