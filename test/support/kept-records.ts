import type { Problem } from '../../functions/core/reseller/client';

/**
 * Problem records as a scan publishes them, for the tests of what the page, the view, the feed and
 * the links make of a kept quarantine (memory/kept-quarantine.ts): the record of a domain memory
 * keeps in quarantine while its record reads as nothing to report, and plain unreadable records to
 * stand before it.
 */

/** A kept quarantine's record: restore by 27 Nov 2026 06:00 UTC unless `restore_by` says; critical unless snoozed. */
export const keptRecord = (
  name: string,
  options: { readonly restore_by?: string | null; readonly snoozed?: boolean; readonly reason?: string } = {},
): Problem => ({
  resource: 'domain',
  key: name,
  page: 1,
  reason: options.reason ?? 'read by its dates only; last read in quarantine',
  ...(options.snoozed ? {} : { severity: 'critical' as const }),
  dates_only: true,
  kept_quarantine: true,
  restore_by: options.restore_by === undefined ? '2026-11-27T06:00:00.000Z' : options.restore_by,
});

/** An unreadable record of `broken-<i>.nl` (a missing date). */
export const unreadable = (i: number): Problem => ({
  resource: 'domain',
  key: `broken-${i}.nl`,
  page: 1,
  reason: 'missing date_expiry',
});
