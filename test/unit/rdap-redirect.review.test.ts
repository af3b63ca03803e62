import { describe, expect, it } from 'vitest';
import { RdapClient } from '../../functions/core/registry/rdap-client';

/**
 * Review: docs/registry.md says redirects are followed "at most three, only to https". The client
 * checks each hop with rdapUrlProblem (functions/core/registry/rdap-http.ts), which also lets plain
 * http to 127.0.0.1, localhost and [::1] through (meant for a bootstrap naming the simulator). So an
 * https RDAP server on the internet can redirect the scan Lambda to its own loopback, where the
 * Lambda Runtime API listens on plain http (127.0.0.1:9001): a request the registry chooses, sent
 * from inside the function, and its answer read as the registry's word.
 */

const domainBody = (name: string) =>
  JSON.stringify({
    objectClassName: 'domain',
    ldhName: name,
    status: ['redemption period'],
    events: [{ eventAction: 'expiration', eventDate: '2026-01-01T00:00:00Z' }],
  });

describe('RdapClient redirects (review)', () => {
  it('does not follow a redirect from a remote https server to plain http on loopback', async () => {
    const asked: string[] = [];
    const fetch = (async (url: string | URL | Request) => {
      asked.push(String(url));
      if (asked.length === 1)
        return new Response(null, {
          status: 302,
          headers: { location: 'http://127.0.0.1:9001/2018-06-01/runtime/invocation/next' },
        });
      return new Response(domainBody('shop.com'), { status: 200 });
    }) as typeof globalThis.fetch;
    const client = new RdapClient({ fetch, sleep: async () => undefined, maxAttempts: 1 });
    const outcome = await client.lookupDomain('https://rdap.registry.example/', 'shop.com').then(
      (answer) => answer,
      (error: Error) => error,
    );
    expect(asked).toEqual(['https://rdap.registry.example/domain/shop.com']);
    expect(outcome).toBeInstanceOf(Error);
  });
});
