import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Portfolio, RawRecord } from '../../functions/simulator/portfolio';
import { startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { type SnsEnvelope, sqsVariant, startSnsEmulator } from '../support/sns-emulator';

/**
 * Escalation (docs/policies.md) through the simulator and fauxqs, with memory in a state file: a
 * critical finding nobody acted on within afterHours of its first alert, its deadline within
 * withinDays, is published again with the `escalation` message attribute, once per rung.
 */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const KEY = 'escalation-test-key-41c9';
const iso = (ms: number) => new Date(ms).toISOString();

function record(name: string, overrides: RawRecord = {}): RawRecord {
  return {
    domain_name: name,
    status: ['registered'],
    date_expiry: iso(T0 + 300 * DAY),
    auto_renew: true,
    registrant_handle: 'C00001',
    ...overrides,
  };
}

/**
 * lost.de was deleted 24 days ago: its restore-by is 5 days on, within withinDays 7.
 * late.com was deleted 2 days ago: its restore-by is weeks away, so it is not escalated.
 */
function portfolio(): Portfolio {
  const quarantined = (deletedDaysAgo: number) => ({
    status: ['quarantine'],
    auto_renew: false,
    date_expiry: iso(T0 - 40 * DAY),
    date_deleted: iso(T0 - deletedDaysAgo * DAY),
  });
  return {
    domains: [record('lost.de', quarantined(24)), record('late.com', quarantined(2)), record('healthy.eu')],
    contacts: [
      { handle: 'C00001', name: 'Anna Bakker', company_name: '', email: 'anna@example.nl', status: ['ok'] },
    ],
    truth: { findings: [], problems: [] },
  };
}

let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let dir: string;
beforeAll(async () => {
  [emulator, dir] = await Promise.all([startSnsEmulator(), mkdtemp(join(tmpdir(), 'sentinel-escalation-'))]);
});
afterAll(async () => {
  await Promise.all([emulator.close(), rm(dir, { recursive: true, force: true })]);
});

type Finding = { domain_name?: string; kind?: string; escalated_after_hours?: number };

describe('escalation of what nobody acted on (scan --state, simulator, fauxqs)', () => {
  it('publishes an unacknowledged quarantine alerted 25 hours earlier, within 7 days of its restore-by, with escalation = true, and not again at the next scan', async () => {
    const sim = await startSimulator({ portfolio: portfolio(), apiKey: KEY });
    const topicArn = await emulator.topic('escalation');
    const everything = await emulator.queueSubscribedTo(topicArn, 'escalation-all');
    // The escalation recipients' subscription: escalations alone.
    const escalations = await emulator.queueSubscribedTo(topicArn, 'escalation-only', {
      escalation: ['true'],
    });
    await writeFile(
      join(dir, 'policies.json'),
      // No repeat of its own in these hours: what goes out at 25 hours is the escalation.
      JSON.stringify({
        policies: [],
        escalation: { afterHours: 24, withinDays: 7 },
        repeat: { critical: 'weekly' },
      }),
    );
    const state = join(dir, 'state.json');
    const scan = (now: number) =>
      runCli(
        ['scan', '--now', iso(now), '--state', state, '--policies', 'policies.json', '--allow-clock-skew'],
        {
          RESELLER_BASE_URL: sim.url,
          RESELLER_API_KEY: KEY,
          ALERT_TOPIC_ARN: topicArn,
        },
        { cwd: dir, sns: emulator.snsClient },
      );
    const email = (e: SnsEnvelope) => (JSON.parse(e.Message) as { email: string }).email;
    try {
      const first = await scan(T0);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^published alert \S+ to \S+ \(2 new\)/);
      const [announced] = await emulator.drain(everything);
      expect(announced?.MessageAttributes.escalation).toBeUndefined();
      expect(await emulator.drain(escalations)).toEqual([]);

      // 25 hours on, nobody acknowledged or snoozed it: published again, as an escalation.
      const later = await scan(T0 + 25 * HOUR);
      expect(later.code).toBe(0);
      expect(later.stdout).toContain('1 critical not acted on, escalated');
      const [escalation, ...more] = await emulator.drain(escalations);
      expect(more).toEqual([]);
      expect(escalation?.MessageAttributes.escalation).toEqual({ Type: 'String', Value: 'true' });
      expect(email(escalation as SnsEnvelope)).toMatch(
        / lost\.de: .*\n {2}escalated: not acted on for 25 hours\n/,
      );
      expect(email(escalation as SnsEnvelope)).not.toMatch(/late\.com[^\n]*\n {2}escalated/);
      const findings = (JSON.parse(sqsVariant(escalation as SnsEnvelope)) as { findings: Finding[] })
        .findings;
      expect(findings.find((f) => f.domain_name === 'lost.de')?.escalated_after_hours).toBe(25);
      expect(findings.find((f) => f.domain_name === 'late.com')?.escalated_after_hours).toBeUndefined();
      expect(await emulator.drain(everything)).toHaveLength(1);

      // The next scan: escalated once at this rung, so not again.
      const next = await scan(T0 + 26 * HOUR);
      expect(next.code).toBe(0);
      expect(next.stdout).toMatch(/^no alert published/);
      expect(await emulator.drain(escalations)).toEqual([]);
      expect(await emulator.drain(everything)).toEqual([]);
    } finally {
      await sim.close();
    }
  });

  it('refuses an unknown key of escalation with the closest known one', async () => {
    await writeFile(
      join(dir, 'typo.json'),
      JSON.stringify({ policies: [], escalation: { afterHour: 24, withinDays: 7 } }),
    );
    const run = await runCli(
      ['scan', '--dry-run', '--policies', 'typo.json'],
      {
        RESELLER_BASE_URL: 'http://127.0.0.1:9',
        RESELLER_API_KEY: KEY,
      },
      { cwd: dir },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'policies file typo.json: escalation: unknown key afterHour; did you mean afterHours?',
    );
  });
});
