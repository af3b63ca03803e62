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

  it('refuses to start without the secrets it needs, naming them', async () => {
    const run = await runCli(['serve', '--port', '0'], {
      RESELLER_BASE_URL: 'http://127.0.0.1:1',
      RESELLER_API_KEY: KEY,
    });
    expect(run).toMatchObject({ code: 2 });
    expect(run.stderr).toContain('LINK_SIGNING_KEY is not set');
  });
});
