import { createHash } from 'node:crypto';
import { NestedStack } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { AccountSettings } from './config';
import { deadManAlarm } from './dead-man';
import type { ScanMetrics } from './scanner';
import type { Watchdog } from './watchdog';

/**
 * Nested stacks the accounts' own resources are spread over. CloudFormation allows 500 resources
 * per stack; each account adds two alarms and a subscription per recipient of its own, so 100
 * accounts of three recipients each (500 resources) cannot live in the deployment's stack. Eight
 * groups of some 60 resources each leave every stack far from the limit.
 */
export const ACCOUNT_GROUPS = 8;

/**
 * The group of a key (an account's name, a recipient's endpoint): a hash, never a position, so that
 * adding or removing an account never moves another's alarms or subscriptions to another stack.
 * A resource that moved would be created in its new stack before the old stack deleted it: an
 * alarm's fixed name would be refused, and a subscription (SNS keeps one per endpoint and topic)
 * would be deleted under the new one.
 */
export const accountGroupOf = (key: string): number =>
  createHash('sha256').update(key).digest().readUInt32BE(0) % ACCOUNT_GROUPS;

export interface AccountGroupsProps {
  readonly accounts: readonly AccountSettings[];
  /** The deployment's own recipients: they get every account's alerts already, so no subscription of theirs is filtered. */
  readonly everyone: { readonly emails: readonly string[]; readonly smsNumbers: readonly string[] };
  readonly alertTopic: sns.ITopic;
  readonly watchdog: Watchdog;
  readonly scan: ScanMetrics;
  /** The dead-man window of each account's switch. */
  readonly intervalHours: number;
}

/**
 * Each account's own resources, in nested stacks ({@link ACCOUNT_GROUPS}): its dead-man switch and
 * failure alarm, and a subscription per recipient of its own, whose filter on the `account`
 * attribute lets only its accounts' messages through (an SMS also only critical ones). A recipient
 * of several accounts gets one subscription for all of them (SNS keeps one per endpoint and topic).
 */
export class AccountGroups extends Construct {
  /** The nested stacks made, by group. */
  readonly stacks = new Map<number, NestedStack>();

  constructor(scope: Construct, id: string, props: AccountGroupsProps) {
    super(scope, id);
    for (const { name } of props.accounts) {
      const group = this.group(name);
      props.watchdog.alarm(
        `ScanNotCompleted-${name}`,
        deadManAlarm(props.scan, props.intervalHours, name),
        group,
      );
      props.watchdog.alarm(
        `ScanFailed-${name}`,
        {
          description: `The scan of account ${name} failed: its reseller could not be read (a refused key, the reseller down, a timeout); the state machine's execution and the scan function's log say why. The other accounts were scanned.`,
          metric: props.scan.failed(name),
        },
        group,
      );
    }
    const byEndpoint = (
      pick: (a: AccountSettings) => readonly string[] | undefined,
      all: readonly string[],
    ) => {
      const out = new Map<string, string[]>();
      for (const account of props.accounts)
        for (const endpoint of pick(account) ?? [])
          if (!all.includes(endpoint)) out.set(endpoint, [...(out.get(endpoint) ?? []), account.name]);
      return out;
    };
    const allow = (names: string[]) => sns.SubscriptionFilter.stringFilter({ allowlist: names });
    for (const [email, names] of byEndpoint((a) => a.alertEmails, props.everyone.emails))
      new sns.Subscription(this.group(`email:${email}`), `Email ${email}`, {
        topic: props.alertTopic,
        protocol: sns.SubscriptionProtocol.EMAIL,
        endpoint: email,
        filterPolicy: { account: allow(names) },
      });
    for (const [number, names] of byEndpoint((a) => a.alertSmsNumbers, props.everyone.smsNumbers))
      new sns.Subscription(this.group(`sms:${number}`), `Sms ${number}`, {
        topic: props.alertTopic,
        protocol: sns.SubscriptionProtocol.SMS,
        endpoint: number,
        filterPolicy: { account: allow(names), severity: allow(['critical']) },
      });
  }

  /** The nested stack of a key's group, made when first needed. */
  private group(key: string): NestedStack {
    const index = accountGroupOf(key);
    let stack = this.stacks.get(index);
    if (!stack) {
      stack = new NestedStack(this, `Group${index}`, {
        description: `domain-sentinel: accounts' alarms and recipients, group ${index} of ${ACCOUNT_GROUPS}`,
      });
      this.stacks.set(index, stack);
    }
    return stack;
  }
}
