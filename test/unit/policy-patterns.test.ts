import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { globMatches, parsePolicies, resolvePolicies } from '../../functions/core/scan/policies';

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

  it('fits a Unicode name however its accents are composed, in the pattern or the record', () => {
    // `ü` as one code point (NFC, what IDNA and most keyboards give) or as `u` and a combining
    // diaeresis (NFD, what a macOS copy of a file name may give): the same name either way.
    const nfd = '*.bu\u0308cher.example';
    const set = resolvePolicies(
      parsePolicies({ policies: [{ name: 'de', match: { names: [nfd] } }] }, 'p.json'),
      {
        classify: { expiryDays: 30, criticalDays: 7 },
        minSeverity: 'warning',
      },
    );
    expect(set.policyFor({ domain_name: 'shop.b\u00fccher.example' })?.policy.name).toBe('de');
    expect(set.policyFor({ domain_name: 'shop.xn--bcher-kva.example' })?.policy.name).toBe('de');
    expect(set.policyFor({ domain_name: 'shop.bu\u0308cher.example' })?.policy.name).toBe('de');
  });
});
