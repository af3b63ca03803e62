import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Portfolio, RawRecord } from './portfolio';
import { buildFilter, buildSort, type Resource, SearchError, type SearchSemantics } from './search';

/**
 * The embedded reseller simulator: a real HTTP server with the three documented endpoints, Bearer
 * auth, the search and sort syntax, paging with a server-side per_page maximum, restore, and fault
 * injection for tests. Used by the tests, `npm start` and `sentinel simulate`.
 */

/** A fault the simulator injects into one matching request. */
export type Fault =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string }
  | { readonly kind: 'hang' }
  | { readonly kind: 'malformed' };

export interface FaultRule {
  readonly fault: Fault;
  /** Which requests it hits, e.g. `(r) => r.path === '/v2/domains' && r.query.get('page') === '2'`. @default every request */
  readonly match?: (request: SimulatedRequest) => boolean;
  /** How many requests it hits before it is spent. @default 1 */
  readonly times?: number;
  /**
   * Carry the request out first, then answer with the fault instead of the real answer: a
   * reseller that restores the domain and then answers 500, or not in time. @default false
   */
  readonly afterActing?: boolean;
}

export interface SimulatedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
}

/** One more reseller account the simulator serves, told apart by its key. */
export interface SimulatedAccount {
  readonly apiKey: string;
  readonly portfolio: Portfolio;
}

export interface SimulatorOptions {
  readonly portfolio: Portfolio;
  readonly apiKey: string;
  /**
   * More accounts on the same server, one per key (several accounts of one reseller, as an agency
   * holds them): each request sees only the portfolio of the key it carries. @default none
   */
  readonly accounts?: readonly SimulatedAccount[];
  /** The server caps per_page here, whatever was asked. @default 100 */
  readonly maxPerPage?: number;
  /**
   * Every answer leaves this long after its request arrived, the simulator's own work (filtering,
   * serialising) included, like a server that answers in this time. @default 0
   */
  readonly latencyMs?: number;
  /** @default 0 (a free port) */
  readonly port?: number;
  /** Loopback only. @default '127.0.0.1' */
  readonly host?: string;
  /** The clock restore uses to set the new expiry. @default Date.now */
  readonly now?: () => number;
  /** How repeated search parameters combine, or whether they are ignored. @default 'or' */
  readonly searchSemantics?: SearchSemantics;
  /** With `searchSemantics: 'ignore'`, the parameters ignored. @default every filter parameter */
  readonly ignoredSearchParameters?: readonly string[];
  /** Requests a second the server accepts (token bucket); beyond it, 429 with Retry-After. @default unlimited */
  readonly rateLimit?: number;
  /** Requests the bucket holds, i.e. the burst accepted after a quiet spell. @default rateLimit (one second's worth) */
  readonly rateLimitBurst?: number;
  /**
   * The registry side's RDAP bootstrap (functions/simulator/registry.ts), served without a key at
   * `GET /rdap/dns.json` as IANA serves its own, so the try-outs name it on the simulator's port.
   * @default none (404)
   */
  readonly rdapBootstrap?: () => unknown;
}

export interface Simulator {
  /** Base URL, e.g. http://127.0.0.1:40123 */
  readonly url: string;
  /** Every request answered or hung, in arrival order. */
  readonly requests: SimulatedRequest[];
  /** Names the restore endpoint was called for, successful or not. */
  readonly restoreCalls: string[];
  /** Requests answered 429 by the rate limit (injected faults not counted). */
  readonly rateLimited: number;
  injectFault(rule: FaultRule): void;
  /** The domain record as the simulator now holds it. */
  domain(name: string): RawRecord | undefined;
  /**
   * Changes the portfolio while it runs: merges `patch` into the domain (adding it when new), or
   * removes it with null. Returns false when there was nothing to remove. Also over HTTP:
   * `POST /_admin/domains/<name>` with a JSON patch, `DELETE /_admin/domains/<name>`, same key.
   */
  updateDomain(name: string, patch: RawRecord | null): boolean;
  /** The account of another key (SimulatorOptions.accounts), with the same views of its own portfolio. */
  account(apiKey: string): SimulatedAccountView | undefined;
  close(): Promise<void>;
}

/** One account of the simulator, as a test sees it. */
export interface SimulatedAccountView {
  readonly restoreCalls: string[];
  domain(name: string): RawRecord | undefined;
  updateDomain(name: string, patch: RawRecord | null): boolean;
}

/** The records of one account, and its answers cached per query. */
interface AccountData {
  readonly domains: RawRecord[];
  readonly contacts: RawRecord[];
  readonly byName: Map<string, RawRecord>;
  readonly cache: Map<string, RawRecord[]>;
  readonly restoreCalls: string[];
}

function accountData(portfolio: Portfolio): AccountData {
  const domains = portfolio.domains.map((d) => ({ ...d }));
  return {
    domains,
    contacts: portfolio.contacts.map((c) => ({ ...c })),
    byName: new Map(domains.map((d) => [String(d.domain_name), d])),
    // Filtering and sorting 100 000 records per page would dominate a benchmark: cache per query.
    cache: new Map(),
    restoreCalls: [],
  };
}

const DEFAULT_PER_PAGE = 50;
/** Where the real answer of a request carried out before its injected fault is written: nowhere. */
const DISCARDED_ANSWER = {
  writeHead: () => DISCARDED_ANSWER,
  end: () => DISCARDED_ANSWER,
} as unknown as ServerResponse;
const JSON_TYPE = 'application/json;charset=utf-8';

export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const maxPerPage = options.maxPerPage ?? 100;
  const latencyMs = options.latencyMs ?? 0;
  const clock = options.now ?? Date.now;
  const primary = accountData(options.portfolio);
  const byKey = new Map<string, AccountData>([[options.apiKey, primary]]);
  for (const extra of options.accounts ?? []) {
    if (byKey.has(extra.apiKey)) throw new RangeError('each simulated account needs its own key');
    byKey.set(extra.apiKey, accountData(extra.portfolio));
  }
  const faults: Array<{ rule: FaultRule; left: number }> = [];
  const requests: SimulatedRequest[] = [];
  // A reseller limits each key on its own: one bucket per account.
  const limiters = new Map(
    [...byKey.keys()].map((key) => [
      key,
      options.rateLimit
        ? tokenBucket(options.rateLimit, options.rateLimitBurst ?? Math.max(1, options.rateLimit))
        : undefined,
    ]),
  );
  const accountOf = (req: IncomingMessage): AccountData | undefined => {
    const header = req.headers.authorization ?? '';
    return header.startsWith('Bearer ') ? byKey.get(header.slice('Bearer '.length)) : undefined;
  };
  let rateLimited = 0;

  // When each answer is due (performance.now()); answers without one (admin) leave at once.
  const dueAt = new WeakMap<ServerResponse, number>();
  const deliver = (res: ServerResponse, write: () => void) => {
    const wait = (dueAt.get(res) ?? 0) - performance.now();
    if (wait > 0) setTimeout(write, wait);
    else write();
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = body === undefined ? '' : JSON.stringify(body);
    const headers: Record<string, string> = { 'x-request-id': `sim-${requests.length}` };
    if (text) headers['content-type'] = JSON_TYPE;
    deliver(res, () => res.writeHead(status, headers).end(text));
  };
  const error = (res: ServerResponse, status: number, message: string) =>
    send(res, status, { error: { code: status, message } });

  const list = (account: AccountData, resource: Resource, query: URLSearchParams, res: ServerResponse) => {
    const { cache, domains, contacts } = account;
    const page = query.has('page') ? Number(query.get('page')) : 1;
    const askedPerPage = query.has('per_page') ? Number(query.get('per_page')) : DEFAULT_PER_PAGE;
    if (!Number.isInteger(page) || page < 1) return error(res, 400, 'page must be a positive integer');
    if (!Number.isInteger(askedPerPage) || askedPerPage < 1)
      return error(res, 400, 'per_page must be a positive integer');
    const perPage = Math.min(askedPerPage, maxPerPage);
    const key = `${resource}?${[...query]
      .filter(([k]) => k !== 'page' && k !== 'per_page')
      .map(([k, v]) => `${k}=${v}`)
      .join('&')}`;
    let matches = cache.get(key);
    if (!matches) {
      const source = resource === 'domains' ? domains : contacts;
      const filter = buildFilter(resource, query, {
        ...(options.searchSemantics ? { semantics: options.searchSemantics } : {}),
        ...(options.ignoredSearchParameters ? { ignored: options.ignoredSearchParameters } : {}),
      });
      matches = source.filter(filter);
      const sort = buildSort(resource, query.get('sort'));
      if (sort) matches.sort(sort);
      cache.set(key, matches);
    }
    const totalPages = Math.ceil(matches.length / perPage);
    const data = matches.slice((page - 1) * perPage, page * perPage);
    // The examples name current_page `page`: the contact list answers that way.
    const pageField = resource === 'contacts' ? 'page' : 'current_page';
    send(res, 200, {
      data,
      pagination: {
        [pageField]: page,
        per_page: perPage,
        total_pages: totalPages,
        total_results: matches.length,
      },
    });
  };

  const restore = (account: AccountData, name: string, res: ServerResponse) => {
    const { restoreCalls, byName, cache } = account;
    restoreCalls.push(name);
    const domain = byName.get(name);
    if (!domain) return error(res, 404, `domain ${name} not found`);
    const status = domain.status as string[];
    if (!status.includes('quarantine')) return error(res, 422, `domain ${name} is not in quarantine`);
    domain.status = ['registered'];
    domain.date_deleted = null;
    const expiry = Math.max(Date.parse(String(domain.date_expiry)), clock());
    domain.date_expiry = new Date(expiry + 365 * 86_400_000).toISOString().replace('.000Z', 'Z');
    domain.date_renewal = new Date(expiry + 364 * 86_400_000).toISOString().replace('.000Z', 'Z');
    cache.clear();
    send(res, 204, undefined);
  };

  const route = (req: IncomingMessage, res: ServerResponse, request: SimulatedRequest) => {
    const account = accountOf(req);
    if (!account) {
      return error(res, 401, 'missing or invalid API key');
    }
    try {
      if (req.method === 'GET' && request.path === '/v2/domains')
        return list(account, 'domains', request.query, res);
      if (req.method === 'GET' && request.path === '/v2/contacts')
        return list(account, 'contacts', request.query, res);
      const restoreMatch = /^\/v2\/domains\/([^/]+)\/restore$/.exec(request.path);
      if (restoreMatch?.[1] && req.method === 'POST')
        return restore(account, decodeURIComponent(restoreMatch[1]), res);
      return error(res, 404, `no route for ${req.method} ${request.path}`);
    } catch (e) {
      if (e instanceof SearchError) return error(res, 400, e.message);
      throw e;
    }
  };

  const updateDomainOf = (account: AccountData, name: string, patch: RawRecord | null): boolean => {
    const { byName, domains, cache } = account;
    const existing = byName.get(name);
    if (patch === null) {
      if (!existing) return false;
      domains.splice(domains.indexOf(existing), 1);
      byName.delete(name);
    } else if (existing) Object.assign(existing, patch, { domain_name: name });
    else {
      const record = { ...patch, domain_name: name };
      domains.push(record);
      byName.set(name, record);
    }
    cache.clear();
    return true;
  };

  const updateDomain = (name: string, patch: RawRecord | null) => updateDomainOf(primary, name, patch);

  /** Test-only portfolio changes; not counted in `requests` and never hit by injected faults. */
  const admin = (req: IncomingMessage, res: ServerResponse, name: string) => {
    const account = accountOf(req);
    if (!account) {
      req.resume();
      return error(res, 401, 'missing or invalid API key');
    }
    if (req.method === 'DELETE') {
      req.resume();
      return updateDomainOf(account, name, null)
        ? send(res, 204, undefined)
        : error(res, 404, `domain ${name} not found`);
    }
    if (req.method !== 'POST') {
      req.resume();
      return error(res, 405, 'use POST with a JSON patch, or DELETE');
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > 65_536) req.destroy();
    });
    req.on('end', () => {
      let patch: unknown;
      try {
        patch = JSON.parse(body);
      } catch {
        return error(res, 400, 'the body must be a JSON object');
      }
      if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
        return error(res, 400, 'the body must be a JSON object');
      updateDomainOf(account, name, patch as RawRecord);
      send(res, 200, { data: account.byName.get(name) });
    });
  };

  const takeFault = (request: SimulatedRequest): FaultRule | undefined => {
    const index = faults.findIndex(({ rule }) => !rule.match || rule.match(request));
    if (index < 0) return undefined;
    const entry = faults[index] as { rule: FaultRule; left: number };
    entry.left--;
    if (entry.left <= 0) faults.splice(index, 1);
    return entry.rule;
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const bootstrap = url.pathname === '/rdap/dns.json' ? options.rdapBootstrap?.() : undefined;
    if (bootstrap !== undefined) {
      req.resume();
      return send(res, 200, bootstrap);
    }
    const adminMatch = /^\/_admin\/domains\/([^/]+)$/.exec(url.pathname);
    if (adminMatch?.[1]) return admin(req, res, decodeURIComponent(adminMatch[1]));
    const request: SimulatedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
    };
    requests.push(request);
    req.resume(); // bodies are ignored; drain them
    // A request without a known key has no bucket: it is answered 401 by the route.
    const waitMs = limiters.get(accountOf(req) ? (req.headers.authorization ?? '').slice(7) : '')?.take();
    // A request the rate limit turns away never reaches the application, nor its injected faults.
    const rule = waitMs === undefined ? takeFault(request) : undefined;
    const fault = rule?.fault;
    // The real answer goes nowhere; the fault's answer below is what the client gets.
    if (rule?.afterActing) route(req, DISCARDED_ANSWER, request);
    if (latencyMs > 0) dueAt.set(res, performance.now() + latencyMs);
    if (waitMs !== undefined) {
      rateLimited++;
      const text = JSON.stringify({ error: { code: 429, message: 'rate limit exceeded' } });
      const retryAfter = String(Math.max(1, Math.ceil(waitMs / 1000)));
      return deliver(res, () =>
        res.writeHead(429, { 'content-type': JSON_TYPE, 'retry-after': retryAfter }).end(text),
      );
    }
    if (fault?.kind === 'hang') return; // never answers; close() destroys the socket
    if (fault?.kind === 'malformed') {
      return deliver(res, () =>
        res.writeHead(200, { 'content-type': JSON_TYPE }).end('{"data": [ {"domain_name": "trunc'),
      );
    }
    if (fault?.kind === 'status') {
      const { status, retryAfter } = fault;
      const text = JSON.stringify({ error: { code: status, message: 'injected fault' } });
      return deliver(res, () =>
        res
          .writeHead(status, {
            'content-type': JSON_TYPE,
            ...(retryAfter ? { 'retry-after': retryAfter } : {}),
          })
          .end(text),
      );
    }
    route(req, res, request);
  });
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;

  return {
    url: `http://${host}:${port}`,
    requests,
    restoreCalls: primary.restoreCalls,
    get rateLimited() {
      return rateLimited;
    },
    injectFault: (rule) => faults.push({ rule, left: rule.times ?? 1 }),
    domain: (name) => primary.byName.get(name),
    updateDomain,
    account: (apiKey) => {
      const data = byKey.get(apiKey);
      return data
        ? {
            restoreCalls: data.restoreCalls,
            domain: (name) => data.byName.get(name),
            updateDomain: (name, patch) => updateDomainOf(data, name, patch),
          }
        : undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A token bucket on the monotonic clock: `rate` tokens a second, at most `burst` held. `take()`
 * spends a token and returns undefined, or returns the ms until one will be there (nothing spent).
 */
function tokenBucket(rate: number, burst: number): { take(): number | undefined } {
  if (!(rate > 0) || !(burst >= 1)) throw new RangeError('rateLimit must be > 0 and rateLimitBurst ≥ 1');
  let tokens = burst;
  let last = performance.now();
  return {
    take() {
      const at = performance.now();
      tokens = Math.min(burst, tokens + ((at - last) * rate) / 1000);
      last = at;
      if (tokens >= 1) {
        tokens -= 1;
        return undefined;
      }
      return ((1 - tokens) * 1000) / rate;
    },
  };
}
