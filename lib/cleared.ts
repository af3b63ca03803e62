import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Watchdog } from './watchdog';

/**
 * The message the ops topic gets when one of the accounts' alarms clears, as an EventBridge input
 * template: `<alarm>` and `<time>` are the event's `detail.alarmName` and `time`. The alarm's name
 * (`<deployment>/ScanFailed-<account>`) names the account: EventBridge cannot cut it out of the name.
 * Both alarms clear only on a completed scan of their account (ScanFailed's 0, ScanNotCompleted's
 * ScanCompleted), which is what the message says.
 */
export const CLEARED_MESSAGE =
  'Cleared: the alarm <alarm> went from ALARM to OK at <time> (UTC): a scan of the account its name ends with completed. Nothing to do.';

/** The values the input template takes from the event ('CloudWatch Alarm State Change'). */
export const CLEARED_PATHS = { alarm: '$.detail.alarmName', time: '$.time' } as const;

/**
 * Tells the ops topic when one of the alarms `<deployment>/<prefix>…` goes from ALARM to OK, and
 * only then. The alarms themselves have no OK action: CloudWatch runs OK actions on every
 * transition to OK, from INSUFFICIENT_DATA too, so a new deployment of 100 accounts would send 200
 * (see Watchdog.alarm). CloudWatch sends every state change to the default event bus, with the
 * state before it (`detail.previousState.value`), so a rule matches exactly the clearing of an
 * alarm that fired, and says so with a message of its own.
 *
 * The rule publishes as the EventBridge service principal, so the topic's policy must let it publish
 * (this rule only: `aws:SourceArn`) and the topic's key's policy let it encrypt. CDK's SnsTopic
 * target would let EventBridge publish without a condition, so any rule of any account could post
 * to the ops topic: the target is bound here, and the grants made here.
 */
export function announceCleared(watchdog: Watchdog, prefixes: readonly string[]): events.Rule | undefined {
  if (prefixes.length === 0) return undefined;
  const rule = new events.Rule(watchdog, 'AccountAlarmCleared', {
    description: `domain-sentinel ${watchdog.deploymentName}: tells the ops topic when an account's alarm clears (ALARM to OK only)`,
    eventPattern: {
      source: ['aws.cloudwatch'],
      detailType: ['CloudWatch Alarm State Change'],
      // The alarms' ARNs name this account, region and deployment: another account's events on this
      // bus, or another deployment's alarms, never match.
      resources: events.Match.anyOf(...prefixes.map((p) => events.Match.prefix(watchdog.alarmArn(p)))),
      detail: { previousState: { value: ['ALARM'] }, state: { value: ['OK'] } },
    },
  });
  const topic = watchdog.topic;
  rule.addTarget({
    bind: () => ({
      arn: topic.topicArn,
      input: events.RuleTargetInput.fromText(clearedText()),
    }),
  });
  allowRuleToPublish(rule.ruleArn, watchdog);
  watchUndelivered(watchdog, rule);
  return rule;
}

/** {@link CLEARED_MESSAGE} with its placeholders as the event's fields. */
function clearedText(): string {
  const fields: Record<string, string> = {
    alarm: events.EventField.fromPath(CLEARED_PATHS.alarm),
    time: events.EventField.fromPath(CLEARED_PATHS.time),
  };
  return CLEARED_MESSAGE.replace(/<(alarm|time)>/g, (_, name: string) => fields[name] as string);
}

function allowRuleToPublish(ruleArn: string, watchdog: Watchdog): void {
  const topic = watchdog.topic;
  const eventBridge = new iam.ServicePrincipal('events.amazonaws.com');
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'AllowAccountAlarmClearedRuleToPublish',
      principals: [eventBridge],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: { ArnEquals: { 'aws:SourceArn': ruleArn } },
    }),
  );
  // No conditions: SNS's guide says aws:SourceArn and aws:SourceAccount in a key policy are not
  // supported for EventBridge publishing to an encrypted topic (its KMS calls carry neither), so a
  // statement with them refuses every message. Who may publish is the topic's policy above, which
  // lets in this rule alone; the key only encrypts what the topic was let to take.
  watchdog.addToKeyPolicy(
    new iam.PolicyStatement({
      sid: 'AllowEventBridgeToEncryptForTheOpsTopic',
      principals: [eventBridge],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
    }),
  );
}

/**
 * A delivery SNS refused (a policy changed by hand, the key disabled), once EventBridge gave up on
 * it (it retries some errors for up to a day), is dropped and counted in the rule's
 * FailedInvocations: the person the alarm told would never hear that it cleared. This alarm tells the ops topic, through CloudWatch's own
 * statements, which do not depend on the rule's. Its name matches none of the rule's prefixes.
 */
function watchUndelivered(watchdog: Watchdog, rule: events.Rule): void {
  watchdog.alarm('AccountAlarmClearedUndelivered', {
    description: `EventBridge could not deliver to the ops topic that an account's alarm cleared (rule ${rule.node.id}, its FailedInvocations): the topic's or its key's policy refuses events.amazonaws.com, or the key is disabled. The alarms themselves still e-mail when they fire; compare the topic's and key's policies with docs/deploy.md.`,
    metric: new cloudwatch.Metric({
      namespace: 'AWS/Events',
      metricName: 'FailedInvocations',
      dimensionsMap: { RuleName: rule.ruleName },
      statistic: cloudwatch.Stats.SUM,
      period: Duration.minutes(5),
    }),
  });
}
