import { createHash } from 'node:crypto';
import {
  ConflictException,
  CreateScheduleCommand,
  type SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { errorLine, PublishError } from '../core/base/errors';
import { instantOfLocal } from '../core/scan/quiet-hours';
import type { HeldSms, SmsHolder } from '../use-cases/publish-alert';

/**
 * SMS held by quiet hours (SMS_QUIET_HOURS), delivered when the window ends without any memory
 * between scans: the scan that holds one makes a one-time EventBridge Scheduler schedule at the
 * window's end, whose target publishes the SMS to the alert topic with `sms` = `release` (only the
 * SMS subscriptions take it), then deletes itself. A second scan in the same window replaces the
 * schedule of its account and group (same name) with its own, newer SMS.
 */

/** Where the schedules live and what they publish with (the stack sets both). */
export interface HeldSmsTarget {
  readonly scheduleGroup: string;
  /** The role EventBridge Scheduler publishes with: sns:Publish on the alert topic, nothing else. */
  readonly roleArn: string;
  readonly topicArn: string;
}

/** How every held SMS's schedule is named: the stack lets the scan make schedules of this prefix only. */
export const HELD_SMS_SCHEDULE_PREFIX = 'held-sms-';

/** The schedule of one account's (or group's) held SMS for one window end: a stable name, at most 64 characters. */
export function heldSmsScheduleName(held: Pick<HeldSms, 'attributes' | 'until'>): string {
  // An escalation's SMS waits in a schedule of its own: a later plain SMS of the window must not
  // replace it, or the escalation recipients' phones, which filter on it, would never get it.
  const key = `${held.attributes.account ?? ''}\n${held.attributes.group ?? ''}\n${held.attributes.escalation ?? ''}\n${held.until}`;
  return `${HELD_SMS_SCHEDULE_PREFIX}${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
}

/** The SNS Publish request the schedule's target makes: the SMS alone, marked as released. */
export function releaseRequest(held: HeldSms, topicArn: string) {
  const attribute = (value: string) => ({ DataType: 'String', StringValue: value });
  return {
    TopicArn: topicArn,
    Message: held.text,
    MessageAttributes: {
      severity: attribute(held.attributes.severity),
      sms: attribute('release'),
      ...(held.attributes.account ? { account: attribute(held.attributes.account) } : {}),
      ...(held.attributes.group ? { group: attribute(held.attributes.group) } : {}),
      // An escalation's SMS reaches the escalation recipients' phones, which filter on it, when released too.
      ...(held.attributes.escalation ? { escalation: attribute(held.attributes.escalation) } : {}),
    },
  };
}

/** The holder of a deployment: a one-time schedule per held SMS, replaced by a later one of the same window. */
export function schedulerHolder(scheduler: SchedulerClient, target: HeldSmsTarget): SmsHolder {
  return async (held) => {
    const Name = heldSmsScheduleName(held);
    const schedule = {
      Name,
      GroupName: target.scheduleGroup,
      // In UTC, at the instant the local end happens: Scheduler skips a local time the clocks skip.
      ScheduleExpression: `at(${new Date(instantOfLocal(held.until, held.timeZone)).toISOString().slice(0, 19)})`,
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' as const },
      ActionAfterCompletion: 'DELETE' as const,
      Description: 'domain-sentinel: an SMS held by quiet hours',
      Target: {
        Arn: 'arn:aws:scheduler:::aws-sdk:sns:publish',
        RoleArn: target.roleArn,
        Input: JSON.stringify(releaseRequest(held, target.topicArn)),
      },
    };
    try {
      try {
        await scheduler.send(new CreateScheduleCommand(schedule));
      } catch (error) {
        if (!(error instanceof ConflictException)) throw error;
        // An earlier scan of this window held its SMS already: this scan's is the newer word.
        await scheduler.send(new UpdateScheduleCommand(schedule));
      }
    } catch (error) {
      throw new PublishError(
        `could not schedule the SMS held by quiet hours (schedule ${Name} in ${target.scheduleGroup}): ${errorLine(error)}`,
        { cause: error },
      );
    }
    return `schedule ${Name}, at ${held.until} ${held.timeZone}`;
  };
}
