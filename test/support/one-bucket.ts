import { BUCKETS, bucketOf, type ItemScope, type Known } from '../../functions/aws/dynamodb-buckets';

export const SCOPE = 'http://reseller.test';
/** The account a planned write is for, as the DynamoDB store names it. */
export const AT: ItemScope = { scope: SCOPE, location: 'dynamodb:state', where: `dynamodb:state (${SCOPE})` };

/** What a store knows of a state it has just opened at generation 1 with nothing in it: what planAll plans a first save from. */
export const emptyKnown = (): Known => ({
  contacts: new Map(),
  parts: new Uint8Array(BUCKETS),
  dirty: new Set(),
  stray: [],
  generation: 1,
});

/**
 * `count` distinct domain keys of one bucket of the DynamoDB state, each a stem of 3 characters a
 * round (9 rounds for 300 to 512 keys) and then `tail`. A bucket is FNV-1a's low 14 bits, which
 * depend on the low 14 bits of its state only: two pieces that meet in one bucket after a stem
 * leave every stem of that state in one state again, so each round finds such a pair after the
 * stems so far and doubles them, where drawing keys at random would take some 16 384 a key.
 */
export function keysOfOneBucket(count: number, tail: string): string[] {
  let stems = [''];
  while (stems.length < count) {
    const stem = stems[0] as string;
    const seen = new Map<number, string>();
    for (let n = 0; stems[0] === stem; n++) {
      const piece = n.toString(36).padStart(3, '0');
      const other = seen.get(bucketOf(stem + piece));
      if (other !== undefined) stems = stems.flatMap((s) => [s + other, s + piece]);
      else seen.set(bucketOf(stem + piece), piece);
    }
  }
  return stems.slice(0, count).map((stem) => stem + tail);
}
