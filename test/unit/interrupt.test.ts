import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  InterruptedError,
  interruptedStatus,
  STOP_GRACE_MS,
  type StopSignal,
  stopOnSignals,
  unlessAborted,
} from '../../bin/interrupt';
import { Transport } from '../../functions/core/reseller/transport';

/** stopOnSignals wired to a fake process: the signals it listens for, its exits, its writes, its timers. */
function fakeProcess(finished = () => false) {
  const listeners = new Map<StopSignal, () => void>();
  const dies: StopSignal[] = [];
  const written: string[] = [];
  const timers: Array<{ run: () => void; ms: number }> = [];
  const controller = new AbortController();
  stopOnSignals(controller, {
    finished,
    on: (signal, listener) => listeners.set(signal, listener),
    die: (signal) => dies.push(signal),
    write: (text) => written.push(text),
    later: (run, ms) => timers.push({ run, ms }),
  });
  return { controller, dies, written, timers, send: (signal: StopSignal) => listeners.get(signal)?.() };
}

describe('the shell’s signals (stopOnSignals)', () => {
  it('aborts the command on the first SIGINT, and gives it the grace period before ending it', () => {
    const proc = fakeProcess();
    proc.send('SIGINT');
    expect(proc.controller.signal.reason).toEqual(InterruptedError.of('SIGINT'));
    expect(interruptedStatus(proc.controller.signal)).toBe(130);
    expect(proc.dies).toEqual([]);
    expect(proc.timers.map((t) => t.ms)).toEqual([STOP_GRACE_MS]);
    expect(STOP_GRACE_MS).toBeLessThan(2_000);
    // A command that did not stop by then is ended, with the same line and status.
    proc.timers[0]?.run();
    expect(proc.written).toEqual(['sentinel: interrupted by SIGINT\n']);
    expect(proc.dies).toEqual(['SIGINT']);
  });

  it('ends it at once on a second signal, 143 for SIGTERM', () => {
    const proc = fakeProcess();
    proc.send('SIGTERM');
    expect(interruptedStatus(proc.controller.signal)).toBe(143);
    expect(proc.dies).toEqual([]);
    proc.send('SIGTERM');
    expect(proc.dies).toEqual(['SIGTERM']);
    expect(proc.written).toEqual(['sentinel: interrupted by SIGTERM\n']);
  });

  it('says it only once: after main() returned, it has said so already', () => {
    const proc = fakeProcess(() => true);
    proc.send('SIGINT');
    proc.send('SIGINT');
    expect(proc.dies).toEqual(['SIGINT']);
    expect(proc.written).toEqual([]);
  });
});

describe('work that takes no signal itself (unlessAborted)', () => {
  it('fails with the signal reason as soon as it aborts, while the work still runs', async () => {
    const controller = new AbortController();
    const never = new Promise<string>(() => undefined);
    const stopped = unlessAborted(never, controller.signal);
    controller.abort(InterruptedError.of('SIGTERM'));
    await expect(stopped).rejects.toEqual(InterruptedError.of('SIGTERM'));
  });

  it('leaves no listener on the signal once the work settled, however many ran on it', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 20; i++) {
      await unlessAborted(Promise.resolve(i), controller.signal);
      await unlessAborted(Promise.reject(new Error('refused')), controller.signal).catch(() => undefined);
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('the transport, stopped by its signal', () => {
  const options = { baseUrl: 'https://api.example', apiKey: 'transport-signal-key' };
  const request = { method: 'GET', path: '/v2/domains', what: 'domain list page 1' } as const;

  it('aborts the request in flight and throws the signal’s reason, without a retry', async () => {
    const controller = new AbortController();
    let calls = 0;
    let inFlight = () => {};
    const started = new Promise<void>((resolve) => {
      inFlight = resolve;
    });
    const transport = new Transport({
      ...options,
      signal: controller.signal,
      // An answer that never comes, unless the request is aborted.
      fetch: (_url, init) => {
        calls++;
        inFlight();
        return new Promise((_, reject) =>
          init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
        );
      },
    });
    const sent = transport.send(request);
    await started;
    controller.abort(InterruptedError.of('SIGINT'));
    await expect(sent).rejects.toEqual(InterruptedError.of('SIGINT'));
    expect(calls).toBe(1);
  });

  it('ends a wait between retries (a minute of Retry-After) at once', async () => {
    const controller = new AbortController();
    let calls = 0;
    const transport = new Transport({
      ...options,
      signal: controller.signal,
      fetch: async () => {
        calls++;
        // The wait starts after this answer: abort while it waits.
        setImmediate(() => controller.abort(InterruptedError.of('SIGTERM')));
        return new Response('{}', { status: 429, headers: { 'retry-after': '60' } });
      },
    });
    await expect(transport.send(request)).rejects.toEqual(InterruptedError.of('SIGTERM'));
    expect(calls).toBe(1);
  });
});
