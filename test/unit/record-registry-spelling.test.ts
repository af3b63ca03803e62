import { describe, expect, it } from 'vitest';
import { normalizeDomainName } from '../../functions/core/base/text';
import { RecordRegistry } from '../../functions/core/reseller/record-registry';

/** The reason a second name of the same domain gets, after `first` was read. */
function reasonFor(first: string, second: string): string {
  const registry = new RecordRegistry('domain', normalizeDomainName);
  registry.admit(first, { domain_name: first });
  const admission = registry.admit(second, { domain_name: second });
  return admission.kind === 'case' ? admission.reason : `admitted as ${admission.kind}`;
}

describe('a twin domain record in another spelling', () => {
  it('names white space around the name when that is what differs', () => {
    expect(reasonFor('shop.nl', ' shop.nl')).toBe(
      'duplicate domain name differing only in white space around it: "shop.nl" and " shop.nl"; only the first was checked',
    );
    expect(reasonFor('shop.nl', 'Shop.nl\t')).toBe(
      'duplicate domain name differing in white space around it and letter case: "shop.nl" and "Shop.nl\\t"; only the first was checked',
    );
  });

  it('names each difference: a trailing dot, punycode, letter case', () => {
    expect(reasonFor('shop.nl', 'shop.nl.')).toBe(
      'duplicate domain name differing only in a trailing dot: "shop.nl" and "shop.nl."; only the first was checked',
    );
    expect(reasonFor('bücher.nl', 'XN--BCHER-KVA.nl')).toBe(
      'duplicate domain name differing in letter case and punycode: "bücher.nl" and "XN--BCHER-KVA.nl"; only the first was checked',
    );
    expect(reasonFor('Shop.nl', 'shop.nl')).toBe(
      'duplicate domain name differing only in case: "Shop.nl" and "shop.nl"; only the first was checked',
    );
  });
});
