import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import {
  HELD_SMS_SCHEDULE_PREFIX,
  heldSmsScheduleName,
  releaseRequest,
  schedulerHolder,
} from '../../functions/aws/held-sms';
import { type FilterPolicy, filterPolicyOf } from '../../functions/core/alerts/groups';

/**
 * What a held SMS's schedule publishes when the quiet hours end, against the filter policies the
 * stack gives the alert topic's SMS subscriptions: the escalation recipients' phones filter on
 * `escalation`, so a released escalation must carry it.
 */

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:alerts';
const held = (attributes: Record<string, string>) => ({
  text: '1 critical: lost.de restore by 28 Nov',
  attributes: { severity: 'critical', ...attributes } as never,
  until: '2026-11-23T07:00:00',
  timeZone: 'Europe/Amsterdam',
});

/** Whether a message with these attributes passes an SNS filter policy of plain values, `exists` and `anything-but`. */
function passes(policy: FilterPolicy, attributes: Record<string, string>) {
  return Object.entries(policy).every(([name, conditions]) =>
    conditions.some((c) =>
      typeof c === 'string'
        ? attributes[name] === c
        : 'exists' in c
          ? name in attributes === c.exists
          : name in attributes && attributes[name] !== c['anything-but'],
    ),
  );
}

const attributesOf = (request: ReturnType<typeof releaseRequest>) =>
  Object.fromEntries(Object.entries(request.MessageAttributes).map(([k, v]) => [k, v.StringValue]));

describe('the release of a held SMS', () => {
  it('keeps `escalation`, so an escalation recipient’s phone takes it, and marks it `release`', () => {
    const features = { groups: true, quietHours: true };
    const escalationPhone = { ...filterPolicyOf({ sms: true }, features), escalation: ['true'] };
    const released = attributesOf(releaseRequest(held({ escalation: 'true' }), TOPIC));
    expect(released).toEqual({ severity: 'critical', sms: 'release', escalation: 'true' });
    expect(passes(escalationPhone, released)).toBe(true);
    // Not an e-mail: it already had the message, when it was held.
    expect(passes(filterPolicyOf({ sms: false }, features) ?? {}, released)).toBe(false);
    // A release that is no escalation reaches the deployment's phones, not the escalation recipients'.
    const plain = attributesOf(releaseRequest(held({}), TOPIC));
    expect(plain).toEqual({ severity: 'critical', sms: 'release' });
    expect(passes(escalationPhone, plain)).toBe(false);
    expect(passes(filterPolicyOf({ sms: true }, features) ?? {}, plain)).toBe(true);
  });

  it('holds an escalation’s SMS apart from a plain one of the same window, so neither replaces the other', () => {
    expect(heldSmsScheduleName(held({ escalation: 'true' }))).not.toBe(heldSmsScheduleName(held({})));
  });

  it('is scheduled under the prefix the stack lets the scan make schedules of', () => {
    expect(heldSmsScheduleName(held({ group: 'vip' }))).toMatch(
      new RegExp(`^${HELD_SMS_SCHEDULE_PREFIX}[0-9a-f]{40}$`),
    );
  });
});

describe('the schedule of a held SMS', () => {
  const scheduled = async (until: string, timeZone: string) => {
    const scheduler = mockClient(SchedulerClient);
    scheduler.on(CreateScheduleCommand).resolves({});
    const hold = schedulerHolder(new SchedulerClient({ region: 'eu-west-1' }), {
      scheduleGroup: 'held',
      roleArn: 'arn:aws:iam::123456789012:role/held',
      topicArn: TOPIC,
    });
    const words = await hold({ ...held({}), until, timeZone });
    const input = scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input;
    scheduler.restore();
    return { words, input };
  };

  it('is set in UTC at the instant the local window ends, so no clock change can skip it', async () => {
    const { words, input } = await scheduled('2026-11-23T07:00:00', 'Europe/Amsterdam');
    expect(input).toMatchObject({
      ScheduleExpression: 'at(2026-11-23T06:00:00)',
      ScheduleExpressionTimezone: 'UTC',
    });
    // The words for the log keep the local time the reader knows.
    expect(words).toContain('at 2026-11-23T07:00:00 Europe/Amsterdam');
  });

  it('sends at the clock change when the window ends in the hour the clocks skip', async () => {
    // 28 March 2027, Amsterdam: 02:00 CET becomes 03:00 CEST (01:00 UTC); 02:30 never happens there.
    // Scheduler skips a local time that does not exist, and the SMS would never be sent.
    const { input } = await scheduled('2027-03-28T02:30:00', 'Europe/Amsterdam');
    expect(input).toMatchObject({
      ScheduleExpression: 'at(2027-03-28T01:00:00)',
      ScheduleExpressionTimezone: 'UTC',
    });
  });

  it('takes the first of the two when the window ends in the hour the clocks repeat', async () => {
    // 31 October 2027, Amsterdam: 02:30 happens at 00:30 UTC (CEST) and again at 01:30 UTC (CET).
    const { input } = await scheduled('2027-10-31T02:30:00', 'Europe/Amsterdam');
    expect(input).toMatchObject({
      ScheduleExpression: 'at(2027-10-31T00:30:00)',
      ScheduleExpressionTimezone: 'UTC',
    });
  });
});
