import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { findingKeys, runCli, startCliServer } from '../support/cli';
import { confirmedPost } from '../support/restore-env';

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'cli-servers-key-77aa';

describe('sentinel simulate + sentinel scan', () => {
  it('equals ground truth through the --faults and --max-per-page the command offers', async () => {
    const sim = await startCliServer(
      [
        'simulate',
        '--port',
        '0',
        '--domains',
        '300',
        '--seed',
        '6',
        '--now',
        NOW,
        '--max-per-page',
        '30',
        '--faults',
        '429,500',
      ],
      {
        RESELLER_API_KEY: KEY,
      },
    );
    const scan = await runCli(['scan', '--json', '--dry-run', '--now', NOW], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
    });
    const stopped = await sim.stop();
    expect(scan.stderr).toBe('');
    const truth = generatePortfolio({ domains: 300, seed: 6, now: Date.parse(NOW) }).truth.findings;
    expect(findingKeys(JSON.parse(scan.stdout))).toEqual(
      truth.map((f) => `${f.key} ${f.kind} ${f.severity}`).sort(),
    );
    // The simulator said where it listens and which key to use, without echoing a key it was given.
    expect(stopped.stdout).toContain(`export RESELLER_BASE_URL=${sim.url}`);
    expect(stopped.stdout).not.toContain(KEY);
    // Stopped as by Ctrl-C.
    expect(stopped.code).toBe(130);
  });
});

describe('sentinel serve', () => {
  it('serves the restore handler against the simulator', async () => {
    const sim = await startCliServer(['simulate', '--port', '0', '--domains', '120', '--seed', '2'], {
      RESELLER_API_KEY: KEY,
    });
    const env = {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
      LINK_SIGNING_KEY: 'serve-test-signing-key-0123456789abcdef',
    };
    const serve = await startCliServer(['serve', '--port', '0'], env);
    const scan = await runCli(['scan', '--json', '--dry-run'], { ...env, LINK_BASE_URL: serve.url });
    const finding = JSON.parse(scan.stdout).findings.find((f: { kind: string }) => f.kind === 'quarantine');
    const link = finding.restore_url;
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form class="confirm" method="post"');
    const posted = await fetch(link, confirmedPost(finding.domain_name, { Accept: 'application/json' }));
    expect(await posted.json()).toMatchObject({ outcome: 'restored' });
    const served = await serve.stop();
    await sim.stop();
    // One structured line per attempt on stderr, without the signature.
    const lines = served.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.outcome)).toEqual(['confirm', 'restored']);
    expect(served.stderr).not.toContain(new URL(link).searchParams.get('sig'));
  });

  it('says a port is taken, and what to pass instead, when simulate or serve cannot open it', async () => {
    const { createServer } = await import('node:http');
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = String((holder.address() as { port: number }).port);
    try {
      const runs = [
        await runCli(['simulate', '--port', port], {}),
        await runCli(['serve', '--port', port], {
          RESELLER_BASE_URL: 'http://127.0.0.1:9',
          RESELLER_API_KEY: 'sk_port_taken_0123456789',
          LINK_SIGNING_KEY: 'k'.repeat(64),
        }),
      ];
      for (const run of runs) {
        expect(run.code).toBe(1);
        expect(run.stderr).toBe(
          `sentinel: port ${port} on 127.0.0.1 is in use (another sentinel serve, simulate or demo?): stop what holds it, or pass --port with another port (--port 0 takes any free one)\n`,
        );
      }
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('refuses to start without the secrets it needs, naming them', async () => {
    const run = await runCli(['serve', '--port', '0'], {
      RESELLER_BASE_URL: 'http://127.0.0.1:1',
      RESELLER_API_KEY: KEY,
    });
    expect(run).toMatchObject({ code: 2 });
    expect(run.stderr).toContain('LINK_SIGNING_KEY is not set');
  });

  it('refuses, as bad configuration naming the variables, two accounts given one key to simulate', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cli-servers-'));
    try {
      const accounts = join(cwd, 'accounts.json');
      writeFileSync(
        accounts,
        JSON.stringify({
          accounts: [
            { name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' },
            { name: 'brand-b', apiKeyEnv: 'BRAND_B_KEY' },
          ],
        }),
      );
      const twins = await runCli(['simulate', '--port', '0', '--accounts', accounts], {
        BRAND_A_KEY: 'one-key-for-two',
        BRAND_B_KEY: 'one-key-for-two',
      });
      expect(twins.code).toBe(2);
      expect(twins.stderr).toBe(
        'sentinel: BRAND_B_KEY (account brand-b) holds the same key as BRAND_A_KEY (account brand-a); the simulator tells its accounts apart by their keys: give each its own\n',
      );
      const primary = await runCli(['simulate', '--port', '0', '--accounts', accounts], {
        RESELLER_API_KEY: 'one-key-for-two',
        BRAND_A_KEY: 'one-key-for-two',
      });
      expect(primary.code).toBe(2);
      expect(primary.stderr).toContain(
        'BRAND_A_KEY (account brand-a) holds the same key as RESELLER_API_KEY',
      );
      expect(`${twins.stderr}${primary.stderr}`).not.toContain('one-key-for-two');
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
