import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionCause } from '../../functions/core/reseller/connection';

/** What fetch threw for `url`, as the transport gets it. */
async function fetchFailure(url: string): Promise<unknown> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    return error;
  }
  throw new Error(`${url} answered`);
}

/** fetch's failure with a socket error of this code as its cause. */
const failed = (code: string, message: string) =>
  new TypeError('fetch failed', { cause: Object.assign(new Error(message), { code }) });

let plain: Server;
let plainUrl: string;
let closedPort: number;
beforeAll(async () => {
  plain = createServer((_req, res) => res.end('plain http'));
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  plainUrl = `127.0.0.1:${(plain.address() as AddressInfo).port}`;
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
});
afterAll(() => new Promise((resolve) => plain.close(resolve)));

describe('connectionCause', () => {
  it('says nothing listens when the port is closed (ECONNREFUSED, a real fetch)', async () => {
    const url = `http://127.0.0.1:${closedPort}/v2/domains`;
    expect(connectionCause(await fetchFailure(url), url)).toBe(
      `ECONNREFUSED: nothing listens on 127.0.0.1:${closedPort}`,
    );
  });

  it('says the server does not speak TLS when https meets plain http (a real fetch)', async () => {
    const url = `https://${plainUrl}/v2/domains`;
    expect(connectionCause(await fetchFailure(url), url)).toBe(
      `ERR_SSL_WRONG_VERSION_NUMBER: TLS failed, ${plainUrl} does not speak TLS there; is the base URL an http:// one?`,
    );
  });

  it('says fetch refuses a port browsers block, instead of "fetch failed" (a real fetch)', async () => {
    const url = 'http://127.0.0.1:1/v2/domains';
    expect(connectionCause(await fetchFailure(url), url)).toBe(
      'bad port: fetch refuses port 1, a port browsers block',
    );
  });

  it.each([
    ['ENOTFOUND', 'getaddrinfo ENOTFOUND api.example', 'ENOTFOUND: DNS has no address for api.example'],
    [
      'EAI_AGAIN',
      'getaddrinfo EAI_AGAIN api.example',
      'EAI_AGAIN: DNS did not answer for api.example; try again',
    ],
    [
      'UND_ERR_CONNECT_TIMEOUT',
      'Connect Timeout Error',
      'UND_ERR_CONNECT_TIMEOUT: timeout, no connection to api.example:8443 in time',
    ],
    [
      'CERT_HAS_EXPIRED',
      'certificate has expired',
      'CERT_HAS_EXPIRED: TLS failed, its certificate has expired',
    ],
    [
      'ERR_TLS_CERT_ALTNAME_INVALID',
      "Hostname/IP does not match certificate's altnames",
      'ERR_TLS_CERT_ALTNAME_INVALID: TLS failed, its certificate is for another host name',
    ],
    ['EPROTO', 'write EPROTO something', 'EPROTO: write EPROTO something'],
  ])('names %s by its kind (DNS, timeout, TLS) and the host', (code, message, expected) => {
    expect(connectionCause(failed(code, message), 'https://api.example:8443/v2/domains')).toBe(expected);
  });

  it('falls back to the innermost message when there is no code', () => {
    const error = new TypeError('fetch failed', { cause: new Error('other side hung up') });
    expect(connectionCause(error, 'https://api.example/v2')).toBe('other side hung up');
  });
});
