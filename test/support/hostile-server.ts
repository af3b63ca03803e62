import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A reseller API that misbehaves on purpose, one mode per way issue 15 found to lose a domain
 * quietly. Separate from the simulator (which is a faithful API with injectable faults): these
 * modes answer with whole-listing lies, odd records, redirects and unbounded bodies.
 */
export const HOSTILE_MODES = [
  /** A faithful listing: the control. */
  'healthy',
  /** Page 1 says 300 domains in 3 pages; later pages say 100 in 1 and deliver nothing. */
  'shrinking-listing',
  /** Once, right after page 1 is read, the account loses its first 100 domains (offsets shift). */
  'loses-domains-after-page-1',
  /** On every read, pages after page 1 report 200 domains instead of 300. */
  'totals-change-after-page-1',
  /** Every page reports one page more than the page before it did (page 1: 3 pages, page 2: 4, …). */
  'growing-pages',
  /**
   * A search back end's result window of 200: it lists 200 of the 300 domains (sorted as asked,
   * `-domain_name` too), its totals say 200, and a page past the window answers 400.
   */
  'result-window-400',
  /** The same window, answering an empty page under the same totals past it. */
  'result-window-empty',
  /**
   * The same window (empty past it), ignoring `sort` (always ascending), while `status=quarantine`
   * is counted over the whole account: d0250.nl, quarantined, lies beyond the window.
   */
  'result-window-unsorted',
  /** Quarantined names holding CR/LF, markup, Unicode, a trailing dot and a 64-character label. */
  'odd-names',
  /** `Shop.nl` and `shop.nl` in one listing. */
  'case-duplicates',
  /** `QUARANTINE` and `Quarantine` as status values. */
  'upper-case-status',
  /** A status sent as a string where the documentation shows an array. */
  'string-status',
  /** 401 on every request. */
  'unauthorized',
  /** Domains are readable, contacts answer 403. */
  'forbidden-contacts',
  /** Domain requests answer 302 / 307 to the same path on another origin. */
  'redirect-302',
  'redirect-307',
  /** Domain page 1 streams 64 MiB of JSON-looking bytes without a Content-Length. */
  'huge-body',
  /** Domain page 1 declares a 10 GiB Content-Length and sends a few bytes. */
  'content-length-lie',
  /** Domain requests answer 429 with `Retry-After: 86400`. */
  'retry-after-day',
  /** Domain requests never answer. */
  'hang',
  /** Domain requests answer 400 echoing the Authorization header in the body and in X-Request-Id. */
  'echo-key',
  /**
   * A 200 list whose records carry the key: a quarantined domain named after it, and it as another
   * domain's registrant handle, plainly and base64-encoded (a server logging requests into its data).
   */
  'echo-key-in-records',
] as const;

export type HostileMode = (typeof HOSTILE_MODES)[number];

/** The odd names of mode `odd-names`, every one quarantined, for tests of signing and escaping. */
export const ODD_NAMES: readonly string[] = [
  'fake-bank.com\r\n- paypal.com: in quarantine\r\nRestore: http://phish.example/restore',
  '<script>alert(1)</script>.nl',
  'ørsted.dk',
  'example.nl.',
  `${'a'.repeat(64)}.nl`,
  'p\u0430ypal.com', // a Cyrillic а
  'bidi\u202eln.moc',
];

/** One request as the hostile server saw it. */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly authorization: string | undefined;
}

export interface HostileServer {
  readonly url: string;
  readonly mode: HostileMode;
  readonly requests: SeenRequest[];
  /** The other origin redirects point at (redirect modes only). */
  readonly otherOrigin: { readonly url: string; readonly requests: SeenRequest[] };
  close(): Promise<void>;
}

export interface HostileServerOptions {
  readonly mode: HostileMode;
  /** The key that authenticates (modes other than `unauthorized` refuse any other with 401). */
  readonly apiKey: string;
  /** Domains in the account. @default 300 */
  readonly domains?: number;
}

const NOW_ISO = '2026-11-22T06:00:00Z';
const MAX_PER_PAGE = 100;

interface DomainRecord {
  domain_name: string;
  status: string[] | string;
  date_expiry: string;
  auto_renew: boolean;
  date_deleted?: string;
}

/** The healthy account: `d0000.nl`…; d0250.nl is quarantined (it sits beyond page 1 of 100). */
function baseDomains(n: number): DomainRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const name = `d${String(i).padStart(4, '0')}.nl`;
    return i === 250
      ? {
          domain_name: name,
          status: ['quarantine'],
          date_expiry: '2026-10-01T00:00:00Z',
          auto_renew: false,
          date_deleted: '2026-10-02T00:00:00Z',
        }
      : { domain_name: name, status: ['registered'], date_expiry: '2028-01-01T00:00:00Z', auto_renew: true };
  });
}

function quarantined(name: string, status: string[] | string = ['quarantine']): DomainRecord {
  return {
    domain_name: name,
    status,
    date_expiry: '2026-10-01T00:00:00Z',
    auto_renew: false,
    date_deleted: '2026-10-02T00:00:00Z',
  };
}

function accountFor(mode: HostileMode, n: number): DomainRecord[] {
  const base = baseDomains(n);
  switch (mode) {
    case 'odd-names':
      return [...base, ...ODD_NAMES.map((name) => quarantined(name))];
    case 'case-duplicates':
      return [...base, quarantined('Shop.nl'), quarantined('shop.nl')];
    case 'upper-case-status':
      return [...base, quarantined('upper.nl', ['QUARANTINE']), quarantined('title.nl', ['Quarantine'])];
    case 'string-status':
      return [...base, quarantined('single.nl', 'quarantine')];
    default:
      return base;
  }
}

function listBody(
  all: readonly unknown[],
  page: number,
  perPage: number,
  totals?: { results: number; pages: number },
) {
  return JSON.stringify({
    data: all.slice((page - 1) * perPage, page * perPage),
    pagination: {
      current_page: page,
      per_page: perPage,
      total_pages: totals?.pages ?? Math.ceil(all.length / perPage),
      total_results: totals?.results ?? all.length,
    },
  });
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function seen(req: IncomingMessage): SeenRequest {
  const url = new URL(req.url ?? '/', 'http://x');
  return {
    method: req.method ?? '',
    path: url.pathname,
    query: url.searchParams,
    authorization: req.headers.authorization,
  };
}

/** Starts the hostile server (and the other origin redirects point at) on 127.0.0.1. */
export async function startHostileServer(options: HostileServerOptions): Promise<HostileServer> {
  const { mode, apiKey } = options;
  let account = accountFor(mode, options.domains ?? 300);
  let lost = false;

  const otherRequests: SeenRequest[] = [];
  const other = createServer((req, res) => {
    otherRequests.push(seen(req));
    // Another origin answering as if it were the API: its data must never be accepted.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(listBody([], 1, MAX_PER_PAGE, { results: 0, pages: 0 }));
  });
  const otherUrl = await listen(other);

  const requests: SeenRequest[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const request = seen(req);
    requests.push(request);
    const json = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json;charset=utf-8', ...headers });
      res.end(body);
    };
    if (mode === 'unauthorized' || request.authorization !== `Bearer ${apiKey}`) {
      return json(401, '{"error":"invalid api key"}');
    }
    const page = Number(request.query.get('page') ?? 1);
    const perPage = Math.min(MAX_PER_PAGE, Number(request.query.get('per_page') ?? 50));
    if (request.path === '/v2/contacts') {
      if (mode === 'forbidden-contacts') return json(403, '{"error":"forbidden"}');
      return json(200, listBody([], page, perPage));
    }
    if (request.path !== '/v2/domains') return json(404, '{"error":"not found"}');

    switch (mode) {
      case 'shrinking-listing':
        return json(
          200,
          page === 1
            ? listBody(account, 1, perPage)
            : listBody([], page, perPage, { results: 100, pages: 1 }),
        );
      case 'loses-domains-after-page-1': {
        const body = listBody(account, page, perPage);
        if (page === 1 && !lost) {
          lost = true;
          account = account.slice(100);
        }
        return json(200, body);
      }
      case 'totals-change-after-page-1':
        return json(200, listBody(page === 1 ? account : account.slice(100), page, perPage));
      case 'growing-pages':
        return json(200, listBody(account, page, perPage, { results: account.length, pages: page + 2 }));
      case 'redirect-302':
      case 'redirect-307':
        res.writeHead(mode === 'redirect-302' ? 302 : 307, { location: `${otherUrl}${req.url}` });
        return res.end();
      case 'huge-body':
        return void streamHuge(res, 64 * 1024 * 1024);
      case 'content-length-lie':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 1024 ** 3) });
        res.write('{"data":[');
        return;
      case 'retry-after-day':
        return json(429, '{"error":"slow down"}', { 'retry-after': '86400' });
      case 'hang':
        hanging.push(res);
        return;
      case 'result-window-400':
      case 'result-window-empty':
      case 'result-window-unsorted': {
        const unsorted = mode === 'result-window-unsorted';
        if (unsorted && request.query.get('status') === 'quarantine') {
          const held = account.filter((d) => Array.isArray(d.status) && d.status.includes('quarantine'));
          return json(200, listBody(held, page, perPage));
        }
        const window = { results: 200, pages: Math.ceil(200 / perPage) };
        if ((page - 1) * perPage >= window.results) {
          if (mode === 'result-window-400') return json(400, '{"error":"Result window is too large"}');
          return json(200, listBody([], page, perPage, window));
        }
        const descending = request.query.get('sort') === '-domain_name' && !unsorted;
        const sorted = descending ? [...account].reverse() : account;
        return json(200, listBody(sorted.slice(0, window.results), page, perPage, window));
      }
      case 'echo-key':
        return json(400, JSON.stringify({ error: 'bad request', you_sent: request.authorization }), {
          'x-request-id': `req ${request.authorization}`,
        });
      case 'echo-key-in-records': {
        const [, second, ...rest] = account;
        const echoed: unknown[] = [
          quarantined(`${apiKey.toLowerCase()}.nl`),
          { ...second, registrant_handle: Buffer.from(apiKey).toString('base64'), note: apiKey },
          ...rest,
        ];
        return json(200, listBody(echoed, page, perPage));
      }
      default:
        return json(200, listBody(account, page, perPage));
    }
  });
  const url = await listen(server);

  return {
    url,
    mode,
    requests,
    otherOrigin: { url: otherUrl, requests: otherRequests },
    async close() {
      for (const s of [server, other]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}

/** Streams `total` bytes that start like a list answer, honouring backpressure, until the client goes. */
async function streamHuge(res: ServerResponse, total: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  res.write('{"data":[');
  for (let sent = 0; sent < total && !res.destroyed; sent += chunk.length) {
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  }
  if (!res.destroyed)
    res.end('],"pagination":{"current_page":1,"per_page":100,"total_pages":1,"total_results":0}}');
}

/** The instant the hostile account is evaluated at. */
export const HOSTILE_NOW = NOW_ISO;
