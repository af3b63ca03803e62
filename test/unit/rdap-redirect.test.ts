import { describe, expect, it } from 'vitest';
import { RdapClient } from '../../functions/core/registry/rdap-client';
import { RdapResponseError } from '../../functions/core/registry/rdap-errors';

/**
 * docs/registry.md says redirects are followed "at most three, only to https". Plain http to this
 * machine is allowed for a bootstrap naming the simulator, but a redirect may not reach it from a
 * server elsewhere: an https RDAP server on the internet could otherwise steer the scan Lambda to its
 * own loopback, where the Lambda Runtime API listens on plain http (127.0.0.1:9001), or to the
 * instance metadata, and have the answer read as the registry's word.
 */

const domainBody = (name: string) =>
  JSON.stringify({
    objectClassName: 'domain',
    ldhName: name,
    status: ['redemption period'],
    events: [{ eventAction: 'expiration', eventDate: '2026-01-01T00:00:00Z' }],
  });

/** A server that redirects the first request to `location` and answers every other with a domain. */
async function redirected(from: string, location: string) {
  const asked: string[] = [];
  const fetch = (async (url: string | URL | Request) => {
    asked.push(String(url));
    if (asked.length === 1) return new Response(null, { status: 302, headers: { location } });
    return new Response(domainBody('shop.com'), { status: 200 });
  }) as typeof globalThis.fetch;
  const client = new RdapClient({ fetch, sleep: async () => undefined, maxAttempts: 1 });
  const outcome = await client.lookupDomain(from, 'shop.com').then(
    (answer) => answer,
    (error: Error) => error,
  );
  return { asked, outcome };
}

describe('RdapClient redirects', () => {
  it('does not follow a redirect from a remote https server to plain http on loopback', async () => {
    const { asked, outcome } = await redirected(
      'https://rdap.registry.example/',
      'http://127.0.0.1:9001/2018-06-01/runtime/invocation/next',
    );
    expect(asked).toEqual(['https://rdap.registry.example/domain/shop.com']);
    expect(outcome).toBeInstanceOf(RdapResponseError);
    expect((outcome as Error).message).toBe(
      'the RDAP lookup of shop.com was redirected from https://rdap.registry.example to http://127.0.0.1:9001, which is not https (a redirect from https)',
    );
  });

  it('does not follow a redirect from a remote server to https on this machine or a private network', async () => {
    for (const location of [
      'https://169.254.169.254/latest/meta-data/',
      'https://localhost:9001/domain/shop.com',
      'https://10.0.0.7/domain/shop.com',
      'https://192.168.1.1/domain/shop.com',
      'https://[::1]/domain/shop.com',
      'https://[fd00::1]/domain/shop.com',
      'https://[::ffff:127.0.0.1]/domain/shop.com',
      'https://2130706433/domain/shop.com',
      // The root's dot makes the same name: it resolves to this machine all the same.
      'https://localhost.:9001/domain/shop.com',
      'https://rdap.localhost./domain/shop.com',
    ]) {
      const { asked, outcome } = await redirected('https://rdap.registry.example/', location);
      expect(asked, location).toHaveLength(1);
      expect((outcome as Error).message, location).toMatch(
        /, which is on this machine or a private network \(a redirect from a server outside it\)$/,
      );
    }
  });

  it('does not follow a redirect to an IPv4 address written inside IPv6: NAT64 (RFC 6052, RFC 8215) or IPv4-compatible', async () => {
    for (const location of [
      // Through a NAT64 gateway, the VPC's own 10.0.0.0/8 and the metadata address.
      'https://[64:ff9b::10.0.0.7]/domain/shop.com',
      'https://[64:ff9b:1::169.254.169.254]/domain/shop.com',
      'https://[::127.0.0.1]/domain/shop.com',
    ]) {
      const { asked, outcome } = await redirected('https://rdap.registry.example/', location);
      expect(asked, location).toHaveLength(1);
      expect((outcome as Error).message, location).toMatch(
        /, which is on this machine or a private network \(a redirect from a server outside it\)$/,
      );
    }
  });

  it('refuses a Location that is no URL as an RDAP answer error, not a crash', async () => {
    const { asked, outcome } = await redirected('https://rdap.registry.example/', 'http://[');
    expect(asked).toHaveLength(1);
    expect(outcome).toBeInstanceOf(RdapResponseError);
    expect((outcome as Error).message).toMatch(/, which is not a URL$/);
  });

  it('follows plain http on loopback from plain http on loopback (the simulator), and https anywhere', async () => {
    const local = await redirected(
      'http://127.0.0.1:8080/rdap/',
      'http://localhost:8081/rdap/domain/shop.com',
    );
    expect(local.asked).toEqual([
      'http://127.0.0.1:8080/rdap/domain/shop.com',
      'http://localhost:8081/rdap/domain/shop.com',
    ]);
    expect(local.outcome).toMatchObject({ kind: 'found', server: 'http://localhost:8081' });
    const remote = await redirected(
      'http://127.0.0.1:8080/rdap/',
      'https://rdap.registrar.example/domain/shop.com',
    );
    expect(remote.outcome).toMatchObject({ kind: 'found', server: 'https://rdap.registrar.example' });
  });
});
