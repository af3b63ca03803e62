import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketOf } from '../../functions/aws/dynamodb-buckets';
import type { Portfolio, RawRecord } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { sqsVariant, startSnsEmulator } from '../support/sns-emulator';

// Sixteen days ago on the hour: the scans below run up to 15 days later, all in the past of the clock.
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 16 * 86_400_000;
const DAY = 86_400_000;
const KEY = 'state-test-key-9e1f';
const iso = (ms: number) => new Date(ms).toISOString();

function record(name: string, overrides: RawRecord = {}): RawRecord {
  return {
    domain_name: name,
    status: ['registered'],
    date_expiry: iso(T0 + 300 * DAY),
    auto_renew: true,
    registrant_handle: 'C00001',
    transfer_lock: true,
    auth_code: null,
    dns_hosted: true,
    nsgroup: null,
    dnssec: 'signed',
    ...overrides,
  };
}

function portfolio(): Portfolio {
  return {
    domains: [
      record('leaving.nl'),
      record('locked.com'),
      record('fixme.nl', { auto_renew: false, date_expiry: iso(T0 + 25 * DAY + 3_600_000) }),
      record('soon.nl', { auto_renew: false, date_expiry: iso(T0 + 20 * DAY + 3_600_000) }),
      record('healthy.eu'),
    ],
    contacts: [
      { handle: 'C00001', name: 'Anna Bakker', company_name: '', email: 'anna@example.nl', status: ['ok'] },
    ],
    truth: { findings: [], problems: [] },
  };
}

let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let db: Awaited<ReturnType<typeof startDynalite>>;
let dir: string;
beforeAll(async () => {
  [emulator, db, dir] = await Promise.all([
    startSnsEmulator(),
    startDynalite(),
    mkdtemp(join(tmpdir(), 'sentinel-state-cli-')),
  ]);
});
afterAll(async () => {
  await Promise.all([emulator.close(), db.close(), rm(dir, { recursive: true, force: true })]);
});

interface Setup {
  readonly sim: Simulator;
  readonly topicArn: string;
  readonly queue: string;
  scan(now: number, extra?: readonly string[], env?: NodeJS.ProcessEnv): ReturnType<typeof runCli>;
  messages(): Promise<Array<{ report: Record<string, unknown>; email: string }>>;
}

async function setup(name: string, state: string): Promise<Setup> {
  const sim = await startSimulator({ portfolio: portfolio(), apiKey: KEY });
  const topicArn = await emulator.topic(name);
  const queue = await emulator.queueSubscribedTo(topicArn, `${name}-all`);
  return {
    sim,
    topicArn,
    queue,
    scan: (now, extra = [], env = {}) =>
      runCli(
        ['scan', '--now', iso(now), '--state', state, ...extra],
        { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, ALERT_TOPIC_ARN: topicArn, ...env },
        { sns: emulator.snsClient, dynamodb: db.client },
      ),
    async messages() {
      const envelopes = await emulator.drain(queue);
      return envelopes.map((e) => ({
        report: JSON.parse(sqsVariant(e)) as Record<string, unknown>,
        email: (JSON.parse(e.Message) as { email: string }).email,
      }));
    },
  };
}

type Finding = { domain_name?: string; change?: string };
const changeOf = (report: Record<string, unknown>, name: string) =>
  (report.findings as Finding[]).find((f) => f.domain_name === name)?.change;

describe.each([
  ['a JSON file', () => join(dir, 'state.json')],
  ['DynamoDB (dynalite)', () => 'dynamodb:sentinel-state'],
])('scan --state with %s', (label, where) => {
  it('alerts on change only, notices what left, says what was resolved, and escalates after a missed run', async () => {
    const state = where();
    if (state.startsWith('dynamodb:')) {
      const init = await runCli(['state', 'init', state], {}, { dynamodb: db.client });
      expect(init.stdout).toBe(
        'created DynamoDB table sentinel-state (pk/sk, on demand, encrypted); use: scan --state dynamodb:sentinel-state\n',
      );
      expect(init.code).toBe(0);
    }
    const s = await setup(label.startsWith('a JSON') ? 'state-file' : 'state-dynamodb', state);
    try {
      // 1. First run: everything new, one message.
      const first = await s.scan(T0);
      expect(first.stderr).toBe('');
      expect(first.stdout).toMatch(/^published alert \S+ to \S+ \(2 new\)\nstate saved to /);
      const [one, ...more] = await s.messages();
      expect(more).toEqual([]);
      expect(changeOf(one?.report ?? {}, 'soon.nl')).toBe('new');
      expect(one?.report.changes).toEqual([]);

      // 2. Nothing changed: nothing sent.
      const second = await s.scan(T0 + 3_600_000);
      expect(second.stdout).toBe(
        `no alert published: nothing new, escalated, changed or resolved at warning or above\nstate saved to ${state}\n`,
      );
      expect(await s.messages()).toEqual([]);

      // 3. A domain leaves, a lock comes off, auto-renew goes on: one message with all three.
      expect(s.sim.updateDomain('leaving.nl', null)).toBe(true);
      s.sim.updateDomain('locked.com', { transfer_lock: false });
      s.sim.updateDomain('fixme.nl', { auto_renew: true });
      const third = await s.scan(T0 + 2 * 3_600_000);
      expect(third.code).toBe(0);
      const changed = await s.messages();
      expect(changed).toHaveLength(1);
      const report = changed[0]?.report ?? {};
      expect(report.changes).toEqual([
        {
          domain_name: 'leaving.nl',
          kind: 'left_account',
          severity: 'critical',
          before: 'in the account',
          after: 'not in the account',
          next_step: expect.stringMatching(
            /^Check in the reseller's control panel whether it was transferred out/,
          ),
        },
        {
          domain_name: 'locked.com',
          kind: 'transfer_lock_off',
          severity: 'warning',
          before: true,
          after: false,
          next_step: expect.stringMatching(/^If nobody here turned it off, turn the transfer lock on again/),
        },
      ]);
      expect(report.resolved).toEqual([
        {
          domain_name: 'fixme.nl',
          kind: 'expiring',
          severity: 'warning',
          reason: 'auto_renew_on',
          now: { kind: 'expiring', severity: 'info' },
        },
      ]);
      const email = changed[0]?.email ?? '';
      expect(email).toContain('CHANGES (2)');
      expect(email.indexOf('CHANGES (2)')).toBeLessThan(email.indexOf('WARNING ('));
      expect(email).toMatch(
        /Resolved since the last alert \(1\)\n- fixme\.nl: expiring \[warning\]: auto-renew turned on/,
      );

      // 4. Runs missed for two weeks: soon.nl went from 20 to 5 days left, escalated once.
      const fourth = await s.scan(T0 + 15 * DAY);
      expect(fourth.stdout).toMatch(/^published alert \S+ to \S+ \(1 escalated\)\n/);
      const late = await s.messages();
      expect(late).toHaveLength(1);
      expect(changeOf(late[0]?.report ?? {}, 'soon.nl')).toBe('escalated');
      expect(late[0]?.email).toMatch(/^- ESCALATED soon\.nl: expires .* in 5 days, auto-renew OFF$/m);
      expect((await s.scan(T0 + 15 * DAY + 3_600_000)).stdout).toMatch(/^no alert published/);
      expect(await s.messages()).toEqual([]);

      // 5. Reset: asks for --yes, then forgets; the next scan is a first run again.
      const resetEnv = { RESELLER_BASE_URL: s.sim.url };
      const unconfirmed = await runCli(['state', 'reset', state], resetEnv, { dynamodb: db.client });
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stderr).toMatch(/confirm with --yes/);
      const reset = await runCli(['state', 'reset', state, '--yes'], resetEnv, { dynamodb: db.client });
      expect(reset.stdout).toMatch(
        state.startsWith('dynamodb:')
          ? // The meta item and the bucket items of the four domains remembered (a bucket each, or fewer).
            new RegExp(
              `^removed ${1 + new Set(['locked.com', 'fixme.nl', 'soon.nl', 'healthy.eu'].map((name) => bucketOf(name))).size} state items of http://127\\.0\\.0\\.1:\\d+ from dynamodb:sentinel-state\n$`,
            )
          : /^removed the state file .*state\.json\n$/,
      );
      expect((await s.scan(T0 + 15 * DAY + 2 * 3_600_000)).stdout).toMatch(
        /^published alert \S+ to \S+ \(1 new\)/,
      );
      expect(await s.messages()).toHaveLength(1);
    } finally {
      await s.sim.close();
    }
  });
});

describe('scan --state: at least once, at most once', () => {
  it('writes nothing on --dry-run', async () => {
    const path = join(dir, 'dry.json');
    const s = await setup('state-dry', path);
    try {
      const run = await s.scan(T0, ['--dry-run']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^domain-sentinel: 0 critical, 2 warning\n\nSince the last scan: 2 new\./);
      expect(run.stdout).toContain('- NEW soon.nl: expires');
      expect(run.stdout).toContain(
        `state in ${path} not written (--dry-run); a real run would publish: 2 new\n`,
      );
      await expect(stat(path)).rejects.toThrow(/ENOENT/);
      expect(await s.messages()).toEqual([]);
    } finally {
      await s.sim.close();
    }
  });

  it('leaves the state as it was when the publish fails, so the next run alerts again', async () => {
    const path = join(dir, 'failed.json');
    const s = await setup('state-failed', path);
    try {
      const missingTopic = s.topicArn.replace(/state-failed$/, 'no-such-topic');
      const failed = await s.scan(T0, [], { ALERT_TOPIC_ARN: missingTopic });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/^sentinel: could not publish the alert to /);
      // The lease was taken and given back; the state itself never moved.
      const after = JSON.parse(await readFile(path, 'utf8'));
      expect(after).toMatchObject({ generation: 0, lease: null, state: { last_scan_at: null, domains: {} } });
      const retry = await s.scan(T0 + 60_000);
      expect(retry.stdout).toMatch(/^published alert \S+ to \S+ \(2 new\)/);
      expect(await s.messages()).toHaveLength(1);
      expect(JSON.parse(await readFile(path, 'utf8')).generation).toBe(1);
    } finally {
      await s.sim.close();
    }
  });

  it('lets two scans running at once announce a change only once (DynamoDB conditional writes)', async () => {
    const table = 'sentinel-race';
    expect((await runCli(['state', 'init', `dynamodb:${table}`], {}, { dynamodb: db.client })).code).toBe(0);
    const s = await setup('state-race', `dynamodb:${table}`);
    try {
      const [a, b] = await Promise.all([s.scan(T0), s.scan(T0)]);
      expect([a.code, b.code]).toEqual([0, 0]);
      const outputs = [a.stdout, b.stdout].sort();
      // The loser found the state leased or moved on, re-read it, and had nothing new to say.
      expect(outputs[0]).toMatch(
        /^another scan moved the state on while this one ran: re-read it \d+ times? before deciding\nno alert published: nothing new/,
      );
      expect(outputs[1]).toMatch(/^published alert .* \(2 new\)/);
      expect(await s.messages()).toHaveLength(1);
    } finally {
      await s.sim.close();
    }
  });
});
