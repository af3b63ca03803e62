import { describe, expect, it } from 'vitest';
import { normalizeDomainName } from '../../functions/core/base/text';
import { problemKey } from '../../functions/core/memory/state-bounds';
import type { Problem } from '../../functions/core/reseller/paging';
import { RecordRegistry } from '../../functions/core/reseller/record-registry';
import { ContactSchema, describeIssues } from '../../functions/core/reseller/schemas';

/**
 * Found by a hostile review of the problem keys that carry a digest of what the record says
 * (severity and reason). A case twin's reason names both spellings in the order the server listed
 * them; a server sorting by name without regard to case (a database's usual collation) lists two
 * spellings of one name in either order, scan to scan. Nothing about the records changed, yet the
 * digest did: a new unreadable record, published at once, each time the order flips.
 */
describe('the key an unreadable twin is remembered by', () => {
  const twinProblem = (first: string, second: string): Problem => {
    const seen = new RecordRegistry('domain', normalizeDomainName);
    seen.admit(first, { domain_name: first, status: ['registered'] });
    const admission = seen.admit(second, { domain_name: second, status: ['registered'], auth_code: 'x' });
    if (admission.kind !== 'case') throw new Error(`not a twin: ${admission.kind}`);
    return { resource: 'domain', key: second, page: 1, reason: admission.reason };
  };

  it('is one whichever order the server lists the two spellings in', () => {
    expect(problemKey(twinProblem('shop.nl', 'Shop.nl'))).toBe(problemKey(twinProblem('Shop.nl', 'shop.nl')));
  });

  it('is one whichever order the server lists a trailing-dot or punycode twin in', () => {
    expect(problemKey(twinProblem('shop.nl', 'shop.nl.'))).toBe(
      problemKey(twinProblem('shop.nl.', 'shop.nl')),
    );
    expect(problemKey(twinProblem('xn--rsted-5-p1a.com', 'ørsted-5.com'))).toBe(
      problemKey(twinProblem('ørsted-5.com', 'xn--rsted-5-p1a.com')),
    );
    expect(problemKey(twinProblem('BÜCHER.nl', 'xn--bcher-kva.nl'))).toBe(
      problemKey(twinProblem('xn--bcher-kva.nl', 'BÜCHER.nl')),
    );
  });

  it('is one for a contact whose unreadable count of domains changes as domains are added', () => {
    // A reseller sending connections as "1,204" (thousands grouped, as PHP number_format does)
    // makes the contact unreadable; its reason quotes the value, which changes with each domain
    // registered under that contact: a new unreadable record, published at once, most days.
    const problemOf = (connections: string): Problem => {
      const parsed = ContactSchema.safeParse({ handle: 'C1', status: ['active'], connections });
      if (parsed.success) throw new Error('read');
      return { resource: 'contact', key: 'C1', page: 1, reason: describeIssues(parsed.error) };
    };
    expect(problemKey(problemOf('1,205'))).toBe(problemKey(problemOf('1,204')));
  });
});

/**
 * Found by a second review of steadyReason: the quoted values were sorted before their numbers
 * were set aside, so two quoted values whose numbers moved could swap places in the sort and make
 * a new key; and the pattern that found them had no bound, so a reason of escaped quotes without
 * an end cost time quadratic in its length.
 */
describe('what an unreadable record says, as its key digests it', () => {
  const contact = (reason: string): Problem => ({ resource: 'contact', key: 'C1', page: 1, reason });

  it('is one when the numbers in two quoted values move past each other', () => {
    // "12 domains" sorts before "3 items"; once the count is 42 it sorts after.
    expect(problemKey(contact('connections: "12 domains"; notes: "3 items"'))).toBe(
      problemKey(contact('connections: "42 domains"; notes: "3 items"')),
    );
  });

  it('costs linear time for a megabyte of escaped quotes without an end', () => {
    const reason = `name: "${'\\"'.repeat(500_000)}`;
    const started = performance.now();
    problemKey(contact(reason));
    // Quadratic, this took minutes (0.6 s for 40 KB on the machine it was found on).
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('still tells apart two reasons quoting different words, escaped quotes included', () => {
    expect(problemKey(contact('status "a\\"b" is not documented'))).not.toBe(
      problemKey(contact('status "a\\"c" is not documented')),
    );
    expect(problemKey(contact('status "x" and "y"'))).toBe(problemKey(contact('status "y" and "x"')));
  });
});
