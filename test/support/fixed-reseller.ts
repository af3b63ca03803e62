import { createServer } from 'node:http';
import type { Portfolio } from '../../functions/simulator/portfolio';
import { listenOnLoopback } from './loopback';

/**
 * A reseller API that serves exactly the records it is given (one page each, correct totals), on
 * 127.0.0.1: for records the simulator would never generate (hostile names, injected text).
 */
export async function startFixedReseller(options: {
  apiKey: string;
  domains: Array<Record<string, unknown>>;
  contacts?: Array<Record<string, unknown>>;
}) {
  const server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${options.apiKey}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad key"}');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://fixed');
    const records =
      url.pathname === '/v2/domains'
        ? options.domains
        : url.pathname === '/v2/contacts'
          ? (options.contacts ?? [])
          : null;
    if (!records) {
      res.writeHead(404).end();
      return;
    }
    const page = Number(url.searchParams.get('page') ?? 1);
    const body = {
      data: page === 1 ? records : [],
      pagination: {
        current_page: page,
        per_page: Math.max(1, records.length),
        total_pages: 1,
        total_results: records.length,
      },
    };
    res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' }).end(JSON.stringify(body));
  });
  return listenOnLoopback(server);
}

const DAY = 86_400_000;

/**
 * A record quarantined 10 days before `now`, expired 30 days before that: within every TLD's
 * restore period, so a restore of it goes ahead.
 */
/** An account of `names` alone, each quarantined 10 days before `now` (restorableRecord). */
export function restorablePortfolio(names: readonly string[], now = Date.now()): Portfolio {
  return {
    domains: names.map((name) => restorableRecord(name, now)),
    contacts: [],
    truth: { findings: [], problems: [] },
  };
}

export function restorableRecord(name: string, now: number) {
  return quarantinedRecord(name, {
    date_expiry: new Date(now - 40 * DAY).toISOString(),
    date_deleted: new Date(now - 10 * DAY).toISOString(),
  });
}

/** A domain record in the documented shape, quarantined unless `extra` says otherwise. */
export function quarantinedRecord(name: string, extra: Record<string, unknown> = {}) {
  return {
    domain_name: name,
    status: ['quarantine'],
    date_expiry: '2026-10-20T00:00:00Z',
    date_deleted: '2026-10-21T00:00:00Z',
    auto_renew: false,
    registrant_handle: 'C1',
    ...extra,
  };
}
