import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  domainNameProblem,
  parseSigningKeys,
  signRestoreLink,
  verifyLink,
} from '../../functions/core/links/links';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const keys = parseSigningKeys('a'.repeat(32));
const rotated = parseSigningKeys(`${'b'.repeat(40)},${'a'.repeat(32)}`);

/** A restore link's token checked for `domain`, as the web function checks it. */
const verifyRestoreLink = ({
  domain,
  ...rest
}: Omit<Parameters<typeof verifyLink>[0], 'action' | 'subject'> & { domain: string }) =>
  verifyLink({ ...rest, action: 'restore', subject: domain });

function tokenOf(url: string) {
  const u = new URL(url);
  return {
    domain: decodeURIComponent(u.pathname.split('/').pop() ?? ''),
    token: Object.fromEntries(u.searchParams),
  };
}

describe('signRestoreLink / verifyRestoreLink', () => {
  const link = signRestoreLink({ baseUrl: 'https://x.example/prod/', domain: 'example.nl', keys, now: NOW });

  it('builds a link under the base URL that verifies for its domain until it expires', () => {
    expect(link).toMatch(
      /^https:\/\/x\.example\/prod\/restore\/example\.nl\?exp=\d+&kid=[0-9a-f]{8}&sig=[A-Za-z0-9_-]{43}$/,
    );
    const { domain, token } = tokenOf(link);
    expect(verifyRestoreLink({ domain, token, keys, now: NOW })).toEqual({
      ok: true,
      exp: NOW / 1000 + 7 * 86_400,
    });
    expect(verifyRestoreLink({ domain, token, keys, now: NOW + 7 * 86_400_000 })).toMatchObject({
      ok: false,
      reason: 'expired',
    });
  });

  it('rejects a link for domain A used on domain B', () => {
    const { token } = tokenOf(link);
    expect(verifyRestoreLink({ domain: 'example.com', token, keys, now: NOW })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('rejects an expiry pushed forward, even though the signature is otherwise intact', () => {
    const { domain, token } = tokenOf(link);
    const later = { ...token, exp: String(Number(token.exp) + 86_400) };
    expect(verifyRestoreLink({ domain, token: later, keys, now: NOW })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('keeps links signed with the previous key working after a rotation, and signs with the new one', () => {
    const { domain, token } = tokenOf(link);
    expect(verifyRestoreLink({ domain, token, keys: rotated, now: NOW }).ok).toBe(true);
    const fresh = tokenOf(signRestoreLink({ baseUrl: 'https://x.example', domain, keys: rotated, now: NOW }));
    expect(fresh.token.kid).toBe(rotated[0]?.id);
    expect(verifyRestoreLink({ domain, token: fresh.token, keys, now: NOW }).ok).toBe(false);
  });

  it('reports a token with missing parts as malformed', () => {
    expect(verifyRestoreLink({ domain: 'example.nl', token: {}, keys, now: NOW })).toEqual({
      ok: false,
      reason: 'malformed',
    });
  });

  it('never verifies a mutated token', () => {
    const { domain, token } = tokenOf(link);
    const part = fc.constantFrom('exp', 'kid', 'sig', 'domain');
    fc.assert(
      fc.property(part, fc.nat(), fc.string({ minLength: 1, maxLength: 3 }), (which, at, insert) => {
        const original = which === 'domain' ? domain : (token[which] as string);
        const i = at % original.length;
        const mutated = original.slice(0, i) + insert + original.slice(i + 1);
        fc.pre(mutated !== original);
        const candidate =
          which === 'domain' ? { domain: mutated, token } : { domain, token: { ...token, [which]: mutated } };
        expect(verifyRestoreLink({ ...candidate, keys, now: NOW }).ok).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses keys too short to be secret', () => {
    expect(() => parseSigningKeys('short')).toThrow(/shorter than 32 characters/);
    expect(() => parseSigningKeys(' , ')).toThrow(/is empty/);
  });
});

describe('domainNameProblem', () => {
  it.each(['example.nl', 'a.co.uk', 'xn--bcher-kva.de', 'my-shop.com.au', '1.nl'])('accepts %s', (name) => {
    expect(domainNameProblem(name)).toBeNull();
  });

  it.each([
    ['../etc/passwd', /invalid label/],
    ['Example.nl', /lower case/],
    ['EXAMPLE.NL', /lower case/],
    ['bücher.de', /invalid label/],
    ['example', /two labels/],
    [`${'a'.repeat(64)}.nl`, /invalid label/],
    [`${'a.'.repeat(127)}nl`, /longer than 253/],
    ['-shop.nl', /invalid label/],
    ['shop-.nl', /invalid label/],
    ['ab--cd.nl', /invalid label/],
    ['xn--zz.nl', /punycode/],
    ['example.nl.', /invalid label/],
    ['a..nl', /invalid label/],
    ['', /empty/],
  ])('rejects %s', (name, reason) => {
    expect(domainNameProblem(name)).toMatch(reason);
  });
});
