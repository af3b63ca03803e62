import { fileURLToPath } from 'node:url';
import { Arn, ArnFormat, CustomResource, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { sdkCall } from './sdk-call';
import { SentinelFunction } from './sentinel-function';

const FUNCTIONS_DIR = fileURLToPath(new URL('../functions', import.meta.url));

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
 * `DeliveryStatusSuccessSamplingRate`). Each setting is overwritten on deploy. When the stack is
 * destroyed, before its role goes, each is cleared only if it still names this stack's role: in an
 * account other teams share, one may have pointed it at its own role since, and keeps it.
 */
export class AccountSettings extends Construct {
  /** The role API Gateway writes every REST API's logs of the account and region with. */
  readonly apiGatewayRole: iam.Role;
  /** The role SNS writes SMS delivery status with, when the deployment sends SMS. */
  readonly smsDeliveryStatusRole?: iam.Role;
  /** The function of Custom::AccountSettingsRelease, which clears each setting still naming our role. */
  readonly releaseFunction: SentinelFunction;
  private readonly accountArn: string;

  constructor(scope: Construct, id: string, props: AccountSettingsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.accountArn = Arn.format({ service: 'apigateway', account: '', resource: '/account' }, stack);
    const apiGateway = this.ownApiGatewayRole(props.stage);
    this.apiGatewayRole = apiGateway.role;
    const sms = props.smsDeliveryStatus ? this.ownSmsDeliveryStatus() : undefined;
    this.smsDeliveryStatusRole = sms?.role;
    this.releaseFunction = this.releaseWhenGone([
      { name: 'ApiGatewayCloudWatchRole', ...apiGateway },
      ...(sms ? [{ name: 'SmsDeliveryStatusRole', ...sms }] : []),
    ]);
  }

  /**
   * AWS::ApiGateway::Account sets the role (CloudFormation retries while IAM makes it assumable);
   * its delete leaves the setting as it is: Custom::AccountSettingsRelease clears it.
   */
  private ownApiGatewayRole(stage: apigateway.Stage): { role: iam.Role; setting: Construct } {
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
    // Kept, with no delete call, only for stacks deployed before the release: removed from the
    // template, CloudFormation would run its old delete call (from the old template) on the
    // upgrade, clearing the setting whoever it named, ours too. Updated in place it loses that call.
    // Safe to drop once every stack has been deployed with this version.
    const formerClear = sdkCall(this, 'ApiGatewayRoleCleared', {
      onCreate: {
        service: 'APIGateway',
        action: 'getAccount',
        parameters: {},
        physicalResourceId: cr.PhysicalResourceId.of('api-gateway-cloudwatch-role'),
      },
      statements: [new iam.PolicyStatement({ actions: ['apigateway:GET'], resources: [this.accountArn] })],
    });
    formerClear.node.addDependency(account, role);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        "API Gateway's account-level CloudWatch role needs AmazonAPIGatewayPushToCloudWatchLogs, the policy AWS publishes for " +
        'exactly that role, so the stage can write its error and access logs; the functions themselves have no managed policies.',
    });
    return { role, setting: account };
  }

  /**
   * The SMS attributes name a role SNS writes with (SetSMSAttributes; CloudFormation has no
   * resource for them): set on create and update; Custom::AccountSettingsRelease clears them. The
   * call keeps its id, so an upgrade updates it in place and drops the delete call it had, which
   * cleared them whoever they named. SNS makes its log groups
   * itself, under names it fixes per account and region (`sns/<region>/<account>/
   * DirectPublishToPhoneNumber` and `/Failure`): the stack never creates them, so it collides with
   * no group an earlier owner or SNS made.
   */
  private ownSmsDeliveryStatus(): { role: iam.Role; setting: Construct } {
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
    const setting = sdkCall(this, 'SmsAttributes', {
      onCreate: set,
      onUpdate: set,
      statements: [
        new iam.PolicyStatement({ actions: ['sns:SetSMSAttributes'], resources: ['*'] }),
        new iam.PolicyStatement({
          actions: ['iam:PassRole'],
          resources: [role.roleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'sns.amazonaws.com' } },
        }),
      ],
    });
    return { role, setting };
  }

  /**
   * Custom::AccountSettingsRelease, one per setting: on delete its function reads the setting and
   * clears it only if it still names our role (its property); another role's, or none, it leaves
   * and logs. It never fails the request, so the stack's deletion never sticks on a setting it
   * could not read (functions/handlers/settings-release-handler.ts). Each is deleted before the
   * role it names and the resource that sets its setting (it names the one, depends on the other).
   * One per setting, not one for both: a setting the template drops (SMS turned off) goes with its
   * own resource's delete, which CloudFormation runs only once the update succeeded.
   */
  private releaseWhenGone(
    settings: ReadonlyArray<{ name: string; role: iam.Role; setting: Construct }>,
  ): SentinelFunction {
    const fn = new SentinelFunction(this, 'SettingsRelease', {
      entry: `${FUNCTIONS_DIR}/handlers/settings-release.ts`,
      description:
        "Clears the account's API Gateway and SMS logging roles on stack delete, if they still name ours",
      timeout: Duration.minutes(2),
      serviceName: 'domain-sentinel-settings-release',
    });
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['apigateway:GET', 'apigateway:PATCH'],
        resources: [this.accountArn],
      }),
    );
    // SNS's calls even when this deployment sends no SMS: an update that drops the SMS recipients
    // drops the SMS release, whose delete runs in the cleanup after the update, under the policy of
    // the new template. No iam:PassRole: the function only ever clears the role, it never names one.
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['sns:GetSMSAttributes', 'sns:SetSMSAttributes'],
        resources: ['*'],
      }),
    );
    Validations.of(fn.role as iam.Role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'sns:GetSMSAttributes and sns:SetSMSAttributes have no resource-level permissions (the SMS attributes are ' +
        "the account's), so * is the only resource they accept; the function clears only a role this stack made.",
    });
    for (const { name, role, setting } of settings) {
      const release = new CustomResource(
        this,
        name === 'ApiGatewayCloudWatchRole' ? 'Release' : 'ReleaseSms',
        {
          serviceToken: fn.functionArn,
          resourceType: 'Custom::AccountSettingsRelease',
          properties: { [name]: role.roleArn },
          // Past the function's 2 minutes and Lambda's two retries of an answer that did not reach
          // CloudFormation: a request is failed after 10 minutes, not CloudFormation's default hour.
          serviceTimeout: Duration.minutes(10),
        },
      );
      release.node.addDependency(setting);
    }
    return fn;
  }
}

/** A value as cdk-nag writes it in a finding: itself when concrete, `<AWS::…>` when a token. */
function nagName(value: string, pseudo: 'Region' | 'AccountId'): string {
  return Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value;
}
