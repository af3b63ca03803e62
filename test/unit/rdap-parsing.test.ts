import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BootstrapCache, fetchBootstrap, RdapBootstrap } from '../../functions/core/registry/bootstrap';
import { parseRdapDomain, rdapStatusWord } from '../../functions/core/registry/rdap-domain';
import { RdapBootstrapError } from '../../functions/core/registry/rdap-errors';

const fixture = (name: string) => readFileSync(join(__dirname, 'fixtures', name), 'utf8');

describe('parseRdapDomain', () => {
  it('reads the domain object of RFC 9083 §5.3: name, status, expiration, last changed, nameservers', () => {
    const record = parseRdapDomain(JSON.parse(fixture('rfc9083-domain.json')), 'xn--fo-5ja.example');
    expect(record).toEqual({
      name: 'xn--fo-5ja.example',
      status: ['locked', 'transfer prohibited'],
      expiration: Date.parse('2016-12-31T23:59:59Z'),
      lastChanged: Date.parse('1991-12-31T23:59:59Z'),
      nameservers: ['ns1.example.com', 'ns2.example.com'],
    });
  });

  it('takes the unicodeName as its punycode when the answer has no ldhName', () => {
    const record = parseRdapDomain(
      { objectClassName: 'domain', unicodeName: 'fóo.example', events: [] },
      'xn--fo-5ja.example',
    );
    expect(record.name).toBe('xn--fo-5ja.example');
    expect(record.expiration).toBeNull();
  });

  it("refuses an answer for another name or another object class: a registry's dates for the wrong domain mislead", () => {
    expect(() =>
      parseRdapDomain({ objectClassName: 'domain', ldhName: 'other.example' }, 'asked.example'),
    ).toThrow('the answer is for "other.example", not asked.example');
    expect(() => parseRdapDomain({ objectClassName: 'entity', handle: 'X' }, 'asked.example')).toThrow(
      'the answer is an RDAP "entity" object, not a domain',
    );
    expect(() => parseRdapDomain([1, 2], 'asked.example')).toThrow('not an RDAP domain object');
  });

  it('reads EPP words, other letter cases and underscores as the RDAP words of RFC 8056', () => {
    expect(rdapStatusWord('clientHold')).toBe('client hold');
    expect(rdapStatusWord('SERVER_HOLD')).toBe('server hold');
    expect(rdapStatusWord('redemptionPeriod')).toBe('redemption period');
    expect(rdapStatusWord('Pending Delete')).toBe('pending delete');
    expect(rdapStatusWord('ok')).toBe('active');
    expect(rdapStatusWord('linked')).toBe('associated');
    expect(rdapStatusWord('something new')).toBe('something new');
    const record = parseRdapDomain(
      { ldhName: 'a.example', status: ['clientHold', 'clientHold', 42, 'client hold'] },
      'a.example',
    );
    expect(record.status).toEqual(['client hold']);
  });

  it('reads an expiration before any domain existed (the epoch, year 0) as none published: a placeholder is no lapsed domain', () => {
    for (const eventDate of ['1970-01-01T00:00:00Z', '0000-01-01T00:00:00Z', '1901-12-13T20:45:52Z']) {
      const record = parseRdapDomain(
        { ldhName: 'a.example', status: ['active'], events: [{ eventAction: 'expiration', eventDate }] },
        'a.example',
      );
      expect(record.expiration).toBeNull();
    }
  });

  it('keeps the latest of several expiration events and skips one whose date does not read', () => {
    const events = [
      { eventAction: 'expiration', eventDate: '2027-01-01T00:00:00Z' },
      { eventAction: 'Expiration', eventDate: '2028-01-01T00:00:00+01:00' },
      { eventAction: 'expiration', eventDate: 'soon' },
      { eventAction: 'expiration' },
      'not an event',
      { eventAction: 7, eventDate: '2030-01-01T00:00:00Z' },
    ];
    const record = parseRdapDomain({ ldhName: 'a.example', events }, 'a.example');
    expect(record.expiration).toBe(Date.parse('2027-12-31T23:00:00Z'));
    const none = parseRdapDomain(
      { ldhName: 'a.example', events: [{ eventAction: 'expiration', eventDate: '2026-02-30T00:00:00Z' }] },
      'a.example',
    );
    expect(none.expiration).toBeNull();
  });

  it('reads an expiration sent with a leap second, without an offset, with a basic offset or as a day alone: each names the day', () => {
    // Each of these read as none published: the domain counted as a registry without expiry dates
    // and a renewal that never reached the registry went unseen.
    const read = (eventDate: string) =>
      parseRdapDomain(
        { ldhName: 'a.example', events: [{ eventAction: 'expiration', eventDate }] },
        'a.example',
      ).expiration;
    expect(read('2026-12-31T23:59:60Z')).toBe(Date.parse('2026-12-31T23:59:59Z'));
    expect(read('2026-12-01T10:00:00')).toBe(Date.parse('2026-12-01T10:00:00Z'));
    expect(read('2026-12-01T10:00:00.5')).toBe(Date.parse('2026-12-01T10:00:00.500Z'));
    expect(read('2026-12-01T10:00:00+0100')).toBe(Date.parse('2026-12-01T09:00:00Z'));
    expect(read('2026-12-01')).toBe(Date.parse('2026-12-01T00:00:00Z'));
    expect(read(' 2026-12-01T00:00:00Z ')).toBe(Date.parse('2026-12-01T00:00:00Z'));
    // Still no date: an impossible day, words, a megabyte of digits (linear time).
    for (const eventDate of [
      '2026-02-30',
      'next year',
      '2026-12-01T10:00',
      `2026-12-01T00:00:00.${'1'.repeat(1_000_000)}Z`,
    ])
      expect(read(eventDate)).toBeNull();
  });

  it('reads a member sent as null as one left out, as servers that write every member do', () => {
    // Refused as no domain object, three in a row left the whole registry unchecked for the scan.
    const record = parseRdapDomain(
      {
        objectClassName: 'domain',
        ldhName: 'a.example',
        unicodeName: null,
        status: ['client hold'],
        events: null,
        nameservers: null,
      },
      'a.example',
    );
    expect(record).toEqual({
      name: 'a.example',
      status: ['client hold'],
      expiration: null,
      lastChanged: null,
      nameservers: [],
    });
    expect(
      parseRdapDomain(
        { objectClassName: null, ldhName: null, unicodeName: 'a.example', status: null },
        'a.example',
      ).status,
    ).toEqual([]);
    expect(() => parseRdapDomain({ ldhName: null, unicodeName: null }, 'a.example')).toThrow(
      'the answer names no domain',
    );
  });

  it('keeps at most 13 nameservers, lower case, and skips what is not one', () => {
    const nameservers = [
      { ldhName: 'NS0.Example.COM' },
      { nothing: true },
      ...Array.from({ length: 20 }, (_, i) => ({ ldhName: `ns${i + 1}.example.com` })),
    ];
    const record = parseRdapDomain({ ldhName: 'a.example', nameservers }, 'a.example');
    expect(record.nameservers).toHaveLength(13);
    expect(record.nameservers[0]).toBe('ns0.example.com');
  });
});

describe('RdapBootstrap', () => {
  const bootstrap = RdapBootstrap.parse(fixture('iana-dns-bootstrap.json'), 'fixture');

  it('reads IANA’s format with its publication date, and counts only the entries it may ask', () => {
    expect(bootstrap.info).toEqual({ source: 'fixture', publication: '2026-11-17T18:00:02Z', entries: 7 });
  });

  it('picks the longest entry that ends the name, label by label', () => {
    expect(bootstrap.serviceFor('shop.co.uk')).toEqual({
      entry: 'co.uk',
      baseUrl: 'https://rdap.example-second-level.uk/',
    });
    expect(bootstrap.serviceFor('shop.org.uk')).toEqual({
      entry: 'uk',
      baseUrl: 'https://rdap.nominet.uk/uk/',
    });
    expect(bootstrap.serviceFor('Example.COM.')).toEqual({
      entry: 'com',
      baseUrl: 'https://rdap.verisign.com/com/v1/',
    });
    // `xuk` ends in "uk" but not on a label boundary.
    expect(bootstrap.serviceFor('shop.xuk')).toBeNull();
    expect(bootstrap.serviceFor('пример.рф')?.entry).toBe('xn--p1ai');
  });

  it('prefers https, and never asks a server over plain http off this machine', () => {
    expect(bootstrap.serviceFor('a.org')?.baseUrl).toBe('https://rdap.publicinterestregistry.org/rdap/');
    expect(bootstrap.serviceFor('a.insecure')).toBeNull();
    const local = RdapBootstrap.parse(
      JSON.stringify({ services: [[['test'], ['http://127.0.0.1:4000/rdap']]] }),
      'local',
    );
    expect(local.serviceFor('a.test')?.baseUrl).toBe('http://127.0.0.1:4000/rdap/');
  });

  it('takes no server on this machine or a private network from a bootstrap read over the internet', () => {
    // On AWS the Lambda Runtime API listens on http://127.0.0.1:9001: a bootstrap from elsewhere
    // naming it would have the scan GET there. A bootstrap served by the simulator on loopback may.
    const text = JSON.stringify({
      services: [
        [['com'], ['http://127.0.0.1:9001/2018-06-01/runtime/invocation/next#']],
        [['net'], ['https://169.254.169.254/']],
        [['org'], ['https://rdap.example.org/']],
      ],
    });
    const remote = RdapBootstrap.parse(text, 'https://data.iana.org/rdap/dns.json');
    expect(remote.serviceFor('a.com')).toBeNull();
    expect(remote.serviceFor('a.net')).toBeNull();
    expect(remote.serviceFor('a.org')?.baseUrl).toBe('https://rdap.example.org/');
    const simulated = RdapBootstrap.parse(text, 'http://127.0.0.1:8080/rdap/dns.json');
    expect(simulated.serviceFor('a.com')).not.toBeNull();
  });

  it('says a TLD without RDAP has no service', () => {
    expect(bootstrap.serviceFor('example.de')).toBeNull();
    expect(bootstrap.serviceFor('broken.broken')).toBeNull();
  });

  it('refuses what is not a bootstrap, naming the source', () => {
    expect(() => RdapBootstrap.parse('<html>', 'https://x.example/dns.json')).toThrow(RdapBootstrapError);
    expect(() => RdapBootstrap.parse('{"services": {}}', 'dns.json')).toThrow(
      'the RDAP bootstrap dns.json has no "services" list',
    );
    expect(
      RdapBootstrap.parse('{"services": [[["a"], ["https://a.example/"]]], "publication": "yesterday"}', 'x')
        .info.publication,
    ).toBeNull();
  });

  it('refuses a bootstrap that names no server it may ask, so the one kept stays in use instead of every TLD reading as without RDAP', async () => {
    for (const text of [
      '{"services": []}',
      '{"services": [[["com", "net"], ["http://rdap.example/"]], [["nl"], []], ["junk"]]}',
    ])
      expect(() => RdapBootstrap.parse(text, 'https://x.example/dns.json')).toThrow(
        "the RDAP bootstrap https://x.example/dns.json names no RDAP server the check may ask (an https URL for a TLD): it is not IANA's",
      );
    const cache = new BootstrapCache(1000);
    const good = RdapBootstrap.parse('{"services": [[["com"], ["https://rdap.example/"]]]}', 'src');
    await cache.get('src', async () => good, 0);
    const emptied = await cache.get('src', async () => RdapBootstrap.parse('{"services": []}', 'src'), 5000);
    expect(emptied).toMatchObject({ bootstrap: good, cached: true });
    expect(emptied.stale_because).toMatch(/names no RDAP server/);
  });
});

describe('BootstrapCache', () => {
  const one = RdapBootstrap.parse('{"services": [[["a"], ["https://a.example/"]]]}', 'src');
  const two = RdapBootstrap.parse('{"services": [[["b"], ["https://b.example/"]]]}', 'src');

  it('reads once a day per source, again after a day or when the clock went back', async () => {
    const cache = new BootstrapCache(86_400_000);
    let reads = 0;
    const read = async () => (++reads === 1 ? one : two);
    const first = await cache.get('src', read, 1_000_000);
    expect(first).toMatchObject({ bootstrap: one, cached: false });
    expect(await cache.get('src', read, 1_000_000 + 3_600_000)).toMatchObject({
      bootstrap: one,
      cached: true,
    });
    expect(reads).toBe(1);
    expect(await cache.get('src', read, 1_000_000 + 86_400_000)).toMatchObject({
      bootstrap: two,
      cached: false,
    });
    expect(await cache.get('src', read, 0)).toMatchObject({ cached: false });
    expect(reads).toBe(3);
  });

  it('keeps using the bootstrap it has when a fresh read fails, saying why; fails without one', async () => {
    const cache = new BootstrapCache(1000);
    await cache.get('src', async () => one, 0);
    const failing = async (): Promise<RdapBootstrap> => {
      throw new Error('IANA is down');
    };
    expect(await cache.get('src', failing, 5000)).toMatchObject({
      bootstrap: one,
      cached: true,
      stale_because: 'IANA is down',
    });
    await expect(cache.get('other', failing, 5000)).rejects.toThrow('IANA is down');
  });
});

describe('RdapBootstrap read from a URL that carries a token in its query', () => {
  const SIGNED =
    'https://bucket.example/dns.json?X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature=s3cr3t-signature';
  const body = JSON.stringify({ services: [[['com'], ['https://rdap.example/']]] });

  it('shows the URL without its query in the report and in every error, a presigned URL being a credential', async () => {
    const read = await fetchBootstrap(SIGNED, { fetch: (async () => new Response(body)) as typeof fetch });
    expect(read.info.source).toBe('https://bucket.example/dns.json?…');
    const failures = [
      fetchBootstrap(SIGNED, { fetch: (async () => new Response('', { status: 403 })) as typeof fetch }),
      fetchBootstrap(SIGNED, { fetch: (async () => new Response('<html>')) as typeof fetch }),
      fetchBootstrap(SIGNED, { fetch: (async () => new Response('{}')) as typeof fetch }),
      fetchBootstrap(SIGNED, {
        fetch: (async () => {
          throw new TypeError('fetch failed');
        }) as typeof fetch,
      }),
    ];
    for (const failure of failures) {
      const error = await failure.then(
        () => null,
        (e: unknown) => e as RdapBootstrapError,
      );
      expect(error).toBeInstanceOf(RdapBootstrapError);
      expect(`${error?.message} ${error?.url}`).not.toMatch(/s3cr3t|AKIAEXAMPLE/);
    }
  });
});
