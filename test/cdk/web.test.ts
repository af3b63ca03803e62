import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { beforeAll, describe, expect, it } from 'vitest';
import { DomainSentinel } from '../../lib/domain-sentinel';
import { DomainSentinelStack } from '../../lib/stack';
import { settingsFromContext, synthStack } from '../support/stack';

let template: Template;
let stack: DomainSentinelStack;
beforeAll(() => {
  const app = new App({
    context: {
      'aws:cdk:bundling-stacks': [],
      resellerBaseUrl: 'https://api.reseller.example',
      alertEmails: 'alerts@example.nl',
      opsEmails: 'ops@example.nl',
    },
  });
  stack = new DomainSentinelStack(app, 'DomainSentinel', {
    settings: settingsFromContext(app),
    env: { account: '123456789012', region: 'eu-west-1' },
  });
  template = Template.fromStack(stack);
}, 180_000);

const id = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as never);
const bucketArn = () => ({ 'Fn::GetAtt': [id(stack.reports.bucket), 'Arn'] });
const objectArn = (key: string) => ({ 'Fn::Join': ['', [bucketArn(), `/${key}`]] });
const statementsOf = (fn: { role?: { node: { defaultChild?: unknown } } }) => {
  const roleId = stack.getLogicalId(fn.role?.node.defaultChild as never);
  const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } });
  return Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement);
};

describe('WebApi', () => {
  /** path → methods, from the template's resources and methods. */
  function routes(): Record<string, string[]> {
    const resources = template.findResources('AWS::ApiGateway::Resource');
    const pathOf = (resourceId: string): string => {
      const r = resources[resourceId];
      if (!r) return '';
      const parent = r.Properties.ParentId;
      const parentPath = parent.Ref ? pathOf(parent.Ref) : '';
      return `${parentPath}/${r.Properties.PathPart}`;
    };
    const out: Record<string, string[]> = {};
    for (const m of Object.values(template.findResources('AWS::ApiGateway::Method'))) {
      const path = pathOf(m.Properties.ResourceId.Ref);
      out[path] = [...(out[path] ?? []), m.Properties.HttpMethod].sort();
    }
    return out;
  }

  it('routes every link through the one function: acting links GET/HEAD/POST, read-only links GET/HEAD', () => {
    expect(routes()).toEqual({
      '/restore/{domain}': ['GET', 'HEAD', 'POST'],
      '/snooze/{domain}': ['GET', 'HEAD', 'POST'],
      '/acknowledge/{domain}': ['GET', 'HEAD', 'POST'],
      '/report': ['GET', 'HEAD'],
      '/report.json': ['GET', 'HEAD'],
      '/calendar.ics': ['GET', 'HEAD'],
      // A finding's page is read-only: it offers the acting links, each confirming before it acts.
      '/finding/{domain}': ['GET', 'HEAD'],
    });
    const integrations = Object.values(template.findResources('AWS::ApiGateway::Method')).map(
      (m) => m.Properties.Integration.Uri['Fn::Join'][1][3]['Fn::GetAtt'][0],
    );
    expect(new Set(integrations)).toEqual(new Set([id(stack.web.fn)]));
  });

  it('judges findings with the scan’s own thresholds, so a snooze means the same severity on both sides', () => {
    const { template: t } = synthStack({ expiryDays: 45, criticalDays: 3 });
    for (const description of ['web links', 'scans the reseller account']) {
      t.hasResourceProperties('AWS::Lambda::Function', {
        Description: Match.stringLikeRegexp(description),
        Environment: { Variables: Match.objectLike({ EXPIRY_DAYS: '45', CRITICAL_DAYS: '3' }) },
      });
    }
  });

  it('gives API Gateway own 4XX and 5XX answers the security headers, each a quoted literal without a quote inside', () => {
    const answers = template.findResources('AWS::ApiGateway::GatewayResponse');
    const byType = Object.fromEntries(
      Object.values(answers).map((r) => [r.Properties.ResponseType, r.Properties.ResponseParameters]),
    );
    expect(Object.keys(byType).sort()).toEqual(['DEFAULT_4XX', 'DEFAULT_5XX']);
    for (const parameters of Object.values(byType)) {
      expect(parameters).toMatchObject({
        'gatewayresponse.header.Cache-Control': "'no-store'",
        'gatewayresponse.header.X-Content-Type-Options': "'nosniff'",
        'gatewayresponse.header.Content-Security-Policy': "'sandbox'",
        'gatewayresponse.header.X-Frame-Options': "'DENY'",
        'gatewayresponse.header.Referrer-Policy': "'no-referrer'",
      });
      for (const value of Object.values(parameters as Record<string, string>))
        expect(value).toMatch(/^'[^']+'$/);
    }
  });

  it('keeps one stage throttled for a few people, and the 5XX and error alarms on it', () => {
    template.resourceCountIs('AWS::ApiGateway::Stage', 1);
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([
        Match.objectLike({ ThrottlingRateLimit: 2, ThrottlingBurstLimit: 5, DataTraceEnabled: false }),
      ]),
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: id(stack.web.fn) } }],
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: '5XXError',
      Namespace: 'AWS/ApiGateway',
    });
  });
});

describe('ReportBucket', () => {
  it('is private, encrypted, TLS-only, and expires old reports', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          { Id: 'ExpireOldReports', Prefix: 'reports/', ExpirationInDays: 30, Status: 'Enabled' },
        ]),
      },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: id(stack.reports.bucket) },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('lets the scan put latest.json, its view and reports/ only, and names the bucket in its environment', () => {
    const puts = statementsOf(stack.scan.fn).filter((s) =>
      [s.Action].flat().some((a: string) => a.startsWith('s3:')),
    );
    expect(puts).toEqual([
      {
        Action: 's3:PutObject',
        Effect: 'Allow',
        Resource: [objectArn('latest.json'), objectArn('latest-view.json'), objectArn('reports/*')],
      },
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      Description: Match.stringLikeRegexp('scans the reseller account'),
      Environment: { Variables: Match.objectLike({ REPORT_BUCKET: { Ref: id(stack.reports.bucket) } }) },
    });
  });

  it('lets the web function read latest.json, its view (latest-view.json) and the reports kept under reports/, and nothing else', () => {
    const s3 = statementsOf(stack.web.fn).filter((s) =>
      [s.Action].flat().some((a: string) => a.startsWith('s3:')),
    );
    // reports/: report.json presigns the kept copy of the report its link names, which no later scan overwrites.
    expect(s3).toEqual([
      {
        Action: 's3:GetObject',
        Effect: 'Allow',
        Resource: [objectArn('latest.json'), objectArn('latest-view.json'), objectArn('reports/*')],
      },
      {
        Action: 's3:ListBucket',
        Effect: 'Allow',
        Resource: bucketArn(),
        Condition: { StringLike: { 's3:prefix': ['latest.json', 'latest-view.json', 'reports/*'] } },
      },
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('web links'),
      Environment: { Variables: Match.objectLike({ REPORT_BUCKET: { Ref: id(stack.reports.bucket) } }) },
    });
  });
});

describe('webAclArn', () => {
  const ACL =
    'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/links/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';

  it('associates no web ACL unless one is given', () => {
    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
  });

  it('associates the given regional web ACL with the stage every link goes through', () => {
    const { stack: s, template: t } = synthStack({ webAclArn: ACL });
    const stage = s.getLogicalId(s.web.api.deploymentStage.node.defaultChild as never);
    const api = s.getLogicalId(s.web.api.node.defaultChild as never);
    const associations = Object.values(t.findResources('AWS::WAFv2::WebACLAssociation'));
    expect(associations).toHaveLength(1);
    expect(associations[0]?.Properties.WebACLArn).toBe(ACL);
    // arn:aws:apigateway:REGION::/restapis/API/stages/STAGE, from the API's and the stage's refs.
    const arn = JSON.stringify(associations[0]?.Properties.ResourceArn);
    expect(arn).toContain('::/restapis/');
    expect(arn).toContain(`{"Ref":"${api}"}`);
    expect(arn).toContain(`{"Ref":"${stage}"}`);
  });

  it.each([
    ['a CloudFront (global) web ACL', ACL.replace('regional/', 'global/')],
    [
      'a classic WAF ARN',
      'arn:aws:waf-regional:eu-west-1:123456789012:webacl/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b',
    ],
    ['an ID alone', '0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b'],
  ])('refuses %s, naming the setting and the form it takes', (_what, value) => {
    expect(() => synthStack({ webAclArn: value })).toThrow(
      /webAclArn must be the ARN of a regional AWS WAF web ACL, such as arn:aws:wafv2:/,
    );
  });

  it('refuses a web ACL of another account than the stack, which AWS WAF cannot associate', () => {
    expect(() => synthStack({ webAclArn: ACL.replace('123456789012', '210987654321') })).toThrow(
      'webAclArn names a web ACL of account 210987654321, but the stack deploys to 123456789012',
    );
  });

  it('associates a web ACL the same app creates, given as its unresolved ARN', () => {
    // A construct user passes acl.attrArn: a token, which no ARN pattern can read at synth.
    const s = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'S', {
      env: { account: '123456789012', region: 'eu-west-1' },
    });
    const acl = new wafv2.CfnWebACL(s, 'Acl', {
      defaultAction: { allow: {} },
      scope: 'REGIONAL',
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: 'links', sampledRequestsEnabled: true },
    });
    new DomainSentinel(s, 'X', {
      resellerBaseUrl: 'https://api.reseller.example',
      alertEmails: ['ops@example.nl'],
      webAclArn: acl.attrArn,
    });
    Template.fromStack(s).hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [s.getLogicalId(acl), 'Arn'] },
    });
  });

  it('has an environment-agnostic stack check the web ACL region and account at deploy, before anything is created', () => {
    // No region or account at synth: nothing to refuse there, and without a rule the association
    // failed half-way through the deploy (a first deploy rolls all of it back).
    const s = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'S');
    new DomainSentinel(s, 'X', {
      resellerBaseUrl: 'https://api.reseller.example',
      alertEmails: ['ops@example.nl'],
      webAclArn: ACL,
    });
    const rules = Object.values(Template.fromStack(s).toJSON().Rules ?? {}) as Array<{
      Assertions: Array<{ Assert: unknown; AssertDescription: string }>;
    }>;
    const assertions = rules.flatMap((r) => r.Assertions);
    expect(assertions).toContainEqual({
      Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'eu-west-1'] },
      AssertDescription: expect.stringMatching(/^webAclArn names a web ACL in eu-west-1/),
    });
    expect(assertions).toContainEqual({
      Assert: { 'Fn::Equals': [{ Ref: 'AWS::AccountId' }, '123456789012'] },
      AssertDescription: expect.stringMatching(/^webAclArn names a web ACL of account 123456789012/),
    });
  });

  it('refuses a web ACL of another region than the stack, which it cannot protect', () => {
    expect(() => synthStack({ webAclArn: ACL.replace('eu-west-1', 'us-east-1') })).toThrow(
      'webAclArn names a web ACL in us-east-1, but the stack deploys to eu-west-1',
    );
  });
});
