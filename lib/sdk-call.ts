import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';

const LOGS_ID = 'DomainSentinelSdkCallLogs';
const ROLE_ID = 'DomainSentinelSdkCallRole';

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
  // CDK's own role for this function carries AWSLambdaBasicExecutionRole: logs on every log group
  // of the account, other teams' included. This role may write the function's own group alone.
  const role = (stack.node.tryFindChild(ROLE_ID) as iam.Role | undefined) ?? ownRole(stack, logGroup);
  // Calls of a stack share one function and its role; a call whose permissions an earlier call of
  // the stack granted already (one per account arms its dead-man switch) adds no policy of its own,
  // which would grow that role's inline policies toward IAM's 10 240 characters.
  const grants = GRANTS.get(stack) ?? new Map<string, cr.AwsCustomResource>();
  GRANTS.set(stack, grants);
  const key = JSON.stringify(stack.resolve(props.statements.map((s) => s.toStatementJson())));
  const granted = grants.get(key);
  const call = new cr.AwsCustomResource(scope, id, {
    onCreate: props.onCreate,
    ...(props.onUpdate ? { onUpdate: props.onUpdate } : {}),
    ...(props.onDelete ? { onDelete: props.onDelete } : {}),
    role,
    ...(granted ? {} : { policy: cr.AwsCustomResourcePolicy.fromStatements(props.statements) }),
    installLatestAwsSdk: false,
    logGroup,
    timeout: Duration.minutes(1),
  });
  if (granted) call.node.addDependency(granted);
  else grants.set(key, call);
  if (props.statements.some((s) => s.resources.includes('*')))
    Validations.of(call).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: WILDCARD_REASON });
  return call;
}

/**
 * The role of the stack's shared function. CDK's own carries AWSLambdaBasicExecutionRole, which
 * writes every log group of the account (other teams' too); this one writes the function's own
 * group alone, and each call adds its own statements.
 */
function ownRole(stack: Stack, logGroup: logs.ILogGroup): iam.Role {
  const role = new iam.Role(stack, ROLE_ID, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: "domain-sentinel's deploy-time calls: their own log group and each call's own statements",
  });
  logGroup.grantWrite(role);
  return role;
}
