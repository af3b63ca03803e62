/**
 * One question at the terminal (restore's typed name and consent). A Ctrl-C while it waits reaches
 * readline rather than the process, so it is passed on as the signal it is: the command stops as at
 * any other moment. A Ctrl-D (or a terminal that went away) ends the input: no answer, undefined,
 * which the command reads as "not given" rather than as an error of its own.
 */
export async function askAtTerminal(
  question: string,
  signal: AbortSignal,
  streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream; terminal?: boolean } = {
    input: process.stdin,
    output: process.stderr,
  },
): Promise<string | undefined> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({
    input: streams.input,
    output: streams.output,
    ...(streams.terminal === undefined ? {} : { terminal: streams.terminal }),
  });
  rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  // The input ended without Ctrl-D's keystroke (a closed terminal): readline closes, and its
  // question would stay unanswered for ever.
  const ended = new Promise<undefined>((resolve) => rl.once('close', () => resolve(undefined)));
  // The line the prompt is on ends, so what the command says next starts on its own.
  const noAnswer = () => {
    streams.output.write('\n');
    return undefined;
  };
  try {
    return (await Promise.race([rl.question(question, { signal }), ended])) ?? noAnswer();
  } catch (error) {
    // Ctrl-D rejects the question with an AbortError of readline's own; the signal's is the signal.
    if (!signal.aborted && (error as Error).name === 'AbortError') return noAnswer();
    throw error;
  } finally {
    rl.close();
  }
}
