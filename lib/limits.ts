import { CfnResource, NestedStack, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';

/** The AWS limits a deployment is checked against at synth, before CloudFormation or IAM refuse it mid-deploy. */
export const AWS_LIMITS = {
  /** CloudFormation: resources in one stack (a nested stack is one resource of its parent). */
  resourcesPerStack: 500,
  /** CloudFormation: one template, in bytes, as CDK uploads it (a nested stack's is its own). */
  templateBytes: 1_000_000,
  /** IAM: all inline policies of one role together, in characters without whitespace. */
  roleInlinePolicyChars: 10_240,
  /** IAM: one customer managed policy, in characters without whitespace. */
  managedPolicyChars: 6_144,
  /** IAM: managed policies attached to one role, without a quota increase. */
  managedPoliciesPerRole: 10,
  /** Lambda: one function's resource-based policy, in bytes. */
  functionPolicyBytes: 20_480,
  /** Lambda: one function's environment variables, names and values together, in bytes. */
  functionEnvironmentBytes: 4_096,
  /**
   * SNS: subscriptions with a filter policy on one topic, without a quota increase
   * (https://docs.aws.amazon.com/sns/latest/dg/subscription-filter-policy-constraints.html); SNS
   * refuses the next one when CloudFormation creates it, half-way through a deploy.
   */
  filterPoliciesPerTopic: 200,
  /**
   * CloudWatch: an alarm's name, in characters (PutMetricAlarm's AlarmName, 1 to 255). Every alarm
   * is named `<deployment>/<what>`, an account's `<deployment>/ScanNotCompleted-<account>`, and the
   * deployment is the stack's name (up to 128) and the construct's path in it.
   */
  alarmNameChars: 255,
  /**
   * CloudWatch: a metric dimension's value, in characters (1 to 255). Every metric of a copy carries
   * its deployment name (the stack's name and the construct's path in it) as one.
   */
  dimensionValueChars: 255,
} as const;

/** Quotas of the account and region deployed to, where they were raised above AWS's defaults. */
export interface RaisedQuotas {
  /** SNS's "Filter policies per topic". @default AWS_LIMITS.filterPoliciesPerTopic */
  readonly filterPoliciesPerTopic?: number;
}

/**
 * Characters a reference takes once CloudFormation resolves it, at most as this project names
 * things: an ARN of a generated name (`arn:aws-us-gov:sqs:ap-southeast-4:123456789012:<stack>-
 * <logical id>-<suffix>`), a pseudo parameter's longest value.
 */
const REFERENCE_CHARS = 160;
const PSEUDO_CHARS: Record<string, number> = {
  'AWS::Partition': 10,
  'AWS::Region': 14,
  'AWS::AccountId': 12,
  'AWS::URLSuffix': 16,
};

/** The length of a resolved template value once CloudFormation resolves its references (an upper estimate). */
function estimatedChars(value: unknown): number {
  if (typeof value === 'string') return JSON.stringify(value).length;
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null).length;
  if (Array.isArray(value)) return 2 + value.reduce((n: number, v) => n + estimatedChars(v) + 1, 0);
  const entries = Object.entries(value as Record<string, unknown>);
  const [key, arg] = entries[0] ?? [];
  if (entries.length === 1 && key === 'Ref') return 2 + (PSEUDO_CHARS[String(arg)] ?? REFERENCE_CHARS);
  if (entries.length === 1 && key === 'Fn::GetAtt') return 2 + REFERENCE_CHARS;
  if (entries.length === 1 && key === 'Fn::Join') {
    const [separator, parts] = arg as [string, unknown[]];
    // Each part's quotes go: the joined string has one pair.
    return 2 + parts.reduce((n: number, p) => n + estimatedChars(p) - 2 + separator.length, 0);
  }
  return 2 + entries.reduce((n, [k, v]) => n + JSON.stringify(k).length + 1 + estimatedChars(v) + 1, 0);
}

/** Every stack a deployment's resources live in: its own and its nested stacks. */
function stacksOf(root: IConstruct): Stack[] {
  const own = Stack.of(root);
  return [own, ...own.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack)];
}

/** The resources of one stack (not of its nested stacks). */
const resourcesOf = (stack: Stack) =>
  stack.node.findAll().filter((c): c is CfnResource => CfnResource.isCfnResource(c) && Stack.of(c) === stack);

/**
 * The limits `root`'s stacks would pass, one line each: the limit, the count, and what to change
 * (`advice`, the deployment's own words for what makes it grow).
 */
export function limitProblems(root: IConstruct, advice: string, quotas: RaisedQuotas = {}): string[] {
  const problems: string[] = filterPolicyProblems(root, quotas);
  for (const stack of stacksOf(root)) {
    // CDK adds its metadata resource to the template after this check.
    const count = resourcesOf(stack).length + 1;
    if (count > AWS_LIMITS.resourcesPerStack)
      problems.push(
        `the stack ${stack.node.path} would have ${count} resources; CloudFormation allows ${AWS_LIMITS.resourcesPerStack} per stack: ${advice}`,
      );
    const bytes = templateBytes(stack);
    if (bytes > AWS_LIMITS.templateBytes)
      problems.push(
        `the stack ${stack.node.path} would have a template of about ${bytes} bytes; CloudFormation accepts ${AWS_LIMITS.templateBytes}: give the accounts shorter policies of their own, or ${advice}`,
      );
    problems.push(...policyProblems(stack, advice), ...alarmNameProblems(stack));
  }
  return problems;
}

/** Alarms of one stack whose name CloudWatch refuses for its length (CloudFormation fails the deploy there). */
function alarmNameProblems(stack: Stack): string[] {
  const names = resourcesOf(stack)
    .filter((r): r is cloudwatch.CfnAlarm => r instanceof cloudwatch.CfnAlarm)
    .map((alarm) => stack.resolve(alarm.alarmName))
    .filter((name): name is string => typeof name === 'string' && name.length > AWS_LIMITS.alarmNameChars);
  if (names.length === 0) return [];
  const longest = names.reduce((a, b) => (b.length > a.length ? b : a));
  return [
    `the stack ${stack.node.path} would have ${names.length} alarms with names longer than the ${AWS_LIMITS.alarmNameChars} characters CloudWatch allows (the longest ${longest.length}: ${longest.slice(0, 60)}...): an alarm is named after the deployment (the stack's name and the construct's path in it), so give the stack a shorter name or the construct a shorter id`,
  ];
}

/**
 * The size of a stack's template as CDK writes it (one-space indent), less what CDK adds after this
 * check (its metadata and the bootstrap version rule, a few hundred bytes). The template itself, not
 * an estimate: what makes it grow (the accounts' policies in the deploy-time call that writes
 * accounts.json, escaped twice) is in no one resource's count.
 */
function templateBytes(stack: Stack): number {
  const template = (stack as unknown as { _toCloudFormation(): unknown })._toCloudFormation();
  return Buffer.byteLength(JSON.stringify(template, undefined, 1));
}

/** IAM's policy sizes of each role, and Lambda's resource policy size of each function, in one stack. */
function policyProblems(stack: Stack, advice: string): string[] {
  const problems: string[] = [];
  const resources = resourcesOf(stack);
  const resolved = (value: unknown) => stack.resolve(value);
  const roleOf = (r: unknown) => (r as { Ref?: string }).Ref;
  for (const role of resources.filter((r): r is iam.CfnRole => r instanceof iam.CfnRole)) {
    const id = stack.getLogicalId(role);
    const attachedTo = (roles: unknown) =>
      ((resolved(roles) as unknown[]) ?? []).some((r) => roleOf(r) === id);
    const inline =
      ((resolved(role.policies) as Array<{ policyDocument: unknown }> | undefined) ?? []).reduce(
        (n, p) => n + estimatedChars(p.policyDocument),
        0,
      ) +
      resources
        .filter((r): r is iam.CfnPolicy => r instanceof iam.CfnPolicy && attachedTo(r.roles))
        .reduce((n, p) => n + estimatedChars(resolved(p.policyDocument)), 0);
    if (inline > AWS_LIMITS.roleInlinePolicyChars)
      problems.push(
        `the role ${role.node.path} would have about ${inline} characters of inline policies; IAM allows ${AWS_LIMITS.roleInlinePolicyChars} per role: ${advice}`,
      );
    const managed = resources.filter(
      (r): r is iam.CfnManagedPolicy => r instanceof iam.CfnManagedPolicy && attachedTo(r.roles),
    );
    const attached =
      managed.length + ((resolved(role.managedPolicyArns) as unknown[] | undefined) ?? []).length;
    if (attached > AWS_LIMITS.managedPoliciesPerRole)
      problems.push(
        `the role ${role.node.path} would have ${attached} managed policies; IAM attaches ${AWS_LIMITS.managedPoliciesPerRole} per role: ${advice}`,
      );
    for (const policy of managed) {
      const chars = estimatedChars(resolved(policy.policyDocument));
      if (chars > AWS_LIMITS.managedPolicyChars)
        problems.push(
          `the managed policy ${policy.node.path} would have about ${chars} characters; IAM allows ${AWS_LIMITS.managedPolicyChars}: ${advice}`,
        );
    }
  }
  for (const fn of resources.filter((r): r is lambda.CfnFunction => r instanceof lambda.CfnFunction)) {
    const variables =
      (resolved(fn.environment) as { variables?: Record<string, unknown> } | undefined)?.variables ?? {};
    // A value's quotes are not in it: estimatedChars counts them.
    const environment = Object.entries(variables).reduce(
      (n, [name, value]) => n + Buffer.byteLength(name) + estimatedChars(value) - 2,
      0,
    );
    if (environment > AWS_LIMITS.functionEnvironmentBytes)
      problems.push(
        `the function ${fn.node.path} would have an environment of about ${environment} bytes (${Object.keys(variables).length} variables); Lambda allows ${AWS_LIMITS.functionEnvironmentBytes}: fewer webhooks or shorter parameter names and policies, or ${advice}`,
      );
    const id = stack.getLogicalId(fn);
    const permissions = resources.filter(
      (r): r is lambda.CfnPermission =>
        r instanceof lambda.CfnPermission && JSON.stringify(resolved(r.functionName)).includes(`"${id}"`),
    );
    // A statement as Lambda renders it: Sid, Effect, Principal, Action, Resource, the source condition.
    const bytes = permissions.reduce(
      (n, p) => n + 200 + estimatedChars(resolved({ s: p.sourceArn, p: p.principal, a: p.action })),
      0,
    );
    if (bytes > AWS_LIMITS.functionPolicyBytes)
      problems.push(
        `the function ${fn.node.path} would have a resource policy of about ${bytes} bytes (${permissions.length} permissions); Lambda allows ${AWS_LIMITS.functionPolicyBytes}: ${advice}`,
      );
  }
  return problems;
}

/**
 * SNS's filter policies per topic: the subscriptions with a filter of each topic, in every stack
 * of the deployment (an account's recipients subscribe from a nested stack).
 */
function filterPolicyProblems(root: IConstruct, quotas: RaisedQuotas): string[] {
  const quota = quotas.filterPoliciesPerTopic ?? AWS_LIMITS.filterPoliciesPerTopic;
  const filtered = new Map<string, number>();
  for (const stack of stacksOf(root))
    for (const s of resourcesOf(stack))
      if (s instanceof sns.CfnSubscription && s.filterPolicy !== undefined)
        filtered.set(s.topicArn, (filtered.get(s.topicArn) ?? 0) + 1);
  const topics = Stack.of(root)
    .node.findAll()
    .filter((c): c is sns.Topic => c instanceof sns.Topic);
  return [...filtered]
    .filter(([, count]) => count > quota)
    .map(([arn, count]) => {
      const topic = topics.find((t) => t.topicArn === arn)?.node.path ?? arn;
      return `the topic ${topic} would have ${count} subscriptions with a filter policy; SNS allows ${quota} per topic: give the accounts fewer recipients of their own (one address of several accounts is one subscription), or split the accounts over two deployments, or raise the quota "Filter policies per topic" of Amazon SNS in Service Quotas for this account and region and set snsFilterPoliciesPerTopic to it (docs/accounts.md#limits)`;
    });
}
