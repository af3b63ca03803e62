import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../functions/core/findings/classify';
import { watchedFieldsOf } from '../../functions/core/memory/state';
import { ResellerClient } from '../../functions/core/reseller/client';
import { type Domain, DomainSchema } from '../../functions/core/reseller/schemas';
import { scanAccount } from '../../functions/core/scan/scan';

const NOW = Date.parse('2026-11-22T06:00:00Z');

describe('Domain watched fields', () => {
  const base = { domain_name: 'a.nl', date_expiry: '2027-01-01T00:00:00Z' };
  it('keeps whether an auth code exists, never the code', () => {
    const d = DomainSchema.parse({ ...base, auth_code: 'S3cret-Code', transfer_lock: false });
    expect(d.auth_code_present).toBe(true);
    expect(JSON.stringify(d)).not.toContain('S3cret-Code');
    expect(DomainSchema.parse({ ...base, auth_code: null }).auth_code_present).toBe(false);
  });
  it('accepts nsgroup as text or boolean, "true"/"false" strings, and leaves absent fields unknown', () => {
    const d = DomainSchema.parse({
      ...base,
      nsgroup: false,
      dns_hosted: 'true',
      dnssec: 'signed',
      transfer_lock: null,
    });
    expect(d).toMatchObject({ nsgroup: 'false', dns_hosted: true, dnssec: 'signed', transfer_lock: null });
    const bare = DomainSchema.parse(base);
    expect('transfer_lock' in bare || 'nsgroup' in bare || 'auth_code_present' in bare).toBe(false);
    expect(watchedFieldsOf(bare)).toEqual({ registrant_handle: null, auto_renew: null });
  });
  it('never fails a record over a watched field it cannot read', () => {
    const d = DomainSchema.parse({ ...base, transfer_lock: 'maybe', nsgroup: 42, dnssec: ['x'] });
    expect(d.domain_name).toBe('a.nl');
    expect(watchedFieldsOf(d)).toEqual({ registrant_handle: null, auto_renew: null });
  });
});

describe('scanAccount observe', () => {
  it('hands out every domain read, with or without a finding, and says when the read started over', async () => {
    const records = [
      {
        domain_name: 'healthy.nl',
        date_expiry: '2028-01-01T00:00:00Z',
        auto_renew: true,
        transfer_lock: true,
      },
      { domain_name: 'late.nl', date_expiry: '2026-11-25T00:00:00Z', auto_renew: false },
    ];
    let firstRead = true;
    const fetch = (async (input: string | URL | Request) => {
      const url = new URL(String(input));
      const data = url.pathname === '/v2/contacts' ? [] : firstRead ? records.slice(0, 1) : records;
      // The first read claims two records but delivers one: the account "changed", read again.
      const total = url.pathname === '/v2/contacts' ? 0 : 2;
      if (url.pathname === '/v2/domains') firstRead = false;
      return new Response(
        JSON.stringify({
          data,
          pagination: { current_page: 1, per_page: 100, total_pages: total ? 1 : 0, total_results: total },
        }),
      );
    }) as typeof globalThis.fetch;
    const client = new ResellerClient({
      baseUrl: 'https://api.test',
      apiKey: 'k-unit-scan',
      fetch,
      sleep: async () => undefined,
    });
    const seen: Array<[string, number]> = [];
    const domains: Domain[] = [];
    const report = await scanAccount({
      client,
      now: NOW,
      policy: DEFAULT_POLICY,
      mode: 'full',
      observe: (d, attempt) => {
        seen.push([d.domain_name, attempt]);
        domains.push(d);
      },
    });
    expect(report.stats.domains_scanned).toBe(2);
    expect(seen).toEqual([
      ['healthy.nl', 1],
      ['healthy.nl', 2],
      ['late.nl', 2],
    ]);
    expect(domains[0]?.transfer_lock).toBe(true);
  });
});
