import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { errorLine } from '../core/base/errors';
import { SECURITY_HEADERS } from '../core/pages/restore-page';
import { type ProxyHandler, refusalAnswer } from '../handlers/http-answer';
import { listen } from './listen';

/** The API's resources by path, as API Gateway routes them: acting links carry the domain in the path. */
const ROUTES: ReadonlyArray<{ readonly path: RegExp; readonly resource: string }> = [
  { path: /^\/(restore|snooze|acknowledge|finding)\/([^/]+)$/, resource: '/$1/{domain}' },
  { path: /^\/(report)$/, resource: '/report' },
  { path: /^\/(report\.json)$/, resource: '/report.json' },
  { path: /^\/(calendar\.ics)$/, resource: '/calendar.ics' },
];
/** The routes of several accounts (functions/handlers/accounts-web.ts): the overview, and each account's own links. */
function accountRoute(
  path: string,
): { resource: string; pathParameters: Record<string, string> | null } | null {
  if (path === '/accounts') return { resource: '/accounts', pathParameters: null };
  const acting = /^\/accounts\/([^/]+)\/(restore|snooze|acknowledge|finding)\/([^/]+)$/.exec(path);
  if (acting?.[1] && acting[2] && acting[3])
    return {
      resource: `/accounts/{account}/${acting[2]}/{domain}`,
      pathParameters: { account: safeDecode(acting[1]), domain: safeDecode(acting[3]) },
    };
  const view = /^\/accounts\/([^/]+)\/(report|report\.json|calendar\.ics)$/.exec(path);
  if (view?.[1] && view[2])
    return { resource: `/accounts/{account}/${view[2]}`, pathParameters: { account: safeDecode(view[1]) } };
  return null;
}

/** The restore POST has no body; API Gateway's own limit is 10 MB, ours far smaller. */
export const MAX_BODY_BYTES = 16_384;

/** A request body over the limit: answered 413, the rest of the body never read. */
class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

/**
 * Serves a Lambda proxy handler on a local HTTP server: each request becomes the API Gateway event
 * the REST API would send for its resource (`/restore/{domain}`, `/snooze/{domain}`, `/report`, …), so `sentinel serve` runs the very handler the
 * Lambda runs.
 */
export async function serveLocally(handler: ProxyHandler, options: { port?: number; host?: string } = {}) {
  // Answers still being made on each connection: a refusal of the request after them waits its turn.
  const inFlight = new WeakMap<Socket, { count: number; afterLast?: () => void }>();
  const server = createServer(async (req, res) => {
    const pending = inFlight.get(req.socket) ?? { count: 0 };
    inFlight.set(req.socket, pending);
    pending.count++;
    res.once('close', () => {
      if (--pending.count === 0) pending.afterLast?.();
    });
    // Every answer, errors included, carries the same security headers as the handler's pages.
    // A page, or JSON to a program that asks for it, as the handler's own refusals.
    const plain = (status: number, outcome: string, title: string, message: string) => {
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers[key] = value;
      const refusal = refusalAnswer({
        method: req.method ?? 'GET',
        headers,
        status,
        outcome,
        title,
        message,
      });
      res.writeHead(status, { ...(refusal.headers as Record<string, string>), Connection: 'close' });
      res.end(refusal.body); // refusalAnswer leaves it empty for HEAD
    };
    try {
      const body = await readBody(req);
      const event = toProxyEvent(req, body);
      if (!event)
        return plain(404, 'not_found', 'Not found', 'There is nothing here. Use the link from the alert.');
      const result = await handler(event);
      res.writeHead(result.statusCode, result.headers as Record<string, string>);
      res.end(req.method === 'HEAD' ? undefined : result.body);
    } catch (error) {
      if (error instanceof BodyTooLargeError)
        return plain(
          413,
          'too_large',
          'Request too large',
          `A request body may hold at most ${MAX_BODY_BYTES} bytes.`,
        );
      plain(
        500,
        'internal_error',
        'Internal error',
        'The local restore server failed; its terminal says why.',
      );
      process.emitWarning(`serve: ${errorLine(error)}`);
    }
  });
  // A request Node's parser refuses (an unknown method, a header over its limit, a body that
  // outlasts requestTimeout) never reaches the handler; Node's own answer has no security headers.
  // Pipelined after a request still answering, it goes out after that answer: written at once, it
  // would be read as the answer to the earlier request, whose own answer would then be lost.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const refuse = () => (socket.writable ? socket.end(clientErrorAnswer(error.code)) : socket.destroy());
    const pending = inFlight.get(socket);
    if (pending && pending.count > 0) pending.afterLast = refuse;
    else refuse();
  });
  await listen(server, options.port ?? 8787, options.host ?? '127.0.0.1');
  const { port, address } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The status and reason of a request the parser refused, as a whole answer with the security headers. */
function clientErrorAnswer(code: string | undefined): string {
  const [status, reason] =
    code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large']
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout']
        : [400, 'Bad Request'];
  const headers = Object.entries(SECURITY_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${reason}\r\n${headers.join('')}Content-Length: 0\r\nConnection: close\r\n\r\n`;
}

/**
 * The request's URL, or null when its path names a route only after the URL parser rewrote it:
 * a dot segment (`/restore/%2e%2e/report` is `/report` to it), a backslash (a slash to it) or a
 * leading `//` (read as a host).
 */
function requestUrl(target: string): URL | null {
  // Absolute form (`GET http://host/path`), which HTTP/1.1 lets a client send, is taken as its path.
  const origin = target.replace(/^https?:\/\/[^/?#]*/i, '');
  if (!origin.startsWith('/') || origin.startsWith('//')) return null;
  const path = origin.split('?')[0] ?? '';
  // A backslash is a slash to the URL parser (`/x\..\report` is `/report` to it), never to API Gateway.
  if (path.includes('\\')) return null;
  if (path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment))) return null;
  return new URL(`http://local${origin}`);
}

function toProxyEvent(req: IncomingMessage, body: string): APIGatewayProxyEvent | null {
  const url = requestUrl(req.url ?? '/');
  if (!url) return null;
  const route = ROUTES.find((r) => r.path.test(url.pathname));
  const match = route?.path.exec(url.pathname);
  const account = route ? null : accountRoute(url.pathname);
  if ((!route || !match?.[1]) && !account) return null;
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[key] = value;
  const query = url.searchParams.size ? Object.fromEntries(url.searchParams) : null;
  return {
    httpMethod: req.method ?? 'GET',
    path: url.pathname,
    resource: account ? account.resource : (route?.resource ?? '').replace('$1', match?.[1] ?? ''),
    // API Gateway decodes path parameters; keep any decoding failure as the raw text for the validator to reject.
    pathParameters: account ? account.pathParameters : match?.[2] ? { domain: safeDecode(match[2]) } : null,
    queryStringParameters: query,
    multiValueQueryStringParameters: null,
    headers,
    multiValueHeaders: {},
    body: body || null,
    isBase64Encoded: false,
    stageVariables: null,
    requestContext: {
      path: url.pathname,
      httpMethod: req.method ?? 'GET',
      identity: { sourceIp: req.socket.remoteAddress ?? '', userAgent: headers['user-agent'] ?? '' },
    } as APIGatewayProxyEvent['requestContext'],
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) throw new BodyTooLargeError();
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    // Do not buffer a large body: stop reading, answer 413 and close the connection.
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
