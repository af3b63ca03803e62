import { describe, expect, it } from 'vitest';
import { BootstrapCache } from '../../functions/core/registry/bootstrap';
import { RdapClient, RdapDeadlineError } from '../../functions/core/registry/rdap-client';
import {
  RdapConnectionError,
  RdapRateLimitError,
  RdapResponseError,
  RdapServerError,
  RdapTimeoutError,
} from '../../functions/core/registry/rdap-errors';
import { loadScanSettings } from '../../functions/core/scan/config';
import { registryScanOptions } from '../../functions/use-cases/registry-check';

const BASE = 'https://rdap.example/';
const domainBody = (name: string, expiration = '2027-06-01T00:00:00Z') =>
  JSON.stringify({
    objectClassName: 'domain',
    ldhName: name,
    status: ['active'],
    events: [{ eventAction: 'expiration', eventDate: expiration }],
  });

interface Call {
  readonly url: string;
  readonly init: RequestInit | undefined;
}

/** A fetch answering from a list (one answer per call, the last repeated), recording each call. */
function scripted(answers: Array<() => Response | Promise<Response>>) {
  const calls: Call[] = [];
  const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(url), init });
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)] as () => Response;
    return answer();
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

/** A clock the injected sleep moves, so waits are exact and instant. */
function fakeTime() {
  let now = 1_000_000;
  const slept: number[] = [];
  return {
    now: () => now,
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
    slept,
  };
}

const json = (body: string, status = 200, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { 'content-type': 'application/rdap+json', ...headers } });

describe('RdapClient.lookupDomain', () => {
  it('asks GET <base>domain/<name> for application/rdap+json, follows no redirect by itself, and reads the record', async () => {
    const { fetch, calls } = scripted([() => json(domainBody('shop.com'))]);
    const client = new RdapClient({ fetch });
    const answer = await client.lookupDomain(BASE, 'shop.com');
    expect(answer).toMatchObject({
      kind: 'found',
      server: 'https://rdap.example',
      record: { name: 'shop.com', status: ['active'], expiration: Date.parse('2027-06-01T00:00:00Z') },
    });
    expect(calls[0]?.url).toBe('https://rdap.example/domain/shop.com');
    expect(calls[0]?.init?.headers).toEqual({ Accept: 'application/rdap+json' });
    expect(calls[0]?.init?.redirect).toBe('manual');
    expect(client.requests).toBe(1);
  });

  it('honours 429 with Retry-After: waits exactly that long, then asks again', async () => {
    const time = fakeTime();
    const { fetch, calls } = scripted([
      () => json('{"errorCode":429}', 429, { 'retry-after': '2' }),
      () => json(domainBody('shop.com')),
    ]);
    const client = new RdapClient({ fetch, now: time.now, sleep: time.sleep, random: () => 0.5 });
    expect((await client.lookupDomain(BASE, 'shop.com')).kind).toBe('found');
    expect(calls).toHaveLength(2);
    expect(time.slept).toEqual([2000]);
  });

  it('reads a 403 with Retry-After as rate limiting: waits exactly that long, then asks again', async () => {
    const time = fakeTime();
    const { fetch, calls } = scripted([
      () => json('{"errorCode":403}', 403, { 'retry-after': '2' }),
      () => json(domainBody('shop.com')),
    ]);
    const client = new RdapClient({ fetch, now: time.now, sleep: time.sleep, random: () => 0.5 });
    expect((await client.lookupDomain(BASE, 'shop.com')).kind).toBe('found');
    expect(calls).toHaveLength(2);
    expect(time.slept).toEqual([2000]);
  });

  it('gives up on a server whose 403 asks to wait longer than the check waits, or past the deadline, without asking again', async () => {
    const longer = scripted([() => json('{}', 403, { 'retry-after': '3600' })]);
    const failure = await new RdapClient({ fetch: longer.fetch, ...fakeTime() })
      .lookupDomain(BASE, 'shop.com')
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RdapRateLimitError);
    expect(failure).toMatchObject({ retryAfterMs: 3_600_000, status: 403 });
    expect(longer.calls).toHaveLength(1);
    const time = fakeTime();
    const late = scripted([() => json('{}', 403, { 'retry-after': '20' })]);
    const client = new RdapClient({ fetch: late.fetch, ...time, deadline: time.now() + 100 });
    const cut = await client.lookupDomain(BASE, 'shop.com').catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(RdapRateLimitError);
    expect(cut).toMatchObject({ retryAfterMs: 20_000, status: 403 });
    expect(late.calls).toHaveLength(1);
    expect(time.slept).toEqual([]);
  });

  it('fails a server that keeps answering 403 with Retry-After as rate limited, and a 403 without one at once as a refusal', async () => {
    const time = fakeTime();
    const kept = scripted([() => json('{}', 403, { 'retry-after': '1' })]);
    const client = new RdapClient({ fetch: kept.fetch, now: time.now, sleep: time.sleep, random: () => 0.5 });
    const failure = await client.lookupDomain(BASE, 'shop.com').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RdapRateLimitError);
    expect((failure as Error).message).toMatch(/kept answering 403 with a Retry-After \(rate limited\)/);
    expect(kept.calls).toHaveLength(3);
    expect(time.slept).toEqual([1000, 1000]);
    const refused = scripted([() => json('{}', 403)]);
    const refusal = await new RdapClient({ fetch: refused.fetch, ...fakeTime() })
      .lookupDomain(BASE, 'shop.com')
      .catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(RdapServerError);
    expect(refused.calls).toHaveLength(1);
    // A Retry-After that is no delay nor date asks for no wait: a refusal still.
    const unread = scripted([() => json('{}', 403, { 'retry-after': 'soon' })]);
    const refusedToo = await new RdapClient({ fetch: unread.fetch, ...fakeTime() })
      .lookupDomain(BASE, 'shop.com')
      .catch((e: unknown) => e);
    expect(refusedToo).toBeInstanceOf(RdapServerError);
    expect(unread.calls).toHaveLength(1);
  });

  it('gives up on a server that asks to wait longer than the check waits, without asking again', async () => {
    const { fetch, calls } = scripted([() => json('{}', 429, { 'retry-after': '3600' })]);
    const client = new RdapClient({ fetch, ...fakeTime() });
    const failure = await client.lookupDomain(BASE, 'shop.com').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RdapRateLimitError);
    expect((failure as RdapRateLimitError).retryAfterMs).toBe(3_600_000);
    expect(calls).toHaveLength(1);
  });

  it('gives up on a server down for maintenance (503) that asks to wait an hour, without waiting or asking again', async () => {
    const time = fakeTime();
    const { fetch, calls } = scripted([() => json('{}', 503, { 'retry-after': '3600' })]);
    const client = new RdapClient({ fetch, now: time.now, sleep: time.sleep });
    const failure = await client.lookupDomain(BASE, 'shop.com').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RdapRateLimitError);
    expect(calls).toHaveLength(1);
    expect(time.slept).toEqual([]);
  });

  it('retries a 503 with backoff, then fails with the status', async () => {
    const time = fakeTime();
    const { fetch, calls } = scripted([() => json('{}', 503)]);
    const client = new RdapClient({ fetch, now: time.now, sleep: time.sleep, random: () => 0.5 });
    await expect(client.lookupDomain(BASE, 'shop.com')).rejects.toThrow(RdapServerError);
    expect(calls).toHaveLength(3);
    expect(time.slept).toEqual([125, 250]);
  });

  it('retries a connection reset, and gives up at once on a connection refused', async () => {
    const failing = (code: string) =>
      Promise.reject(
        Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) }),
      );
    const time = fakeTime();
    const reset = scripted([() => failing('ECONNRESET'), () => json(domainBody('shop.com'))]);
    const client = new RdapClient({
      fetch: reset.fetch,
      now: time.now,
      sleep: time.sleep,
      random: () => 0.5,
    });
    expect((await client.lookupDomain(BASE, 'shop.com')).kind).toBe('found');
    expect(reset.calls).toHaveLength(2);
    expect(time.slept).toEqual([125]);
    const refused = scripted([() => failing('ECONNREFUSED')]);
    const failure = await new RdapClient({ fetch: refused.fetch, ...fakeTime() })
      .lookupDomain(BASE, 'shop.com')
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RdapConnectionError);
    expect((failure as Error).message).toMatch(
      /could not reach the RDAP server https:\/\/rdap\.example \(ECONNREFUSED\)/,
    );
    expect(refused.calls).toHaveLength(1);
  });

  it('stops retrying, without waiting, when the wait would end past the deadline', async () => {
    for (const answer of [() => json('{}', 503), () => json('{}', 429, { 'retry-after': '20' })]) {
      const time = fakeTime();
      const { fetch, calls } = scripted([answer, () => json(domainBody('shop.com'))]);
      const client = new RdapClient({
        fetch,
        now: time.now,
        sleep: time.sleep,
        random: () => 0.5,
        deadline: time.now() + 100,
      });
      const failure = await client.lookupDomain(BASE, 'shop.com').catch((e: unknown) => e);
      expect(calls).toHaveLength(1);
      expect(time.slept).toEqual([]);
      if (answer().status === 503) {
        expect(failure).toBeInstanceOf(RdapDeadlineError);
        expect((failure as Error).message).toBe(
          "the scan's time ran out while retrying the RDAP lookup of shop.com",
        );
      } else {
        // The server's own wait is past the deadline: that server is done, the scan's time is not.
        expect(failure).toBeInstanceOf(RdapRateLimitError);
        expect(failure).toMatchObject({ retryAfterMs: 20_000, status: 429 });
        expect((failure as Error).message).toBe(
          'the RDAP server asked to wait 20 s (Retry-After) before the RDAP lookup of shop.com, longer than the scan has left; it is not asked again in this scan',
        );
      }
    }
  });

  it('reads 404 as a name the registry does not know', async () => {
    const { fetch } = scripted([() => json('{"errorCode":404}', 404)]);
    expect(await new RdapClient({ fetch }).lookupDomain(BASE, 'gone.com')).toEqual({
      kind: 'not_found',
      server: 'https://rdap.example',
    });
  });

  it('follows a redirect to another https server, and refuses one to plain http', async () => {
    const { fetch, calls } = scripted([
      () =>
        new Response(null, {
          status: 302,
          headers: { location: 'https://rdap.registrar.example/domain/shop.com' },
        }),
      () => json(domainBody('shop.com')),
    ]);
    const answer = await new RdapClient({ fetch }).lookupDomain(BASE, 'shop.com');
    expect(answer).toMatchObject({ kind: 'found', server: 'https://rdap.registrar.example' });
    expect(calls.map((c) => c.url)).toEqual([
      'https://rdap.example/domain/shop.com',
      'https://rdap.registrar.example/domain/shop.com',
    ]);
    const insecure = scripted([
      () =>
        new Response(null, {
          status: 301,
          headers: { location: 'http://rdap.evil.example/domain/shop.com' },
        }),
    ]);
    await expect(new RdapClient({ fetch: insecure.fetch }).lookupDomain(BASE, 'shop.com')).rejects.toThrow(
      /redirected from https:\/\/rdap\.example to http:\/\/rdap\.evil\.example, which is not https/,
    );
    expect(insecure.calls).toHaveLength(1);
  });

  it('refuses an answer that is not JSON, is for another name, or runs past the size limit', async () => {
    const cases: Array<[() => Response, RegExp]> = [
      [() => json('<html>oops</html>'), /not JSON/],
      [() => json(domainBody('other.com')), /the answer is for "other.com", not shop.com/],
      [() => json(`{"pad":"${'x'.repeat(5000)}"}`), /more than 1000 bytes/],
    ];
    for (const [answer, message] of cases) {
      const { fetch } = scripted([answer]);
      const failure = await new RdapClient({ fetch, maxResponseBytes: 1000 })
        .lookupDomain(BASE, 'shop.com')
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(RdapResponseError);
      expect((failure as Error).message).toMatch(message);
    }
  });

  it('says a server that never answers timed out', async () => {
    const { fetch } = scripted([
      () =>
        Promise.reject(
          Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }),
        ),
    ]);
    const time = fakeTime();
    await expect(
      new RdapClient({ fetch, now: time.now, sleep: time.sleep, timeoutMs: 50 }).lookupDomain(
        BASE,
        'shop.com',
      ),
    ).rejects.toThrow(RdapTimeoutError);
  });

  it('stops at once on its signal (Ctrl-C): the request in flight ends, the reason is thrown, nothing is retried', async () => {
    const stop = new AbortController();
    const calls: RequestInit[] = [];
    // A server that never answers: only the request's own signal ends the call.
    const fetch = ((_url: string | URL | Request, init?: RequestInit) => {
      calls.push(init ?? {});
      return new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true });
        if (calls.length === 1) queueMicrotask(() => stop.abort(new Error('interrupted by SIGINT')));
      });
    }) as typeof globalThis.fetch;
    const client = new RdapClient({ fetch, signal: stop.signal, timeoutMs: 60_000 });
    const error = await client.lookupDomain(BASE, 'shop.com').catch((e: unknown) => e);
    expect(error).toBe(stop.signal.reason);
    expect((error as Error).message).toBe('interrupted by SIGINT');
    expect(calls).toHaveLength(1);
    // And a lookup after the stop sends nothing.
    await expect(client.lookupDomain(BASE, 'other.com')).rejects.toBe(stop.signal.reason);
    expect(calls).toHaveLength(1);
  });

  it('ends a wait between tries when its signal aborts, without another try', async () => {
    const stop = new AbortController();
    const { fetch, calls } = scripted([() => json('busy', 503)]);
    const waits: number[] = [];
    const sleep = (ms: number, signal?: AbortSignal) => {
      waits.push(ms);
      stop.abort(new Error('interrupted by SIGTERM'));
      return Promise.reject(signal?.reason);
    };
    const client = new RdapClient({ fetch, signal: stop.signal, sleep, random: () => 0.5 });
    const error = await client.lookupDomain(BASE, 'shop.com').catch((e: unknown) => e);
    expect((error as Error).message).toBe('interrupted by SIGTERM');
    expect(waits).toHaveLength(1);
    expect(calls).toHaveLength(1);
  });

  it('sends nothing once the deadline has passed', async () => {
    const { fetch, calls } = scripted([() => json(domainBody('shop.com'))]);
    const client = new RdapClient({ fetch, deadline: Date.now() - 1 });
    await expect(client.lookupDomain(BASE, 'shop.com')).rejects.toThrow(RdapDeadlineError);
    expect(calls).toHaveLength(0);
  });

  it('keeps each server to its own concurrency while other servers are asked at the same time', async () => {
    const inFlight = new Map<string, number>();
    const most = new Map<string, number>();
    const release: Array<() => void> = [];
    const fetch = (async (url: string | URL | Request) => {
      const origin = new URL(String(url)).origin;
      inFlight.set(origin, (inFlight.get(origin) ?? 0) + 1);
      most.set(origin, Math.max(most.get(origin) ?? 0, inFlight.get(origin) ?? 0));
      await new Promise<void>((resolve) => release.push(resolve));
      inFlight.set(origin, (inFlight.get(origin) ?? 0) - 1);
      const name = String(url).split('/').pop() as string;
      return json(domainBody(name));
    }) as typeof globalThis.fetch;
    const client = new RdapClient({ fetch, concurrencyPerServer: 2 });
    const lookups = [
      ...Array.from({ length: 6 }, (_, i) => client.lookupDomain('https://a.example/', `a${i}.com`)),
      ...Array.from({ length: 6 }, (_, i) => client.lookupDomain('https://b.example/', `b${i}.net`)),
    ];
    // Let every request that may start, start; then answer them one by one until all are done.
    for (let answered = 0; answered < 12; answered++) {
      await new Promise((resolve) => setImmediate(resolve));
      release.shift()?.();
    }
    await Promise.all(lookups);
    expect(Object.fromEntries(most)).toEqual({ 'https://a.example': 2, 'https://b.example': 2 });
  });
});

describe('registryScanOptions', () => {
  it("gives the scan's signal to the RDAP client it makes: after Ctrl-C no lookup is sent", async () => {
    const stop = new AbortController();
    stop.abort(new Error('interrupted by SIGINT'));
    const { fetch, calls } = scripted([() => json(domainBody('shop.com'))]);
    const settings = loadScanSettings({ resellerBaseUrl: 'https://api.test' });
    const options = registryScanOptions(settings, { fetch, signal: stop.signal });
    const error = await options.client.lookupDomain(BASE, 'shop.com').catch((e: unknown) => e);
    expect((error as Error).message).toBe('interrupted by SIGINT');
    expect(calls).toHaveLength(0);
    // Without a signal the same client asks.
    const asks = registryScanOptions(settings, { fetch });
    await expect(asks.client.lookupDomain(BASE, 'shop.com')).resolves.toMatchObject({ kind: 'found' });
    expect(calls).toHaveLength(1);
  });

  it("reads the bootstrap within the scan's time: a deadline already passed does not wait the RDAP timeout", async () => {
    const calls: string[] = [];
    // A bootstrap server that never answers: only the request's own signal ends it.
    const fetch = ((url: string, init?: RequestInit) => {
      calls.push(String(url));
      return new Promise<Response>((_, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true }),
      );
    }) as unknown as typeof globalThis.fetch;
    const settings = loadScanSettings({
      resellerBaseUrl: 'https://api.test',
      rdapBootstrapUrl: 'https://bootstrap.test/dns.json',
      rdapTimeoutMs: '60000',
    });
    const options = registryScanOptions(settings, {
      fetch,
      deadline: Date.now() - 1,
      cache: new BootstrapCache(),
    });
    await expect(options.bootstrap()).rejects.toThrow(/no answer in time/);
  });
});

describe('RdapClient waits at a server that asked for less', () => {
  it('never waits for its pacing past the deadline: a slow server that then answered 429 does not hold the scan past its time', async () => {
    const time = fakeTime();
    const start = time.now();
    let calls = 0;
    // Five answers of 20 s each, then a 429: the server delivered one answer per 20 s, so the
    // client paces its starts 20 s apart from then on.
    const fetch = (async (url: string | URL | Request) => {
      calls++;
      const name = String(url).split('/').pop() as string;
      if (calls === 6) return json('{}', 429);
      if (calls <= 5) await time.sleep(20_000);
      return json(domainBody(name));
    }) as typeof globalThis.fetch;
    const deadline = start + 110_000;
    const client = new RdapClient({
      fetch,
      now: time.now,
      sleep: time.sleep,
      random: () => 0,
      deadline,
    });
    for (let i = 0; i < 6; i++) await client.lookupDomain(BASE, `d${i}.com`);
    expect(time.now()).toBe(start + 100_000);
    await expect(client.lookupDomain(BASE, 'late.com')).rejects.toThrow(RdapDeadlineError);
    expect(time.now()).toBeLessThanOrEqual(deadline);
  });

  it('ends a wait for the server to accept another request when its signal aborts (Ctrl-C)', async () => {
    const stop = new AbortController();
    // A sleep that ends only when its signal aborts: a wait without the signal would never end.
    const sleep = (_ms: number, signal?: AbortSignal) =>
      new Promise<void>((_resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    const { fetch } = scripted([() => json('{}', 429, { 'retry-after': '20' })]);
    const client = new RdapClient({ fetch, sleep, signal: stop.signal, random: () => 0 });
    const first = client.lookupDomain(BASE, 'first.com');
    await new Promise((resolve) => setImmediate(resolve));
    // The server paused for 20 s: the second lookup waits at the gate for the pause to end.
    const second = client.lookupDomain(BASE, 'second.com');
    await new Promise((resolve) => setImmediate(resolve));
    stop.abort(new Error('stopped'));
    await expect(first).rejects.toThrow('stopped');
    await expect(second).rejects.toThrow('stopped');
  });
});
