import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalTime } from '../../functions/core/memory/state-table';

/** What canonicalTime must agree with: the time when toISOString of it gives the string back. */
function byDate(value: string): number {
  const ms = Date.parse(value);
  return value.length === 24 && Number.isFinite(ms) && new Date(ms).toISOString() === value ? ms : Number.NaN;
}

const FIRST = new Date('0000-01-01T00:00:00.000Z').getTime();
const LAST = new Date('9999-12-31T23:59:59.999Z').getTime();

describe('canonicalTime', () => {
  it('reads every time toISOString writes in years 0000-9999 back to its number', () => {
    fc.assert(
      fc.property(fc.integer({ min: FIRST, max: LAST }), (ms) => {
        expect(canonicalTime(new Date(ms).toISOString())).toBe(ms);
      }),
      { numRuns: 20_000 },
    );
    for (const iso of ['2024-02-29T00:00:00.000Z', '2000-02-29T23:59:59.999Z', '0000-02-29T12:00:00.000Z'])
      expect(canonicalTime(iso)).toBe(Date.parse(iso));
  });

  it('refuses what toISOString would not write, exactly as Date does', () => {
    const mutated = fc
      .tuple(fc.integer({ min: FIRST, max: LAST }), fc.nat(23), fc.constantFrom(...'0123456789-:.TZ +xé'))
      .map(([ms, at, c]) => {
        const iso = new Date(ms).toISOString();
        return `${iso.slice(0, at)}${c}${iso.slice(at + 1)}`;
      });
    fc.assert(
      fc.property(fc.oneof(mutated, fc.string({ minLength: 20, maxLength: 28 })), (value) => {
        expect(canonicalTime(value)).toBe(byDate(value));
      }),
      { numRuns: 20_000 },
    );
    for (const odd of [
      '2023-02-29T00:00:00.000Z',
      '1900-02-29T00:00:00.000Z',
      '2024-04-31T00:00:00.000Z',
      '2024-13-01T00:00:00.000Z',
      '2024-00-10T00:00:00.000Z',
      '2024-01-01T24:00:00.000Z',
      '2024-01-01T23:60:00.000Z',
      '2024-01-01T23:59:60.000Z',
      '2024-01-01T00:00:00.000+',
      '+002024-01-01T00:00:00.000Z',
      '2024-01-01T00:00:00Z',
    ])
      expect(canonicalTime(odd)).toBeNaN();
    expect(canonicalTime(1_700_000_000_000)).toBeNaN();
    expect(canonicalTime(null)).toBeNaN();
  });
});
