import { describe, expect, it } from 'vitest';
import { renderConfirmPage } from '../../functions/core/pages/restore-page';

/**
 * Found by the pages review: the restore page named an IDN only in punycode (`xn--bcher-kva.nl`),
 * while the alert and the finding page that led to it say `xn--bcher-kva.nl (bücher.nl)`, and its
 * field takes `bücher.nl` without the page saying so: the person about to pay for a restore could
 * not recognise the name they know.
 */

const page = (domain: string) =>
  renderConfirmPage({ domain, quarantinedSince: null, linkExpires: 0, formAction: '?exp=1' });

describe('the restore page of an IDN', () => {
  it('names it as the alert does, punycode first and its Unicode form beside it', () => {
    const html = page('xn--bcher-kva.nl');
    expect(html).toContain('<title>Restore xn--bcher-kva.nl (bücher.nl)?</title>');
    expect(html).toContain('<h1>Restore <code>xn--bcher-kva.nl (bücher.nl)</code> from quarantine?</h1>');
    expect(html).toContain('<dt>Domain</dt><dd><code>xn--bcher-kva.nl (bücher.nl)</code></dd>');
    expect(html).toContain(
      '<label for="confirm_domain">Type <code>xn--bcher-kva.nl</code> or <code>bücher.nl</code> to confirm</label>',
    );
    expect(html).toContain('<button type="submit">Restore xn--bcher-kva.nl (bücher.nl)</button>');
  });

  it('names an ASCII name as before', () => {
    const html = page('my-shop.nl');
    expect(html).toContain('<h1>Restore <code>my-shop.nl</code> from quarantine?</h1>');
    expect(html).toContain('<label for="confirm_domain">Type <code>my-shop.nl</code> to confirm</label>');
    expect(html).toContain('<button type="submit">Restore my-shop.nl</button>');
  });
});
