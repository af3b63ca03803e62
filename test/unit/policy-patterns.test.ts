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
  // Found by a hostile review: a pattern in Devanagari, Tamil or Thai was refused as not a domain
  // name, since their vowel signs and viramas are marks (neither letters nor digits), and a
  // Persian name's zero-width non-joiner too, though each is a valid IDN (the TLD of .bharat is one).
  it('takes a Unicode pattern whose script writes vowels as marks, and fits the name in either form', () => {
    const names = [
      '*.\u092d\u093e\u0930\u0924',
      '\u0e01\u0e34\u0e19.*',
      '\u0ba4\u0bae\u0bbf\u0bb4\u0bcd.*',
      '\u0646\u0627\u0645\u0647\u200c\u0627\u06cc.*',
    ];
    const set = resolvePolicies(parsePolicies({ policies: [{ name: 'idn', match: { names } }] }, 'p.json'), {
      classify: { expiryDays: 30, criticalDays: 7 },
      minSeverity: 'warning',
    });
    expect(set.policyFor({ domain_name: 'shop.\u092d\u093e\u0930\u0924' })?.policy.name).toBe('idn');
    expect(set.policyFor({ domain_name: 'shop.xn--h2brj9c' })?.policy.name).toBe('idn');
    expect(set.policyFor({ domain_name: '\u0e01\u0e34\u0e19.example' })?.policy.name).toBe('idn');
    expect(set.policyFor({ domain_name: 'shop.example' })).toBeUndefined();
    // Still refused: what no domain name holds.
    expect(() =>
      parsePolicies({ policies: [{ name: 'x', match: { names: ['a b.nl'] } }] }, 'p.json'),
    ).toThrow(/must be a domain name pattern/);
  });
});
