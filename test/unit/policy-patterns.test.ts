import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { globMatches } from '../../functions/core/scan/policies';

/** The regular expression the patterns were matched with before: the oracle, on inputs short enough for it. */
const asRegExp = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    'u',
  );
const fits = (pattern: string, name: string) => globMatches(Array.from(pattern), Array.from(name));

describe('a policy name pattern (globMatches)', () => {
  it('matches as the regular expression it replaces: * any run, dots too, ? one character', () => {
    const char = (extra: string[]) => fc.constantFrom('a', 'b', '.', 'é', '😀', ...extra);
    fc.assert(
      fc.property(
        fc.array(char(['*', '?']), { maxLength: 8 }).map((c) => c.join('')),
        fc.array(char([]), { maxLength: 10 }).map((c) => c.join('')),
        (pattern, name) => fits(pattern, name) === asRegExp(pattern).test(name),
      ),
      { numRuns: 3_000 },
    );
    expect(fits('*.shop.example', 'a.b.shop.example')).toBe(true);
    expect(fits('*.shop.example', 'shop.example')).toBe(false);
    expect(fits('br?nd-*.nl', 'brand-x.nl')).toBe(true);
    expect(fits('?.nl', 'é.nl')).toBe(true);
  });

  // Found by a hostile review: the regular expression backtracked without end on a pattern of
  // many `*` and a name that does not fit, and the scan matched every domain against it.
  it('answers a pattern of many * against a long name that does not fit', () => {
    const pattern = `${'*a'.repeat(20)}*b`;
    const name = `${'a'.repeat(240)}.nl`;
    expect(fits(pattern, name)).toBe(false);
    expect(fits(pattern, `${'a'.repeat(240)}b`)).toBe(true);
  });
});
