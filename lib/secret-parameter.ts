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
   * Lets `fn` read each of `parameters` (the keys of several accounts) and nothing else: one
   * statement that lists them, and one decrypt statement whose condition lists them, so the
   * policy grows by two ARNs per account rather than by two statements.
   */
  static grantReadAll(fn: lambda.Function, parameters: readonly SecretParameter[]): void {
    const [first] = parameters;
    if (!first) return;
    const stack = Stack.of(fn);
    const arns = parameters.map((p) => p.parameterArn);
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['ssm:GetParameter'], resources: arns }));
    const keys = [...new Set(parameters.map((p) => p.kmsKeyArn))];
    fn.addToRolePolicy(
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
    );
  }
}
