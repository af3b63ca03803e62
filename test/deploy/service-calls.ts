import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AwsCall } from './aws-calls';
import { routesOf, type TemplateResolver } from './template';

/**
 * What AWS services do for the stack, as IAM judges it, read from the template: no function makes
 * these calls, so no proxy sees them, yet each fails the deploy or the alerting without its
 * permission. The caller is a service principal (judged by the resource's policy: a topic's, a
 * key's, a queue's, a function's, a role's trust) or a role of the template a service acts with
 * (judged by the role's policies).
 */

type Call = AwsCall;

/** The nested stacks' templates of a cloud assembly, each with its parameters as the parent passes them. */
export function nestedTemplates(
  cdkOut: string,
  parent: TemplateResolver,
): Array<{ id: string; template: unknown; parameters: Record<string, string> }> {
  const assets = JSON.parse(readFileSync(join(cdkOut, `${parent.env.stackName}.assets.json`), 'utf8')) as {
    files: Record<string, { source: { path: string } }>;
  };
  return parent.ofType('AWS::CloudFormation::Stack').map((id) => {
    const resource = parent.resource(id);
    // The template's asset, by the hash its TemplateURL names.
    const hash = /([0-9a-f]{64})\.json/.exec(JSON.stringify(resource.Properties?.TemplateURL))?.[1] ?? '';
    const file = assets.files[hash]?.source.path;
    if (!file) throw new Error(`${id}: its template is not an asset of ${cdkOut}`);
    const parameters = parent.resolve(resource.Properties?.Parameters ?? {}) as Record<string, string>;
    return { id, template: JSON.parse(readFileSync(join(cdkOut, file), 'utf8')), parameters };
  });
}

const arnOf = (resolver: TemplateResolver, id: string) => resolver.attribute(id, 'Arn');
const roleIdOf = (value: unknown) => /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(JSON.stringify(value))?.[1];

/** CloudWatch, for every alarm that notifies a topic: it publishes, and encrypts with the topic's key. */
export function alarmNotifications(all: readonly TemplateResolver[], parent: TemplateResolver): Call[] {
  const { account, region } = parent.env;
  const keyOf = (topicArn: string) => {
    const topicId = parent.ofType('AWS::SNS::Topic').find((id) => parent.ref(id) === topicArn);
    const key = topicId ? parent.resource(topicId).Properties?.KmsMasterKeyId : undefined;
    return key ? parent.string(key, `${topicId} key`) : undefined;
  };
  return all.flatMap((resolver) =>
    resolver.ofType('AWS::CloudWatch::Alarm').flatMap((id) => {
      const props = resolver.resource(id).Properties ?? {};
      const alarm = resolver.attribute(id, 'Arn');
      const topics = new Set(
        (
          resolver.resolve([
            ...((props.AlarmActions as unknown[]) ?? []),
            ...((props.OKActions as unknown[]) ?? []),
          ]) as string[]
        ).filter((arn) => arn.startsWith('arn:aws:sns:')),
      );
      const context = { 'aws:SourceArn': alarm, 'aws:SourceAccount': account };
      const via = `CloudWatch notifying for the alarm ${String(props.AlarmName)}`;
      return [...topics].flatMap((topic) => {
        const key = keyOf(topic);
        return [
          { caller: 'cloudwatch.amazonaws.com', action: 'sns:Publish', resource: topic, context, via },
          ...(key
            ? ['kms:GenerateDataKey', 'kms:Decrypt'].map((action) => ({
                caller: 'cloudwatch.amazonaws.com',
                action,
                resource: key,
                context: { ...context, 'kms:ViaService': `sns.${region}.amazonaws.com` },
                via,
              }))
            : []),
        ];
      });
    }),
  );
}

/**
 * EventBridge, for every rule that targets a topic of the stack: it publishes as its service, named
 * by the rule (`aws:SourceArn`), and SNS encrypts with the topic's key for it; those KMS calls carry
 * neither aws:SourceArn nor aws:SourceAccount (SNS's guide: such conditions are not supported for
 * EventBridge publishing to an encrypted topic), so the context here has neither.
 */
export function ruleDeliveries(parent: TemplateResolver): Call[] {
  return parent.ofType('AWS::Events::Rule').flatMap((id) => {
    const targets = (parent.resource(id).Properties?.Targets as Array<{ Arn: unknown }>) ?? [];
    const rule = parent.attribute(id, 'Arn');
    return targets.flatMap((target) => {
      const topic = parent.string(target.Arn, `${id} target`);
      if (!topic.startsWith('arn:aws:sns:')) return [];
      const topicId = parent.ofType('AWS::SNS::Topic').find((t) => parent.ref(t) === topic);
      const key = topicId ? parent.resource(topicId).Properties?.KmsMasterKeyId : undefined;
      const via = `EventBridge delivering the rule ${id} to ${topic.split(':').pop()}`;
      return [
        {
          caller: 'events.amazonaws.com',
          action: 'sns:Publish',
          resource: topic,
          context: { 'aws:SourceArn': rule, 'aws:SourceAccount': parent.env.account },
          via,
        },
        ...(key
          ? ['kms:GenerateDataKey', 'kms:Decrypt'].map((action) => ({
              caller: 'events.amazonaws.com',
              action,
              resource: parent.string(key, `${topicId} key`),
              context: { 'kms:ViaService': `sns.${parent.env.region}.amazonaws.com` },
              via,
            }))
          : []),
      ];
    });
  });
}

/** SNS, delivering each topic's messages to every queue subscribed to it. */
export function queueDeliveries(all: readonly TemplateResolver[]): Call[] {
  return all.flatMap((resolver) =>
    resolver.ofType('AWS::SNS::Subscription').flatMap((id) => {
      const props = resolver.resolve(resolver.resource(id).Properties) as Record<string, string>;
      if (props.Protocol !== 'sqs') return [];
      return [
        {
          caller: 'sns.amazonaws.com',
          action: 'sqs:SendMessage',
          resource: String(props.Endpoint),
          context: { 'aws:SourceArn': String(props.TopicArn), 'aws:SourceAccount': resolver.env.account },
          via: `SNS delivering ${String(props.TopicArn).split(':').pop()} to its subscribed queue`,
        },
      ];
    }),
  );
}

/** A service assuming a role of the template: judged by the role's trust policy. */
const assume = (resolver: TemplateResolver, roleId: string, service: string, sourceArn?: string): Call => ({
  caller: service,
  action: 'sts:AssumeRole',
  resource: arnOf(resolver, roleId),
  context: {
    'aws:SourceAccount': resolver.env.account,
    ...(sourceArn ? { 'aws:SourceArn': sourceArn } : {}),
  },
  via: `${service} assuming ${roleId}`,
});

/** EventBridge Scheduler, for every schedule: it assumes the schedule's role, invokes the target, and parks what it cannot deliver. */
export function scheduleCalls(resolver: TemplateResolver): Call[] {
  return resolver.ofType('AWS::Scheduler::Schedule').flatMap((id) => {
    const props = resolver.resource(id).Properties ?? {};
    const target = props.Target as Record<string, unknown>;
    // Scheduler names the schedule's group as the source of its role's session.
    const group = `arn:aws:scheduler:${resolver.env.region}:${resolver.env.account}:schedule-group/${String(props.GroupName ?? 'default')}`;
    const roleId = roleIdOf(target.RoleArn) as string;
    const arn = resolver.string(target.Arn, `${id} target`);
    const dlq = (target.DeadLetterConfig as { Arn?: unknown } | undefined)?.Arn;
    const via = 'EventBridge Scheduler running the schedule';
    return [
      assume(resolver, roleId, 'scheduler.amazonaws.com', group),
      {
        caller: roleId,
        action: arn.includes(':states:') ? 'states:StartExecution' : 'lambda:InvokeFunction',
        resource: arn,
        context: {},
        via,
      },
      ...(dlq
        ? [
            {
              caller: roleId,
              action: 'sqs:SendMessage',
              resource: resolver.string(dlq, `${id} DLQ`),
              context: {},
              via: `${via}: its dead-letter queue`,
            },
          ]
        : []),
    ];
  });
}

/** What Step Functions checks with the state machine's role when it creates one that logs (AWS's documented list). */
const LOG_DELIVERY = [
  'logs:CreateLogDelivery',
  'logs:GetLogDelivery',
  'logs:UpdateLogDelivery',
  'logs:DeleteLogDelivery',
  'logs:ListLogDeliveries',
  'logs:PutResourcePolicy',
  'logs:DescribeResourcePolicies',
  'logs:DescribeLogGroups',
];

/** Step Functions, creating each state machine: it assumes the role and sets up the log delivery with it. */
export function stateMachineCreation(resolver: TemplateResolver): Call[] {
  return resolver.ofType('AWS::StepFunctions::StateMachine').flatMap((id) => {
    const props = resolver.resource(id).Properties ?? {};
    const roleId = roleIdOf(props.RoleArn) as string;
    return [
      // Step Functions names the state machine as the source of its role's session.
      assume(resolver, roleId, 'states.amazonaws.com', resolver.ref(id)),
      ...(props.LoggingConfiguration
        ? LOG_DELIVERY.map((action) => ({
            caller: roleId,
            action,
            resource: '*',
            context: {},
            via: 'Step Functions creating the state machine with its log delivery',
          }))
        : []),
    ];
  });
}

const logWrites = (resolver: TemplateResolver, roleId: string, groups: string[], via: string): Call[] => {
  const group = (name: string) =>
    `arn:aws:logs:${resolver.env.region}:${resolver.env.account}:log-group:${name}`;
  return groups.flatMap((name) => [
    { caller: roleId, action: 'logs:CreateLogGroup', resource: group(name), context: {}, via },
    ...['logs:CreateLogStream', 'logs:PutLogEvents'].map((action) => ({
      caller: roleId,
      action,
      resource: `${group(name)}:log-stream:rehearsal`,
      context: {},
      via,
    })),
  ]);
};

/**
 * The roles the account's settings name, where the stack sets them: API Gateway writes every stage's
 * logs with its CloudWatch role, SNS writes SMS delivery status with its role.
 */
export function accountSettingRoles(resolver: TemplateResolver): Call[] {
  const { account, region } = resolver.env;
  const calls: Call[] = [];
  for (const id of resolver.ofType('AWS::ApiGateway::Account')) {
    const roleId = roleIdOf(resolver.resource(id).Properties?.CloudWatchRoleArn) as string;
    const groups = resolver.ofType('AWS::ApiGateway::Stage').flatMap((stageId) => {
      const stage = resolver.resolve(resolver.resource(stageId).Properties) as Record<string, never>;
      const access = (stage.AccessLogSetting as { DestinationArn?: string } | undefined)?.DestinationArn;
      return [
        `API-Gateway-Execution-Logs_${stage.RestApiId}/${stage.StageName}`,
        ...(access
          ? [
              String(access)
                .replace(/^arn:aws:logs:[^:]+:\d+:log-group:/, '')
                .replace(/:\*$/, ''),
            ]
          : []),
      ];
    });
    calls.push(
      assume(resolver, roleId, 'apigateway.amazonaws.com'),
      ...logWrites(resolver, roleId, groups, 'API Gateway writing the stage’s logs'),
    );
  }
  for (const id of resolver.ofType('Custom::AWS')) {
    const create = String(resolver.resolve(resolver.resource(id).Properties?.Create ?? ''));
    if (!create.includes('setSMSAttributes')) continue;
    const role = (JSON.parse(create) as { parameters: { attributes: { DeliveryStatusIAMRole: string } } })
      .parameters.attributes.DeliveryStatusIAMRole;
    const roleId = resolver
      .ofType('AWS::IAM::Role')
      .find((r) => resolver.attribute(r, 'Arn') === role) as string;
    const prefix = `sns/${region}/${account}/DirectPublishToPhoneNumber`;
    calls.push(
      assume(resolver, roleId, 'sns.amazonaws.com'),
      ...logWrites(resolver, roleId, [prefix, `${prefix}/Failure`], 'SNS writing SMS delivery status'),
    );
  }
  return calls;
}

/** API Gateway, for every route and method the API defines: it invokes the route's function. */
export function routeInvocations(resolver: TemplateResolver): Call[] {
  const { account, region } = resolver.env;
  const [apiId] = resolver.ofType('AWS::ApiGateway::RestApi');
  const [stageId] = resolver.ofType('AWS::ApiGateway::Stage');
  if (!apiId || !stageId) return [];
  const api = resolver.ref(apiId);
  const stage = resolver.ref(stageId);
  return routesOf(resolver).map((route) => ({
    caller: 'apigateway.amazonaws.com',
    action: 'lambda:InvokeFunction',
    resource: resolver.attribute(route.functionId, 'Arn'),
    context: {
      'aws:SourceArn': `arn:aws:execute-api:${region}:${account}:${api}/${stage}/${route.method}${route.resourcePath.replace(/\{\w+\}/g, 'example')}`,
      'aws:SourceAccount': account,
    },
    via: `API Gateway routing ${route.method} ${route.resourcePath}`,
  }));
}
