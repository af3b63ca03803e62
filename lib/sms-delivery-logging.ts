import { Arn, ArnFormat, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { sdkCall } from './sdk-call';

/**
 * SNS's delivery-status logging for SMS: every SMS's fate (delivered, refused by the carrier,
 * blocked by the spend limit, opted out) in CloudWatch Logs. It is an account-and-region setting
 * (SetSMSAttributes; CloudFormation has no resource for it), so only the copy that owns the
 * account's settings makes it. The role SNS writes with is kept on destroy, like API Gateway's
 * CloudWatch role: the setting names it and outlives the stack.
 */
export class SmsDeliveryStatusLogging extends Construct {
  readonly role: iam.Role;
  /** Where SNS writes: successes and failures of SMS sent directly or through a topic. */
  readonly logGroups: logs.LogGroup[];

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const stack = Stack.of(this);
    const prefix = `sns/${stack.region}/${stack.account}/DirectPublishToPhoneNumber`;
    // Made here, with a retention, before SNS would make them without one.
    this.logGroups = [prefix, `${prefix}/Failure`].map(
      (logGroupName, i) =>
        new logs.LogGroup(this, i === 0 ? 'Delivered' : 'Failed', {
          logGroupName,
          retention: logs.RetentionDays.ONE_MONTH,
          removalPolicy: RemovalPolicy.DESTROY,
        }),
    );
    const snsLogGroups = Arn.format(
      {
        service: 'logs',
        resource: 'log-group',
        resourceName: `sns/${stack.region}/${stack.account}/*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      },
      stack,
    );
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('sns.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
      description: 'SNS writes SMS delivery status to CloudWatch Logs (account-wide setting of SNS)',
      inlinePolicies: {
        SmsDeliveryLogs: new iam.PolicyDocument({
          statements: [
            new iam.PolicyStatement({
              actions: [
                'logs:CreateLogGroup',
                'logs:CreateLogStream',
                'logs:PutLogEvents',
                'logs:PutMetricFilter',
                'logs:PutRetentionPolicy',
              ],
              resources: [snsLogGroups],
            }),
          ],
        }),
      },
    });
    this.role.applyRemovalPolicy(RemovalPolicy.RETAIN);
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:${nagName(stack.region, 'Region')}:${nagName(stack.account, 'AccountId')}:log-group:sns/${nagName(stack.region, 'Region')}/${nagName(stack.account, 'AccountId')}/*]`,
      reason:
        'SNS names its SMS log groups itself (sns/<region>/<account>/…, per topic or for direct publishes); the role may write only there, the permissions AWS documents for SMS delivery-status logging.',
    });

    const setAttributes: cr.AwsSdkCall = {
      service: 'SNS',
      action: 'setSMSAttributes',
      parameters: {
        attributes: { DeliveryStatusIAMRole: this.role.roleArn, DeliveryStatusSuccessSamplingRate: '100' },
      },
      physicalResourceId: cr.PhysicalResourceId.of('sms-delivery-status-logging'),
    };
    sdkCall(this, 'Attributes', {
      onCreate: setAttributes,
      onUpdate: setAttributes,
      statements: [
        new iam.PolicyStatement({ actions: ['sns:SetSMSAttributes'], resources: ['*'] }),
        new iam.PolicyStatement({
          actions: ['iam:PassRole'],
          resources: [this.role.roleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'sns.amazonaws.com' } },
        }),
      ],
    });
  }
}

/** A value as cdk-nag writes it in a finding: itself when concrete, `<AWS::…>` when a token. */
function nagName(value: string, pseudo: 'Region' | 'AccountId'): string {
  return Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value;
}
