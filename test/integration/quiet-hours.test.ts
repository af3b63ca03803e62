import {
  ConflictException,
  CreateScheduleCommand,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { PublishCommand, type PublishCommandInput } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { filterPolicyOf } from '../../functions/core/alerts/groups';
import { handleScheduledScan, type ScheduledScanDeps } from '../../functions/handlers/scheduled-scan';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { type SnsEnvelope, startSnsEmulator } from '../support/sns-emulator';

/**
 * Quiet hours for SMS through the scan Lambda's handler, fauxqs and the filter policies the stack
 * gives its subscriptions: in the window an SMS waits (the message goes out with `sms` = `held`, a
 * one-time schedule will publish the SMS when the window ends), except when a deadline is within
 * 48 hours. EventBridge Scheduler has no emulator: its client is mocked, and what the schedule
 * would publish is published here, to show where it goes.
 */

const KEY = 'sk_quiet_hours_3a9c';
const DAY = 86_400_000;
const ROLE = 'arn:aws:iam::123456789012:role/held-sms';
// The handler's clock also sets the scan's deadline, so it runs on real time; the window is placed
// around it (in UTC) instead of the clock being moved.
const NOW = Date.now();
const minute = Math.floor((NOW % DAY) / 60_000);
const hhmm = (m: number) => {
  const wrapped = ((m % 1440) + 1440) % 1440;
  return `${String(Math.floor(wrapped / 60)).padStart(2, '0')}:${String(wrapped % 60).padStart(2, '0')}`;
};
/** A window from an hour before now to two hours after: now is in it. */
const AROUND_NOW = `${hhmm(minute - 60)}-${hhmm(minute + 120)}`;
/** When that window ends, as EventBridge Scheduler's at() takes it in UTC. */
const WINDOW_END = new Date(Math.floor(NOW / 60_000) * 60_000 + 120 * 60_000)
  .toISOString()
  .replace(/\.\d{3}Z$/, '')
  .replace(/:\d{2}$/, ':00');

const scheduler = mockClient(SchedulerClient);
let sim: Simulator;
let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;

beforeAll(async () => {
  [sim, emulator] = await Promise.all([
    startSimulator({ portfolio: generatePortfolio({ domains: 0, seed: 1, now: NOW }), apiKey: KEY }),
    startSnsEmulator(),
  ]);
});
afterAll(() => Promise.all([sim.close(), emulator.close()]));
beforeEach(() => {
  scheduler.reset();
  scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn:aws:scheduler:::schedule/x' });
});
afterEach(() => {
  for (const name of ['soon.example.com', 'tomorrow.example.com']) sim.updateDomain(name, null);
});

/** A domain without auto-renew expiring in `days` days: critical within 7. */
const expiring = (name: string, days: number) => ({
  domain_name: name,
  status: ['registered'],
  date_expiry: new Date(NOW + days * DAY).toISOString(),
  auto_renew: false,
  registrant_handle: 'C00001',
});

/** A topic with an SMS-like and an e-mail-like subscriber, each with the stack's filter policy. */
async function topicWithRecipients(name: string) {
  const topicArn = await emulator.topic(name);
  const features = { groups: false, quietHours: true };
  return {
    topicArn,
    sms: await emulator.queueSubscribedTo(topicArn, `${name}-sms`, filterPolicyOf({ sms: true }, features)),
    email: await emulator.queueSubscribedTo(
      topicArn,
      `${name}-email`,
      filterPolicyOf({ sms: false }, features),
    ),
  };
}

const deps = (topicArn: string, quietHours: string): ScheduledScanDeps => ({
  env: {
    RESELLER_BASE_URL: sim.url,
    ALERT_TOPIC_ARN: topicArn,
    ALERT_TIME_ZONE: 'UTC',
    SMS_QUIET_HOURS: quietHours,
    HELD_SMS_SCHEDULE_GROUP: 'sentinel-held-sms',
    HELD_SMS_ROLE_ARN: ROLE,
  },
  secrets: new EnvSecretSource({ RESELLER_API_KEY: KEY }),
  sns: emulator.snsClient(),
  // No state table: never called.
  dynamodb: {} as ScheduledScanDeps['dynamodb'],
  scheduler: new SchedulerClient({ region: 'eu-west-1' }),
  logger: { info: () => undefined, error: () => undefined },
  metrics: {
    addMetric: () => undefined,
    publishStoredMetrics: () => undefined,
  } as unknown as ScheduledScanDeps['metrics'],
});

const attribute = (e: SnsEnvelope | undefined, name: string) => e?.MessageAttributes[name]?.Value;

describe('quiet hours for SMS (scan Lambda, fauxqs, the stack’s filter policies)', () => {
  it('holds the SMS of a critical finding in quiet hours and sends it alone when the window ends', async () => {
    sim.updateDomain('soon.example.com', expiring('soon.example.com', 5));
    const { topicArn, sms, email } = await topicWithRecipients('quiet-held');
    await handleScheduledScan(deps(topicArn, AROUND_NOW), 60_000);

    expect(await emulator.drain(sms)).toHaveLength(0);
    const [mail, ...more] = await emulator.drain(email);
    expect(more).toHaveLength(0);
    expect(attribute(mail, 'severity')).toBe('critical');
    expect(attribute(mail, 'sms')).toBe('held');

    const [create, ...moreCreates] = scheduler.commandCalls(CreateScheduleCommand);
    expect(moreCreates).toHaveLength(0);
    const schedule = create?.args[0].input;
    expect(schedule).toMatchObject({
      GroupName: 'sentinel-held-sms',
      ScheduleExpression: `at(${WINDOW_END})`,
      ScheduleExpressionTimezone: 'UTC',
      ActionAfterCompletion: 'DELETE',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: 'arn:aws:scheduler:::aws-sdk:sns:publish', RoleArn: ROLE },
    });
    const release = JSON.parse(schedule?.Target?.Input ?? '{}') as PublishCommandInput;
    expect(release.TopicArn).toBe(topicArn);
    expect(release.Message).toMatch(/^1 critical: soon\.example\.com 4d no renew/);

    // When the window ends the schedule publishes this: phones get it, e-mail does not again.
    await emulator.snsClient().send(new PublishCommand(release));
    const [released] = await emulator.drain(sms);
    expect(released?.Message).toBe(release.Message);
    expect(attribute(released, 'sms')).toBe('release');
    expect(await emulator.drain(email)).toHaveLength(0);
  });

  it('sends the SMS at once in quiet hours when an expiry is within 48 hours', async () => {
    sim.updateDomain('soon.example.com', expiring('soon.example.com', 5));
    sim.updateDomain('tomorrow.example.com', expiring('tomorrow.example.com', 1.5));
    const { topicArn, sms, email } = await topicWithRecipients('quiet-urgent');
    await handleScheduledScan(deps(topicArn, AROUND_NOW), 60_000);

    const [text] = await emulator.drain(sms);
    expect(attribute(text, 'sms')).toBe('send');
    expect(JSON.parse(text?.Message ?? '{}').sms).toContain('tomorrow.example.com 1d no renew');
    expect(await emulator.drain(email)).toHaveLength(1);
    expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(0);
  });

  it('judges the window when the alert is handed over: one that ended while the scan ran holds nothing', async () => {
    sim.updateDomain('soon.example.com', expiring('soon.example.com', 5));
    const { topicArn, sms } = await topicWithRecipients('quiet-ended-meanwhile');
    // The scan starts inside the window; by the time it publishes, the window (ending in 2 h) is over.
    let calls = 0;
    const clock = () => (calls++ === 0 ? NOW : NOW + 3 * 3_600_000);
    await handleScheduledScan({ ...deps(topicArn, AROUND_NOW), clock }, 60_000);
    expect(calls).toBeGreaterThan(1);
    const [text] = await emulator.drain(sms);
    expect(attribute(text, 'sms')).toBe('send');
    expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(0);
  });

  it('sends the SMS at once outside the window', async () => {
    sim.updateDomain('soon.example.com', expiring('soon.example.com', 5));
    const { topicArn, sms } = await topicWithRecipients('quiet-outside');
    await handleScheduledScan(deps(topicArn, `${hhmm(minute + 120)}-${hhmm(minute + 180)}`), 60_000);
    const [text] = await emulator.drain(sms);
    expect(attribute(text, 'sms')).toBe('send');
    expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(0);
  });

  it('replaces the schedule of the same window when a second scan holds its SMS too', async () => {
    sim.updateDomain('soon.example.com', expiring('soon.example.com', 5));
    const { topicArn } = await topicWithRecipients('quiet-twice');
    scheduler
      .on(CreateScheduleCommand)
      .rejects(new ConflictException({ message: 'exists', Message: 'exists', $metadata: {} }));
    scheduler.on(UpdateScheduleCommand).resolves({ ScheduleArn: 'arn:aws:scheduler:::schedule/x' });
    await handleScheduledScan(deps(topicArn, AROUND_NOW), 60_000);
    const [update] = scheduler.commandCalls(UpdateScheduleCommand);
    expect(update?.args[0].input.Name).toBe(
      scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input.Name,
    );
    expect(update?.args[0].input.ScheduleExpression).toBe(`at(${WINDOW_END})`);
  });

  it('refuses quiet hours in the Lambda without the scheduler, before the scan: no e-mail whose SMS nobody will send', async () => {
    sim.updateDomain('soon.example.com', expiring('soon.example.com', 5));
    const { topicArn, sms, email } = await topicWithRecipients('quiet-no-scheduler');
    const { HELD_SMS_SCHEDULE_GROUP: _group, ...env } = deps(topicArn, AROUND_NOW).env;
    const requests = sim.requests.length;
    await expect(handleScheduledScan({ ...deps(topicArn, AROUND_NOW), env }, 60_000)).rejects.toThrow(
      'SMS_QUIET_HOURS holds an SMS until the window ends, which takes EventBridge Scheduler',
    );
    expect(sim.requests.length).toBe(requests);
    expect(await emulator.drain(email)).toHaveLength(0);
    expect(await emulator.drain(sms)).toHaveLength(0);
  });

  it('refuses quiet hours when the scan is given no scheduler client, before the scan: it builds no untimed one of its own', async () => {
    // Prepare: the stack's schedule group and role are set, but the deps carry no scheduler (the
    // Lambda entry always passes its timed one).
    sim.updateDomain('soon.example.com', expiring('soon.example.com', 5));
    const { topicArn } = await topicWithRecipients('quiet-no-client');
    const { scheduler: _scheduler, ...without } = deps(topicArn, AROUND_NOW);
    const requests = sim.requests.length;
    // Act and assess: refused as without the schedule group; no schedule made, nothing read.
    await expect(handleScheduledScan(without, 60_000)).rejects.toThrow(
      'SMS_QUIET_HOURS holds an SMS until the window ends, which takes EventBridge Scheduler',
    );
    expect(sim.requests.length).toBe(requests);
    expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(0);
  });

  it('judges the window at hand-over on the command line too, on the clock of --now moved on by the scan', async () => {
    // --now is a second before a window ends; the reseller takes 1.5 s to answer, so the alert is
    // handed over after the window: nothing is held (judged at --now, the SMS would wait for a
    // schedule at a time already past).
    const slow = await startSimulator({
      portfolio: { ...generatePortfolio({ domains: 0, seed: 1, now: NOW }) },
      apiKey: KEY,
      latencyMs: 1_500,
    });
    slow.updateDomain('soon.example.com', expiring('soon.example.com', 5));
    try {
      const { topicArn, sms } = await topicWithRecipients('quiet-ended-cli');
      const ends = new Date(Math.floor(NOW / 60_000) * 60_000 + 60_000);
      const now = new Date(ends.getTime() - 1_000).toISOString();
      const run = await runCli(
        ['scan', '--now', now, '--sms-quiet-hours', `${hhmm(minute - 60)}-${hhmm(minute + 1)}`],
        {
          RESELLER_BASE_URL: slow.url,
          RESELLER_API_KEY: KEY,
          ALERT_TOPIC_ARN: topicArn,
          ALERT_TIME_ZONE: 'UTC',
          HELD_SMS_SCHEDULE_GROUP: 'sentinel-held-sms',
          HELD_SMS_ROLE_ARN: ROLE,
        },
        { sns: () => emulator.snsClient() },
      );
      expect(run.code, run.stderr).toBe(0);
      const [text] = await emulator.drain(sms);
      expect(attribute(text, 'sms')).toBe('send');
      expect(scheduler.commandCalls(CreateScheduleCommand)).toHaveLength(0);
    } finally {
      await slow.close();
    }
  });

  it('refuses quiet hours on the command line when a held SMS could not be sent later, before a request is sent', async () => {
    const requests = sim.requests.length;
    const run = await runCli(['scan', '--sms-quiet-hours', '22:00-07:00'], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
      ALERT_TOPIC_ARN: 'arn:aws:sns:us-east-1:123456789012:alerts',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'SMS_QUIET_HOURS holds an SMS until the window ends, which takes EventBridge Scheduler',
    );
    expect(sim.requests.length).toBe(requests);
  });
});
