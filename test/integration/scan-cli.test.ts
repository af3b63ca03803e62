import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { generatePortfolio, type Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { findingKeys, runCli } from '../support/cli';

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'sk_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const truthKeys = (p: Portfolio) => p.truth.findings.map((f) => `${f.key} ${f.kind} ${f.severity}`).sort();

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function simulate(domains: number, options: { maxPerPage?: number; seed?: number } = {}) {
  const portfolio = generatePortfolio({ domains, seed: options.seed ?? 3, now: Date.parse(NOW) });
  sim = await startSimulator({ portfolio, apiKey: KEY, maxPerPage: options.maxPerPage ?? 100 });
  return { portfolio, sim, env: { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY } };
}

describe('sentinel scan against the simulator', () => {
  it.each([
    // 20 a page: 20 pages, enough for the counts of a filtered read to pay.
    ['auto (the default), which reads the flagged part', ['--per-page', '20'], 'filtered'],
    ['full', ['--mode', 'full'], 'full'],
  ])('prints one JSON report whose findings equal the simulator ground truth: %s', async (_, mode, read) => {
    const { portfolio, env } = await simulate(400);
    const run = await runCli(['scan', '--json', '--dry-run', '--now', NOW, ...mode], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.source.read).toBe(read);
    expect(findingKeys(report)).toEqual(truthKeys(portfolio));
    expect(report.problems.map((p: { key: string }) => p.key)).toEqual(portfolio.truth.problems);
    expect(report.stats.contacts_scanned).toBe(20);
    if (read === 'full') expect(report.stats.domains_scanned).toBe(400 - portfolio.truth.problems.length);
    else {
      // The filtered read parses what its searches select: every flagged domain, far from all 400.
      const flagged = new Set(portfolio.truth.findings.map((f) => f.key));
      const flaggedDomains = portfolio.domains.filter((d) => flagged.has(String(d.domain_name))).length;
      expect(report.stats.domains_scanned).toBeGreaterThanOrEqual(flaggedDomains);
      expect(report.stats.domains_scanned).toBeLessThan(200);
    }
    expect(report.summary.critical).toBe(
      portfolio.truth.findings.filter((f) => f.severity === 'critical').length,
    );
  });

  it('notes once on stderr that findings carry no restore links when LINK_SIGNING_KEY is set without LINK_BASE_URL', async () => {
    const { env } = await simulate(20);
    const signingKey = 'scan-cli-signing-key-0123456789abcdef0123';
    const run = await runCli(['scan', '--json', '--dry-run', '--now', NOW], {
      ...env,
      LINK_SIGNING_KEY: signingKey,
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      'sentinel: note: findings carry no restore links because LINK_BASE_URL is not set (LINK_SIGNING_KEY is)\n',
    );
    expect(run.stdout).not.toContain('/restore/');
    const linked = await runCli(['scan', '--json', '--dry-run', '--now', NOW], {
      ...env,
      LINK_SIGNING_KEY: signingKey,
      LINK_BASE_URL: 'https://sentinel.example',
    });
    expect(linked.stderr).toBe('');
    expect(linked.stdout).toContain('https://sentinel.example/restore/');
  });

  it('still equals ground truth through a 429 with Retry-After, a 500, a request that never answers, and a per_page cap', async () => {
    const { portfolio, sim, env } = await simulate(400, { maxPerPage: 25 });
    const onPage = (n: string) => (r: { path: string; query: URLSearchParams }) =>
      r.path === '/v2/domains' && r.query.get('page') === n;
    sim.injectFault({ fault: { kind: 'status', status: 429, retryAfter: '1' }, match: onPage('2') });
    sim.injectFault({ fault: { kind: 'status', status: 500 }, match: onPage('3') });
    sim.injectFault({ fault: { kind: 'hang' }, match: onPage('4') });
    // Full mode: the page-by-page read is what the faults are aimed at.
    const run = await runCli(
      ['scan', '--json', '--dry-run', '--now', NOW, '--mode', 'full', '--per-page', '100'],
      {
        ...env,
        RESELLER_TIMEOUT_MS: '500',
      },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(findingKeys(report)).toEqual(truthKeys(portfolio));
    // 16 domain pages + 1 contact page at the capped 25 per page, plus one retry for each fault,
    // plus page 17: the last page is full, so the page after it must be empty, and then page 1
    // sorted the other way, whose names must all have been read (a capped result window's would not).
    const domainRequests = sim.requests.filter((r) => r.path === '/v2/domains');
    expect(domainRequests.every((r) => r.query.get('per_page') === '100')).toBe(true);
    expect(domainRequests).toHaveLength(16 + 3 + 1 + 1);
    expect(domainRequests.filter((r) => r.query.get('sort') === '-domain_name')).toHaveLength(1);
    expect(report.stats.requests).toBe(sim.requests.length);
  });

  it('ends with exit 1 and one line naming the authentication failure when the key is wrong', async () => {
    const { env } = await simulate(20);
    const run = await runCli(['scan', '--json', '--dry-run'], { ...env, RESELLER_API_KEY: 'wrong-key-123' });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^sentinel: the reseller API refused the API key \(HTTP 401\)/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('ends with exit 1 naming the URL and why when the base URL cannot be reached', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const run = await runCli(['scan', '--dry-run'], { RESELLER_BASE_URL: url, RESELLER_API_KEY: KEY });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `sentinel: could not reach the reseller API at ${url} (ECONNREFUSED: nothing listens on 127.0.0.1:${port}) for domain list page 1\n`,
    );
  });

  it('fails with exit 1 rather than report a partial result when a page answers garbage', async () => {
    const { sim, env } = await simulate(300, { maxPerPage: 50 });
    sim.injectFault({
      fault: { kind: 'malformed' },
      match: (r) => r.path === '/v2/domains' && r.query.get('page') === '3',
    });
    const run = await runCli(['scan', '--json', '--dry-run', '--mode', 'full'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/domain list page 3 with something that is not JSON/);
  });

  it('exits 2 naming the setting when configuration is wrong', async () => {
    const missing = await runCli(['scan', '--dry-run'], { RESELLER_API_KEY: KEY });
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toContain('RESELLER_BASE_URL (--base-url) is required');
    const bad = await runCli(['scan', '--dry-run', '--critical-days', 'x'], {
      RESELLER_BASE_URL: 'http://127.0.0.1:1',
      RESELLER_API_KEY: KEY,
    });
    expect(bad.stderr).toContain('CRITICAL_DAYS (--critical-days) must be a whole number');
    const noTopic = await runCli(['scan'], {
      RESELLER_BASE_URL: 'http://127.0.0.1:1',
      RESELLER_API_KEY: KEY,
    });
    expect(noTopic.stderr).toContain('ALERT_TOPIC_ARN is not set');
    expect(noTopic.code).toBe(2);
  });

  it('refuses an API key that cannot be a header value with exit 2, naming the variable and never the value', async () => {
    for (const key of [
      `${KEY.slice(0, 10)}\r${KEY.slice(10)}`,
      `${KEY}\u0000x`,
      `${KEY}\nsecond`,
      `${KEY}é€`,
    ]) {
      const run = await runCli(['scan', '--dry-run'], {
        RESELLER_BASE_URL: 'http://127.0.0.1:1',
        RESELLER_API_KEY: key,
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^sentinel: RESELLER_API_KEY holds .*; the value is not shown\n$/);
      expect(run.stderr).not.toContain(KEY.slice(0, 10));
    }
    // The newline a key file ends with is not part of the key.
    const { env } = await simulate(20);
    const trailing = await runCli(['scan', '--json', '--dry-run', '--now', NOW], {
      ...env,
      RESELLER_API_KEY: `${KEY}\r\n`,
    });
    expect(trailing.code).toBe(0);
  });

  it('exits 3 when --fail-on is met, after printing the report', async () => {
    const { env } = await simulate(40);
    const run = await runCli(['scan', '--json', '--dry-run', '--now', NOW, '--fail-on', 'critical'], env);
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout).summary.critical).toBeGreaterThan(0);
  });

  it('prints the digest and the SMS text on --dry-run', async () => {
    const { env } = await simulate(60);
    const run = await runCli(['scan', '--dry-run', '--now', NOW], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^domain-sentinel: \d+ critical, \d+ warning/);
    expect(run.stdout).toContain('--- SMS (critical only, as a phone receives it) ---\ndomain-sentinel> ');
  });

  it('never prints the API key, whatever happens', async () => {
    const { env } = await simulate(50);
    const runs = [
      await runCli(['scan', '--json', '--dry-run', '--now', NOW], env),
      await runCli(['scan', '--dry-run', '--now', NOW], env),
      await runCli(['scan', '--dry-run'], {
        ...env,
        RESELLER_BASE_URL: `http://127.0.0.1:${await freePort()}`,
      }),
      await runCli(['scan'], env),
    ];
    for (const run of runs) expect(`${run.stdout}${run.stderr}`).not.toContain(KEY);
  });

  it('works as a real process: npm run -s sentinel -- scan --json --dry-run', async () => {
    const { portfolio, env } = await simulate(120);
    const { stdout, stderr } = await promisify(execFile)(
      'npm',
      ['run', '-s', 'sentinel', '--', 'scan', '--json', '--dry-run', '--now', NOW],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, cwd: process.cwd() },
    );
    expect(findingKeys(JSON.parse(stdout))).toEqual(truthKeys(portfolio));
    expect(stdout + stderr).not.toContain(KEY);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
