import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';

const KEY = 'restore-cli-audit-key-01';
const DAY = 86_400_000;
let sim: Simulator | undefined;
let dir: string | undefined;
afterEach(async () => {
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  sim = undefined;
  dir = undefined;
});

describe('sentinel restore --state when the audit trail cannot be written', () => {
  it('says the domain was restored, exits 0, and warns that the attempt was not kept', async () => {
    // Prepare: a quarantined domain, and a state file the trail refuses (a hand-edited date).
    const now = Date.now();
    const portfolio: Portfolio = {
      domains: [
        {
          domain_name: 'lost.com',
          status: ['quarantine'],
          date_expiry: new Date(now - 40 * DAY).toISOString(),
          date_deleted: new Date(now - 10 * DAY).toISOString(),
          auto_renew: false,
          registrant_handle: 'C1',
        },
      ],
      contacts: [],
      truth: { findings: [], problems: [] },
    };
    sim = await startSimulator({ portfolio, apiKey: KEY });
    dir = await mkdtemp(join(tmpdir(), 'restore-cli-audit-'));
    const state = join(dir, 'state.json');
    await writeFile(
      state,
      JSON.stringify({
        format: 'domain-sentinel-state',
        version: 1,
        generation: 1,
        lease: null,
        state: {
          version: 1,
          scope: sim.url,
          account: null,
          started_at: null,
          last_scan_at: 'garbage',
          last_published_at: null,
          problem_keys: [],
          domains: {},
          contacts: {},
        },
      }),
    );
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY };

    // Act
    const run = await runCli(['restore', 'lost.com', '--yes', '--state', state], env);

    // Assess: the reseller restored it, and the command says so instead of failing as if it had not.
    expect(sim.restoreCalls).toEqual(['lost.com']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^restored lost\.com$/m);
    expect(run.stderr).toMatch(
      /^warning: this attempt \(restored\) could not be kept in the audit trail of .*state\.json: .*last_scan_at/m,
    );
  });
});
