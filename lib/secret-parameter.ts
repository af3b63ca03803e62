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

  grantRead(fn: lambda.Function, environmentVariable: string): void {
    fn.addEnvironment(environmentVariable, this.parameterName);
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
}
