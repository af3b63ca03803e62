import { domainToASCII } from 'node:url';
import { describe, expect, it } from 'vitest';
import { typedNameMatches } from '../../functions/core/decisions/restore';
import { typedNamePattern } from '../../functions/core/pages/restore-page';

/**
 * Found by the pages review: the server takes the typed name in any case, IDNs in their Unicode form
 * too (`BÜCHER.DE`), but the page's pattern made only ASCII letters case-free, so the browser kept
 * the restore button inert for a name the server would have taken, and the page said "any case".
 */

const browserPattern = (domain: string) => new RegExp(`^(?:${typedNamePattern(domain)})$`, 'v');

describe('the typed name on the restore page, in the browser and on the server', () => {
  it.each([
    ['bücher.de', ['BÜCHER.DE', 'Bücher.de', 'bÜcher.De']],
    ['ελλάδα.gr', ['ΕΛΛΆΔΑ.GR', 'Ελλάδα.gr']],
    ['пример.рф', ['ПРИМЕР.РФ', 'Пример.рф']],
  ])('takes %s in upper and mixed case, as the server does', (unicode, typedForms) => {
    const domain = domainToASCII(unicode);
    const pattern = browserPattern(domain);
    for (const typed of [unicode, ...typedForms]) {
      expect(typedNameMatches(typed, domain), typed).toBe(true);
      expect(pattern.test(typed), typed).toBe(true);
    }
  });

  it.each([
    ['straße.de', ['STRAẞE.DE', 'Straẞe.de']],
    ['bücher.de', ['bu\u0308cher.de', 'BU\u0308CHER.DE']],
    ['ελλάδα.gr', ['ελλα\u0301δα.gr']],
  ])(
    'takes %s typed with a capital sharp s or a decomposed accent, as the server does',
    (unicode, typedForms) => {
      const domain = domainToASCII(unicode);
      const pattern = browserPattern(domain);
      for (const typed of typedForms) {
        expect(typedNameMatches(typed, domain), typed).toBe(true);
        expect(pattern.test(typed), typed).toBe(true);
      }
    },
  );

  it('still refuses a name one letter off in any case', () => {
    const pattern = browserPattern(domainToASCII('bücher.de'));
    for (const typed of ['BÜCHEP.DE', 'bucher.de', 'BÜCHER.DE.evil', 'büchër.de']) {
      expect(pattern.test(typed), typed).toBe(false);
    }
  });
});
