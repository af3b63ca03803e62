import * as z from 'zod';
import { parseRfc3339 } from '../reseller/schemas';

/**
 * Time between scans is checked, never trusted. A stored time is data from the past, not a fact: a
 * clock that ran ahead, a replay with `--now` or a hand-edited file can put it in the future, and an
 * age computed from it would then say "recent" for as long as the future lasts. Pure.
 */

/** How far a scan's `now` may run ahead of the machine's clock (clocks of two hosts differ a little). */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const iso = (ms: number) => new Date(ms).toISOString();

function span(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 120) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.round(ms / HOUR_MS);
  if (hours < 48) return `${hours} hours`;
  return `${Math.round(ms / DAY_MS)} days`;
}

/**
 * Why a scan at `now` must not advance a state last scanned at `lastScanAt`, with the machine's
 * clock at `clockNow` (all epoch ms but `lastScanAt`, as stored); null when it may. A scan more than
 * {@link CLOCK_TOLERANCE_MS} ahead of the clock would store times in the future; a scan before the
 * state's last one would compare the account with a memory newer than itself.
 */
export function scanTimeProblem(now: number, clockNow: number, lastScanAt: string | null): string | null {
  if (now - clockNow > CLOCK_TOLERANCE_MS)
    return `the scan's time ${iso(now)} is ${span(now - clockNow)} ahead of this machine's clock (${iso(clockNow)})`;
  if (lastScanAt === null) return null;
  const last = parseRfc3339(lastScanAt);
  if (!Number.isNaN(last) && now < last)
    return `the scan's time ${iso(now)} is ${span(last - now)} before the state's last scan (${lastScanAt})`;
  return null;
}

/**
 * True when at least `periodMs` passed between `at` (as stored) and `now`: also when `at` is in the
 * future of `now` or does not parse, since a time that cannot be true must never hold an alert back.
 */
export function isDue(at: string, now: number, periodMs: number): boolean {
  const then = parseRfc3339(at);
  if (Number.isNaN(then) || then > now) return true;
  return now - then >= periodMs;
}

/**
 * The stored time `at`, or `now` (this scan's time, as the report has it) when `at` is after it or
 * does not parse: a time carried to the next state is never in its future.
 */
export function notAfter(at: string, now: string): string {
  const then = parseRfc3339(at);
  return Number.isNaN(then) || then > parseRfc3339(now) ? now : at;
}

/** A date-time as the state keeps it: one that does not parse is refused, never read as "recent". */
export const StoredDateTime = z.string().refine((text) => !Number.isNaN(parseRfc3339(text)), {
  error: (issue) => `not an RFC 3339 date-time: ${JSON.stringify(String(issue.input).slice(0, 40))}`,
});
