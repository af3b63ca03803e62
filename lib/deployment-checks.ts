import { Stack, Token } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { ConfigError } from '../functions/core/base/errors';
import { ACCOUNT_SCAN_SETTINGS, type AccountScanInput } from '../functions/core/scan/accounts';
import type { AccountSettings, ResolvedSettings } from './config';
import { AWS_LIMITS } from './limits';
import { keyPolicyCount, MAX_KEY_POLICIES } from './secret-parameter';

/*
 * What a DomainSentinel checks before anything reaches AWS: settings that cannot work together,
 * alerts that would reach nobody, two copies that would collide.
 */

/** The synth error when the alert topic would have no subscriber. */
export const NO_ALERT_SUBSCRIBER =
  'No one would receive alerts: the alert topic has no subscriber. Add alertEmails (-c alertEmails=you@example.nl, ' +
  'or "alertEmails": ["you@example.nl"] in the settings file) or alertSmsNumbers, or subscribe in code ' +
  '(sentinel.alerts.topic.addSubscription(...)); if you subscribe the topic yourself after the deploy ' +
  '(output AlertTopicArn), set alertSubscribersOutsideStack to true.';

/** The synth error when an account's alerts would reach nobody (the accounts follow it). */
export const NO_ACCOUNT_SUBSCRIBER =
  'No one would receive the alerts of these accounts: give each an alertEmails or alertSmsNumbers of its own in the ' +
  'accounts file, or add a recipient of every account (alertEmails beside "accounts" in the settings)';

/** The key parameters a copy reads: its accounts' own, or the deployment's one. */
export const keyParametersOf = (settings: ResolvedSettings): string[] =>
  settings.accounts
    ? settings.accounts.flatMap((a) => (a.apiKeyParameter ? [a.apiKeyParameter] : []))
    : [settings.apiKeyParameterName];

/**
 * The Map starts up to `accountConcurrency` scans at once and Lambda throttles those beyond the
 * reserved concurrency; the task does not retry a throttle, so such an account would fail its scan
 * and raise its alarm with nothing wrong.
 */
function checkAccountConcurrency(settings: ResolvedSettings): void {
  const reserved = settings.scanReservedConcurrency;
  if (reserved !== undefined && reserved < settings.accountConcurrency)
    throw new ConfigError(
      `invalid DomainSentinel props: scanReservedConcurrency (${reserved}) is below accountConcurrency (${settings.accountConcurrency}): ` +
        `the state machine would start ${settings.accountConcurrency} scans at once and Lambda would throttle all but ${reserved}; ` +
        'lower accountConcurrency, or raise scanReservedConcurrency (or leave it unset)',
    );
}

/**
 * Each function lists every account's key parameter twice in its policies (see
 * SecretParameter.grantReadAll); names too long together would need more managed policies than IAM
 * attaches to a role, which only the deploy would find.
 */
function checkKeyParameterNames(items: readonly AccountScanInput[]): void {
  const names = items.map((i) => i.apiKeyParameter);
  const policies = keyPolicyCount(names);
  if (policies > MAX_KEY_POLICIES)
    throw new ConfigError(
      `invalid DomainSentinel props: the accounts' apiKeyParameter names are too long together (${names.reduce((n, name) => n + name.length, 0)} characters): ` +
        `reading them takes ${policies} IAM managed policies of 6 144 characters, and a role holds ${MAX_KEY_POLICIES} of them here; ` +
        'shorten the names (e.g. /domain-sentinel/<name>/api-key), or split the accounts over two deployments',
    );
}

/**
 * The state machine's item of each account, once the accounts are checked to work together (their
 * concurrency, their key parameters' names); none without accounts.
 */
export function accountItems(settings: ResolvedSettings): AccountScanInput[] | undefined {
  if (!settings.accounts) return undefined;
  const items = itemsOf(settings.accounts);
  checkAccountConcurrency(settings);
  checkKeyParameterNames(items);
  return items;
}

/**
 * Each account's name, its key's parameter and its own settings (the deployment's are the scan
 * function's environment). The stack reads each key from its own parameter, so every account must
 * name one.
 */
function itemsOf(accounts: readonly AccountSettings[]): AccountScanInput[] {
  const missing = accounts.filter((a) => !a.apiKeyParameter).map((a) => a.name);
  if (missing.length > 0)
    throw new ConfigError(
      `invalid DomainSentinel props: accounts ${missing.join(', ')} have no apiKeyParameter: the stack reads each account's key from its own SSM SecureString, e.g. "apiKeyParameter": "/domain-sentinel/${missing[0]}/api-key"`,
    );
  return accounts.map((a) => {
    const settings: Record<string, string | number> = {};
    for (const name of ACCOUNT_SCAN_SETTINGS) {
      const value = a[name];
      // Policies are an object in the file and JSON text in the item, as in POLICIES.
      if (value !== undefined) settings[name] = typeof value === 'object' ? JSON.stringify(value) : value;
    }
    return { account: a.name, apiKeyParameter: a.apiKeyParameter as string, settings };
  });
}

/**
 * The stack's name, then the construct's path in it: `DomainSentinel` for the clone-and-deploy stack
 * (whose construct's id is `Default`), `Sentinels/AcmeAccount` for a copy with id `AcmeAccount`.
 */
export function deploymentNameOf(construct: Construct): string {
  const stack = Stack.of(construct);
  const inStack = construct.node.scopes
    .slice(stack.node.scopes.length)
    .map((c) => c.node.id)
    .filter((id) => id !== 'Default');
  const name = [stack.stackName, ...inStack].join('/');
  // Every metric of the copy carries the name as a dimension: CDK refuses the first one past the
  // limit with its own DimensionValueLengthInvalid, which says neither what the name is made of nor what to shorten.
  if (name.length > AWS_LIMITS.dimensionValueChars)
    throw new ConfigError(
      `invalid DomainSentinel props: the deployment name is ${name.length} characters (the stack name, ${stack.stackName.length}, and the construct path in it); ` +
        `CloudWatch allows ${AWS_LIMITS.dimensionValueChars} in the metric dimension that carries it: give the stack a shorter name or the DomainSentinel and the constructs around it shorter ids (${name.slice(0, 60)}...)`,
    );
  return name;
}

/** `account/region` as the template has them; an environment-agnostic part is one unknown. */
export const environmentOf = (stack: Stack) =>
  `${Token.isUnresolved(stack.account) ? '*' : stack.account}/${Token.isUnresolved(stack.region) ? '*' : stack.region}`;

/** What {@link collisionProblem} compares of two copies of one app. */
export interface CopyOfApp {
  readonly path: string;
  readonly environment: string;
  readonly settings: ResolvedSettings;
}

/**
 * Refuses a copy that would collide with an earlier one of the same app, account and region: two
 * copies reading one API key would scan one reseller account twice; two owning the account's
 * settings would overwrite each other's, and the first destroyed would clear them under the other.
 */
export function checkCollision(copy: CopyOfApp, earlier: readonly CopyOfApp[]): void {
  const same = earlier.filter((c) => c.environment === copy.environment);
  const mine = keyParametersOf(copy.settings);
  const twin = same.find((c) => keyParametersOf(c.settings).some((p) => mine.includes(p)));
  if (twin) {
    const shared = keyParametersOf(twin.settings).find((p) => mine.includes(p));
    throw new ConfigError(
      `invalid DomainSentinel props: apiKeyParameterName ${shared} is already read by ${twin.path}; ` +
        'give each copy (each reseller account) its own apiKeyParameterName',
    );
  }
  const owner = copy.settings.ownAccountSettings && same.find((c) => c.settings.ownAccountSettings);
  if (owner)
    throw new ConfigError(
      `invalid DomainSentinel props: ownAccountSettings is already set by ${owner.path} in the same account and region; ` +
        'one deployment owns the account settings: set it in one copy only',
    );
}

/**
 * Fails the synth when alerts would reach nobody. It runs at synth, after the app has had its
 * chance to subscribe something in code (`sentinel.alerts.topic.addSubscription(…)`).
 */
export function requireAlertSubscriber(
  scope: Construct,
  topic: sns.ITopic,
  accounts: readonly string[],
  outsideStack: boolean,
): void {
  scope.node.addValidation({
    validate: () => {
      if (outsideStack) return [];
      const subscriptions = scope.node.root.node
        .findAll()
        .filter(
          (c): c is sns.CfnSubscription => c instanceof sns.CfnSubscription && c.topicArn === topic.topicArn,
        );
      // A group's recipient or an escalation's gets only some messages: not the account's every alert.
      const whole = subscriptions.filter((s) => {
        const filter = s.filterPolicy as { group?: unknown[]; escalation?: unknown } | undefined;
        return !filter?.escalation && !filter?.group?.some((c) => typeof c === 'string');
      });
      if (whole.length === 0) return [NO_ALERT_SUBSCRIBER];
      // Several accounts: each needs someone who gets its alerts (a filter on account, or none).
      const covered = (account: string) =>
        whole.some((s) => {
          const filter = s.filterPolicy as { account?: unknown } | undefined;
          return !filter?.account || (Array.isArray(filter.account) && filter.account.includes(account));
        });
      const alone = accounts.filter((a) => !covered(a));
      return alone.length ? [`${NO_ACCOUNT_SUBSCRIBER}: ${alone.join(', ')}`] : [];
    },
  });
}
