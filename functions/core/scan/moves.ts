import { IncompleteListingError } from '../base/errors';
import type { ResellerClient } from '../reseller/client';
import { UNDERCOUNT } from '../reseller/other-end';
import type { OnMove, Rotation } from '../reseller/paging';
import type { Report } from './report';

/**
 * A read that is not the whole account: how many reads a scan tries when the account moves under
 * it, what a listing that moves does on each (read again, or read on and report it), and the error
 * that fails a run whose report is incomplete (moved, or cut by the time budget) once its alert is out.
 */

/** Reads of the account a scan tries: the last one reads a listing that moves to its end (onMove). */
export const READS = 2;

/** A read started again must fit in the time left at the pace measured, with half again to spare. */
export const PACE_MARGIN = 1.5;

/**
 * What a listing that moves does on this read. The last read reads on to its end and reports it. An
 * earlier one starts over only when a whole read still fits in the time left, at the pace the
 * domain pages went (`domainPages`, whichever list moved: the contacts are few, the domains the
 * read; a million take minutes); else it reads on too, so what it read is still alerted. A clock
 * that went back gives no pace: it reads on.
 */
export function onMove(
  attempt: number,
  client: ResellerClient,
  since: { readonly started: number; readonly clock: () => number },
  domainPages: { readonly read: number; readonly pages: number },
): OnMove {
  if (attempt >= READS) return 'report';
  return (own) => {
    const elapsed = since.clock() - since.started;
    if (elapsed < 0) return 'report';
    const { read, pages } = domainPages.pages > 0 ? domainPages : own;
    const wholeReadMs = (elapsed * Math.max(1, pages)) / Math.max(1, read);
    return client.remainingMs > PACE_MARGIN * wholeReadMs ? 'fail' : 'report';
  };
}

/**
 * How a listing (domains, contacts) the time budget will cut spreads the cut over runs (Rotation): the
 * run is the hour the scan evaluates (`now`, so `--now` reproduces a run's order too), so hourly and
 * daily runs each go on from another page, and a few of them read every page; with the minute, so
 * Lambda's retries of a cut run (a minute or three later) read other pages too. A read that fits
 * keeps the order 1…N.
 */
export function rotation(client: ResellerClient, now: number, clock: () => number): Rotation {
  return {
    run: Math.floor(now / 3_600_000),
    // Floored, so a --now before 1970 gives 0 to 59 too (% keeps the sign: -1, not 59).
    minute: ((Math.floor(now / 60_000) % 60) + 60) % 60,
    clock,
    remainingMs: () => client.remainingMs,
  };
}

/**
 * The error that fails a run whose report is incomplete (`source.incomplete`), once its alert is
 * out: what was read reached a person, and the run still says it could not read the whole account.
 */
export function incompleteScanError(report: Report): IncompleteListingError | undefined {
  const why = report.source.incomplete;
  if (why === undefined) return undefined;
  // Totals that fall short of the account on every run are the reseller's list, not the time budget.
  const advice = why.includes(UNDERCOUNT)
    ? 'run the scan again, and if it repeats on a quiet account, the reseller API lists fewer domains than the account holds (a search back end capping its result window): ask the reseller, as no time budget reads past it'
    : "run the scan again, and if it repeats raise the time budget (scanTimeoutMinutes on AWS, up to Lambda's 15 minutes; --time-budget on the command line) or --concurrency, or scan when the account changes less";
  return new IncompleteListingError(
    `the scan could not read the whole account (${why}); the findings read were reported, marked incomplete; ${advice}`,
    { retryable: false },
  );
}
