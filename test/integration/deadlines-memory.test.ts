import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webAppForServe } from '../../bin/commands/serve';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { serveLocally } from '../../functions/local/local-server';
import type { Portfolio, RawRecord } from '../../functions/simulator/portfolio';
import { startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { SIGNING_KEY } from '../support/restore-env';
import { sqsVariant, startSnsEmulator } from '../support/sns-emulator';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const KEY = 'deadlines-memory-key-7c3d';
const iso = (ms: number) => new Date(ms).toISOString();

function record(name: string, overrides: RawRecord = {}): RawRecord {
  return {
    domain_name: name,
    status: ['registered'],
    date_expiry: iso(T0 + 300 * DAY),
    date_renewal: iso(T0 + 299 * DAY),
    auto_renew: true,
    registrant_handle: 'C00001',
    ...overrides,
  };
}

/**
 * retry.nl renews tomorrow; gold.com is premium at EUR 400; lost.de was deleted 21 days ago, so
 * .de's 30 days leave 9 to restore.
 */
function portfolio(): Portfolio {
  return {
    domains: [
      record('retry.nl', { date_expiry: iso(T0 + 20 * DAY), date_renewal: iso(T0 + DAY) }),
      record('gold.com', { premium_domain: true, premium_price: { currency: 'EUR', price: 400 } }),
      record('lost.de', {
        status: ['quarantine'],
        auto_renew: false,
        date_expiry: iso(T0 - 40 * DAY),
        date_deleted: iso(T0 - 21 * DAY),
      }),
      record('healthy.eu'),
    ],
    contacts: [
      { handle: 'C00001', name: 'Anna Bakker', company_name: '', email: 'anna@example.nl', status: ['ok'] },
    ],
    truth: { findings: [], problems: [] },
  };
}

let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let dir: string;
beforeAll(async () => {
  [emulator, dir] = await Promise.all([startSnsEmulator(), mkdtemp(join(tmpdir(), 'sentinel-deadlines-'))]);
});
afterAll(async () => {
  await Promise.all([emulator.close(), rm(dir, { recursive: true, force: true })]);
});

type Finding = { domain_name?: string; kind?: string; change?: string; date_renewal?: string };

describe('deadlines with memory (scan --state, alerts through the SNS emulator)', () => {
  it('finds a renewal that passed without the expiry moving, a premium price that changed, and repeats the last days daily saying LAST DAYS', async () => {
    const sim = await startSimulator({ portfolio: portfolio(), apiKey: KEY });
    const topicArn = await emulator.topic('deadlines-memory');
    const queue = await emulator.queueSubscribedTo(topicArn, 'deadlines-memory-all');
    const state = join(dir, 'state.json');
    // Criticals otherwise repeat weekly here: the daily repeat comes from the last days alone.
    const policies = join(dir, 'weekly.json');
    await writeFile(policies, JSON.stringify({ policies: [], repeat: { critical: 'weekly' } }));
    const scan = (now: number) =>
      runCli(
        // A replay of days to come: --now runs ahead of this machine's clock on purpose.
        ['scan', '--now', iso(now), '--state', state, '--policies', policies, '--allow-clock-skew'],
        {
          RESELLER_BASE_URL: sim.url,
          RESELLER_API_KEY: KEY,
          ALERT_TOPIC_ARN: topicArn,
        },
        { sns: emulator.snsClient },
      );
    const messages = async () =>
      (await emulator.drain(queue)).map((e) => ({
        report: JSON.parse(sqsVariant(e)) as { findings: Finding[]; changes: Finding[] },
        sms: (JSON.parse(e.Message) as { sms: string }).sms,
      }));
    try {
      const first = await scan(T0);
      expect(first.stdout).toMatch(/^published alert \S+ to \S+ \(1 new\)/);
      const [one] = await messages();
      expect(one?.sms).toBe('1 critical: lost.de quarantine 9d left');

      // The next day: nothing new, the quarantine is not in its last week yet: nothing sent.
      expect((await scan(T0 + DAY)).stdout).toMatch(/^no alert published/);
      expect(await messages()).toEqual([]);

      // The reseller's renewal of retry.nl was due on day 1 and did not happen; its record now
      // shows a retry on day 5, so only memory can tell. gold.com's premium price went up.
      sim.updateDomain('retry.nl', { date_renewal: iso(T0 + 5 * DAY) });
      sim.updateDomain('gold.com', { premium_price: { currency: 'EUR', price: 520 } });
      const third = await scan(T0 + 3 * DAY);
      expect(third.stdout).toMatch(
        /\(1 escalated, 1 changed, 1 in the last days to restore, repeated daily\)/,
      );
      const [alert, ...more] = await messages();
      expect(more).toEqual([]);
      expect(alert?.report.findings.find((f) => f.domain_name === 'retry.nl')).toMatchObject({
        kind: 'renewal_failed',
        change: 'escalated',
        date_renewal: iso(T0 + DAY),
      });
      expect(alert?.report.changes).toEqual([
        {
          domain_name: 'gold.com',
          kind: 'premium_price_changed',
          severity: 'warning',
          before: { currency: 'EUR', amount: 400 },
          after: { currency: 'EUR', amount: 520 },
          next_step: 'Check the new renewal price before it renews: budget for it, or let it go.',
        },
      ]);
      // The SMS ends with what it leaves out: the warnings only the e-mail lists.
      expect(alert?.sms).toMatch(
        /^2 critical: lost\.de LAST DAYS 6d to restore; retry\.nl renewal failed(?: \d+ warning)?$/,
      );

      // Hours later: said already today. The next day: said again.
      expect((await scan(T0 + 3 * DAY + 6 * HOUR)).stdout).toMatch(/^no alert published/);
      expect((await scan(T0 + 4 * DAY)).stdout).toMatch(/in the last days to restore, repeated daily/);
      const [again] = await messages();
      expect(again?.sms).toMatch(/^2 critical: lost\.de LAST DAYS 5d to restore/);
    } finally {
      await sim.close();
    }
  });
});

describe('a renewal_failed only memory knows, acknowledged through its link (scan --state, serve)', () => {
  it('is sent with links signed for renewal_failed, acknowledged as renewal_failed, and stays silent in the next scan', async () => {
    // Times from this machine's clock: serve judges the domain at its own time, as a Lambda does.
    const R = Date.now();
    const sim = await startSimulator({
      portfolio: {
        ...portfolio(),
        domains: [record('retry.nl', { date_expiry: iso(R + 20 * DAY), date_renewal: iso(R - 2 * DAY) })],
      },
      apiKey: KEY,
    });
    const state = join(dir, 'acknowledged.json');
    const env: Record<string, string> = {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
      LINK_SIGNING_KEY: SIGNING_KEY,
      ALERT_TOPIC_ARN: await emulator.topic('deadlines-memory-ack'),
      STATE: state,
    };
    const server = await serveLocally(
      webAppForServe({ env, secrets: new EnvSecretSource(env), log: () => undefined }),
      { port: 0 },
    );
    env.LINK_BASE_URL = server.url;
    const scan = async (now: number) => {
      const run = await runCli(['scan', '--json', '--now', iso(now)], env, { sns: emulator.snsClient });
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as { findings: Array<Finding & Record<string, unknown>> };
      return report.findings.find((f) => f.domain_name === 'retry.nl');
    };
    try {
      // Three days ago its renewal (two days ago) was still ahead: the state watches it.
      expect(await scan(R - 3 * DAY)).toMatchObject({ kind: 'expiring', severity: 'info' });
      // It did not happen, and the reseller moved date_renewal on: only memory knows.
      sim.updateDomain('retry.nl', { date_renewal: iso(R + 5 * DAY) });
      const failed = (await scan(R - HOUR)) as Finding & { actions: { acknowledge: string } };
      expect(failed).toMatchObject({ kind: 'renewal_failed', severity: 'critical' });
      expect(failed.actions.acknowledge).toContain('kind=renewal_failed&sev=critical');

      // The person acknowledges it from the alert: serve judges it with the memory, as the alert did.
      const page = await (await fetch(failed.actions.acknowledge)).text();
      expect(page).toContain('auto-renew is on but the renewal due on');
      const post = await fetch(failed.actions.acknowledge, {
        method: 'POST',
        headers: { Accept: 'application/json' },
      });
      expect([post.status, ((await post.json()) as { outcome: string }).outcome]).toEqual([
        200,
        'acknowledged',
      ]);
      const stored = JSON.parse(await readFile(state, 'utf8')).state.domains['retry.nl'].actions;
      expect(stored.acknowledged).toMatchObject({ kind: 'renewal_failed', severity: 'critical' });

      // The next scan keeps it acknowledged: left out of the alert, not lapsed as "changed".
      expect(await scan(Date.now())).toMatchObject({ kind: 'renewal_failed', acknowledged: true });
      const after = JSON.parse(await readFile(state, 'utf8')).state.domains['retry.nl'].actions;
      expect(after.acknowledged).toMatchObject({ kind: 'renewal_failed' });
    } finally {
      await server.close();
      await sim.close();
    }
  });
});
