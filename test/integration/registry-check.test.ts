import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_REGISTRIES, registryOf, type SimulatedRegistry } from '../../functions/simulator/registry';
import { findingKeys, runCli } from '../support/cli';
import { type RegistryWorld, startRegistryWorld } from '../support/registry-world';

/**
 * scan --registry-check against the simulator's registry side (RDAP servers on loopback and a
 * bootstrap file): each finding kind, the TLDs it cannot check, servers that fail, hang or ask to
 * wait, the query budget and the rotating sample.
 */

const NOW = '2026-11-22T06:00:00Z';
const NOW_MS = Date.parse(NOW);
const DAY = 86_400_000;

let world: RegistryWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

type Finding = { domain_name?: string; handle?: string; kind: string; severity: string };
type Report = {
  findings: Finding[];
  problems: unknown[];
  summary: Record<string, number>;
  registry?: {
    checked: number;
    queries: number;
    agree: number;
    disagree: number;
    not_checkable: { no_rdap_service: number; no_expiration: number; not_found: number };
    not_checked: { budget: number; time: number; server_failed: number; name_refused: number };
    problems: Array<{ server: string; severity: string; reason: string; domains_not_checked: number }>;
    bootstrap: { publication: string | null } | null;
  };
};

async function scanJson(env: Record<string, string>, ...flags: string[]) {
  const run = await runCli(['scan', '--json', '--dry-run', '--now', NOW, ...flags], env);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Report;
}

const isRegistryKind = (f: Finding) => f.kind.startsWith('registry_');
/** The reseller's own findings: the registry's taken out. */
const resellerKeys = (report: Report) =>
  findingKeys({ findings: report.findings.filter((f) => !isRegistryKind(f)) });
const smsOf = (digest: string) => digest.slice(digest.indexOf('--- SMS'));

describe('scan --registry-check against the simulator’s registry side', () => {
  it('finds each kind the simulator planted, as its ground truth says, and leaves the reseller’s findings as they are', async () => {
    world = await startRegistryWorld({ now: NOW_MS, domains: 300 });
    const plain = await scanJson(world.env);
    const checked = await scanJson(world.env, '--registry-check', '--registry-days', '1');
    const planted = world.registryTruth.map((t) => `${t.key} ${t.kind} ${t.severity}`).sort();
    expect(new Set(world.registryTruth.map((t) => t.kind))).toEqual(
      new Set(['registry_expiry_mismatch', 'registry_redemption', 'registry_hold', 'registry_unknown']),
    );
    expect(findingKeys({ findings: checked.findings.filter(isRegistryKind) })).toEqual(planted);
    expect(resellerKeys(checked)).toEqual(findingKeys(plain));
    expect(checked.problems).toEqual(plain.problems);
    expect(checked.registry?.disagree).toBe(planted.length);
    expect(checked.registry?.bootstrap?.publication).toBe('2026-11-20T18:00:00Z');
  });

  it('finds a domain a gTLD registry does not know (404), and leaves a ccTLD registry 404 an info line', async () => {
    world = await startRegistryWorld({ now: NOW_MS, domains: 200, scenarios: new Map() });
    const w = world;
    const quiet = (registry: string) =>
      w.portfolio.domains
        .map((d) => String(d.domain_name))
        .find(
          (n) => registryOf(n)?.name === registry && !w.portfolio.truth.findings.some((f) => f.key === n),
        ) as string;
    const gone = quiet('gtld');
    const goneNl = quiet('sidn');
    w.registry.setScenario(gone, 'unknown');
    w.registry.setScenario(goneNl, 'unknown');
    const checked = await scanJson(w.env, '--registry-check', '--registry-days', '1');
    expect(
      checked.findings.filter(isRegistryKind).map((f) => `${f.domain_name} ${f.kind} ${f.severity}`),
    ).toEqual([`${gone} registry_unknown warning`]);
    expect(checked.registry?.problems.map((p) => p.reason)).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `does not know 1 domain the reseller lists \\(HTTP 404 or 410\\), e\\.g\\. ${goneNl.replace(/\./g, '\\.')}:`,
        ),
      ),
    );
    expect(checked.registry?.problems.map((p) => p.reason).join('\n')).not.toContain(gone);
    const digest = await runCli(
      ['scan', '--dry-run', '--now', NOW, '--registry-check', '--registry-days', '1'],
      w.env,
    );
    expect(digest.stdout).toContain(
      `- ${gone}: the registry does not know it (HTTP 404 or 410, asked twice) while the reseller lists it as registered: deleted at the registry, or never registered`,
    );
    expect(digest.stdout).toMatch(
      / {2}Next: Confirm it with a WHOIS or registry lookup, and ask the reseller now/,
    );
  });

  it('leaves the 404 of a gTLD domain added to the account minutes ago an info line: its registry may not serve it yet', async () => {
    world = await startRegistryWorld({ now: NOW_MS, domains: 200, scenarios: new Map() });
    const w = world;
    const quiet = w.portfolio.domains
      .map((d) => String(d.domain_name))
      .filter((n) => registryOf(n)?.name === 'gtld' && !w.portfolio.truth.findings.some((f) => f.key === n));
    const [fresh, old] = quiet as [string, string];
    w.registry.setScenario(fresh, 'unknown');
    w.registry.setScenario(old, 'unknown');
    expect(w.sim.updateDomain(fresh, { date_created: new Date(NOW_MS - 5 * 60_000).toISOString() })).toBe(
      true,
    );
    const checked = await scanJson(w.env, '--registry-check', '--registry-days', '1');
    expect(
      checked.findings.filter(isRegistryKind).map((f) => `${f.domain_name} ${f.kind} ${f.severity}`),
    ).toEqual([`${old} registry_unknown warning`]);
    expect(checked.registry?.problems.map((p) => p.reason)).toContainEqual(
      expect.stringContaining(`does not know 1 domain the reseller lists (HTTP 404 or 410), e.g. ${fresh}:`),
    );
  });

  it('counts a TLD without RDAP and a registry without expiry dates as not checkable, with no finding from either', async () => {
    world = await startRegistryWorld({ now: NOW_MS, domains: 300 });
    const checked = await scanJson(world.env, '--registry-check', '--registry-days', '1');
    const readable = world.portfolio.domains
      .map((d) => String(d.domain_name))
      .filter((name) => !world?.portfolio.truth.problems.includes(name));
    const noService = readable.filter((name) => !registryOf(name)).length;
    const planted = new Set(world.registryTruth.map((t) => t.key));
    const noExpiry = readable.filter(
      (name) => registryOf(name)?.name === 'sidn' && !planted.has(name),
    ).length;
    expect(noService).toBeGreaterThan(0);
    expect(noExpiry).toBeGreaterThan(0);
    expect(checked.registry?.not_checkable).toEqual({
      no_rdap_service: noService,
      no_expiration: noExpiry,
      not_found: 0,
    });
    const flaggedByRegistry = checked.findings.filter(isRegistryKind).map((f) => f.domain_name as string);
    expect(flaggedByRegistry.filter((name) => /\.(de|eu)$/.test(name))).toEqual([]);
  });

  it('finishes with exit 0 when one RDAP server answers 503 and another hangs: one info line each, the alert unchanged', async () => {
    const registries: SimulatedRegistry[] = DEFAULT_REGISTRIES.map((r) =>
      r.name === 'nominet' ? { ...r } : r,
    );
    world = await startRegistryWorld({ now: NOW_MS, domains: 200, registries, scenarios: new Map() });
    world.registry.injectFault('nominet', { kind: 'hang' }, 1000);
    const flags = ['--registry-check', '--registry-days', '1', '--rdap-timeout-ms', '300'];
    const plain = await scanJson(world.env);
    const checked = await scanJson(world.env, ...flags);
    expect(checked.findings.filter(isRegistryKind)).toEqual([]);
    expect(findingKeys(checked)).toEqual(findingKeys(plain));
    expect(checked.summary).toEqual(plain.summary);
    const servers = world.registry.servers;
    expect(
      checked.registry?.problems.map((p) => [
        p.server,
        p.severity,
        p.reason.match(/HTTP 503|no answer within 300 ms/)?.[0],
      ]),
    ).toEqual(
      expect.arrayContaining([
        [servers.dnsbelgium?.url, 'info', 'HTTP 503'],
        [servers.nominet?.url, 'info', 'no answer within 300 ms'],
      ]),
    );
    expect(checked.registry?.problems).toHaveLength(2);
    // The SMS (the page) says exactly what it says without the registry check.
    const dry = (extra: string[]) => runCli(['scan', '--dry-run', '--now', NOW, ...extra], world?.env ?? {});
    const [before, after] = await Promise.all([dry([]), dry(flags)]);
    expect(after.code).toBe(0);
    expect(smsOf(after.stdout)).toBe(smsOf(before.stdout));
    expect(after.stdout).toMatch(
      /^ {2}- \(info\) http:\/\/127\.0\.0\.1:\d+: the RDAP server failed \(HTTP 503\)/m,
    );
  });

  it('waits as long as a 429’s Retry-After asks before it asks that server again, and then checks the domain', async () => {
    world = await startRegistryWorld({ now: NOW_MS, domains: 120 });
    world.registry.injectFault('gtld', { kind: 'status', status: 429, retryAfter: '1' });
    const checked = await scanJson(world.env, '--registry-check', '--registry-days', '1');
    const asked = world.registry.servers.gtld?.requests ?? [];
    const throttled = asked.find((r) => r.status === 429);
    const answered = throttled?.answeredAt ?? Number.POSITIVE_INFINITY;
    const retried = asked.find((r) => r.name === throttled?.name && r.status === 200);
    expect((retried?.at ?? 0) - answered).toBeGreaterThanOrEqual(1000);
    // In the second after "wait a second", only a lookup already on its way (two go at once) may arrive.
    expect(asked.filter((r) => r.at > answered && r.at < answered + 1000).length).toBeLessThanOrEqual(1);
    // The throttled domain was asked again and checked: the server is not among the problems.
    expect(asked.filter((r) => r.name === throttled?.name).map((r) => r.status)).toEqual([429, 200]);
    expect(checked.registry?.problems.map((p) => p.server)).not.toContain(world.registry.servers.gtld?.url);
  });

  it('covers every domain with an RDAP server within the configured days, each day within the budget', async () => {
    const registries = DEFAULT_REGISTRIES.map(({ failsWith: _, ...r }) => r);
    world = await startRegistryWorld({ now: NOW_MS, domains: 150, registries, scenarios: new Map() });
    const servers = Object.values(world.registry.servers);
    const asked = new Set<string>();
    for (let day = 0; day < 5; day++) {
      const before = servers.map((s) => s.requests.length);
      const now = new Date(NOW_MS + day * DAY).toISOString();
      const run = await runCli(
        [
          'scan',
          '--json',
          '--dry-run',
          '--now',
          now,
          '--registry-check',
          '--registry-days',
          '5',
          '--rdap-budget',
          '60',
        ],
        world.env,
      );
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout) as Report;
      expect(report.registry?.queries).toBeLessThanOrEqual(60);
      expect(report.registry?.not_checked.budget).toBe(0);
      servers.forEach((s, i) => {
        for (const r of s.requests.slice(before[i])) asked.add(r.name);
      });
    }
    const withRdap = world.portfolio.domains
      .map((d) => String(d.domain_name))
      .filter((name) => !world?.portfolio.truth.problems.includes(name) && registryOf(name, registries));
    expect([...asked].sort()).toEqual([...withRdap].sort());
  });

  it('spends a budget that falls short on the flagged domains first, and counts what it left for another day', async () => {
    world = await startRegistryWorld({ now: NOW_MS, domains: 200, scenarios: new Map() });
    const checked = await scanJson(
      world.env,
      '--registry-check',
      '--registry-days',
      '1',
      '--rdap-budget',
      '5',
    );
    expect(checked.registry?.queries).toBe(5);
    expect(checked.registry?.not_checked.budget).toBeGreaterThan(0);
    const flagged = new Set(
      world.portfolio.truth.findings
        .filter((f) => f.severity !== 'info' && registryOf(f.key) && !registryOf(f.key)?.failsWith)
        .map((f) => f.key),
    );
    const asked = Object.values(world.registry.servers).flatMap((s) => s.requests.map((r) => r.name));
    expect(flagged.size).toBeGreaterThanOrEqual(5);
    expect(asked.every((name) => flagged.has(name))).toBe(true);
  });

  it('checks nothing, and still finishes the scan, when the bootstrap cannot be read', async () => {
    world = await startRegistryWorld({ now: NOW_MS, domains: 60 });
    const plain = await scanJson(world.env);
    const missing = join(world.dir, 'no-such-bootstrap.json');
    const checked = await scanJson({ ...world.env, RDAP_BOOTSTRAP_URL: missing }, '--registry-check');
    expect(findingKeys(checked)).toEqual(findingKeys(plain));
    expect(checked.registry?.problems).toEqual([
      expect.objectContaining({
        server: 'bootstrap',
        severity: 'info',
        reason: expect.stringContaining(`the RDAP bootstrap file ${missing} cannot be read (ENOENT)`),
      }),
    ]);
  });

  it('refuses an RDAP bootstrap URL that is not https before anything is sent', async () => {
    world = await startRegistryWorld({ now: NOW_MS, domains: 20 });
    const run = await runCli(
      ['scan', '--dry-run', '--registry-check', '--rdap-bootstrap', 'http://rdap.example/dns.json'],
      world.env,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('RDAP_BOOTSTRAP_URL (--rdap-bootstrap) is not https');
    expect(world.sim.requests).toHaveLength(0);
  });
});
