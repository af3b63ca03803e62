import { describe, expect, it } from 'vitest';
import { heartbeatOf } from '../../functions/use-cases/heartbeat';

/**
 * The heartbeat's redirects: a ping service on the internet must not steer the scan's GET to this
 * machine (on Lambda, the Runtime API on http://127.0.0.1:9001) or to a private network.
 */

/** A fetch that answers each URL from `answers`, and records what it was asked. */
function fakeFetch(answers: Record<string, Response>) {
  const asked: string[] = [];
  const send = (async (input: URL | RequestInfo) => {
    const url = String(input);
    asked.push(url);
    return answers[url] ?? new Response('not here', { status: 404 });
  }) as typeof fetch;
  return { asked, send };
}

const redirect = (location: string) => new Response(null, { status: 302, headers: { location } });

describe('heartbeat redirects', () => {
  it('follows no redirect from a ping service outside to the Lambda Runtime API on this machine', async () => {
    const runtime = 'http://127.0.0.1:9001/2018-06-01/runtime/invocation/next';
    const { asked, send } = fakeFetch({
      'https://hc-ping.example/secret-uuid': redirect(runtime),
      [runtime]: new Response('{}', { status: 200 }),
    });
    const result = await heartbeatOf(new URL('https://hc-ping.example/secret-uuid'), { fetch: send }).ping(
      'complete',
    );
    expect(asked).toEqual(['https://hc-ping.example/secret-uuid']);
    expect(result.ok).toBe(false);
  });

  it('follows no redirect from a ping service outside to a private address over https', async () => {
    const inside = 'https://10.0.0.7/admin/delete';
    const { asked, send } = fakeFetch({
      'https://hc-ping.example/secret-uuid': redirect(inside),
      [inside]: new Response('ok', { status: 200 }),
    });
    const result = await heartbeatOf(new URL('https://hc-ping.example/secret-uuid'), { fetch: send }).ping(
      'complete',
    );
    expect(asked).toEqual(['https://hc-ping.example/secret-uuid']);
    expect(result).toEqual({
      ok: false,
      reason:
        'it answered HTTP 302, a redirect to a URL it may not use (https only, or http to this machine; nothing on this machine or a private network from a service outside it)',
    });
  });

  it('still follows a redirect within this machine, from a receiver on this machine', async () => {
    const { asked, send } = fakeFetch({
      'http://127.0.0.1:8080/secret-uuid': redirect('/moved'),
      'http://127.0.0.1:8080/moved': new Response('OK', { status: 200 }),
    });
    const result = await heartbeatOf(new URL('http://127.0.0.1:8080/secret-uuid'), { fetch: send }).ping(
      'complete',
    );
    expect(asked).toEqual(['http://127.0.0.1:8080/secret-uuid', 'http://127.0.0.1:8080/moved']);
    expect(result).toEqual({ ok: true });
  });

  it('still follows a redirect from https to https outside', async () => {
    const { asked, send } = fakeFetch({
      'https://hc-ping.example/secret-uuid': redirect('https://hc-ping.example/v2/secret-uuid'),
      'https://hc-ping.example/v2/secret-uuid': new Response('OK', { status: 200 }),
    });
    const result = await heartbeatOf(new URL('https://hc-ping.example/secret-uuid'), { fetch: send }).ping(
      'complete',
    );
    expect(asked.length).toBe(2);
    expect(result).toEqual({ ok: true });
  });
});

describe('a heartbeat ping with no time left', () => {
  it('sends nothing when the run has no time left, and says so rather than that the service was slow', async () => {
    const { asked, send } = fakeFetch({ 'https://hc-ping.example/secret-uuid': new Response('OK') });
    const heartbeat = heartbeatOf(new URL('https://hc-ping.example/secret-uuid'), { fetch: send });
    for (const left of [0, -250]) {
      const result = await heartbeat.ping('complete', left);
      expect(result).toEqual({ ok: false, reason: 'no time left before the run ends: not sent' });
    }
    expect(asked).toEqual([]);
  });
});
