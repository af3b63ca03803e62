import { Arn, ArnFormat, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { HELD_SMS_SCHEDULE_PREFIX } from '../functions/aws/held-sms';
import { ENV } from '../functions/core/scan/config';
import { grantTopicKey } from './topic-key';
import type { AlarmSpec } from './watchdog';

export interface HeldSmsProps {
  /** The alert topic a released SMS is published to. */
  readonly topic: sns.ITopic;
  /** The topic's key: publishing to an encrypted topic uses it as the publisher. */
  readonly key: kms.IKey;
}

/**
 * What quiet hours for SMS (smsQuietHours, docs/policies.md) take on AWS: the scan holds an SMS by
 * making a one-time EventBridge Scheduler schedule at the window's end (functions/aws/
 * held-sms.ts), whose target publishes the SMS alone to the alert topic with the role made here,
 * then deletes itself. The schedules live in a group of their own, so the scan's permission to make
 * them reaches that group and nothing else.
 */
export class HeldSms extends Construct {
  readonly group: scheduler.ScheduleGroup;
  /** The role EventBridge Scheduler publishes a released SMS with: sns:Publish on the alert topic, nothing else. */
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: HeldSmsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    // Destroyed with the stack, with whatever SMS it still holds: nothing else lives in it.
    this.group = new scheduler.ScheduleGroup(this, 'Group', { removalPolicy: RemovalPolicy.DESTROY });
    this.role = new iam.Role(this, 'PublishRole', {
      description: 'EventBridge Scheduler publishes an SMS held by quiet hours to the alert topic',
      // Only Scheduler, for a schedule of this account's held-SMS group (the confused deputy).
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: {
            'aws:SourceAccount': stack.account,
            'aws:SourceArn': this.group.scheduleGroupArn,
          },
        },
      }),
    });
    this.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['sns:Publish'], resources: [props.topic.topicArn] }),
    );
    grantTopicKey(this.role, props.key);
  }

  /** The ARN of every schedule the scan may make: its held SMS in this group, by their name's prefix. */
  get scheduleArns(): string {
    return Arn.format(
      {
        service: 'scheduler',
        resource: 'schedule',
        resourceName: `${this.group.scheduleGroupName}/${HELD_SMS_SCHEDULE_PREFIX}*`,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      },
      Stack.of(this),
    );
  }

  /**
   * Lets `fn` hold an SMS: make (or, for a second scan of the same window, replace) a one-time
   * schedule in the group, and pass the publishing role to Scheduler and nothing else; and tells
   * it the group, the role and the window (SMS_QUIET_HOURS).
   */
  grantHold(fn: lambda.Function, quietHours: string): void {
    fn.addEnvironment(ENV.smsQuietHours, quietHours);
    fn.addEnvironment(ENV.heldSmsScheduleGroup, this.group.scheduleGroupName);
    fn.addEnvironment(ENV.heldSmsRoleArn, this.role.roleArn);
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule'],
        resources: [this.scheduleArns],
      }),
    );
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    // cdk-nag names the resource as the template has it (an environment-agnostic part as <AWS::…>).
    const stack = Stack.of(this);
    const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
    const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
    Validations.of(fn.role as iam.Role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:${region}:${account}:schedule/${this.group.scheduleGroupName}/${HELD_SMS_SCHEDULE_PREFIX}*]`,
      reason:
        'The scan names each held SMS schedule at run time (a hash of the account, group and window end), so no name is known at synth; ' +
        'the wildcard is limited to this stack’s own held-SMS schedule group and the held-sms- prefix, for CreateSchedule and UpdateSchedule only.',
    });
  }

  /** The alarm on held SMS that Scheduler could not publish (a refused publish, retried, then dropped). */
  get undelivered(): AlarmSpec {
    return {
      description:
        "An SMS held by quiet hours could not be published when its window ended: EventBridge Scheduler's publish to the alert topic failed (see the held-SMS group's TargetErrors and the role it publishes with). The e-mail went out at the time.",
      metric: this.group.metricTargetErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
    };
  }
}
