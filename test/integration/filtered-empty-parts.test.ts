import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../functions/core/findings/classify';
import { ResellerClient } from '../../functions/core/reseller/client';
import { scanAccount } from '../../functions/core/scan/scan';
import type { Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const KEY = 'filtered-empty-parts-key-51c2';
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/**
 * 600 domains expiring far beyond the window with auto-renew on (the part a filtered read leaves
 * unread), and 60 expiring within it: no domain is quarantined, so the counts find the part
 * `auto-renew on, quarantined` empty.
 */
function account(): Portfolio {
  const far = { date_expiry: '2028-06-01T00:00:00Z', auto_renew: true, status: ['registered'] };
  const near = { date_expiry: '2026-12-01T00:00:00Z', auto_renew: true, status: ['registered'] };
  return {
    domains: Array.from({ length: 660 }, (_, i) => ({
      domain_name: `d${String(i).padStart(4, '0')}.nl`,
      ...(i < 600 ? far : near),
    })),
    contacts: [],
    truth: { findings: [], problems: [] },
  };
}

describe('a filtered read of a part the counts found empty', () => {
  it('reads it all the same, so a domain quarantined between the counts and the read is not missed', async () => {
    sim = await startSimulator({ portfolio: account(), apiKey: KEY, maxPerPage: 50 });
    const server = sim;
    let moved = false;
    // The first request after the nine counts (all at per_page=1 but the first): d0100.nl, unread
    // by a filtered read, goes into quarantine with its auto-renew still on.
    const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input));
      const counts = server.requests.filter((r) => r.path === '/v2/domains').length;
      if (!moved && url.pathname === '/v2/domains' && counts >= 9) {
        moved = true;
        server.updateDomain('d0100.nl', { status: ['quarantine'], date_deleted: '2026-11-21T00:00:00Z' });
      }
      return globalThis.fetch(input, init);
    }) as typeof globalThis.fetch;
    const client = new ResellerClient({ baseUrl: server.url, apiKey: KEY, fetch, perPage: 50 });
    const report = await scanAccount({ client, now: NOW, policy: DEFAULT_POLICY, mode: 'filtered' });
    expect(moved).toBe(true);
    const quarantined = report.findings.filter((f) => 'domain_name' in f && f.domain_name === 'd0100.nl');
    expect(quarantined.map((f) => f.kind)).toEqual(['quarantine']);
  });
});
