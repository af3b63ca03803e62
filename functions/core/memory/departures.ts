import { parseRfc3339 } from '../reseller/schemas';
import type { Departure, DomainActions, DomainMemory, StateHead } from './state';

/**
 * What the state keeps of the domains announced as gone (`left_account`), so that one that comes
 * back is said to be back (`returned`), with the snooze or acknowledgement it had, instead of
 * showing up as if it were seen for the first time. Kept {@link DEPARTED_DAYS} days, the newest
 * {@link MAX_DEPARTED} (a few hundred bytes each in the account-wide part of the state). Pure.
 */

export const DEPARTED_DAYS = 90;
export const MAX_DEPARTED = 100;
const DAY_MS = 86_400_000;

/** True for a departure time (epoch ms) that parses and is less than {@link DEPARTED_DAYS} before `nowMs`. */
const recent = (at: number, nowMs: number): boolean =>
  !Number.isNaN(at) && nowMs - at < DEPARTED_DAYS * DAY_MS;

/** What the state keeps of a domain that leaves now, remembered as `was`. */
export function departureOf(was: DomainMemory, at: string): Departure {
  return {
    at,
    ...(was.name === undefined ? {} : { name: was.name }),
    ...(was.group === undefined ? {} : { group: was.group }),
    ...(was.actions ? { actions: was.actions } : {}),
  };
}

/**
 * The domains read now that memory knew only as gone, less than {@link DEPARTED_DAYS} ago: by key,
 * the departure they return from. One kept longer (no scan pruned it since) is seen for the first
 * time: an acknowledgement from months before must not silence it.
 */
export function returning(
  head: Pick<StateHead, 'departed'>,
  seen: { has(key: string): boolean },
  prior: ReadonlyMap<string, unknown>,
  nowMs: number,
): Map<string, Departure> {
  const back = new Map<string, Departure>();
  // The departures (at most MAX_DEPARTED), not every domain read (a million).
  for (const [key, d] of Object.entries(head.departed ?? {}))
    if (seen.has(key) && !prior.has(key) && recent(parseRfc3339(d.at), nowMs)) back.set(key, d);
  return back;
}

/** The actions a returning domain brings back, by key, to apply and keep as if it had never left. */
export function returningActions(back: ReadonlyMap<string, Departure>): Map<string, DomainActions> {
  const out = new Map<string, DomainActions>();
  for (const [key, d] of back) if (d.actions) out.set(key, d.actions);
  return out;
}

/**
 * The departures to keep next: the last ones less those that came back, and those past
 * {@link DEPARTED_DAYS} or a time that does not parse, with the ones that left now; the newest
 * {@link MAX_DEPARTED}. A time after `nowMs` (saved by a scan whose clock ran ahead) is brought back
 * to it: kept in the future, it would outlast its 90 days and push out the domains that leave now.
 * Undefined when none is left (a state with no departure writes none).
 */
export function nextDeparted(
  head: Pick<StateHead, 'departed'>,
  left: ReadonlyMap<string, Departure>,
  back: ReadonlyMap<string, Departure>,
  nowMs: number,
): Record<string, Departure> | undefined {
  const now = new Date(nowMs).toISOString();
  const all = new Map<string, Departure>(Object.entries(head.departed ?? {}));
  for (const key of [...back.keys(), ...left.keys()]) all.delete(key);
  // Those that left now first: a time brought back to now must not push one of them out.
  const kept = [
    ...[...left].map(([key, d]) => [key, d, parseRfc3339(d.at)] as const),
    ...byAge(all, nowMs, now),
  ]
    .filter(([, , at]) => recent(at, nowMs))
    .slice(0, MAX_DEPARTED);
  if (kept.length === 0) return undefined;
  return Object.fromEntries(kept.map(([key, d]) => [key, d] as const).sort(([a], [b]) => a.localeCompare(b)));
}

/** The departures kept from the last state, newest first, a time after `nowMs` brought back to `now`. */
function byAge(all: ReadonlyMap<string, Departure>, nowMs: number, now: string) {
  return [...all]
    .map(([key, d]) => {
      const at = parseRfc3339(d.at);
      return at > nowMs ? ([key, { ...d, at: now }, nowMs] as const) : ([key, d, at] as const);
    })
    .sort(([a, , x], [b, , y]) => y - x || a.localeCompare(b));
}
