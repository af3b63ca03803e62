import { describe, expect, it } from 'vitest';
import { smsDisposition } from '../../functions/core/alerts/groups';
import type { Problem } from '../../functions/core/reseller/client';
import { parseQuietHours } from '../../functions/core/scan/quiet-hours';
import type { Report } from '../../functions/core/scan/scan';
import { T0 } from '../support/account-model';
import { DAY, domain, scanWithState } from '../support/state-scan';
import { EMPTY_STATE } from '../support/whole-state';

/**
 * Quiet hours and a record published critical by what memory last knew of its domain
 * (`remembered_kind`, kept-quarantine.ts keptCritical): it is as urgent as the finding it stands
 * for. An expiry already past is no deadline within 48 hours (docs/policies.md): the SMS of an
 * expired domain waits for the morning whether its record reads expired or could not be read.
 */

const expired = domain('gone.nl', T0, { auto_renew: false, date_expiry: T0 - 2 * DAY });
const broken: Problem = { resource: 'domain', key: 'gone.nl', page: 1, reason: 'date_expiry: Invalid input' };
// 23:30 in Amsterdam (CET), inside 22:00-07:00.
const now = Date.parse('2026-11-22T22:30:00Z');
const night = (report: Report) =>
  smsDisposition(report, {
    hours: parseQuietHours('22:00-07:00') ?? undefined,
    timeZone: 'Europe/Amsterdam',
    now,
  });

describe('quiet hours and an expired domain whose record can no longer be read', () => {
  it('holds the SMS as it holds the one of the domain read expired', () => {
    const first = scanWithState([expired], T0, EMPTY_STATE);
    const read = scanWithState([expired], now, first.next).report as unknown as Report;
    const broke = scanWithState([], now, first.next, { problems: [broken] }).report as unknown as Report;
    expect(broke.problems).toEqual([
      expect.objectContaining({ severity: 'critical', remembered_kind: 'expired' }),
    ]);
    expect(night(read)).toMatchObject({ sms: 'held' });
    expect(night(broke)).toMatchObject({ sms: 'held' });
  });

  it('sends at once a quarantine memory knew whose restore-by has passed', () => {
    const held = { ...broken, key: 'held.nl' };
    const report = {
      ...(scanWithState([], now, EMPTY_STATE).report as unknown as Report),
      problems: [{ ...held, severity: 'critical' as const, remembered_kind: 'quarantine', restore_by: null }],
    };
    expect(night(report)).toEqual({ sms: 'send' });
  });
});
