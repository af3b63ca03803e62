import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import {
  DEFAULT_REGISTRIES,
  type RegistrySimulator,
  startRegistrySimulator,
} from '../../functions/simulator/registry';
import { type Simulator, startSimulator } from '../../functions/simulator/server';

/**
 * The simulator (`sentinel simulate`, the try-outs, every test) against a hostile or careless
 * client: no request, with a key or without, may end the process that serves everyone else.
 */

const KEY = 'hostile-sim-key-31c9';
let sim: Simulator | undefined;
let registry: RegistrySimulator | undefined;
afterEach(async () => {
  await Promise.all([sim?.close(), registry?.close()]);
  sim = undefined;
  registry = undefined;
});

/**
 * Sends `text` as it is (no client normalises it) and reads the answer's status; NaN when none came
 * (a request that threw in the server is never answered: the guard of 5 s ends the wait).
 */
function rawStatus(url: string, text: string): Promise<number> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    socket.setTimeout(5_000, () => socket.destroy());
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\r\n\r\n')) socket.end();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(out.split(' ')[1])));
  });
}

describe('the simulator against hostile requests', () => {
  it.each([
    ['an admin path that is not percent-encoding, without a key', 'GET /_admin/domains/%E0%A4%A HTTP/1.1'],
    [
      'a restore path that is not percent-encoding, with the key',
      'POST /v2/domains/%E0%A4%A/restore HTTP/1.1',
    ],
    ['a request target the URL parser refuses', 'GET http://[ HTTP/1.1'],
  ])('answers %s with 400 and keeps serving', async (_, line) => {
    sim = await startSimulator({
      portfolio: generatePortfolio({ domains: 3, now: Date.now() }),
      apiKey: KEY,
    });
    const status = await rawStatus(
      sim.url,
      `${line}\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    expect(status).toBe(400);
    const still = await fetch(`${sim.url}/v2/domains`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(still.status).toBe(200);
  });

  it('answers a restore of a record an admin patch left without a date with 500, and keeps serving', async () => {
    sim = await startSimulator({
      portfolio: generatePortfolio({ domains: 3, now: Date.now() }),
      apiKey: KEY,
    });
    const auth = { authorization: `Bearer ${KEY}` };
    const patch = { status: ['quarantine'], date_expiry: 'not a date' };
    const patched = await fetch(`${sim.url}/_admin/domains/odd.nl`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify(patch),
    });
    expect(patched.status).toBe(200);
    const restored = await fetch(`${sim.url}/v2/domains/odd.nl/restore`, {
      method: 'POST',
      headers: auth,
      signal: AbortSignal.timeout(5_000),
    });
    expect(restored.status).toBe(500);
    expect(((await restored.json()) as { error: { message: string } }).error.message).toMatch(/odd\.nl/);
    expect((await fetch(`${sim.url}/v2/domains`, { headers: auth })).status).toBe(200);
  });

  it.each([
    ['a domain that is not percent-encoding', 'GET /domain/%E0%A4%A HTTP/1.1'],
    ['a request target the URL parser refuses', 'GET http://[ HTTP/1.1'],
  ])('answers, on the registry side (RDAP), %s with 400 and keeps serving', async (_, line) => {
    registry = await startRegistrySimulator({ lookup: () => undefined });
    const up = DEFAULT_REGISTRIES.find((r) => !r.failsWith);
    const server = up && registry.servers[up.name];
    if (!server) throw new Error('the registry simulator serves no registry that is up');
    const status = await rawStatus(server.url, `${line}\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(status).toBe(400);
    expect((await fetch(`${server.url}/domain/nothing.com`)).status).toBe(404);
  });

  it('keeps the newest lookups up to requestLog on the registry side too, so a long run does not grow without bound', async () => {
    registry = await startRegistrySimulator({ lookup: () => undefined, requestLog: 4 });
    const up = DEFAULT_REGISTRIES.find((r) => !r.failsWith);
    const server = up && registry.servers[up.name];
    if (!server) throw new Error('the registry simulator serves no registry that is up');
    for (let i = 1; i <= 10; i++) await (await fetch(`${server.url}/domain/n${i}.com`)).arrayBuffer();
    expect(server.requests.length).toBeLessThanOrEqual(4);
    expect(server.requests.at(-1)?.name).toBe('n10.com');
  });
});
