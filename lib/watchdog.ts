import { Annotations, Arn, ArnFormat, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { ConfigError } from '../functions/core/base/errors';

export interface WatchdogProps {
  /** Encrypts the ops topic; the watchdog lets CloudWatch use it for its alarms. */
  readonly key: kms.IKey;
  /** @default - none: synth warns, and alarms wait on the topic for a subscriber (e.g. a pager's HTTPS endpoint) */
  readonly emails?: readonly string[];
  /**
   * The deployment's name: the `deployment` dimension of its metrics, and the prefix of its alarms'
   * names (`<name>/ScanErrors`), which the topic and key policies bind CloudWatch to.
   * @default - the stack's name
   */
  readonly deploymentName?: string;
}

/** One alarm: what it watches and when it fires. */
export interface AlarmSpec {
  /** What the alarm means and where to look, as the ops e-mail shows it. */
  readonly description: string;
  /** From the metric factory of what it watches (ScanMetrics, WebMetrics, …), read as the alarm needs. */
  readonly metric: cloudwatch.IMetric;
  /** @default 1 */
  readonly threshold?: number;
  /** @default GREATER_THAN_OR_EQUAL_TO_THRESHOLD */
  readonly comparison?: cloudwatch.ComparisonOperator;
  /** Periods that must all breach. @default 1 */
  readonly periods?: number;
  /** @default NOT_BREACHING: no data is nothing wrong */
  readonly missing?: cloudwatch.TreatMissingData;
  /**
   * Whether the ops topic is told when the alarm clears. CloudWatch runs an alarm's OK actions on
   * every transition to OK "from any other state" (PutMetricAlarm, OKActions), so also when a new
   * alarm first leaves INSUFFICIENT_DATA: one e-mail per alarm of a new deployment or account.
   * @default true
   */
  readonly notifyOk?: boolean;
}

/** Id of the synth warning when the ops topic has no subscriber (acknowledge it to silence it). */
export const NO_OPS_SUBSCRIBER_WARNING = 'domain-sentinel:no-ops-subscriber';

/**
 * Watches the watcher: the ops topic, and the alarms that publish to it. What each alarm watches
 * comes from the metric factory beside the thing it measures; the watchdog only names the alarms
 * (`<deployment>/<id>`) and sends them here, in any stack of the app (a nested stack of accounts).
 */
export class Watchdog extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly deploymentName: string;
  /** The ops topic's key, whose policy lets in who may publish to the topic. */
  readonly key: kms.IKey;
  private readonly action: actions.SnsAction;

  constructor(scope: Construct, id: string, props: WatchdogProps) {
    super(scope, id);
    this.deploymentName = props.deploymentName ?? Stack.of(this).stackName;
    this.key = props.key;
    this.topic = new sns.Topic(this, 'OpsTopic', {
      displayName: 'domain-sentinel operations',
      enforceSSL: true,
      masterKey: props.key,
    });
    for (const email of props.emails ?? [])
      this.topic.addSubscription(new subscriptions.EmailSubscription(email));
    if ((props.emails ?? []).length === 0) {
      Annotations.of(this).addWarningV2(
        NO_OPS_SUBSCRIBER_WARNING,
        'Neither opsEmails nor alertEmails configured: alarms (scan failed, scan did not run, restore errors) reach only ' +
          'the ops topic (output OpsTopicArn) and nobody is told. Subscribe something to it, or deploy with -c opsEmails=you@example.nl.',
      );
    }
    this.allowAlarmsToPublish();
    this.action = new actions.SnsAction(this.topic);
  }

  /**
   * CloudWatch publishes alarm notifications as the service principal, which the topic's own policy
   * must allow (enforceSSL's policy allows nobody), and it encrypts them with the topic's key. Both
   * let in only this account's alarms named with this deployment's prefix: the names, not a list of
   * ARNs, so the policies stay one size however many accounts add alarms, and alarms in a nested
   * stack need no reference back to this one.
   */
  private allowAlarmsToPublish(): void {
    const cloudwatchService = new iam.ServicePrincipal('cloudwatch.amazonaws.com');
    const conditions = {
      StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
      ArnLike: { 'aws:SourceArn': this.alarmArn('*') },
    };
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowAlarmsOfThisStackToPublish',
        principals: [cloudwatchService],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions,
      }),
    );
    this.addToKeyPolicy(
      new iam.PolicyStatement({
        sid: 'AllowAlarmsOfThisStackToEncrypt',
        principals: [cloudwatchService],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions,
      }),
    );
  }

  /**
   * Adds a statement to the ops topic's key's policy, or refuses the key: an imported key's
   * `addToResourcePolicy` does nothing, and the service the statement lets in (CloudWatch,
   * EventBridge) would then have every message to the topic refused, with nobody told.
   */
  addToKeyPolicy(statement: iam.PolicyStatement): void {
    if (this.key.addToResourcePolicy(statement).statementAdded) return;
    throw new ConfigError(
      `the ops topic's key ${this.key.node.path} is imported: its policy cannot be changed here, and without the statement ${statement.sid} the ops topic's alarms would not reach anyone; give the Watchdog a key of this stack`,
    );
  }

  /** The ARN of this watchdog's alarm `id` (or a pattern, with `*`). */
  alarmArn(id: string): string {
    return Arn.format(
      {
        service: 'cloudwatch',
        resource: 'alarm',
        resourceName: `${this.deploymentName}/${id}`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      },
      Stack.of(this),
    );
  }

  /**
   * An alarm named `<deployment>/<id>` that tells the ops topic when it fires and (unless
   * `spec.notifyOk` is false) when it clears.
   * `scope` puts it in another stack of the app (an account group's nested stack).
   */
  alarm(id: string, spec: AlarmSpec, scope: Construct = this): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(scope, id, {
      alarmName: `${this.deploymentName}/${id}`,
      alarmDescription: spec.description,
      metric: spec.metric,
      threshold: spec.threshold ?? 1,
      comparisonOperator: spec.comparison ?? cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: spec.periods ?? 1,
      ...(spec.periods ? { datapointsToAlarm: spec.periods } : {}),
      treatMissingData: spec.missing ?? cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(this.action);
    if (spec.notifyOk ?? true) alarm.addOkAction(this.action);
    this.alarms.push(alarm);
    return alarm;
  }
}
