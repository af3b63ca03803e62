import { ResellerApiError } from '../base/errors';
import { type ClassifyPolicy, RENEWAL_WINDOW_MS } from '../findings/classify';
import type { ListFilter, ResellerClient } from '../reseller/client';

/**
 * The proven filtered read: which searches it makes, and the arithmetic on their pagination totals
 * that shows they cover the whole account before the scan trusts them.
 *
 * The account is split three times, each time into parts that cannot overlap:
 *
 *   all              = in_window + beyond_window + no_expiry        (on date_expiry: `<=W`, `>W`, empty)
 *   beyond_window    = beyond_renewing + beyond_not_renewing + beyond_renewal_unknown
 *                                                                   (on auto_renewal: `true`, `false`, empty)
 *   beyond_renewing  = beyond_renewing_registered + beyond_renewing_quarantined
 *                                                                   (on status: `registered`, `quarantine`)
 *
 * "The window" here is the read window: the expiry window, widened to 60 days while the
 * `renewal_failed` rule applies ({@link readWindowDays}). Only `beyond_renewing_registered` is left
 * unread: by the rules those domains are healthy (a failed renewal needs a `date_renewal` at least
 * 24 hours past and at most 60 days before expiry, so an expiry less than 59 days away), and their
 * status is one the documentation shows. A quarantined domain with auto-renew on is read
 * (`status=quarantine`, the documentation's own example); one whose status is neither (pending
 * delete, redemption…: perhaps a domain about to be lost, which full mode reports) falls in no part
 * of the third split and breaks its sum. Every search sends each parameter once, so how a server
 * combines repeated parameters (AND, OR) never matters. A server that ignores a parameter answers
 * with its parent's total, which breaks a sum; a record whose date or auto-renew value the server
 * cannot compare (unparseable, missing without the empty-value convention, `"yes"`) falls in no part
 * and breaks a sum too. Then the counts do not prove anything and the caller reads the account in full.
 */

/** The parts of the proof, in the order the report lists them. */
export const COVERAGE_PARTS = [
  'all',
  'in_window',
  'beyond_window',
  'no_expiry',
  'beyond_renewing',
  'beyond_not_renewing',
  'beyond_renewal_unknown',
  'beyond_renewing_registered',
  'beyond_renewing_quarantined',
] as const;
export type CoveragePart = (typeof COVERAGE_PARTS)[number];

/** Pagination totals (`total_results`) of each part's search. */
export type CoverageCounts = Readonly<Record<CoveragePart, number>>;

/** The parts whose domains the filtered read lists; the others are only counted. */
export const READ_PARTS = [
  'in_window',
  'no_expiry',
  'beyond_not_renewing',
  'beyond_renewal_unknown',
  'beyond_renewing_quarantined',
] as const satisfies readonly CoveragePart[];

const DAY_MS = 86_400_000;

/**
 * Days ahead the filtered read lists every domain: the expiry window, or 60 days while the
 * `renewal_failed` rule applies (an auto-renew domain whose renewal failed may expire up to 59
 * days from now, beyond a shorter expiry window, and is critical).
 */
export function readWindowDays(policy: ClassifyPolicy): number {
  return policy.renewalCheck === false
    ? policy.expiryDays
    : Math.max(policy.expiryDays, RENEWAL_WINDOW_MS / DAY_MS);
}

/**
 * The search of every part. The read window's end is rounded up to a whole second (the documented
 * search format has none), so `in_window` holds every domain the rules call expiring or may call a
 * failed renewal, and a few beyond at most, which are read and classified as usual.
 */
export function coverageSearches(now: number, policy: ClassifyPolicy): Record<CoveragePart, ListFilter> {
  const end = Math.ceil((now + readWindowDays(policy) * DAY_MS) / 1000) * 1000;
  const windowEnd = new Date(end).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const beyond = { date_expiry: `>${windowEnd}` };
  return {
    all: {},
    in_window: { date_expiry: `<=${windowEnd}` },
    beyond_window: beyond,
    // The empty value selects an absent field, as the documentation says of transfer_lock.
    no_expiry: { date_expiry: '' },
    beyond_renewing: { ...beyond, auto_renewal: 'true' },
    beyond_not_renewing: { ...beyond, auto_renewal: 'false' },
    beyond_renewal_unknown: { ...beyond, auto_renewal: '' },
    beyond_renewing_registered: { ...beyond, auto_renewal: 'true', status: 'registered' },
    beyond_renewing_quarantined: { ...beyond, auto_renewal: 'true', status: 'quarantine' },
  };
}

/** The outcome of {@link proveCoverage}: proven, or the first check that failed, in words. */
export type CoverageVerdict = { readonly proven: true } | { readonly proven: false; readonly reason: string };

const PARENT: Partial<Record<CoveragePart, CoveragePart>> = {
  in_window: 'all',
  beyond_window: 'all',
  no_expiry: 'all',
  beyond_renewing: 'beyond_window',
  beyond_not_renewing: 'beyond_window',
  beyond_renewal_unknown: 'beyond_window',
  beyond_renewing_registered: 'beyond_renewing',
  beyond_renewing_quarantined: 'beyond_renewing',
};

const LABEL: Record<CoveragePart, string> = {
  all: 'all domains',
  in_window: 'expiring within the window',
  beyond_window: 'expiring beyond it',
  no_expiry: 'without date_expiry',
  beyond_renewing: 'auto-renew on',
  beyond_not_renewing: 'auto-renew off',
  beyond_renewal_unknown: 'auto-renew absent',
  beyond_renewing_registered: 'auto-renew on, registered',
  beyond_renewing_quarantined: 'auto-renew on, quarantined',
};

/**
 * Checks that the searches' totals add up to the account: pure arithmetic, no I/O. Proven only when
 * every part is within its parent and each of the three splits sums exactly to its parent.
 */
export function proveCoverage(counts: CoverageCounts): CoverageVerdict {
  for (const part of COVERAGE_PARTS) {
    const n = counts[part];
    if (!Number.isInteger(n) || n < 0) return unproven(`the total of "${LABEL[part]}" is not a count: ${n}`);
  }
  for (const [part, parent] of Object.entries(PARENT) as Array<[CoveragePart, CoveragePart]>) {
    if (counts[part] > counts[parent]) {
      return unproven(
        `the search for "${LABEL[part]}" counted ${counts[part]} domains, more than "${LABEL[parent]}" (${counts[parent]})`,
      );
    }
  }
  const byDate = sum(counts, ['in_window', 'beyond_window', 'no_expiry']);
  if (byDate !== counts.all) {
    return unproven(
      `searches on date_expiry counted ${counts.in_window} within the window + ${counts.beyond_window} beyond it + ${counts.no_expiry} without it = ${byDate}, but the account holds ${counts.all} domains (${mismatch(byDate, counts.all)})`,
    );
  }
  const byRenewal = sum(counts, ['beyond_renewing', 'beyond_not_renewing', 'beyond_renewal_unknown']);
  if (byRenewal !== counts.beyond_window) {
    return unproven(
      `beyond the window, searches on auto_renewal counted ${counts.beyond_renewing} on + ${counts.beyond_not_renewing} off + ${counts.beyond_renewal_unknown} absent = ${byRenewal}, but ${counts.beyond_window} domains expire beyond it (${mismatch(byRenewal, counts.beyond_window)})`,
    );
  }
  const byStatus = sum(counts, ['beyond_renewing_registered', 'beyond_renewing_quarantined']);
  if (byStatus !== counts.beyond_renewing) {
    const short = counts.beyond_renewing - byStatus;
    return unproven(
      `beyond the window with auto-renew on, searches on status counted ${counts.beyond_renewing_registered} registered + ${counts.beyond_renewing_quarantined} quarantined = ${byStatus}, but ${counts.beyond_renewing} domains are there (${
        short > 0
          ? `${short} with another status: one the API does not document may be a domain about to be lost, and only a full read reports it`
          : mismatch(byStatus, counts.beyond_renewing)
      })`,
    );
  }
  return { proven: true };
}

function sum(counts: CoverageCounts, parts: readonly CoveragePart[]): number {
  return parts.reduce((total, part) => total + counts[part], 0);
}

function mismatch(counted: number, total: number): string {
  return counted < total
    ? `${total - counted} in none of the searches: values the server cannot compare`
    : `${counted - total} counted twice: the server may ignore a search parameter`;
}

const unproven = (reason: string): CoverageVerdict => ({ proven: false, reason });

/** What the counts prove: the read they allow, or why they allow none. */
export type CoverageProof =
  | { readonly proven: true; readonly counts: CoverageCounts }
  | { readonly proven: false; readonly counts?: CoverageCounts; readonly reason: string };

/**
 * Counts every part of the proof but `all`, which the caller measured (one `per_page=1` request
 * each, concurrently) and checks the sums.
 * A server that refuses one of the searches (400, 422: a parameter or value it does not accept)
 * cannot be proven either; any other failure is the scan's failure, as in full mode.
 */
export async function countCoverage(
  client: ResellerClient,
  searches: Readonly<Record<CoveragePart, ListFilter>>,
  all: number,
): Promise<CoverageProof> {
  let entries: Array<readonly [CoveragePart, number]>;
  try {
    entries = await Promise.all(
      COVERAGE_PARTS.map(async (part) =>
        part === 'all'
          ? ([part, all] as const)
          : ([part, await client.countDomains(searches[part])] as const),
      ),
    );
  } catch (error) {
    if (error instanceof ResellerApiError && (error.status === 400 || error.status === 422)) {
      return { proven: false, reason: `the server refused one of its searches (HTTP ${error.status})` };
    }
    throw error;
  }
  const counts = Object.fromEntries(entries) as CoverageCounts;
  const verdict = proveCoverage(counts);
  return verdict.proven ? { proven: true, counts } : { proven: false, counts, reason: verdict.reason };
}
