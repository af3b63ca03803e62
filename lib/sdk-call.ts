import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';

const LOGS_ID = 'DomainSentinelSdkCallLogs';

/** Per stack, the first call that granted each set of statements to the stack's shared function. */
const GRANTS = new WeakMap<Stack, Map<string, cr.AwsCustomResource>>();

export interface SdkCallProps {
  /** The AWS API call made when the resource is created. */
  readonly onCreate: cr.AwsSdkCall;
  /** The call made when the resource's properties change. @default - none */
  readonly onUpdate?: cr.AwsSdkCall;
  /** The call made when the resource is deleted (the stack destroyed, or the call dropped). @default - none */
  readonly onDelete?: cr.AwsSdkCall;
  /** What the call may do: exactly its action and resources. */
  readonly statements: iam.PolicyStatement[];
}

/** Why a deploy-time call may name `*`: the only resource its action accepts. */
const WILDCARD_REASON =
  'cloudwatch:PutMetricData and sns:SetSMSAttributes have no resource-level permissions, so * is the only resource ' +
  'they accept; PutMetricData is limited by cloudwatch:namespace to DomainSentinel, and iam:PassRole names its one role.';

/**
 * One AWS API call at deploy time, for what CloudFormation has no resource for (account-level SMS
 * attributes, a metric data point, a setting cleared when the stack goes). CDK runs every such call of a stack in one shared function,
 * whose log group the stack creates here, with a retention, so nothing of it outlives the stack.
 */
export function sdkCall(scope: Construct, id: string, props: SdkCallProps): cr.AwsCustomResource {
  const stack = Stack.of(scope);
  const logGroup =
    (stack.node.tryFindChild(LOGS_ID) as logs.LogGroup | undefined) ??
    new logs.LogGroup(stack, LOGS_ID, {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
  const providerId = `AWS${cr.AwsCustomResource.PROVIDER_FUNCTION_UUID.replaceAll('-', '')}`;
  // Calls of a stack share one function and its role; a call whose permissions an earlier call of
  // the stack granted already (one per account arms its dead-man switch) adds no policy of its own,
  // which would grow that role's inline policies toward IAM's 10 240 characters.
  const grants = GRANTS.get(stack) ?? new Map<string, cr.AwsCustomResource>();
  GRANTS.set(stack, grants);
  const key = JSON.stringify(stack.resolve(props.statements.map((s) => s.toStatementJson())));
  const granted = grants.get(key);
  const role = (stack.node.tryFindChild(providerId) as lambda.Function | undefined)?.role;
  const call = new cr.AwsCustomResource(scope, id, {
    onCreate: props.onCreate,
    ...(props.onUpdate ? { onUpdate: props.onUpdate } : {}),
    ...(props.onDelete ? { onDelete: props.onDelete } : {}),
    ...(granted && role ? { role } : { policy: cr.AwsCustomResourcePolicy.fromStatements(props.statements) }),
    installLatestAwsSdk: false,
    logGroup,
    timeout: Duration.minutes(1),
  });
  if (granted && role) call.node.addDependency(granted);
  else grants.set(key, call);
  const provider = stack.node.tryFindChild(providerId);
  if (provider) {
    Validations.of(provider).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason:
        "CDK's AwsCustomResource function writes its own logs with the managed basic execution policy; it makes the " +
        "stack's deploy-time API calls and nothing else.",
    });
  }
  if (props.statements.some((s) => s.resources.includes('*')))
    Validations.of(call).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: WILDCARD_REASON });
  return call;
}
