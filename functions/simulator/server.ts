import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from '../local/listen';
import {
  type AccountData,
  type Answer,
  accountData,
  errorAnswer,
  type ListRules,
  listAnswer,
  restoreAnswer,
  updateDomainOf,
} from './accounts';
import type { Portfolio, RawRecord } from './portfolio';
import { SearchError, type SearchSemantics } from './search';

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
  /**
   * A domain search by `domain_name` that selects nothing is answered 404 (as many REST APIs answer
   * a lookup without a hit), not with an empty page: the documentation does not say which. @default false
   */
  readonly notFoundWithoutHit?: boolean;
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
  /**
   * How many requests `requests` keeps, the newest: a simulator left running (`sentinel simulate`)
   * must not grow without bound. @default 100 000
   */
  readonly requestLog?: number;
  /**
   * How many characters of paths and queries `requests` keeps at most, the newest: a request line
   * may hold 16 KB, and 100 000 of them (sent without a key: every request is logged) would hold
   * gigabytes. @default 32 MiB
   */
  readonly requestLogChars?: number;
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
  /**
   * Rotates an account's key, as a reseller's control panel does: the same account answers to `to`
   * from now on, and `from` is refused (401). Throws when `from` is no key of it or `to` is taken.
   */
  rotateKey(from: string, to: string): void;
  close(): Promise<void>;
}

/** One account of the simulator, as a test sees it. */
export interface SimulatedAccountView {
  readonly restoreCalls: string[];
  domain(name: string): RawRecord | undefined;
  updateDomain(name: string, patch: RawRecord | null): boolean;
}

/** Where the real answer of a request carried out before its injected fault is written: nowhere. */
const DISCARDED_ANSWER = {
  writeHead: () => DISCARDED_ANSWER,
  end: () => DISCARDED_ANSWER,
} as unknown as ServerResponse;
const JSON_TYPE = 'application/json;charset=utf-8';
/** The longest admin patch the simulator reads, in characters. */
const ADMIN_BODY_MAX = 65_536;

/** What one running simulator holds: its accounts, their rate limits, the faults to inject, what it saw. */
interface SimulatorState {
  readonly options: SimulatorOptions;
  readonly rules: ListRules;
  readonly latencyMs: number;
  readonly clock: () => number;
  readonly primary: AccountData;
  readonly byKey: Map<string, AccountData>;
  readonly limiters: Map<string, { take(): number | undefined } | undefined>;
  readonly faults: Array<{ rule: FaultRule; left: number }>;
  readonly requests: SimulatedRequest[];
  /** Every request so far, kept or trimmed from `requests`: the next x-request-id. */
  requestCount: number;
  readonly requestLog: number;
  readonly requestLogChars: number;
  /** The characters of each request in `requests` (its path and query), in the same order. */
  readonly requestSizes: number[];
  /** Their sum. */
  requestChars: number;
  /** When each answer is due (performance.now()); answers without one (admin) leave at once. */
  readonly dueAt: WeakMap<ServerResponse, number>;
  rateLimited: number;
}

export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const state = simulatorState(options);
  const server = createServer((req, res) => handle(state, req, res));
  server.keepAliveTimeout = 30_000;
  await listen(server, options.port ?? 0, options.host ?? '127.0.0.1');
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  const { primary, byKey } = state;
  return {
    url: `http://${host}:${port}`,
    requests: state.requests,
    restoreCalls: primary.restoreCalls,
    get rateLimited() {
      return state.rateLimited;
    },
    injectFault: (rule) => state.faults.push({ rule, left: rule.times ?? 1 }),
    domain: (name) => primary.byName.get(name),
    updateDomain: (name, patch) => updateDomainOf(primary, name, patch),
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
    rotateKey: (from, to) => rotateKeyOf(state, from, to),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The account of `from` answers to `to` instead (its portfolio and rate limit unchanged). */
function rotateKeyOf(state: SimulatorState, from: string, to: string): void {
  const data = state.byKey.get(from);
  if (!data) throw new RangeError('no simulated account has that key');
  if (state.byKey.has(to)) throw new RangeError('each simulated account needs its own key');
  state.byKey.set(to, data);
  state.byKey.delete(from);
  state.limiters.set(to, state.limiters.get(from));
  state.limiters.delete(from);
}

function simulatorState(options: SimulatorOptions): SimulatorState {
  const primary = accountData(options.portfolio);
  const byKey = new Map<string, AccountData>([[options.apiKey, primary]]);
  for (const extra of options.accounts ?? []) {
    if (byKey.has(extra.apiKey)) throw new RangeError('each simulated account needs its own key');
    byKey.set(extra.apiKey, accountData(extra.portfolio));
  }
  // A reseller limits each key on its own: one bucket per account.
  const limiters = new Map(
    [...byKey.keys()].map((key) => [
      key,
      options.rateLimit
        ? tokenBucket(options.rateLimit, options.rateLimitBurst ?? Math.max(1, options.rateLimit))
        : undefined,
    ]),
  );
  return {
    options,
    rules: {
      maxPerPage: options.maxPerPage ?? 100,
      ...(options.searchSemantics ? { searchSemantics: options.searchSemantics } : {}),
      ...(options.ignoredSearchParameters
        ? { ignoredSearchParameters: options.ignoredSearchParameters }
        : {}),
      ...(options.notFoundWithoutHit ? { notFoundWithoutHit: true } : {}),
    },
    latencyMs: options.latencyMs ?? 0,
    clock: options.now ?? Date.now,
    primary,
    byKey,
    limiters,
    faults: [],
    requests: [],
    requestCount: 0,
    requestLog: options.requestLog ?? 100_000,
    requestLogChars: options.requestLogChars ?? 32 * 1024 * 1024,
    requestSizes: [],
    requestChars: 0,
    dueAt: new WeakMap(),
    rateLimited: 0,
  };
}

/** A request the simulator cannot read (its target is no URL, a path segment no percent-encoding): 400. */
class BadRequestError extends Error {
  override readonly name = 'BadRequestError';
}

/**
 * One request, answered whatever it holds: a request that cannot be read is answered 400, and one
 * the simulator fails on (a record an admin patch left odd) 500. Thrown from here, either would end
 * the process, and with it every scan, serve and try-out using this simulator.
 */
function handle(state: SimulatorState, req: IncomingMessage, res: ServerResponse) {
  try {
    answer(state, req, res);
  } catch (error) {
    req.resume();
    if (res.headersSent) return void res.destroy();
    const what = `${req.method} ${(req.url ?? '/').slice(0, 200)}`;
    const message = error instanceof Error ? error.message : String(error);
    send(
      state,
      res,
      error instanceof BadRequestError
        ? errorAnswer(400, `${message}: ${what}`)
        : errorAnswer(500, `the simulator could not answer ${what}: ${message}`),
    );
  }
}

/** The request's URL; a BadRequestError when its target is none. */
function requestUrl(req: IncomingMessage): URL {
  try {
    return new URL(req.url ?? '/', 'http://simulator');
  } catch {
    throw new BadRequestError('the request target is not a URL');
  }
}

/** A percent-encoded path segment, decoded; a BadRequestError when it is no valid encoding. */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new BadRequestError('a path segment is not valid percent-encoding');
  }
}

/** One request: the RDAP bootstrap, the admin endpoint, or the API behind its rate limit and faults. */
function answer(state: SimulatorState, req: IncomingMessage, res: ServerResponse) {
  const url = requestUrl(req);
  const bootstrap = url.pathname === '/rdap/dns.json' ? state.options.rdapBootstrap?.() : undefined;
  if (bootstrap !== undefined) {
    req.resume();
    return send(state, res, { status: 200, body: bootstrap });
  }
  const adminMatch = /^\/_admin\/domains\/([^/]+)$/.exec(url.pathname);
  if (adminMatch?.[1]) return admin(state, req, res, decodedSegment(adminMatch[1]));
  const request: SimulatedRequest = {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: url.searchParams,
  };
  state.requestCount++;
  logRequest(state, request, url.pathname.length + url.search.length);
  req.resume(); // bodies are ignored; drain them
  // A request without a known key has no bucket: it is answered 401 by the route.
  const waitMs = state.limiters
    .get(accountOf(state, req) ? (req.headers.authorization ?? '').slice(7) : '')
    ?.take();
  // A request the rate limit turns away never reaches the application, nor its injected faults.
  const rule = waitMs === undefined ? takeFault(state, request) : undefined;
  // The real answer goes nowhere; the fault's answer below is what the client gets.
  if (rule?.afterActing) route(state, req, DISCARDED_ANSWER, request);
  if (state.latencyMs > 0) state.dueAt.set(res, performance.now() + state.latencyMs);
  if (waitMs !== undefined) {
    state.rateLimited++;
    const text = JSON.stringify({ error: { code: 429, message: 'rate limit exceeded' } });
    const retryAfter = String(Math.max(1, Math.ceil(waitMs / 1000)));
    return deliver(state, res, () =>
      res.writeHead(429, { 'content-type': JSON_TYPE, 'retry-after': retryAfter }).end(text),
    );
  }
  if (rule) return answerFault(state, res, rule.fault);
  route(state, req, res, request);
}

/**
 * Keeps `request` in the log, and the newest half of the log when it is full, by count or by
 * characters: one splice per half a log's worth of requests keeps the newest cheaply.
 */
function logRequest(state: SimulatorState, request: SimulatedRequest, size: number): void {
  const { requests, requestSizes } = state;
  requests.push(request);
  requestSizes.push(size);
  state.requestChars += size;
  if (requests.length <= state.requestLog && state.requestChars <= state.requestLogChars) return;
  let drop = 0;
  while (
    drop < requests.length &&
    (requests.length - drop > state.requestLog / 2 || state.requestChars > state.requestLogChars / 2)
  )
    state.requestChars -= requestSizes[drop++] as number;
  requests.splice(0, drop);
  requestSizes.splice(0, drop);
}

/** The answer an injected fault gives instead of the real one (a hang gives none). */
function answerFault(state: SimulatorState, res: ServerResponse, fault: Fault) {
  if (fault.kind === 'hang') return; // never answers; close() destroys the socket
  if (fault.kind === 'malformed') {
    return deliver(state, res, () =>
      res.writeHead(200, { 'content-type': JSON_TYPE }).end('{"data": [ {"domain_name": "trunc'),
    );
  }
  const { status, retryAfter } = fault;
  const text = JSON.stringify({ error: { code: status, message: 'injected fault' } });
  deliver(state, res, () =>
    res
      .writeHead(status, { 'content-type': JSON_TYPE, ...(retryAfter ? { 'retry-after': retryAfter } : {}) })
      .end(text),
  );
}

/** Sends `write` when the answer is due (the configured latency after its request arrived). */
function deliver(state: SimulatorState, res: ServerResponse, write: () => void): void {
  const wait = (state.dueAt.get(res) ?? 0) - performance.now();
  if (wait > 0) setTimeout(write, wait);
  else write();
}

function send(state: SimulatorState, res: ServerResponse, answer: Answer): void {
  const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
  const headers: Record<string, string> = { 'x-request-id': `sim-${state.requestCount}` };
  if (text) headers['content-type'] = JSON_TYPE;
  deliver(state, res, () => res.writeHead(answer.status, headers).end(text));
}

function accountOf(state: SimulatorState, req: IncomingMessage): AccountData | undefined {
  const header = req.headers.authorization ?? '';
  return header.startsWith('Bearer ') ? state.byKey.get(header.slice('Bearer '.length)) : undefined;
}

/** The three documented endpoints, for the account of the request's key. */
function route(state: SimulatorState, req: IncomingMessage, res: ServerResponse, request: SimulatedRequest) {
  const account = accountOf(state, req);
  if (!account) return send(state, res, errorAnswer(401, 'missing or invalid API key'));
  try {
    if (req.method === 'GET' && request.path === '/v2/domains')
      return send(state, res, listAnswer(account, 'domains', request.query, state.rules));
    if (req.method === 'GET' && request.path === '/v2/contacts')
      return send(state, res, listAnswer(account, 'contacts', request.query, state.rules));
    const restoreMatch = /^\/v2\/domains\/([^/]+)\/restore$/.exec(request.path);
    if (restoreMatch?.[1] && req.method === 'POST')
      return send(state, res, restoreAnswer(account, decodedSegment(restoreMatch[1]), state.clock()));
    return send(state, res, errorAnswer(404, `no route for ${req.method} ${request.path}`));
  } catch (e) {
    if (e instanceof SearchError) return send(state, res, errorAnswer(400, e.message));
    throw e;
  }
}

/** Test-only portfolio changes; not counted in `requests` and never hit by injected faults. */
function admin(state: SimulatorState, req: IncomingMessage, res: ServerResponse, name: string) {
  const account = accountOf(state, req);
  if (!account || req.method !== 'POST') {
    req.resume();
    if (!account) return send(state, res, errorAnswer(401, 'missing or invalid API key'));
    if (req.method !== 'DELETE')
      return send(state, res, errorAnswer(405, 'use POST with a JSON patch, or DELETE'));
    return send(
      state,
      res,
      updateDomainOf(account, name, null) ? { status: 204 } : errorAnswer(404, `domain ${name} not found`),
    );
  }
  let body = '';
  let tooLarge = false;
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    if (tooLarge) return;
    body += chunk;
    if (body.length <= ADMIN_BODY_MAX) return;
    // Answered, not cut off (the client saw the socket closed and no status); the rest is read and
    // dropped, and the connection closed after the answer.
    tooLarge = true;
    body = '';
    res.setHeader('connection', 'close');
    send(state, res, errorAnswer(413, `the patch must be at most ${ADMIN_BODY_MAX} characters`));
  });
  req.on('end', () => {
    if (tooLarge) return;
    let patch: unknown;
    try {
      patch = JSON.parse(body);
    } catch {
      return send(state, res, errorAnswer(400, 'the body must be a JSON object'));
    }
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
      return send(state, res, errorAnswer(400, 'the body must be a JSON object'));
    // JSON.parse makes '__proto__' an own key, and merged it would set the record's prototype: its
    // fields seen by the search but not in the answers.
    if (Object.hasOwn(patch, '__proto__'))
      return send(state, res, errorAnswer(400, 'the patch may not name __proto__'));
    updateDomainOf(account, name, patch as RawRecord);
    send(state, res, { status: 200, body: { data: account.byName.get(name) } });
  });
}

function takeFault(state: SimulatorState, request: SimulatedRequest): FaultRule | undefined {
  const { faults } = state;
  const index = faults.findIndex(({ rule }) => !rule.match || rule.match(request));
  if (index < 0) return undefined;
  const entry = faults[index] as { rule: FaultRule; left: number };
  entry.left--;
  if (entry.left <= 0) faults.splice(index, 1);
  return entry.rule;
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
