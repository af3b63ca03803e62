import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { ROOT } from '../../scripts/docs';
import { sentinelPipedInto } from '../support/cli';

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'pipe-test-key-5c1d7e';
let sim: Simulator;
const scratch = mkdtempSync(join(tmpdir(), 'cli-pipe-'));

beforeAll(async () => {
  // 20 000 domains, 42 % flagged: a JSON report of several MB, far past the 64 KiB a pipe buffers.
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 20_000, seed: 9, now: Date.parse(NOW), profile: 'stress' }),
    apiKey: KEY,
  });
});
afterAll(async () => {
  await sim.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** `sentinel scan --json --dry-run` piped into `consumer`, as a user's `| jq` would. */
const pipeline = async (consumer: string) => {
  const { code, out, stderr } = await sentinelPipedInto('scan --json --dry-run --now "$NOW"', consumer, {
    cwd: scratch,
    env: { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, NOW },
  });
  return { code, consumerOut: out, stderr };
};

// A slow reader: the pipe fills up and the writer must wait for it, not exit.
const PARSE_SLOWLY = `
let text = '';
process.stdin.on('data', (chunk) => { text += chunk; process.stdin.pause(); setTimeout(() => process.stdin.resume(), 2); });
process.stdin.on('end', () => { const r = JSON.parse(text); const findings = require('node:crypto').createHash('sha256').update(JSON.stringify(r.findings)).digest('hex'); process.stdout.write(JSON.stringify({ bytes: Buffer.byteLength(text), findings, domains: r.stats.domains_scanned })); });`;

describe('output through a pipe', () => {
  it('arrives whole in a slow reader, every time', async () => {
    // The same findings every time (generated_at and duration vary, so the byte count may too).
    const findings = new Set<string>();
    for (let run = 0; run < 4; run++) {
      const { code, consumerOut, stderr } = await pipeline(PARSE_SLOWLY);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const parsed = JSON.parse(consumerOut);
      expect(parsed.bytes).toBeGreaterThan(2_500_000);
      expect(parsed.domains).toBeGreaterThan(19_900);
      findings.add(parsed.findings);
    }
    expect(findings.size).toBe(1);
  }, 120_000);

  it('ends quietly by SIGPIPE when the reader goes away (| head), as other tools piped into head do', async () => {
    const { code, stderr } = await pipeline("process.stdin.once('data', () => process.exit(0));");
    // 128 + SIGPIPE (13), as bash reports a command a broken pipe ended; nothing on stderr.
    expect(code).toBe(141);
    expect(stderr).toBe('');
  }, 60_000);

  it('ends every command quietly by SIGPIPE when nothing reads its output, --version and help too', async () => {
    for (const args of [['--version'], ['help'], ['scan', '--help'], ['audit', '--help']]) {
      const ended = await new Promise<{ code: number | null; signal: string | null; stderr: string }>(
        (resolve, reject) => {
          const child = spawn(process.execPath, [join(ROOT, 'bin', 'sentinel.js'), ...args], {
            cwd: scratch,
            env: { PATH: process.env.PATH, HOME: process.env.HOME },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          // The only reader of the pipe closes it before the command starts: its first write fails with EPIPE.
          child.stdout.destroy();
          let stderr = '';
          child.stderr.on('data', (d) => {
            stderr += d;
          });
          child.on('error', reject);
          child.on('close', (code, signal) => resolve({ code, signal, stderr }));
        },
      );
      expect({ args, ...ended }).toEqual({ args, code: null, signal: 'SIGPIPE', stderr: '' });
    }
  }, 60_000);
});
