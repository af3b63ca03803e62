import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { FileStateStore } from '../../functions/local/file-state-store';
import type { RawRecord } from '../../functions/simulator/portfolio';
import { startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { sqsVariant, startSnsEmulator } from '../support/sns-emulator';
import { loadState } from '../support/whole-state';

/**
 * The repeat cadence (docs/policies.md#repeat-cadence) through the simulator, fauxqs and a real
 * scan with state, in a file and in a DynamoDB table (dynalite), the clock moved with --now: a
 * warning repeats weekly by default, a vip critical every 12 hours at most twice, and a finding
 * that changes (a lower rung) starts its count over.
 */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const KEY = 'repeat-cadence-test-key-7d2e';
const iso = (ms: number) => new Date(ms).toISOString();

/** Expiring without auto-renew, `daysLeft` at T0. */
function expiring(name: string, daysLeft: number, tags: string[] = []): RawRecord {
  return {
    domain_name: name,
    status: ['registered'],
    date_expiry: iso(T0 + daysLeft * DAY),
    auto_renew: false,
    registrant_handle: 'C00001',
    tags,
  };
}

let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let db: Awaited<ReturnType<typeof startDynalite>>;
let dir: string;
beforeAll(async () => {
  [emulator, db, dir] = await Promise.all([
    startSnsEmulator(),
    startDynalite(),
    mkdtemp(join(tmpdir(), 'sentinel-repeat-')),
  ]);
  await writeFile(
    join(dir, 'policies.json'),
    JSON.stringify({
      policies: [{ name: 'vip', match: { tags: ['vip'] }, repeat: { critical: 12, cap: 2 } }],
    }),
  );
});
afterAll(async () => {
  await Promise.all([emulator.close(), db.close(), rm(dir, { recursive: true, force: true })]);
});

type Finding = { domain_name?: string; change?: string; kind?: string; severity?: string };

/** A scan with state at a time of the test's choosing, its alerts drained from fauxqs. */
async function scanner(domains: RawRecord[], store: 'file' | 'dynamodb', name: string) {
  const sim = await startSimulator({
    portfolio: {
      domains,
      contacts: [
        { handle: 'C00001', name: 'Anna Bakker', company_name: '', email: 'anna@example.nl', status: ['ok'] },
      ],
      truth: { findings: [], problems: [] },
    },
    apiKey: KEY,
  });
  const topicArn = await emulator.topic(`${name}-${store}`);
  const queue = await emulator.queueSubscribedTo(topicArn, `${name}-${store}-all`);
  const io = { cwd: dir, sns: emulator.snsClient, dynamodb: db.client };
  const state = store === 'file' ? join(dir, `${name}.json`) : `dynamodb:${name}`;
  if (store === 'dynamodb') expect((await runCli(['state', 'init', state], {}, io)).code).toBe(0);
  const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, ALERT_TOPIC_ARN: topicArn };
  return {
    close: () => sim.close(),
    /** The count of repeats the domain's memory keeps, read back from the store as a scan reads it. */
    repeatsOf: async (domain: string) => {
      const stored =
        store === 'file'
          ? new FileStateStore(state)
          : new DynamoDbStateStore({ client: db.client(), tableName: name, scope: sim.url });
      return (await loadState(stored, sim.url)).state.domains[domain]?.alerted?.repeats;
    },
    /** The first line the scan printed, and the findings of what it published (none: nothing). */
    scan: async (now: number) => {
      const argv = ['scan', '--now', iso(now), '--state', state, '--policies', 'policies.json'];
      const run = await runCli([...argv, '--allow-clock-skew'], env, io);
      expect([run.code, run.stderr]).toEqual([0, '']);
      const sent = await emulator.drain(queue);
      expect(sent.length).toBeLessThanOrEqual(1);
      const findings = sent.map((e) => (JSON.parse(sqsVariant(e)) as { findings: Finding[] }).findings);
      return { said: run.stdout.split('\n')[0] ?? '', findings: findings[0] };
    },
  };
}

describe.each(['file', 'dynamodb'] as const)('repeat cadence (scan --state with a %s store)', (store) => {
  it('repeats a warning under the default weekly, not before', async () => {
    // 29 days left: a warning on the 30-day rung all week long (22 days left a week on).
    const s = await scanner([expiring('soon.nl', 29)], store, 'weekly');
    try {
      expect((await s.scan(T0)).said).toMatch(/^published alert \S+ to \S+ \(1 new\)$/);
      expect((await s.scan(T0 + DAY)).said).toMatch(/^no alert published/);
      expect((await s.scan(T0 + 6 * DAY)).said).toMatch(/^no alert published/);
      const week = await s.scan(T0 + 7 * DAY);
      expect(week.said).toMatch(/^published alert \S+ to \S+ \(1 warning repeated after 164 h\)$/);
      expect(week.findings).toEqual([
        expect.objectContaining({ domain_name: 'soon.nl', severity: 'warning', change: 'ongoing' }),
      ]);
      expect((await s.scan(T0 + 8 * DAY)).said).toMatch(/^no alert published/);
    } finally {
      await s.close();
    }
  });

  it('repeats a vip critical every 12 hours, not a third time under cap 2, and counts a changed finding from 0', async () => {
    // 6.5 days left: critical on the 7-day rung; on the 3-day rung from 60 hours on (days left are whole days).
    const s = await scanner([expiring('vip.de', 6.5, ['vip']), expiring('plain.de', 6.5)], store, 'capped');
    const repeatedVip = /^published alert \S+ to \S+ \(1 critical repeated after 12 h\)$/;
    try {
      expect((await s.scan(T0)).said).toMatch(/\(2 new\)$/);
      expect((await s.scan(T0 + 11 * HOUR)).said).toMatch(/^no alert published/);
      const first = await s.scan(T0 + 12 * HOUR);
      expect(first.said).toMatch(repeatedVip);
      expect(first.findings?.map((f) => `${f.domain_name} ${f.change}`).sort()).toEqual([
        'plain.de ongoing',
        'vip.de ongoing',
      ]);
      expect((await s.scan(T0 + 24 * HOUR)).said).toMatch(repeatedVip);
      expect(await s.repeatsOf('vip.de')).toBe(2);
      // The third repeat is over the cap: not published. plain.de (no policy) repeats daily.
      expect((await s.scan(T0 + 36 * HOUR)).said).toMatch(/^no alert published/);
      const daily = await s.scan(T0 + 48 * HOUR);
      expect(daily.said).toMatch(/^published alert \S+ to \S+ \(1 critical repeated after 20 h\)$/);
      expect((await s.scan(T0 + 60 * HOUR)).said).toMatch(/^no alert published/);
      // 3.75 days left (3 whole days): both on the 3-day rung, another finding for the count: it starts over.
      expect((await s.scan(T0 + 66 * HOUR)).said).toMatch(/\(2 escalated\)$/);
      expect((await s.scan(T0 + 78 * HOUR)).said).toMatch(repeatedVip);
      expect((await s.scan(T0 + 90 * HOUR)).said).toMatch(repeatedVip);
      expect(await s.repeatsOf('vip.de')).toBe(2);
      expect((await s.scan(T0 + 102 * HOUR)).said).toMatch(/^no alert published/);
    } finally {
      await s.close();
    }
  });
});
