/**
 * The rotating sample of the registry check: which domains without a finding are checked on which
 * day, so that an account is covered over `days` days without remembering anything. A domain's day
 * is a hash of its name modulo `days`; today is the UTC day number modulo `days`. The same name
 * always falls on the same day of the cycle, every domain falls on exactly one, and a scan with
 * state and one without check the same domains on the same day.
 */

import { fnv1a } from '../base/hash';

const DAY_MS = 86_400_000;

/** A 32-bit hash of `text`: the project's FNV-1a, then murmur3's finaliser so close names spread over every day. */
export function nameHash(text: string): number {
  let h = fnv1a(text);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The UTC day number of `now` (days since 1970-01-01). */
export const dayNumber = (now: number): number => Math.floor(now / DAY_MS);

/** The day of the cycle (0 … days − 1) on which `name` (normalised) is checked. */
export const sampleDayOf = (name: string, days: number): number => nameHash(name) % days;

/** Today's day of the cycle. */
export const todayOfCycle = (now: number, days: number): number => dayNumber(now) % days;

/** True when `name` is in the sample of the day `now` falls on. */
export const inTodaysSample = (name: string, now: number, days: number): boolean =>
  sampleDayOf(name, days) === todayOfCycle(now, days);

/**
 * Where `name` stands in today's sample when the query budget cannot take all of it: an order that
 * changes with each cycle, so a budget that falls short leaves out other domains each time rather
 * than the same ones for ever.
 */
export const sampleRank = (name: string, now: number, days: number): number =>
  nameHash(`${Math.floor(dayNumber(now) / days)}:${name}`);

/**
 * Where each of memory's re-checks stands in line for the places the query budget keeps for them
 * (`share` a day, registry-check.ts's recheckShare): the names in the order of their hash, a window
 * of `share` of them moved on by `share` each UTC day, wrapping round. The first `share` ranks are
 * the day's window, the next ones the next days', so places left over go to those due soonest. Over
 * any ceil(R / share) days in a row the windows cover all R names, so each is looked up within that
 * many days while the same findings are remembered; several scans in one day check the same ones,
 * as the sample does.
 */
export function recheckRanks(names: Iterable<string>, now: number, share: number): Map<string, number> {
  const hashed = [...names].map((name) => ({ name, hash: nameHash(name) }));
  hashed.sort((a, b) => a.hash - b.hash || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const count = hashed.length;
  const ranks = new Map<string, number>();
  if (!count) return ranks;
  const start = ((dayNumber(now) % count) * (Math.max(1, share) % count)) % count;
  hashed.forEach(({ name }, i) => {
    ranks.set(name, (i - start + count) % count);
  });
  return ranks;
}
