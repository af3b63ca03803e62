import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { askAtTerminal } from '../../bin/ask';

/** A terminal's streams: what readline reads keystrokes from, and where it echoes. */
function terminal() {
  return { input: new PassThrough(), output: new PassThrough(), terminal: true };
}

describe('askAtTerminal (restore at the terminal)', () => {
  it('answers the line typed', async () => {
    const streams = terminal();
    const answer = askAtTerminal('name? ', new AbortController().signal, streams);
    streams.input.write('example.nl\r');
    expect(await answer).toBe('example.nl');
  });

  it('answers undefined, not an error, on Ctrl-D', async () => {
    const streams = terminal();
    const answer = askAtTerminal('name? ', new AbortController().signal, streams);
    streams.input.write('\x04');
    expect(await answer).toBeUndefined();
  });

  it('answers undefined when the input ends without a keystroke (a closed terminal)', async () => {
    const streams = terminal();
    const answer = askAtTerminal('name? ', new AbortController().signal, streams);
    streams.input.end();
    expect(await answer).toBeUndefined();
  });

  it('rejects with the signal reason when the command is stopped while it asks', async () => {
    const streams = terminal();
    const controller = new AbortController();
    const answer = askAtTerminal('name? ', controller.signal, streams);
    const reason = new Error('interrupted by SIGINT');
    controller.abort(reason);
    await expect(answer).rejects.toThrow();
  });
});
