import { connect } from 'node:net';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { SECURITY_HEADERS } from '../../functions/core/pages/restore-page';
import { serveLocally } from '../../functions/local/local-server';

/**
 * `sentinel serve` against a hostile client: requests Node's parser refuses before any handler
 * runs, and paths that only name a route after the URL parser rewrote them.
 */

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A server whose handler records the events it is given and answers 200. */
async function recordingServer() {
  const events: APIGatewayProxyEvent[] = [];
  const server = await serveLocally(
    async (event) => {
      events.push(event);
      return { statusCode: 200, headers: { ...SECURITY_HEADERS }, body: 'handled' };
    },
    { port: 0 },
  );
  closers.push(server.close);
  return { events, port: Number(new URL(server.url).port) };
}

/** Sends `text` as it is (no client normalises it) and reads the answer's head until the server closes. */
function rawRequest(port: number, text: string): Promise<{ status: number; headers: Map<string, string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [statusLine = '', ...lines] = (out.split('\r\n\r\n')[0] ?? '').split('\r\n');
      const headers = new Map(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers });
    });
  });
}

describe('sentinel serve against a hostile client', () => {
  it.each([
    ['an unknown method', 'BREW /report HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['a request line that is not HTTP', 'garbage\r\n\r\n', 400],
    [
      'a header over the limit',
      `GET /report HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
    ],
  ])('answers %s with the security headers, never reaching the handler', async (_name, text, status) => {
    const { events, port } = await recordingServer();
    const res = await rawRequest(port, text);
    expect(res.status).toBe(status);
    for (const [name, value] of Object.entries(SECURITY_HEADERS))
      expect(res.headers.get(name.toLowerCase())).toBe(value);
    expect(res.headers.get('connection')).toBe('close');
    expect(events).toEqual([]);
  });

  it('answers a pipelined request first when the one after it cannot be parsed, then refuses that one', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await serveLocally(
      async () => {
        await gate;
        return { statusCode: 200, headers: { ...SECURITY_HEADERS }, body: 'handled' };
      },
      { port: 0 },
    );
    closers.push(server.close);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () => {
        socket.write('GET /report HTTP/1.1\r\nHost: x\r\n\r\nBREW /report HTTP/1.1\r\nHost: x\r\n\r\n');
        // The refusal of the second is decided while the first still waits for its handler.
        setImmediate(release);
      });
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk;
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
    });
    // In order, as HTTP/1.1 requires: the 400 was taken for the first request's answer before.
    expect(answer.split('\r\n').filter((line) => line.startsWith('HTTP/1.1'))).toEqual([
      'HTTP/1.1 200 OK',
      'HTTP/1.1 400 Bad Request',
    ]);
    expect(answer).toContain('handled');
  });

  it.each([
    ['a dot segment', '/restore/../report'],
    ['an encoded dot segment', '/restore/%2e%2e/report'],
    ['a path that reads as a host', '//evil.example/report'],
    ['a dot segment in absolute form', 'http://127.0.0.1/restore/%2E./report'],
    // The URL parser reads a backslash as a slash in http URLs: these are /report to it.
    ['a dot segment between backslashes', '/x\\..\\report?exp=1'],
    ['dot segments after a route, between backslashes', '/snooze/x\\..\\..\\report'],
    ['an account prefix undone by backslashes', '/accounts/a\\..\\..\\report'],
  ])('answers 404 to %s rather than the route the URL parser makes of it', async (_name, path) => {
    const { events, port } = await recordingServer();
    const res = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-security-policy')).toBe(SECURITY_HEADERS['Content-Security-Policy']);
    expect(events).toEqual([]);
  });

  it('still serves a route named in absolute form, as HTTP/1.1 lets a client send it', async () => {
    const { events, port } = await recordingServer();
    const res = await rawRequest(
      port,
      'GET http://127.0.0.1/report?exp=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(res.status).toBe(200);
    expect(events.map((e) => [e.resource, e.queryStringParameters])).toEqual([['/report', { exp: '1' }]]);
  });
});
