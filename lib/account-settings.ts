import { Arn, ArnFormat, Stack, Token, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { sdkCall } from './sdk-call';

export interface AccountSettingsProps {
  /** The stage whose logs need API Gateway's CloudWatch Logs role: it waits until the role is set. */
  readonly stage: apigateway.Stage;
  /** Also SNS's SMS delivery-status logging (the deployment sends SMS). */
  readonly smsDeliveryStatus: boolean;
}

/**
 * What exists once per account and region, made only by a deployment that says it owns it
 * (`ownAccountSettings`): API Gateway's CloudWatch Logs role (the account setting
 * `cloudwatchRoleArn`, which every REST API stage that logs needs) and SNS's SMS delivery-status
 * logging (the account's SMS attributes `DeliveryStatusIAMRole` and
 * `DeliveryStatusSuccessSamplingRate`). Each setting is overwritten on deploy and cleared again when
 * the stack is destroyed, before its role goes: nothing is left naming a role that no longer exists.
 */
export class AccountSettings extends Construct {
  /** The role API Gateway writes every REST API's logs of the account and region with. */
  readonly apiGatewayRole: iam.Role;
  /** The role SNS writes SMS delivery status with, when the deployment sends SMS. */
  readonly smsDeliveryStatusRole?: iam.Role;

  constructor(scope: Construct, id: string, props: AccountSettingsProps) {
    super(scope, id);
    this.apiGatewayRole = this.ownApiGatewayRole(props.stage);
    if (props.smsDeliveryStatus) this.smsDeliveryStatusRole = this.ownSmsDeliveryStatus();
  }

  /**
   * AWS::ApiGateway::Account sets the role (CloudFormation retries while IAM makes it assumable);
   * its delete leaves the setting as it is, so a deploy-time call clears it when the stack goes.
   */
  private ownApiGatewayRole(stage: apigateway.Stage): iam.Role {
    const stack = Stack.of(this);
    const role = new iam.Role(this, 'ApiGatewayCloudWatchRole', {
      assumedBy: new iam.ServicePrincipal('apigateway.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
      description:
        "API Gateway's CloudWatch Logs role of this account and region (domain-sentinel owns the setting)",
      managedPolicies: [
        iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs'),
      ],
    });
    const account = new apigateway.CfnAccount(this, 'ApiGatewayAccount', { cloudWatchRoleArn: role.roleArn });
    stage.node.addDependency(account);
    const accountArn = Arn.format({ service: 'apigateway', account: '', resource: '/account' }, stack);
    const clear = sdkCall(this, 'ApiGatewayRoleCleared', {
      onCreate: { ...CLEAR_API_GATEWAY_ROLE, action: 'getAccount', parameters: {} },
      onDelete: CLEAR_API_GATEWAY_ROLE,
      statements: [
        new iam.PolicyStatement({ actions: ['apigateway:GET', 'apigateway:PATCH'], resources: [accountArn] }),
      ],
    });
    // Deleted before the setting's resource and the role: the setting is cleared while both exist.
    clear.node.addDependency(account, role);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        "API Gateway's account-level CloudWatch role needs AmazonAPIGatewayPushToCloudWatchLogs, the policy AWS publishes for " +
        'exactly that role, so the stage can write its error and access logs; the functions themselves have no managed policies.',
    });
    return role;
  }

  /**
   * The SMS attributes name a role SNS writes with (SetSMSAttributes; CloudFormation has no
   * resource for them): set on create and update, cleared on delete. SNS makes its log groups
   * itself, under names it fixes per account and region (`sns/<region>/<account>/
   * DirectPublishToPhoneNumber` and `/Failure`): the stack never creates them, so it collides with
   * no group an earlier owner or SNS made.
   */
  private ownSmsDeliveryStatus(): iam.Role {
    const stack = Stack.of(this);
    const snsLogGroups = Arn.format(
      {
        service: 'logs',
        resource: 'log-group',
        resourceName: `sns/${stack.region}/${stack.account}/*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      },
      stack,
    );
    const role = new iam.Role(this, 'SmsDeliveryStatusRole', {
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
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:${nagName(stack.region, 'Region')}:${nagName(stack.account, 'AccountId')}:log-group:sns/${nagName(stack.region, 'Region')}/${nagName(stack.account, 'AccountId')}/*]`,
      reason:
        'SNS names its SMS log groups itself (sns/<region>/<account>/…, per topic or for direct publishes); the role may write only there, the permissions AWS documents for SMS delivery-status logging.',
    });
    const set: cr.AwsSdkCall = {
      service: 'SNS',
      action: 'setSMSAttributes',
      parameters: {
        attributes: { DeliveryStatusIAMRole: role.roleArn, DeliveryStatusSuccessSamplingRate: '100' },
      },
      physicalResourceId: cr.PhysicalResourceId.of('sms-delivery-status-logging'),
    };
    sdkCall(this, 'SmsAttributes', {
      onCreate: set,
      onUpdate: set,
      onDelete: {
        ...set,
        parameters: { attributes: { DeliveryStatusIAMRole: '', DeliveryStatusSuccessSamplingRate: '0' } },
      },
      statements: [
        new iam.PolicyStatement({ actions: ['sns:SetSMSAttributes'], resources: ['*'] }),
        new iam.PolicyStatement({
          actions: ['iam:PassRole'],
          resources: [role.roleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'sns.amazonaws.com' } },
        }),
      ],
    });
    return role;
  }
}

/** Clears API Gateway's CloudWatch Logs role of the account and region (an empty ARN is none). */
const CLEAR_API_GATEWAY_ROLE: cr.AwsSdkCall = {
  service: 'APIGateway',
  action: 'updateAccount',
  parameters: { patchOperations: [{ op: 'replace', path: '/cloudwatchRoleArn', value: '' }] },
  physicalResourceId: cr.PhysicalResourceId.of('api-gateway-cloudwatch-role'),
};

/** A value as cdk-nag writes it in a finding: itself when concrete, `<AWS::…>` when a token. */
function nagName(value: string, pseudo: 'Region' | 'AccountId'): string {
  return Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value;
}
