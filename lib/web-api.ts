import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ACCOUNT_ENV } from '../functions/core/scan/accounts';
import { ENV } from '../functions/core/scan/config';
import { SentinelFunction } from './sentinel-function';

/** The API's one stage: part of every link's URL. */
const STAGE = 'prod';

/** What the web function needs to know; secrets, the state table and the report bucket add their own variables through their grants. */
export interface WebApiProps {
  /** Path of the Lambda entry (functions/restore.ts, which serves every link). */
  readonly entry: string;
  /** Base URL of the reseller API (https). */
  readonly resellerBaseUrl: string;
  /**
   * The scan's thresholds: a snooze or acknowledgement records the finding as the scan judges it,
   * so that "it got worse" means the same thing on both sides.
   */
  readonly expiryDays: number;
  readonly criticalDays: number;
  /** QUARANTINE_DAYS, so the restore page shows the restore-by date the scan reports. @default - the table only */
  readonly quarantineDays?: string;
  /** POLICIES (JSON): a domain of a group is judged by its group's thresholds, as the scan judged it. @default - none */
  readonly policies?: string;
  /**
   * ALERT_TIME_ZONE: the calendar feed dates its events (a restore-by day above all) by the day in
   * this zone, so a deadline is never shown a day late west of UTC. @default 'UTC'
   */
  readonly timeZone?: string;
  /** Requests per second across the API; a few humans clicking links. @default 2 */
  readonly rateLimit?: number;
  /** @default 5 */
  readonly burstLimit?: number;
  /**
   * Name of the REST API. API Gateway keys its metrics by name, not id, so the 5XX alarm counts
   * every API of that name in the region: each copy needs its own. @default `${stackName}-restore`
   */
  readonly apiName?: string;
  /**
   * Create API Gateway's CloudWatch Logs role and set it for the account and region (one per
   * region: a second copy shares the first's). The stage's execution logs need it to be set.
   * @default true
   */
  readonly cloudWatchRole?: boolean;
  /** The `deployment` dimension of the function's metrics (DEPLOYMENT_NAME). @default - none */
  readonly deploymentName?: string;
  /**
   * Several accounts (docs/accounts.md): each account's links under /accounts/{account}/ and the
   * overview at /accounts. @default false
   */
  readonly accounts?: boolean;
}

/**
 * API Gateway in front of the web function: GET/HEAD/POST /restore/{domain}, /snooze/{domain} and
 * /acknowledge/{domain}; GET/HEAD /report and /calendar.ics. Throttled for a few humans (and the
 * calendar apps polling the feed), with access logs that record the path but never the query
 * string (the signature).
 */
export class WebApi extends Construct {
  readonly fn: SentinelFunction;
  readonly api: apigateway.RestApi;
  /** Base URL the scan signs every link under (includes the stage, ends with '/'). */
  readonly url: string;
  /** The stage's execution log group (errors only), created by the stack with a retention. */
  readonly executionLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: WebApiProps) {
    super(scope, id);
    this.fn = new SentinelFunction(this, 'Function', {
      entry: props.entry,
      description: 'domain-sentinel: web links (restore, snooze, acknowledge, report page, calendar feed)',
      serviceName: 'domain-sentinel-restore',
      // At most one reseller lookup and one state or report read per request: 256 MB and 15 s.
      memorySize: 256,
      timeout: Duration.seconds(15),
      environment: {
        [ENV.resellerBaseUrl]: props.resellerBaseUrl,
        [ENV.expiryDays]: String(props.expiryDays),
        [ENV.criticalDays]: String(props.criticalDays),
        ...(props.quarantineDays ? { [ENV.quarantineDays]: props.quarantineDays } : {}),
        ...(props.policies ? { [ENV.policies]: props.policies } : {}),
        ...(props.timeZone ? { [ENV.timeZone]: props.timeZone } : {}),
        ...(props.deploymentName ? { [ENV.deploymentName]: props.deploymentName } : {}),
        ...(props.accounts ? { [ACCOUNT_ENV.accountsOnly]: 'true' } : {}),
      },
    });

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: logs.RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.api = new apigateway.RestApi(this, 'Api', {
      // API Gateway's metrics are keyed by API name, not id: a name unique to the stack keeps the
      // 5XX alarm from counting another API that kept the default name.
      restApiName: props.apiName ?? `${Stack.of(this).stackName}-restore`,
      description: 'domain-sentinel restore links',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      // The API Gateway CloudWatch role is an account-wide setting other APIs may share: keep it on destroy.
      ...((props.cloudWatchRole ?? true)
        ? { cloudWatchRole: true, cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN }
        : { cloudWatchRole: false }),
      deployOptions: {
        stageName: STAGE,
        throttlingRateLimit: props.rateLimit ?? 2,
        throttlingBurstLimit: props.burstLimit ?? 5,
        // Execution logs for errors only, and never request data: the query string holds the signature.
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        accessLogDestination: new apigateway.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigateway.AccessLogFormat.custom(
          JSON.stringify({
            requestId: apigateway.AccessLogField.contextRequestId(),
            ip: apigateway.AccessLogField.contextIdentitySourceIp(),
            userAgent: apigateway.AccessLogField.contextIdentityUserAgent(),
            time: apigateway.AccessLogField.contextRequestTime(),
            method: apigateway.AccessLogField.contextHttpMethod(),
            path: apigateway.AccessLogField.contextPath(),
            status: apigateway.AccessLogField.contextStatus(),
            latency: apigateway.AccessLogField.contextResponseLatency(),
          }),
        ),
      },
    });
    // Acting paths must name a domain; the function validates the rest (and the snooze form).
    const validator = this.api.addRequestValidator('RequestValidator', {
      validateRequestParameters: true,
      validateRequestBody: true,
    });
    const integration = new apigateway.LambdaIntegration(this.fn);
    for (const action of ['restore', 'snooze', 'acknowledge']) {
      const resource = this.api.root.addResource(action).addResource('{domain}');
      for (const method of ['GET', 'HEAD', 'POST']) {
        resource.addMethod(method, integration, {
          requestValidator: validator,
          requestParameters: { 'method.request.path.domain': true },
          authorizationType: apigateway.AuthorizationType.NONE,
        });
      }
    }
    // Read-only links: no POST route at all.
    for (const path of ['report', 'calendar.ics']) {
      const resource = this.api.root.addResource(path);
      for (const method of ['GET', 'HEAD']) {
        resource.addMethod(method, integration, {
          requestValidator: validator,
          authorizationType: apigateway.AuthorizationType.NONE,
        });
      }
    }
    if (props.accounts) {
      // The overview, and every route above again under each account's own path. Without the
      // console's test-invoke permissions: the function's resource policy (20 KB) holds one
      // statement per permission, and these would double the routes' share of it.
      const integration = new apigateway.LambdaIntegration(this.fn, { allowTestInvoke: false });
      const root = this.api.root.addResource('accounts');
      for (const method of ['GET', 'HEAD'])
        root.addMethod(method, integration, {
          requestValidator: validator,
          authorizationType: apigateway.AuthorizationType.NONE,
        });
      const account = root.addResource('{account}');
      for (const action of ['restore', 'snooze', 'acknowledge']) {
        const resource = account.addResource(action).addResource('{domain}');
        for (const method of ['GET', 'HEAD', 'POST'])
          resource.addMethod(method, integration, {
            requestValidator: validator,
            requestParameters: { 'method.request.path.account': true, 'method.request.path.domain': true },
            authorizationType: apigateway.AuthorizationType.NONE,
          });
      }
      for (const path of ['report', 'calendar.ics']) {
        const resource = account.addResource(path);
        for (const method of ['GET', 'HEAD'])
          resource.addMethod(method, integration, {
            requestValidator: validator,
            requestParameters: { 'method.request.path.account': true },
            authorizationType: apigateway.AuthorizationType.NONE,
          });
      }
    }
    this.url = this.api.url;

    // API Gateway writes execution logs to a group it names itself and would create without a
    // retention, to outlive `cdk destroy`. Made here first (the stage waits for it), it has one and goes with the stack.
    this.executionLogs = new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${STAGE}`,
      retention: logs.RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.api.deploymentStage.node.addDependency(this.executionLogs);

    const capability =
      'Every link is a capability URL: the function verifies an HMAC-SHA256 signature over action, subject and expiry ' +
      'before it reads or changes anything, and the recipients of the alert are e-mail readers without AWS identities.';
    Validations.of(this.api).acknowledge({ id: 'AwsSolutions-APIG4', reason: capability });
    Validations.of(this.api).acknowledge({ id: 'AwsSolutions-COG4', reason: capability });
    if (props.cloudWatchRole ?? true)
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "API Gateway's account-level CloudWatch role needs AmazonAPIGatewayPushToCloudWatchLogs, the policy AWS publishes for " +
          'exactly that role, so the stage can write its error and access logs; the functions themselves have no managed policies.',
      });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason:
        'Every method of the API needs a valid HMAC-signed link, and the stage is throttled to a few requests ' +
        'per second; a WAF web ACL (more than the rest of the stack costs) would add no protection the signature does not give.',
    });
  }
}
