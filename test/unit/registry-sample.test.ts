import { describe, expect, it } from 'vitest';
import {
  dayNumber,
  inTodaysSample,
  recheckRanks,
  sampleDayOf,
  sampleRank,
  todayOfCycle,
} from '../../functions/core/registry/sample';

const DAY = 86_400_000;
const START = Date.parse('2026-11-22T06:00:00Z');
const names = Array.from({ length: 10_000 }, (_, i) => `${['tulip', 'canal', 'molen'][i % 3]}-${i}.nl`);

describe('the rotating sample', () => {
  it('puts every name in exactly one day of the cycle, so the account is covered in `days` days', () => {
    for (const days of [1, 7, 30]) {
      const seen = new Map<string, number>();
      for (let d = 0; d < days; d++)
        for (const name of names)
          if (inTodaysSample(name, START + d * DAY, days)) seen.set(name, (seen.get(name) ?? 0) + 1);
      expect(seen.size).toBe(names.length);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
    }
  });

  it('spreads names evenly: every day of a 30-day cycle within 25 % of 1/30 of 10 000', () => {
    const perDay = new Array<number>(30).fill(0);
    for (const name of names) perDay[sampleDayOf(name, 30)] = (perDay[sampleDayOf(name, 30)] ?? 0) + 1;
    const expected = names.length / 30;
    expect(Math.min(...perDay)).toBeGreaterThan(expected * 0.75);
    expect(Math.max(...perDay)).toBeLessThan(expected * 1.25);
  });

  it('depends on the UTC day only: any hour of a day picks the same domains, the next day others', () => {
    const dayStart = dayNumber(START) * DAY;
    const at = (t: number) => names.filter((n) => inTodaysSample(n, t, 30));
    expect(at(dayStart)).toEqual(at(dayStart + DAY - 1));
    expect(at(dayStart + DAY)).not.toEqual(at(dayStart));
    expect(todayOfCycle(dayStart + 30 * DAY, 30)).toBe(todayOfCycle(dayStart, 30));
  });

  it('orders the day’s sample differently each cycle, so a short budget leaves out other names each time', () => {
    const today = names.filter((n) => inTodaysSample(n, START, 30));
    const first = (t: number) =>
      [...today].sort((a, b) => sampleRank(a, t, 30) - sampleRank(b, t, 30)).slice(0, 50);
    expect(first(START)).toEqual(first(START + 3_600_000));
    expect(first(START + 30 * DAY)).not.toEqual(first(START));
  });
});

describe('the re-checks rotating order', () => {
  it('puts every re-check among the first `share` ranks within ceil(R / share) days in a row, from any day', () => {
    for (const [count, share] of [
      [1, 1],
      [7, 3],
      [1_000, 1],
      [4_000, 1_000],
      [10_000, 999],
    ] as const) {
      const rechecks = names.slice(0, count);
      for (const from of [0, 5, 123]) {
        const due = new Set<string>();
        for (let d = from; d < from + Math.ceil(count / share); d++)
          for (const [name, rank] of recheckRanks(rechecks, START + d * DAY, share))
            if (rank < share) due.add(name);
        expect(due.size).toBe(count);
      }
    }
  });

  it('gives every name one rank a day, the same for every scan of that day', () => {
    const ranks = recheckRanks(names.slice(0, 500), START, 50);
    expect(new Set(ranks.values()).size).toBe(500);
    expect(recheckRanks(names.slice(0, 500), START + 3_600_000, 50)).toEqual(ranks);
  });
});
