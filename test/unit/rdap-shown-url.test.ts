import { describe, expect, it } from 'vitest';
import { originOf, shownOrigin, shownUrl } from '../../functions/core/registry/rdap-http';

/**
 * What logs and reports show of an RDAP or bootstrap URL: enough to recognise the server
 * (`https://rdap.example.nl/domain/…`), never a token, whatever its shape or where it sits.
 */

const TOKENS = [
  'qwertyuiopasdfgh', // 16 letters, one case, no digit
  'QWERTYUIOPASDFGH',
  'QwErTyUiOpAsDfGhJk',
  'a1b2c3d4e5f6a7b8c9d0',
  'deadbeefcafebabe',
  'abcdefghij-klmnopqrs',
  'tok_9f8e7d6c5b4a39281706',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl',
  'Zm9vYmFyYmF6cXV4',
];

describe('shownUrl', () => {
  it.each(TOKENS)('hides the path token %s', (token) => {
    const shown = shownUrl(`https://cdn.example/rdap/${token}/dns.json`);
    expect(shown).toBe('https://cdn.example/rdap/…/dns.json');
  });

  it.each(TOKENS.filter((t) => /^[a-z0-9-]+$/i.test(t)))('hides the host label %s', (token) => {
    const shown = shownUrl(`https://${token}.rdap.example.nl/domain/example.nl`);
    expect(shown).not.toContain(token.toLowerCase());
    expect(shown).toBe('https://….rdap.example.nl/domain/example.nl');
  });

  // Under 16 characters, each part a plain word alone: words joined by '-', '_' or '.' pass one by one.
  it.each(['abc12-def34_gh5', 'x9.y8.z7.w6', 'k1-p2-q3-r4', '1234-5678-9012'])(
    'hides the short token %s made of word-like parts',
    (token) => {
      expect(shownUrl(`https://cdn.example/rdap/${token}/dns.json`)).toBe(
        'https://cdn.example/rdap/…/dns.json',
      );
    },
  );

  it('drops userinfo, query and fragment, marking that a query was there', () => {
    const shown = shownUrl('https://user:s3cret@rdap.example.nl/domain/x.nl?key=qwertyuiopasdfgh#frag');
    expect(shown).toBe('https://rdap.example.nl/domain/x.nl?…');
    expect(shown).not.toMatch(/user|s3cret|qwerty|frag/);
  });

  it('keeps what an operator recognises a server by: words, versions, file names, ports, addresses', () => {
    expect(shownUrl('https://rdap.verisign.com/com/v1/domain/example.com')).toBe(
      'https://rdap.verisign.com/com/v1/domain/example.com',
    );
    expect(shownUrl('https://rdap.identitydigital.services/rdap/domain/x.org')).toBe(
      'https://rdap.identitydigital.services/rdap/domain/x.org',
    );
    expect(shownUrl('https://data.iana.org/rdap/dns.json')).toBe('https://data.iana.org/rdap/dns.json');
    expect(shownUrl('https://x.example/rdap-v2/2026-11-20/v1.2.3/')).toBe(
      'https://x.example/rdap-v2/2026-11-20/v1.2.3/',
    );
    expect(shownUrl('http://127.0.0.1:8443/rdap/com/domain/a.com')).toBe(
      'http://127.0.0.1:8443/rdap/com/domain/a.com',
    );
    // A punycode name is no plain word: the server is what the operator needs, and it shows.
    expect(shownUrl('https://rdap.nic.xn--p1ai/domain/xn--80ak6aa92e.xn--p1ai')).toBe(
      'https://rdap.nic.xn--p1ai/domain/…',
    );
  });

  it('shows the origin of a server whose host carries a token without it', () => {
    const url = 'https://a1b2c3d4e5f6a7b8.rdap.example/domain/x.com';
    expect(shownOrigin(url)).toBe('https://….rdap.example');
    expect(originOf(url)).toBe('https://a1b2c3d4e5f6a7b8.rdap.example');
  });
});
