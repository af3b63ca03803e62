import { describe, expect, it } from 'vitest';
import { displayDomain, normalizeDomainName, plainDomain } from '../../functions/core/base/text';
import { RecordRegistry } from '../../functions/core/reseller/record-registry';

/**
 * Found by a hostile review of the domain names folded with normalizeDomainName in paging: the
 * schema bounds no name's length, and punycode costs time quadratic in a label's length (Node's
 * domainToASCII: 40 000 CJK characters 1.6 s, a megabyte 32 s). Folding now runs for every record
 * of every scan (not only the memory's keys), several times per record: one hostile record of a
 * few hundred kilobytes held the scan past its time, and no alert went out. No real name comes
 * near: a DNS name is at most 253 characters in its ASCII form, so a longer one is never converted.
 */
describe('a domain name far past what DNS allows', () => {
  let name = '';
  for (let i = 0; i < 300_000; i++) name += String.fromCodePoint(0x4e00 + (i % 20_000));
  name += '.nl';

  it('costs linear time to fold, show and register, not quadratic', () => {
    const started = performance.now();
    const folded = normalizeDomainName(name);
    displayDomain(name);
    plainDomain(name);
    const seen = new RecordRegistry('domain', normalizeDomainName);
    expect(seen.admit(name, { domain_name: name }).kind).toBe('new');
    expect(seen.admit(`${name}.`, { domain_name: `${name}.` }).kind).toBe('case');
    // Quadratic, this took some 7 s a call on the machine the defect was found on.
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(folded).toBe(name);
  });

  it('still folds a real IDN with its punycode and a trailing dot', () => {
    expect(normalizeDomainName('München.DE.')).toBe('xn--mnchen-3ya.de');
    expect(displayDomain('münchen.de')).toBe('xn--mnchen-3ya.de (münchen.de)');
  });
});
