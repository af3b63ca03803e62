import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { ROOT } from '../../scripts/docs';

/**
 * Review: `scan --state FILE --alert-to stdout` counts the alert as delivered once it is handed to
 * stdout (functions/local/local-alert.ts), and the state is saved on that. When the reader of the
 * pipe goes away (`| head`, a mailer that fails), the command line itself says the output "did not
 * arrive whole" and exits 1, yet the state already remembers every finding as announced: the next
 * scan says "nothing new", and the findings past the first lines are never told to anyone.
 */

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'epipe-review-key-7a1c3e';
let sim: Simulator;
const scratch = mkdtempSync(join(tmpdir(), 'alert-epipe-review-'));

beforeAll(async () => {
  // A digest well past the 64 KiB a pipe buffers, so the writer meets the closed pipe.
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 3_000, seed: 4, now: Date.parse(NOW), profile: 'stress' }),
    apiKey: KEY,
  });
});
afterAll(async () => {
  await sim.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** `sentinel scan --state … --alert-to stdout` piped into `consumer`; the command's own exit status. */
function scanInto(consumer: string) {
  return new Promise<{ code: number; out: string; stderr: string }>((resolve, reject) => {
    const script =
      'node "$SENTINEL" scan --state state.json --alert-to stdout --now "$NOW" | node -e "$CONSUMER"; ' +
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's own ${…}, not a template
      'echo "exit=${PIPESTATUS[0]}" >&2';
    const shell = spawn('bash', ['-c', script], {
      cwd: scratch,
      env: {
        SENTINEL: join(ROOT, 'bin', 'sentinel.js'),
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        RESELLER_BASE_URL: sim.url,
        RESELLER_API_KEY: KEY,
        NOW,
        CONSUMER: consumer,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    shell.stdout.on('data', (d) => {
      out += d;
    });
    shell.stderr.on('data', (d) => {
      stderr += d;
    });
    shell.on('error', reject);
    shell.on('close', () => {
      const code = Number(/exit=(\d+)\n$/.exec(stderr)?.[1] ?? Number.NaN);
      resolve({ code, out, stderr: stderr.replace(/exit=\d+\n$/, '') });
    });
  });
}

describe('scan --alert-to stdout into a reader that goes away (review)', () => {
  it('does not remember as announced an alert that did not arrive whole: the next scan tells it again', async () => {
    const cut = await scanInto("process.stdin.once('data', () => process.exit(0));");
    expect(cut.stderr).toMatch(/did not arrive whole/);
    expect(cut.code).not.toBe(0);

    const again = await scanInto(
      "let t = ''; process.stdin.on('data', (d) => { t += d; }).on('end', () => process.stdout.write(t));",
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.out).toMatch(/Since the last scan: \d+ new/);
  }, 60_000);
});
