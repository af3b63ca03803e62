import { createHash } from 'node:crypto';
import { type Duration, NestedStack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { filterPolicyOf, type RecipientScope, type TopicFeatures } from '../functions/core/alerts/groups';
import { ConfigError } from '../functions/core/base/errors';
import type { Policy } from '../functions/core/scan/policies';
import { subscriptionFilter } from './alerts';
import { announceCleared } from './cleared';
import type { AccountSettings } from './config';
import { armDeadMan, deadManAlarm } from './dead-man';
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
  /** The dead-man window of each account's switch (none: the heartbeat's service watches). */
  readonly intervalHours: number | undefined;
  /**
   * How long one execution of the state machine may run: an account's switch waits this on top of
   * the window, for an account scanned early one day and late the next.
   */
  readonly runTimeout: Duration;
  /** The endpoints the alert topic already subscribes for part of the messages (AlertTopic.partial). @default none */
  readonly partial?: readonly string[];
  /** What else the scan publishes, which every filter must reckon with. @default - neither groups nor quiet hours */
  readonly features?: TopicFeatures;
}

/**
 * The recipients of the groups of accounts' own policies, each endpoint with the accounts and
 * groups it serves: its one subscription filters on both (`account` any of these, `group` any of
 * these), so an endpoint must serve the same groups in each of its accounts. An endpoint in `skip`
 * (one that gets the whole of its accounts' messages already) is left out.
 */
export function accountGroupRecipients(
  accounts: readonly AccountSettings[],
  pick: (policy: Policy) => readonly string[] | undefined,
  skip: readonly string[],
): Map<string, { accounts: string[]; groups: string[] }> {
  const pairs = new Map<string, Map<string, string[]>>();
  for (const account of accounts)
    for (const policy of account.policies?.policies ?? [])
      for (const endpoint of pick(policy) ?? []) {
        if (skip.includes(endpoint)) continue;
        const byAccount = pairs.get(endpoint) ?? new Map<string, string[]>();
        byAccount.set(account.name, [...(byAccount.get(account.name) ?? []), policy.name]);
        pairs.set(endpoint, byAccount);
      }
  const out = new Map<string, { accounts: string[]; groups: string[] }>();
  for (const [endpoint, byAccount] of pairs) {
    const groups = [...new Set([...byAccount.values()].flat())].sort();
    const uneven = [...byAccount].find(([, own]) => own.length !== groups.length);
    if (uneven)
      throw new ConfigError(
        `invalid accounts: ${endpoint} is a recipient of groups ${groups.join(', ')} but in account ${uneven[0]} of ${uneven[1].join(', ')} only; its one subscription (SNS keeps one per address) filters on accounts and groups alike: give it the same groups in each of its accounts`,
      );
    out.set(endpoint, { accounts: [...byAccount.keys()], groups });
  }
  return out;
}

/**
 * The group recipients left to subscribe once the accounts' own recipients have theirs. An account's
 * own recipient gets the whole of that account's messages, so a group of the same account adds
 * nothing and is dropped; a group of another account is refused: the endpoint's one subscription
 * (SNS keeps one per endpoint and topic) filters on `group` absent or on groups, never both.
 */
export function ownOrGroup(
  groups: ReadonlyMap<string, { accounts: string[]; groups: string[] }>,
  own: ReadonlyMap<string, readonly string[]>,
): Map<string, { accounts: string[]; groups: string[] }> {
  const out = new Map<string, { accounts: string[]; groups: string[] }>();
  for (const [endpoint, scope] of groups) {
    const ownAccounts = own.get(endpoint);
    if (!ownAccounts) {
      out.set(endpoint, scope);
      continue;
    }
    const other = scope.accounts.find((a) => !ownAccounts.includes(a));
    if (other)
      throw new ConfigError(
        `invalid accounts: ${endpoint} is an own recipient of account ${ownAccounts.join(', ')} and a recipient of groups ${scope.groups.join(', ')} in account ${other}; its one subscription (SNS keeps one per address) filters on the account's messages or on groups, not both: list it among ${other}'s own recipients too, or among the deployment's, which get everything`,
      );
  }
  return out;
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
    const graceHours = Math.ceil(props.runTimeout.toHours({ integral: false }));
    for (const { name } of props.accounts) {
      const group = this.group(name);
      if (props.intervalHours !== undefined) {
        props.watchdog.alarm(
          `ScanNotCompleted-${name}`,
          {
            ...deadManAlarm(props.scan, props.intervalHours, name, graceHours),
            // No OK e-mail: the deploy's armed data point turns each new switch OK within minutes, one
            // e-mail per account (see Watchdog.alarm); the ALARM e-mail names the account.
            notifyOk: false,
          },
          group,
        );
        armDeadMan(group, props.scan, name);
      }
      props.watchdog.alarm(
        `ScanFailed-${name}`,
        {
          description: `The scan of account ${name} failed: its reseller could not be read (a refused key, the reseller down, a timeout); the state machine's execution and the scan function's log say why. The other accounts were scanned. The alarm clears when a scan of the account completes.`,
          metric: props.scan.failed(name),
          // The state machine counts 0 for a scan that completed: that, and only that, clears the
          // alarm. Treated as fine, the hours without a scan cleared it (and told the ops topic OK)
          // an hour after the failure, with the account still unread.
          missing: cloudwatch.TreatMissingData.IGNORE,
          // No OK action: the account's first scan turns it OK from INSUFFICIENT_DATA, and CloudWatch
          // runs OK actions on that too, so a new deployment of 100 accounts would send 100 (and as
          // many again from the dead-man switches). The rule below tells of ALARM to OK alone.
          notifyOk: false,
        },
        group,
      );
    }
    // The person told 'ScanFailed-brand-a' hears when it clears: one rule for every account's alarms.
    announceCleared(props.watchdog, [
      'ScanFailed-',
      ...(props.intervalHours !== undefined ? ['ScanNotCompleted-'] : []),
    ]);
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
    const features = props.features ?? { groups: false, quietHours: false };
    const subscribe = (protocol: 'email' | 'sms', endpoint: string, scope: RecipientScope) => {
      if (props.partial?.includes(endpoint))
        throw new ConfigError(
          `invalid accounts: ${endpoint} is a recipient of account ${scope.accounts?.join(', ')} and a deployment policy's group or escalation recipient; its one subscription (SNS keeps one per address) cannot filter on both: list it in one place, or among the deployment's alertEmails / alertSmsNumbers, which get everything`,
        );
      return new sns.Subscription(
        this.group(`${protocol}:${endpoint}`),
        `${protocol === 'sms' ? 'Sms' : 'Email'} ${endpoint}`,
        {
          topic: props.alertTopic,
          protocol: protocol === 'sms' ? sns.SubscriptionProtocol.SMS : sns.SubscriptionProtocol.EMAIL,
          endpoint,
          filterPolicy: subscriptionFilter(filterPolicyOf(scope, features), `${protocol} ${endpoint}`),
        },
      );
    };
    const emails = byEndpoint((a) => a.alertEmails, props.everyone.emails);
    const numbers = byEndpoint((a) => a.alertSmsNumbers, props.everyone.smsNumbers);
    for (const [email, names] of emails) subscribe('email', email, { accounts: names, sms: false });
    for (const [number, names] of numbers) subscribe('sms', number, { accounts: names, sms: true });
    const groupEmails = ownOrGroup(
      accountGroupRecipients(props.accounts, (p) => p.alertEmails, props.everyone.emails),
      emails,
    );
    const groupNumbers = ownOrGroup(
      accountGroupRecipients(props.accounts, (p) => p.alertSmsNumbers, props.everyone.smsNumbers),
      numbers,
    );
    for (const [email, scope] of groupEmails) subscribe('email', email, { ...scope, sms: false });
    for (const [number, scope] of groupNumbers) subscribe('sms', number, { ...scope, sms: true });
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
