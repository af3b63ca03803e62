import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gsm7Length, SNS_MAX_BYTES, smsAsDelivered } from '../../functions/core/alerts/alert';
import { generatePortfolio, type Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { quarantinedRecord, startFixedReseller } from '../support/fixed-reseller';
import { sqsVariant, startSnsEmulator } from '../support/sns-emulator';

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'alerts-test-key-4c1d';
const full = generatePortfolio({ domains: 120, seed: 5, now: Date.parse(NOW) });

/** The same portfolio, keeping only domains (and contacts) whose intended finding passes `keep`. */
function only(keep: (severity: string | undefined) => boolean, keepContacts: boolean): Portfolio {
  const severityOf = new Map(full.truth.findings.map((f) => [f.key, f.severity]));
  const domains = full.domains.filter(
    (d) =>
      !full.truth.problems.includes(String(d.domain_name)) && keep(severityOf.get(String(d.domain_name))),
  );
  const contacts = full.contacts.map((c) => (keepContacts ? c : { ...c, status: ['ok'] }));
  return { domains, contacts, truth: { findings: [], problems: [] } };
}

let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let sim: Simulator | undefined;
beforeAll(async () => {
  emulator = await startSnsEmulator();
});
afterAll(() => emulator.close());
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function topicWithSubscribers(name: string) {
  const topicArn = await emulator.topic(name);
  const criticalOnly = await emulator.queueSubscribedTo(topicArn, `${name}-sms-like`, {
    severity: ['critical'],
  });
  const everything = await emulator.queueSubscribedTo(topicArn, `${name}-all`);
  return { topicArn, criticalOnly, everything };
}

async function scanAndPublish(portfolio: Portfolio, topicArn: string) {
  sim = await startSimulator({ portfolio, apiKey: KEY });
  return runCli(
    ['scan', '--now', NOW],
    { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, ALERT_TOPIC_ARN: topicArn },
    { sns: emulator.snsClient },
  );
}

describe('alerts through SNS (fauxqs emulator, real SDK clients)', () => {
  it('delivers a scan with critical findings to the critical-only and the unfiltered subscriber', async () => {
    const { topicArn, criticalOnly, everything } = await topicWithSubscribers('critical-scan');
    const run = await scanAndPublish(full, topicArn);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^published alert \S+ to arn:aws:sns:us-east-1:\d{12}:critical-scan\n$/);

    const [critical] = await emulator.drain(criticalOnly);
    const all = await emulator.drain(everything);
    expect(all).toHaveLength(1);
    expect(critical).toBeDefined();
    const expectedCritical = full.truth.findings.filter((f) => f.severity === 'critical').length;
    expect(critical?.Subject).toMatch(
      new RegExp(`^domain-sentinel: ${expectedCritical} critical, \\d+ warning`),
    );
    expect(critical?.MessageAttributes.severity).toEqual({ Type: 'String', Value: 'critical' });
    expect(critical?.MessageAttributes.critical_count).toEqual({
      Type: 'Number',
      Value: String(expectedCritical),
    });
    const report = JSON.parse(sqsVariant(critical as never));
    expect(report.summary.critical).toBe(expectedCritical);
    const structure = JSON.parse(critical?.Message ?? '{}');
    expect(structure.email).toContain('CRITICAL (');
    // What a phone receives: SNS's display-name prefix and the body, in one 160-character part.
    expect(gsm7Length(smsAsDelivered(structure.sms))).toBeLessThanOrEqual(160);
  });

  it('publishes an alert under 256 KB for 1 000 unreadable records, cut with "and N more unreadable records"', async () => {
    const { topicArn, everything } = await topicWithSubscribers('many-problems');
    const broken = Array.from({ length: 1_000 }, (_, i) => ({
      domain_name: `unreadable-${i}-${'x'.repeat(40)}.nl`,
      status: ['registered'],
      date_expiry: `2027-12-17 sometime ${'later '.repeat(40)}`,
    }));
    const reseller = await startFixedReseller({
      apiKey: KEY,
      domains: [quarantinedRecord('lost.nl'), ...broken],
    });
    try {
      const run = await runCli(
        ['scan', '--now', NOW],
        { RESELLER_BASE_URL: reseller.url, RESELLER_API_KEY: KEY, ALERT_TOPIC_ARN: topicArn },
        { sns: emulator.snsClient },
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const [delivered] = await emulator.drain(everything);
      expect(Buffer.byteLength(delivered?.Message ?? '')).toBeLessThanOrEqual(SNS_MAX_BYTES);
      expect(Object.keys(JSON.parse(delivered?.Message ?? '{}')).sort()).toEqual(['default', 'email', 'sms']);
      const structure = JSON.parse(delivered?.Message ?? '{}');
      expect(structure.email).toContain('- lost.nl: in quarantine');
      expect(structure.email).toContain('PROBLEMS: 1000 records could not be read and were not checked:');
      expect(structure.email).toMatch(/- and 980 more unreadable records/);
      const report = JSON.parse(structure.default);
      expect(report.truncated).toBe(true);
      expect(report.problems.length + report.omitted.problems).toBe(1_000);
    } finally {
      await reseller.close();
    }
  });

  it('delivers a warning-only scan to the unfiltered subscriber only', async () => {
    const { topicArn, criticalOnly, everything } = await topicWithSubscribers('warning-scan');
    const run = await scanAndPublish(
      only((s) => s !== 'critical', true),
      topicArn,
    );
    expect(run.code).toBe(0);
    expect(await emulator.drain(criticalOnly)).toHaveLength(0);
    const all = await emulator.drain(everything);
    expect(all).toHaveLength(1);
    expect(all[0]?.MessageAttributes.severity?.Value).toBe('warning');
  });

  it('sends nothing for a clean account', async () => {
    const { topicArn, criticalOnly, everything } = await topicWithSubscribers('clean-scan');
    const run = await scanAndPublish(
      only((s) => s === undefined || s === 'info', false),
      topicArn,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('no alert published: nothing at warning or above\n');
    expect(await emulator.drain(criticalOnly)).toHaveLength(0);
    expect(await emulator.drain(everything)).toHaveLength(0);
  });

  it('publishes exactly one message from a real process configured by AWS_ENDPOINT_URL_SNS', async () => {
    const { topicArn, everything } = await topicWithSubscribers('cli-process');
    sim = await startSimulator({ portfolio: full, apiKey: KEY });
    const { stdout } = await promisify(execFile)(
      'npm',
      ['run', '-s', 'sentinel', '--', 'scan', '--now', NOW],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          ...emulator.sdkEnv,
          RESELLER_BASE_URL: sim.url,
          RESELLER_API_KEY: KEY,
          ALERT_TOPIC_ARN: topicArn,
        },
      },
    );
    expect(stdout).toMatch(/^published alert /);
    expect(await emulator.drain(everything)).toHaveLength(1);
  });
});
