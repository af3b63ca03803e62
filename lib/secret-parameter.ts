import { Arn, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

export interface SecretParameterProps {
  /** Name of an existing SSM SecureString parameter (CloudFormation cannot create SecureStrings). */
  readonly parameterName: string;
  /** KMS key that encrypts it. @default - the account's aws/ssm key, whose id is not known at synth */
  readonly kmsKeyArn?: string;
}

/**
 * A SecureString the operator creates once with `aws ssm put-parameter`. Owns its wiring:
 * `grantRead(fn, variable)` adds the parameter's name as an environment variable and the
 * least-privilege IAM to read it, decrypted, through SSM only.
 */
export class SecretParameter extends Construct {
  readonly parameterName: string;
  readonly parameterArn: string;
  private readonly kmsKeyArn: string | undefined;

  constructor(scope: Construct, id: string, props: SecretParameterProps) {
    super(scope, id);
    this.parameterName = props.parameterName;
    this.kmsKeyArn = props.kmsKeyArn;
    const stack = Stack.of(this);
    this.parameterArn = Arn.format(
      { service: 'ssm', resource: 'parameter', resourceName: props.parameterName.replace(/^\//, '') },
      stack,
    );
  }

  /**
   * Lets `fn` read the parameter, decrypted, through SSM only. `environmentVariable` names it in
   * the function's environment; without one (an account of several, whose parameter each
   * invocation is given) only the grant is made.
   */
  grantRead(fn: lambda.Function, environmentVariable?: string): void {
    if (environmentVariable) fn.addEnvironment(environmentVariable, this.parameterName);
    this.grantDecryptedRead(fn);
  }

  /** The IAM half of {@link grantRead}, for a function told the parameter's name some other way. */
  grantDecryptedRead(fn: lambda.Function): void {
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['ssm:GetParameter'], resources: [this.parameterArn] }),
    );
    const stack = Stack.of(this);
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [
          this.kmsKeyArn ?? Arn.format({ service: 'kms', resource: 'key', resourceName: '*' }, stack),
        ],
        conditions: {
          // Decrypt only on SSM's behalf, and only this parameter's value.
          StringEquals: {
            'kms:ViaService': `ssm.${stack.region}.amazonaws.com`,
            'kms:EncryptionContext:PARAMETER_ARN': this.parameterArn,
          },
        },
      }),
    );
  }

  /**
   * Lets `fn` read each of `parameters` (the keys of several accounts) and nothing else. The
   * statements that list them (ssm:GetParameter, and kms:Decrypt whose condition lists them) go into
   * managed policies of their own, each sized here to fit IAM's 6 144 characters: left in the
   * role's default policy, CDK would move them out by its own estimate of an ARN (a fixed length,
   * whatever the name), and a long name or many accounts would outgrow a policy only the deploy
   * checks.
   */
  static grantReadAll(fn: lambda.Function, parameters: readonly SecretParameter[]): void {
    const stack = Stack.of(fn);
    const role = fn.role as iam.Role;
    for (const [index, group] of policyGroups(parameters).entries()) {
      const arns = group.map((p) => p.parameterArn);
      const keys = [...new Set(group.map((p) => p.kmsKeyArn))];
      const policy = new iam.ManagedPolicy(role, `KeyParameters${index + 1}`, {
        roles: [role],
        description: `Reads the key parameters ${group.map((p) => p.parameterName).join(', ')}`.slice(
          0,
          1000,
        ),
        statements: [
          new iam.PolicyStatement({ actions: ['ssm:GetParameter'], resources: arns }),
          new iam.PolicyStatement({
            actions: ['kms:Decrypt'],
            resources: keys.map(
              (key) => key ?? Arn.format({ service: 'kms', resource: 'key', resourceName: '*' }, stack),
            ),
            conditions: {
              StringEquals: {
                'kms:ViaService': `ssm.${stack.region}.amazonaws.com`,
                'kms:EncryptionContext:PARAMETER_ARN': arns,
              },
            },
          }),
        ],
      });
      // The function is not deployed before it may read its keys.
      fn.node.addDependency(policy);
    }
  }
}

/**
 * Characters of ARNs one managed policy of {@link SecretParameter.grantReadAll} holds at most (each
 * ARN twice): IAM's 6 144 less the statements' own text and the key's ARN, with room to spare.
 */
const MAX_ARN_CHARS_PER_POLICY = 2_700;

/**
 * What a parameter's ARN adds to its name in a policy, at most: `arn:aws-us-gov:ssm:ap-southeast-2:
 * 123456789012:parameter` and the quotes and comma around it.
 */
const PARAMETER_ARN_OVERHEAD = 60;

/** The characters a parameter's ARN takes in a policy, at most (whatever the partition and region). */
export const parameterArnChars = (parameterName: string): number =>
  parameterName.length + PARAMETER_ARN_OVERHEAD;

/**
 * The managed policies of keys a role may be given: IAM attaches at most 10 managed policies to a
 * role without a quota increase, and CDK may need a few for what outgrows the role's inline policy.
 */
export const MAX_KEY_POLICIES = 8;

/** How many managed policies {@link SecretParameter.grantReadAll} makes for parameters of these names. */
export const keyPolicyCount = (parameterNames: readonly string[]): number =>
  policyGroups(parameterNames.map((parameterName) => ({ parameterName }))).length;

/** The parameters in groups whose ARNs take at most {@link MAX_ARN_CHARS_PER_POLICY} characters. */
function policyGroups<P extends { readonly parameterName: string }>(parameters: readonly P[]): P[][] {
  const groups: P[][] = [];
  let size = Number.POSITIVE_INFINITY;
  for (const parameter of parameters) {
    const chars = parameterArnChars(parameter.parameterName);
    if (size + chars > MAX_ARN_CHARS_PER_POLICY) {
      groups.push([]);
      size = 0;
    }
    groups[groups.length - 1]?.push(parameter);
    size += chars;
  }
  return groups;
}
