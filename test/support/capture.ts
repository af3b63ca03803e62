import { vi } from 'vitest';

/**
 * Captures everything written to stdout and stderr (Powertools writes ERROR logs to stderr) until
 * vi.restoreAllMocks(); read it through the returned function.
 */
export function captureOutput(): () => string {
  let output = '';
  const capture = (chunk: unknown) => {
    output += String(chunk);
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  return () => output;
}
