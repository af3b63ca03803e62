import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { filterPolicyOf } from '../../functions/core/alerts/groups';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { type SnsEnvelope, sqsVariant, startSnsEmulator } from '../support/sns-emulator';

/**
 * Policies per domain group through the simulator (its records carry `tags`) and fauxqs: thresholds
 * by tag, a domain let lapse, and a group's own message routed by the filter policies the stack
 * gives its subscriptions (filterPolicyOf, which lib/alerts.ts uses).
 */

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'policies-test-key-7e21';
const DAY = 86_400_000;

/** The issue's own example, without escalation (it needs memory between scans: not a key yet). */
const POLICIES = {
  policies: [
    { name: 'lapse', match: { tags: ['let-lapse'] }, letLapse: true },
    {
      name: 'vip',
      match: { tags: ['vip'] },
      criticalDays: 30,
      expiryDays: 60,
      alertEmails: ['vip-desk@example.nl'],
    },
    { name: 'nl', match: { tlds: ['nl'], names: ['*.shop.example'] }, minSeverity: 'critical' },
  ],
};

/** A registered domain without auto-renew expiring in `days` days (and an hour), with these tags. */
const expiring = (name: string, days: number, tags: string[]) => ({
  domain_name: name,
  status: ['registered'],
  date_expiry: new Date(Date.parse(NOW) + days * DAY + 3_600_000).toISOString(),
  auto_renew: false,
  registrant_handle: 'C00001',
  tags,
});

let dir: string;
let sim: Simulator;
let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;

beforeAll(async () => {
  emulator = await startSnsEmulator();
});
afterAll(() => emulator.close());

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sentinel-policies-'));
  await writeFile(join(dir, 'policies.json'), JSON.stringify(POLICIES));
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 60, seed: 3, now: Date.parse(NOW) }),
    apiKey: KEY,
  });
  sim.updateDomain('vip-twenty.example.com', expiring('vip-twenty.example.com', 20, ['vip']));
  sim.updateDomain('plain-twenty.example.com', expiring('plain-twenty.example.com', 20, []));
  sim.updateDomain('lapse-ten.example.com', expiring('lapse-ten.example.com', 10, ['let-lapse']));
});
afterEach(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

const env = (extra: NodeJS.ProcessEnv = {}) => ({
  RESELLER_BASE_URL: sim.url,
  RESELLER_API_KEY: KEY,
  ...extra,
});

type Finding = { domain_name?: string; severity: string; kind: string; policy?: string; let_lapse?: boolean };
const findingOf = (report: { findings: Finding[] }, name: string) =>
  report.findings.find((f) => f.domain_name === name);
const email = (envelope: SnsEnvelope | undefined) =>
  (JSON.parse(envelope?.Message ?? '{}') as { email?: string }).email ?? '';

describe('policies per domain group (simulator with tags, fauxqs)', () => {
  it('makes a vip domain at 20 days without auto-renew critical under criticalDays 30, while an untagged one stays a warning', async () => {
    const run = await runCli(
      ['scan', '--json', '--dry-run', '--now', NOW, '--policies', 'policies.json'],
      env(),
      { cwd: dir },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(findingOf(report, 'vip-twenty.example.com')).toMatchObject({
      kind: 'expiring',
      severity: 'critical',
      policy: 'vip',
    });
    const plain = findingOf(report, 'plain-twenty.example.com');
    expect(plain).toMatchObject({ kind: 'expiring', severity: 'warning' });
    expect(plain?.policy).toBeUndefined();
    // What applied is in the report: the vip group's thresholds, the deployment's beside them.
    expect(report.policy.policies).toEqual([
      { name: 'lapse', expiry_days: 30, critical_days: 7, min_severity: 'warning', let_lapse: true },
      { name: 'vip', expiry_days: 60, critical_days: 30, min_severity: 'warning' },
      { name: 'nl', expiry_days: 30, critical_days: 7, min_severity: 'critical' },
    ]);
  });

  it('keeps a let-lapse domain in the JSON with let_lapse true and out of every message, sends the vip group its own digest, and brings the domain back once its tag is removed', async () => {
    const topicArn = await emulator.topic('policies-groups');
    const features = { groups: true, quietHours: false };
    const account = await emulator.queueSubscribedTo(
      topicArn,
      'policies-account',
      filterPolicyOf({ sms: false }, features),
    );
    const vip = await emulator.queueSubscribedTo(
      topicArn,
      'policies-vip',
      filterPolicyOf({ groups: ['vip'], sms: false }, features),
    );
    const scan = () =>
      runCli(
        ['scan', '--json', '--now', NOW, '--policies', 'policies.json'],
        env({ ALERT_TOPIC_ARN: topicArn }),
        { cwd: dir, sns: emulator.snsClient },
      );

    const first = await scan();
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(
      /^published alert \S+ to arn:aws:sns:.*policies-groups\npublished alert of group vip \S+ to /,
    );
    const report = JSON.parse(first.stdout);
    expect(findingOf(report, 'lapse-ten.example.com')).toMatchObject({
      severity: 'warning',
      policy: 'lapse',
      let_lapse: true,
    });

    const [whole, ...moreWhole] = await emulator.drain(account);
    expect(moreWhole).toHaveLength(0);
    expect(whole?.MessageAttributes.group).toBeUndefined();
    expect(email(whole)).toContain('vip-twenty.example.com');
    expect(email(whole)).toContain('plain-twenty.example.com');
    expect(email(whole)).not.toContain('lapse-ten');
    expect(email(whole)).toContain('1 domain let lapse by policy left out');
    expect(JSON.stringify(JSON.parse(sqsVariant(whole as SnsEnvelope)).findings)).not.toContain('lapse-ten');

    const [group, ...moreGroup] = await emulator.drain(vip);
    expect(moreGroup).toHaveLength(0);
    expect(group?.MessageAttributes.group).toEqual({ Type: 'String', Value: 'vip' });
    expect(group?.Subject).toMatch(/^domain-sentinel \[group vip\]: /);
    const groupReport = JSON.parse(sqsVariant(group as SnsEnvelope));
    const names: string[] = groupReport.findings.map((f: Finding) => f.domain_name);
    expect(names).toContain('vip-twenty.example.com');
    expect(groupReport.findings.every((f: Finding) => f.policy === 'vip')).toBe(true);
    expect(email(group)).not.toContain('plain-twenty');
    expect(groupReport.source.group).toBe('vip');

    // The tag removed: the next scan judges it by the deployment's settings and alerts about it.
    sim.updateDomain('lapse-ten.example.com', { tags: [] });
    const second = await scan();
    expect(second.code).toBe(0);
    const back = findingOf(JSON.parse(second.stdout), 'lapse-ten.example.com');
    expect(back).toMatchObject({ severity: 'warning', kind: 'expiring' });
    expect(back?.let_lapse).toBeUndefined();
    const [again] = await emulator.drain(account);
    expect(email(again)).toContain('lapse-ten.example.com');
    expect(email(again)).not.toContain('let lapse by policy');
  });

  it('with memory, tells a group of its domain that left the account, and says nothing of a let-lapse domain that left', async () => {
    const topicArn = await emulator.topic('policies-departures');
    const features = { groups: true, quietHours: false };
    const account = await emulator.queueSubscribedTo(
      topicArn,
      'departures-account',
      filterPolicyOf({ sms: false }, features),
    );
    const vip = await emulator.queueSubscribedTo(
      topicArn,
      'departures-vip',
      filterPolicyOf({ groups: ['vip'], sms: false }, features),
    );
    // A vip domain with nothing to say: auto-renew on, a year to go.
    sim.updateDomain('vip-quiet.example.com', {
      ...expiring('vip-quiet.example.com', 365, ['vip']),
      auto_renew: true,
    });
    sim.updateDomain('lapse-far.example.com', {
      ...expiring('lapse-far.example.com', 365, ['let-lapse']),
      auto_renew: true,
    });
    const scan = (now: string) =>
      runCli(
        ['scan', '--json', '--now', now, '--policies', 'policies.json', '--state', join(dir, 'state.json')],
        env({ ALERT_TOPIC_ARN: topicArn }),
        { cwd: dir, sns: emulator.snsClient },
      );
    const first = await scan(NOW);
    expect(first.stderr).toContain('state saved to');
    expect(first.code).toBe(0);
    await emulator.drain(account);
    await emulator.drain(vip);

    sim.updateDomain('vip-quiet.example.com', null);
    sim.updateDomain('lapse-ten.example.com', null);
    const later = new Date(Date.parse(NOW) + 3_600_000).toISOString();
    const second = await scan(later);
    expect(second.stderr).not.toContain('error');
    expect(second.code).toBe(0);
    // The report keeps both departures, each with its group; the let-lapse one marked so.
    const changes = JSON.parse(second.stdout).changes as Array<Record<string, unknown>>;
    expect(changes.find((c) => c.domain_name === 'vip-quiet.example.com')).toMatchObject({
      kind: 'left_account',
      policy: 'vip',
    });
    expect(changes.find((c) => c.domain_name === 'lapse-ten.example.com')).toMatchObject({
      kind: 'left_account',
      policy: 'lapse',
      let_lapse: true,
    });

    const [whole, ...moreWhole] = await emulator.drain(account);
    expect(moreWhole).toHaveLength(0);
    expect(email(whole)).toContain('vip-quiet.example.com');
    expect(email(whole)).not.toContain('lapse-ten');
    expect(JSON.stringify(JSON.parse(sqsVariant(whole as SnsEnvelope)).changes)).not.toContain('lapse-ten');

    // The vip desk hears of its own domain's departure, though no finding of its group is new.
    const [group, ...moreGroup] = await emulator.drain(vip);
    expect(moreGroup).toHaveLength(0);
    expect(email(group)).toContain('vip-quiet.example.com');
    expect(email(group)).not.toContain('lapse-ten');
    const groupChanges = JSON.parse(sqsVariant(group as SnsEnvelope)).changes;
    expect(groupChanges).toEqual([
      expect.objectContaining({ domain_name: 'vip-quiet.example.com', kind: 'left_account' }),
    ]);

    // A let-lapse domain leaving alone is no news: nothing is published.
    sim.updateDomain('lapse-far.example.com', null);
    const third = await scan(new Date(Date.parse(NOW) + 2 * 3_600_000).toISOString());
    expect(third.code).toBe(0);
    expect(third.stderr).toContain('no alert published: nothing new, escalated, changed or resolved');
    expect(JSON.parse(third.stdout).changes).toEqual([
      expect.objectContaining({ domain_name: 'lapse-far.example.com', policy: 'lapse', let_lapse: true }),
    ]);
    expect(await emulator.drain(account)).toHaveLength(0);
  });

  it('refuses an unknown key of a policies file with the closest known one, before a request is sent', async () => {
    await writeFile(
      join(dir, 'typo.json'),
      JSON.stringify({ policies: [{ name: 'vip', match: { tag: ['vip'] }, criticalDay: 30 }] }),
    );
    const requestsBefore = sim.requests.length;
    const run = await runCli(['scan', '--dry-run', '--policies', 'typo.json'], env(), { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'policies file typo.json: policies[0] ("vip"): unknown key criticalDay; did you mean criticalDays?',
    );
    expect(run.stderr).toContain('match: unknown key tag; did you mean tags?');
    expect(sim.requests.length).toBe(requestsBefore);
  });
});
