import { CLAIM_CLOCK_SLACK_MS, type ClaimAnswer, RESTORE_CLAIM_MS } from '../memory/audit';
import type { RestoreOutcome, RestoreOutcomeKind } from './restore-outcome';

/**
 * A restore's claim on its domain as the restore decision and `sentinel restore` use it: taken
 * before the reseller is called, given up or kept after, and the words that say until when another
 * restore's claim holds the domain (the 409 page, the command's refusal).
 */

/** One request's claim on restoring its domain, in the state store (functions/core/memory/audit.ts). */
export interface ClaimPort {
  /** Taken, and when it lapses; or not, as another restore of the domain holds a live claim, and until when. */
  take(): Promise<ClaimAnswer>;
  /** Gives the claim up: the restore certainly did not happen. */
  release(): Promise<void>;
}

/**
 * The outcomes after which the claim stays until it lapses: the domain was restored, or may have
 * been. Any other outcome sent no restore, or one the reseller clearly did not carry out, and
 * gives the claim up so the next click may try.
 */
export const CLAIM_KEPT_AFTER: ReadonlySet<RestoreOutcomeKind> = new Set(['restored', 'outcome_unknown']);

/** The minute a claim on a domain that lapses at `until` (epoch ms) has lapsed by, as `HH:MM UTC`. */
const lapseMinute = (until: number): string =>
  `${new Date(Math.ceil(until / 60_000) * 60_000).toISOString().slice(11, 16)} UTC`;

/**
 * How long another restore's claim holds `domain`, as the restore link's 409 page and
 * `sentinel restore` say it: until its lapse, when the store said, else the longest a claim can
 * hold (its life, and the slack a claim taken by a clock running ahead is allowed: claimHolds).
 */
export const claimHeldLine = (until: number | undefined): string =>
  until === undefined
    ? `it holds the domain at most ${(RESTORE_CLAIM_MS + CLAIM_CLOCK_SLACK_MS) / 60_000} minutes`
    : `it holds the domain until ${lapseMinute(until)}: try again after that`;

/** What the restore link's page and `sentinel restore` add when a restore's claim, lapsing at `until`, could not be given up. */
export const claimNotReleasedLine = (domain: string, until: number): string =>
  `This restore’s hold on ${domain} could not be given up, so another try is refused until ${lapseMinute(until)}.`;

/**
 * Gives a restore's claim up after an outcome that restored nothing, or keeps it
 * ({@link CLAIM_KEPT_AFTER}); the restore link and `sentinel restore` alike. A claim that could not
 * be given up lapses on its own at `until`; until then every try reads "in progress", so the
 * outcome says when.
 */
export async function settleClaim(
  decided: RestoreOutcome,
  domain: string,
  claim: Pick<ClaimPort, 'release'>,
  until: number,
): Promise<RestoreOutcome> {
  if (CLAIM_KEPT_AFTER.has(decided.kind)) return decided;
  try {
    await claim.release();
    return decided;
  } catch (error) {
    const held = claimNotReleasedLine(domain, until);
    return {
      ...decided,
      message: `${decided.message} ${held}`,
      claimHeld: held,
      detail: `${decided.detail ? `${decided.detail}; ` : ''}the restore claim could not be released: ${errorDetail(error)}`,
    };
  }
}

const errorDetail = (error: unknown): string => (error instanceof Error ? error.message : String(error));
