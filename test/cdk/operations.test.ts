import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainSentinelStack } from '../../lib/stack';
import { synthStack } from '../support/stack';

let template: Template;
let stack: DomainSentinelStack;
beforeAll(() => {
  ({ template, stack } = synthStack());
}, 180_000);
const id = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as never);
const alarmNamed = (name: string) =>
  Object.values(template.findResources('AWS::CloudWatch::Alarm', { Properties: { AlarmName: name } }))[0]
    ?.Properties;

/** A Fn::Join of the template as one string, each reference shown as `{Logical.Attr}`. */
function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (v['Fn::Join']) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(joined).join(separator);
  }
  if (v.Ref) return `{${v.Ref}}`;
  if (v['Fn::GetAtt']) return `{${(v['Fn::GetAtt'] as string[]).join('.')}}`;
  throw new Error(`cannot join ${JSON.stringify(value)}`);
}

interface Widget {
  readonly properties: {
    readonly title: string;
    readonly metrics?: unknown[][];
    readonly annotations?: { horizontal?: Array<{ value: number; label: string }> };
  };
}

describe('dashboard', () => {
  const widgets = () => {
    const dashboard = Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0];
    return (JSON.parse(joined(dashboard?.Properties.DashboardBody)) as { widgets: Widget[] }).widgets;
  };
  const metricsOf = (title: RegExp) => {
    const widget = widgets().find((w) => title.test(w.properties.title));
    if (!widget) throw new Error(`no widget ${title}`);
    return JSON.stringify(widget.properties.metrics);
  };

  it('shows scan duration against its timeout and the alarm’s share of it', () => {
    const widget = widgets().find((w) => /duration/i.test(w.properties.title));
    expect(widget?.properties.annotations?.horizontal).toEqual([
      expect.objectContaining({ value: 300_000, label: 'timeout' }),
      expect.objectContaining({ value: 240_000, label: 'alarm (80 %)' }),
    ]);
    expect(JSON.stringify(widget?.properties.metrics)).toContain(
      `["AWS/Lambda","Duration","FunctionName","{${id(stack.scan.fn)}}",{"label":"longest run","period":3600,"stat":"Maximum"}]`,
    );
  });

  it('shows domains read, critical items and warning findings, requests and 429s of this deployment’s scan', () => {
    const scan = (metric: string) =>
      `["DomainSentinel","${metric}","deployment","DomainSentinel","service","scan"`;
    expect(metricsOf(/Domains read/)).toContain(scan('DomainsScanned'));
    expect(metricsOf(/Critical items/)).toContain(scan('CriticalFindings'));
    expect(metricsOf(/Critical items/)).toContain(scan('WarningFindings'));
    expect(metricsOf(/429/)).toContain(scan('ResellerRequests'));
    expect(metricsOf(/429/)).toContain(scan('ResellerThrottled'));
  });

  it('shows publishes of the alert topic, web outcomes and errors', () => {
    expect(metricsOf(/published/)).toContain(
      `["AWS/SNS","NumberOfMessagesPublished","TopicName","{${id(stack.alerts.topic)}.TopicName}"`,
    );
    expect(metricsOf(/Web outcomes/)).toContain(
      `SEARCH('{DomainSentinel,action,deployment,outcome,service} MetricName=\\"WebOutcome\\" deployment=\\"DomainSentinel\\"', 'Sum', 3600)`,
    );
    const errors = metricsOf(/Errors/);
    for (const fn of [stack.scan.fn, stack.web.fn]) {
      expect(errors).toContain(`["AWS/Lambda","Errors","FunctionName","{${id(fn)}}"`);
      expect(errors).toContain(`["AWS/Lambda","Throttles","FunctionName","{${id(fn)}}"`);
    }
    expect(errors).toContain('["AWS/ApiGateway","5XXError","ApiName","DomainSentinel-restore"');
  });
});

describe('an audit write that fails', () => {
  // Issue 33 item 4: the restore is answered 200 and only the web function's WebOutcome data point
  // (outcome audit_failed) shows it; this alarm and this widget watch exactly that point.
  const watched = [
    { Name: 'action', Value: 'restore' },
    { Name: 'deployment', Value: 'DomainSentinel' },
    { Name: 'outcome', Value: 'audit_failed' },
    { Name: 'service', Value: 'web' },
  ];

  it('raises an alarm to the ops topic', () => {
    const alarm = alarmNamed('DomainSentinel/AuditWriteFailed');
    expect(alarm).toMatchObject({
      Namespace: 'DomainSentinel',
      MetricName: 'WebOutcome',
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: id(stack.watchdog.topic) }],
    });
    const dimensions = [...((alarm?.Dimensions ?? []) as Array<{ Name: string }>)].sort((a, b) =>
      a.Name.localeCompare(b.Name),
    );
    expect(dimensions).toEqual(watched);
  });

  it('shows on the dashboard', () => {
    const dashboard = Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0];
    const { widgets } = JSON.parse(joined(dashboard?.Properties.DashboardBody)) as { widgets: Widget[] };
    const widget = widgets.find((w) => /Audit trail writes failed/.test(w.properties.title));
    expect(JSON.stringify(widget?.properties.metrics)).toContain(
      '["DomainSentinel","WebOutcome","action","restore","deployment","DomainSentinel","outcome","audit_failed","service","web"',
    );
  });
});

describe('alarms added for operations', () => {
  it('raise throttles of either function', () => {
    for (const [name, fn] of [
      ['DomainSentinel/ScanThrottled', stack.scan.fn],
      ['DomainSentinel/WebThrottled', stack.web.fn],
    ] as const) {
      expect(alarmNamed(name)).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Throttles',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: id(fn) } }],
        Statistic: 'Sum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: id(stack.watchdog.topic) }],
      });
    }
  });

  it('raise a scan that took more than 80 % of its timeout', () => {
    expect(alarmNamed('DomainSentinel/ScanNearTimeout')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Duration',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: id(stack.scan.fn) } }],
      Statistic: 'Maximum',
      Threshold: 240_000,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('raise SMS spend at the configured threshold when SMS numbers are configured, and not otherwise', () => {
    expect(alarmNamed('DomainSentinel/SmsSpend')).toMatchObject({
      Namespace: 'AWS/SNS',
      MetricName: 'SMSMonthToDateSpentUSD',
      Statistic: 'Maximum',
      Threshold: 0.8,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(alarmNamed('DomainSentinel/SmsSpend')?.Dimensions).toBeUndefined();
    // The metric has no dimension: it is the whole account's spend in the region, every team's SMS,
    // and whoever reads the alarm must not look for the cause in this stack alone.
    expect(alarmNamed('DomainSentinel/SmsSpend')?.AlarmDescription).toMatch(
      /every sender in this AWS account and region, not this deployment alone/,
    );
    const { template: custom } = synthStack({ smsSpendAlarmUsd: '20' });
    custom.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'DomainSentinel/SmsSpend',
      Threshold: 20,
    });
    const { template: noSms } = synthStack({ alertSmsNumbers: '' });
    expect(
      noSms.findResources('AWS::CloudWatch::Alarm', { Properties: { MetricName: 'SMSMonthToDateSpentUSD' } }),
    ).toEqual({});
    expect(
      noSms.findResources('Custom::AWS', {
        Properties: { Create: Match.stringLikeRegexp('setSMSAttributes') },
      }),
    ).toEqual({});
  });
});

describe('the dead-man alarm after the first deploy', () => {
  it('is armed by one DeadManArmed data point the deploy puts on create, in this deployment’s dimensions', () => {
    const call = Object.values(template.findResources('Custom::AWS')).find((r) =>
      joined(r.Properties.Create).includes('putMetricData'),
    );
    expect(call?.Properties.Update).toBeUndefined();
    expect(call?.Properties.Delete).toBeUndefined();
    expect(JSON.parse(joined(call?.Properties.Create))).toEqual({
      service: 'CloudWatch',
      action: 'putMetricData',
      parameters: {
        Namespace: 'DomainSentinel',
        MetricData: [
          {
            MetricName: 'DeadManArmed',
            Dimensions: [
              { Name: 'service', Value: 'scan' },
              { Name: 'deployment', Value: 'DomainSentinel' },
            ],
            Value: 1,
            Unit: 'Count',
          },
        ],
      },
      physicalResourceId: { id: 'DomainSentinel/DeadManArmed' },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          {
            Action: 'cloudwatch:PutMetricData',
            Effect: 'Allow',
            Resource: '*',
            Condition: { StringEquals: { 'cloudwatch:namespace': 'DomainSentinel' } },
          },
        ],
      },
    });
  });

  it('runs that call in a function whose log group the stack makes, with a retention', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('^DomainSentinelSdkCallLogs') } },
    });
    template.hasResource('AWS::Logs::LogGroup', {
      DeletionPolicy: 'Delete',
      Properties: { RetentionInDays: 30 },
    });
  });
});

describe('API Gateway execution logs', () => {
  it('go, where the stack owns the account settings, to a log group the stack creates first, named as API Gateway names it, with a retention', () => {
    const { template: owned, stack: s } = synthStack({ ownAccountSettings: 'true' });
    const logs = s.web.executionLogs;
    if (!logs) throw new Error('no execution logs');
    const groupId = s.getLogicalId(logs.node.defaultChild as never);
    owned.hasResource('AWS::Logs::LogGroup', {
      DeletionPolicy: 'Delete',
      Properties: {
        LogGroupName: {
          'Fn::Join': [
            '',
            [
              'API-Gateway-Execution-Logs_',
              { Ref: s.getLogicalId(s.web.api.node.defaultChild as never) },
              '/prod',
            ],
          ],
        },
        RetentionInDays: 90,
      },
    });
    owned.hasResource('AWS::ApiGateway::Stage', {
      DependsOn: Match.arrayWith([groupId]),
      Properties: { StageName: 'prod' },
    });
    // Without the account's role there are no stage logs, and so no group for them.
    expect(stack.web.executionLogs).toBeUndefined();
  });
});
