import {
  Aws,
  CfnRule,
  type CfnRuleAssertion,
  Duration,
  Fn,
  RemovalPolicy,
  Stack,
  Token,
  Validations,
} from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { ConfigError } from '../functions/core/base/errors';
import { ACCOUNT_ENV } from '../functions/core/scan/accounts';
import { ENV, METRICS } from '../functions/core/scan/config';
import { CustomMetricFactory, type MetricReading, metricOptions } from './metrics';
import { SentinelFunction } from './sentinel-function';

/** The API's one stage: part of every link's URL. */
const STAGE = 'prod';

/** What the web function needs to know; secrets, the state table and the report bucket add their own variables through their grants. */
export interface WebApiProps {
  /** Path of the Lambda entry (functions/handlers/web.ts, which serves every link). */
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
   * The stage writes execution logs (errors) and access logs to CloudWatch Logs. API Gateway
   * writes them with the role set for the whole account and region (its CloudWatch Logs role): a
   * stage that logs is refused where none is set, so only a copy that owns that setting (see
   * DomainSentinelProps.ownAccountSettings) turns them on. Without them, the web function's own
   * log has a line per request it serves, and API Gateway's metrics count what it refuses.
   * @default false
   */
  readonly stageLogs?: boolean;
  /** A regional AWS WAF web ACL the stage is associated with. @default - none */
  readonly webAclArn?: string;
  /** The `deployment` dimension of the function's metrics (DEPLOYMENT_NAME). @default - none */
  readonly deploymentName?: string;
  /**
   * Several accounts (docs/accounts.md): each account's links under /accounts/{account}/ and the
   * overview at /accounts. @default false
   */
  readonly accounts?: boolean;
}

/** A route of the web API: its path under the stage (`{name}` a required path parameter) and its methods. */
export interface WebRoute {
  readonly path: string;
  readonly methods: readonly string[];
}

/** Links that act: GET shows the confirmation page, HEAD answers as GET does, only POST acts. */
const ACTING = ['GET', 'HEAD', 'POST'] as const;
/** Read-only links: no POST route at all. */
const READING = ['GET', 'HEAD'] as const;

/**
 * Every route of a deployment's links; a new link is one entry here (the deploy rehearsal reads
 * the routes and methods back from the template and drives each).
 */
export const WEB_ROUTES: readonly WebRoute[] = [
  { path: 'restore/{domain}', methods: ACTING },
  { path: 'snooze/{domain}', methods: ACTING },
  { path: 'acknowledge/{domain}', methods: ACTING },
  // A finding's page is read-only: it offers the acting links, each confirming before it acts.
  { path: 'finding/{domain}', methods: READING },
  { path: 'report', methods: READING },
  { path: 'report.json', methods: READING },
  { path: 'calendar.ics', methods: READING },
];

/** Several accounts: the overview, then every route of {@link WEB_ROUTES} under each account's own path. */
export const ACCOUNT_ROUTES: readonly WebRoute[] = [
  { path: 'accounts', methods: READING },
  ...WEB_ROUTES.map((route) => ({ ...route, path: `accounts/{account}/${route.path}` })),
];

/** The headers of API Gateway's own answers (WebApi.secureGatewayAnswers): none may hold a quote. */
export const GATEWAY_ANSWER_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': 'sandbox',
  'Referrer-Policy': 'no-referrer',
  'Strict-Transport-Security': 'max-age=31536000',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'X-Robots-Tag': 'noindex, nofollow',
};

/**
 * API Gateway in front of the web function: GET/HEAD/POST /restore/{domain}, /snooze/{domain} and
 * /acknowledge/{domain}; GET/HEAD /finding/{domain}, /report, /report.json and /calendar.ics ({@link WEB_ROUTES}). Throttled for a
 * few humans (and the calendar apps polling the feed); where the stage logs, its access logs record
 * the path but never the query string (the signature).
 */
export class WebApi extends Construct {
  readonly fn: SentinelFunction;
  readonly api: apigateway.RestApi;
  /** Base URL the scan signs every link under (includes the stage, ends with '/'). */
  readonly url: string;
  /** The stage's execution log group (errors only), created by the stack with a retention, when the stage logs. */
  readonly executionLogs?: logs.LogGroup;
  /** What the web function's alarms and the dashboard watch. */
  readonly metrics: WebMetrics;

  constructor(scope: Construct, id: string, props: WebApiProps) {
    super(scope, id);
    this.fn = new SentinelFunction(this, 'Function', {
      entry: props.entry,
      description: 'domain-sentinel: web links (restore, snooze, acknowledge, report page, calendar feed)',
      serviceName: 'domain-sentinel-restore',
      // Sized by bench/web-urgent.ts: the page or feed of an account of a million urgent findings
      // peaked at 250 MB and took 13 s at 256 MB (a seventh of a CPU), too close to 256 MB and 15 s.
      // Lambda's CPU grows with memory, so a request costs about the same GB-seconds at 1 024 MB.
      memorySize: 1024,
      // A snooze at its slowest: the reseller's 10 s, a running scan's lease waited out over the action
      // store's tries (6.2 s), the state written (a hung AWS call gives up in 2.2 s,
      // functions/aws/sdk-timeouts.ts; docs/links.md has the budget): 25 s holds it, within API
      // Gateway's 29 s, so the caller gets the page that says what happened, never the gateway's bare 504.
      timeout: Duration.seconds(25),
      environment: webEnvironment(props),
    });
    this.api = new apigateway.RestApi(this, 'Api', {
      // API Gateway's metrics are keyed by API name, not id: a name unique to the stack keeps the
      // 5XX alarm from counting another API that kept the default name.
      restApiName: props.apiName ?? `${Stack.of(this).stackName}-restore`,
      description: 'domain-sentinel restore links',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      // The account's API Gateway CloudWatch role is not this API's to set (AccountSettings owns it).
      cloudWatchRole: false,
      deployOptions: {
        stageName: STAGE,
        throttlingRateLimit: props.rateLimit ?? 2,
        throttlingBurstLimit: props.burstLimit ?? 5,
        ...(props.stageLogs ? this.stageLogging() : {}),
      },
    });
    // RestApi adds an output of its URL by itself; the stack's RestoreApiUrl already gives it (aws-cdk#25373).
    this.api.node.tryRemoveChild('Endpoint');
    this.addRoutes(props.accounts ? [...WEB_ROUTES, ...ACCOUNT_ROUTES] : WEB_ROUTES);
    this.secureGatewayAnswers();
    this.url = this.api.url;
    this.metrics = new WebMetrics(
      this.fn,
      this.api.deploymentStage,
      props.deploymentName ?? Stack.of(this).stackName,
    );
    if (props.stageLogs) this.executionLogs = this.createExecutionLogs();
    if (props.webAclArn) this.associateWebAcl(props.webAclArn);
    this.acknowledge(props.stageLogs ?? false, props.webAclArn !== undefined);
  }

  /**
   * Every route through one Lambda integration. Its permission is one for the whole API
   * (`scopePermissionToMethod: false`, CDK's own): one statement per method would grow the
   * function's resource policy (Lambda allows 20 KB) with every route and account path.
   */
  private addRoutes(routes: readonly WebRoute[]): void {
    // Acting paths must name a domain; the function validates the rest (and the snooze form).
    const validator = this.api.addRequestValidator('RequestValidator', {
      validateRequestParameters: true,
      validateRequestBody: true,
    });
    const integration = new apigateway.LambdaIntegration(this.fn, { scopePermissionToMethod: false });
    for (const route of routes) {
      let resource: apigateway.IResource = this.api.root;
      for (const part of route.path.split('/'))
        resource = resource.getResource(part) ?? resource.addResource(part);
      const parameters = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
      for (const method of route.methods)
        resource.addMethod(method, integration, {
          requestValidator: validator,
          ...(parameters.length
            ? {
                requestParameters: Object.fromEntries(
                  parameters.map((name) => [`method.request.path.${name}`, true]),
                ),
              }
            : {}),
          authorizationType: apigateway.AuthorizationType.NONE,
        });
    }
  }

  /**
   * API Gateway's own answers (its 403 for an unknown path, 413, 429 when throttled, 502, 504) carry
   * the headers the function's own answers do, as far as a static gateway value can: never cached,
   * never sniffed, framed or indexed, no referrer. A gateway value is one quoted literal that cannot
   * hold a quote, so the policy is `sandbox` (no script, no form, no plugin), not the function's.
   */
  private secureGatewayAnswers(): void {
    const headers = Object.fromEntries(
      Object.entries(GATEWAY_ANSWER_HEADERS).map(([name, value]) => [name, `'${value}'`]),
    );
    for (const [id, type] of [
      ['Default4xx', apigateway.ResponseType.DEFAULT_4XX],
      ['Default5xx', apigateway.ResponseType.DEFAULT_5XX],
    ] as const)
      this.api.addGatewayResponse(id, { type, responseHeaders: headers });
  }

  /** Execution logs for errors only, and never request data: the query string holds the signature. */
  private stageLogging(): apigateway.StageOptions {
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: logs.RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    return {
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
    };
  }

  /**
   * API Gateway writes execution logs to a group it names itself (after the API's id, new with every
   * API, so the name is this stack's alone) and would create without a retention, to outlive
   * `cdk destroy`. Made here first (the stage waits for it), it has one and goes with the stack.
   */
  private createExecutionLogs(): logs.LogGroup {
    const group = new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${STAGE}`,
      retention: logs.RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.api.deploymentStage.node.addDependency(group);
    return group;
  }

  /**
   * The stage behind the web ACL: CloudFormation associates it once the stage exists and removes the
   * association with the stage. AWS WAF associates a regional web ACL with resources of its own
   * region and account only: a literal ARN of another is refused at synth, or, by a stack that
   * names neither, by a rule checked before the deploy creates anything.
   */
  private associateWebAcl(webAclArn: string): void {
    const stack = Stack.of(this);
    // A web ACL the app creates (its ARN a token) is where its stack is: only a literal ARN is read.
    const [, , , region, account] = Token.isUnresolved(webAclArn) ? [] : webAclArn.split(':');
    const where = [
      { arn: region, stack: stack.region, pseudo: Aws.REGION, said: `in ${region}`, what: 'region' },
      {
        arn: account,
        stack: stack.account,
        pseudo: Aws.ACCOUNT_ID,
        said: `of account ${account}`,
        what: 'account',
      },
    ];
    const assertions: CfnRuleAssertion[] = [];
    for (const w of where) {
      if (w.arn === undefined) continue;
      const why = `AWS WAF associates a regional web ACL with resources of its own ${w.what} only; create one in the stack's ${w.what}`;
      if (Token.isUnresolved(w.stack))
        assertions.push({
          assert: Fn.conditionEquals(w.pseudo, w.arn),
          assertDescription: `webAclArn names a web ACL ${w.said}, but the stack deploys to another: ${why}`,
        });
      else if (w.arn !== w.stack)
        throw new ConfigError(
          `invalid DomainSentinel props: webAclArn names a web ACL ${w.said}, but the stack deploys to ${w.stack}: ${why}`,
        );
    }
    if (assertions.length > 0) new CfnRule(this, 'WebAclWhere', { assertions });
    new wafv2.CfnWebACLAssociation(this, 'WebAcl', {
      resourceArn: this.api.deploymentStage.stageArn,
      webAclArn,
    });
  }

  private acknowledge(stageLogs: boolean, webAcl: boolean): void {
    const capability =
      'Every link is a capability URL: the function verifies an HMAC-SHA256 signature over action, subject and expiry ' +
      'before it reads or changes anything, and the recipients of the alert are e-mail readers without AWS identities.';
    Validations.of(this.api).acknowledge({ id: 'AwsSolutions-APIG4', reason: capability });
    Validations.of(this.api).acknowledge({ id: 'AwsSolutions-COG4', reason: capability });
    if (!webAcl)
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason:
          'Every method of the API needs a valid HMAC-signed link before it reads or changes anything, and the stage ' +
          'is throttled to a few requests per second, which caps the cost of unsigned requests. What a web ACL would ' +
          'add is availability: the throttle is the whole stage, so a flood from anyone holding the address answers real ' +
          'clicks 429 while it lasts; `sentinel restore` does not pass through API Gateway, and docs/security.md says ' +
          'how to associate a rate-based web ACL with the stage (the setting webAclArn) where that risk is not accepted (more than the stack costs).',
      });
    if (stageLogs) return;
    const noAccountRole =
      "A stage's CloudWatch logs need the account's API Gateway CloudWatch Logs role, an account-wide setting this " +
      'stack leaves to its owner unless ownAccountSettings says it is the stack (docs/deploy.md); the web function logs ' +
      "every request it serves (its own log group), and the stage's 4XX/5XX metrics count what API Gateway refuses.";
    Validations.of(this.api).acknowledge({ id: 'AwsSolutions-APIG1', reason: noAccountRole });
    Validations.of(this.api).acknowledge({ id: 'AwsSolutions-APIG6', reason: noAccountRole });
  }
}

/** The web function's environment from the typed props; grants add their own variables. */
function webEnvironment(props: WebApiProps): Record<string, string> {
  return {
    [ENV.resellerBaseUrl]: props.resellerBaseUrl,
    [ENV.expiryDays]: String(props.expiryDays),
    [ENV.criticalDays]: String(props.criticalDays),
    ...(props.quarantineDays ? { [ENV.quarantineDays]: props.quarantineDays } : {}),
    ...(props.policies ? { [ENV.policies]: props.policies } : {}),
    ...(props.timeZone ? { [ENV.timeZone]: props.timeZone } : {}),
    ...(props.deploymentName ? { [ENV.deploymentName]: props.deploymentName } : {}),
    ...(props.accounts ? { [ACCOUNT_ENV.accountsOnly]: 'true' } : {}),
  };
}

/** The web API's metrics: Lambda's of its function, the stage's, and the outcomes the function emits. */
export class WebMetrics extends CustomMetricFactory {
  constructor(
    private readonly fn: lambda.IFunction,
    private readonly stage: apigateway.Stage,
    deploymentName: string,
  ) {
    super(METRICS.webService, deploymentName);
  }

  errors(reading: MetricReading = {}): cloudwatch.Metric {
    return this.fn.metricErrors(metricOptions(reading));
  }

  throttles(reading: MetricReading = {}): cloudwatch.Metric {
    return this.fn.metricThrottles(metricOptions(reading));
  }

  /**
   * Server errors of the stage. The web function answers a failed restore with a 5xx page instead
   * of throwing, so the function's Errors metric never sees it; API Gateway's 5XXError does.
   */
  serverErrors(reading: MetricReading = {}): cloudwatch.Metric {
    return this.stage.metricServerError(metricOptions(reading));
  }

  /**
   * Restore attempts the audit trail could not keep: the web function answers the restore as it
   * went (200 for one done), so neither its errors nor the API's 5xx see them; this data point does.
   */
  auditFailures(reading: MetricReading = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: METRICS.namespace,
      metricName: METRICS.webOutcome,
      dimensionsMap: { ...this.dimensions(), action: 'restore', outcome: METRICS.auditFailedOutcome },
      ...metricOptions(reading),
    });
  }

  /** One line per action and outcome (restored, refused, outcome_unknown, snoozed, …). */
  outcomes(): cloudwatch.MathExpression {
    return this.search(METRICS.webOutcome, ['action', 'outcome']);
  }
}
