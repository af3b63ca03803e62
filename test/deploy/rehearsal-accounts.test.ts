import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { parseSigningKeys, signLink, signRestoreLink } from '../../functions/core/links/links';
import { RETIRED_LINK } from '../../functions/handlers/accounts-web';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { ACCOUNT_SCAN_STATES } from '../../lib/account-scans';
import { type Json, type Machine, runStateMachine, TaskFailedError } from '../support/asl';
import type { AwsCall } from './aws-calls';
import { awsManagedKeyPolicy, denials, describeDenial } from './iam';
import {
  emfRecords,
  newSigningKey,
  PLACE,
  type RunningFunction,
  startWorld,
  synthesize,
  type World,
} from './rehearsal';
import {
  alarmNotifications,
  nestedTemplates,
  routeInvocations,
  ruleDeliveries,
  scheduleCalls,
  stateMachineCreation,
} from './service-calls';
import { routesOf, type Template, TemplateResolver } from './template';

/**
 * The deploy rehearsal of a deployment with three accounts (issue 22): bin/app.ts synthesized with
 * an accounts file and real bundling, its bundles run against the emulators, and the state
 * machine's definition interpreted (test/support/asl.ts; Step Functions itself cannot run here),
 * each of its Lambda tasks invoking the scan bundle with its item. Every AWS call, the state
 * machine role's invocations and metric included, is judged against the template's policies.
 *
 * What this cannot cover: Step Functions' own behaviour (its retries' timing, its history, its
 * service integrations' wire format) is the interpreter's reading of the definition, and the
 * state machine's calls are recorded as the definition names them, not observed on a wire.
 */

const KEYS: Record<string, string> = {
  '/domain-sentinel/brand-a/api-key': 'rehearsal-brand-a-key-0123456789',
  '/domain-sentinel/brand-b/api-key': 'rehearsal-brand-b-key-0123456789',
  '/domain-sentinel/brand-c/api-key': 'rehearsal-refused-key-0123456789',
};
const ACCOUNTS = [
  { name: 'brand-a', apiKeyParameter: '/domain-sentinel/brand-a/api-key', alertEmails: ['a@example.nl'] },
  { name: 'brand-b', apiKeyParameter: '/domain-sentinel/brand-b/api-key', accountLabel: 'Brand B' },
  { name: 'brand-c', apiKeyParameter: '/domain-sentinel/brand-c/api-key' },
];

let dir: string;
let cdkOut: string;
let world: World;
let sim: Simulator;
let scan: RunningFunction;
let web: RunningFunction;
let definition: Machine;
let machineRole: string;
/** What the state machine's catch put for the failed account. */
let failurePut:
  | { MetricData: Array<{ MetricName: string; Dimensions: Array<{ Name: string; Value: string }> }> }
  | undefined;

interface Alarm {
  readonly AlarmName: string;
  readonly MetricName?: string;
  readonly Dimensions?: Array<{ Name: string; Value: string }>;
  readonly Metrics?: Array<{
    readonly Id: string;
    readonly MetricStat?: {
      Metric: { MetricName: string; Dimensions: Array<{ Name: string; Value: string }> };
    };
  }>;
}
const signingKey = newSigningKey();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rehearsal-accounts-'));
  const file = join(dir, 'accounts.json');
  writeFileSync(file, JSON.stringify({ accounts: ACCOUNTS }));
  cdkOut = await synthesize({
    resellerBaseUrl: 'https://api.reseller.example',
    alertEmails: 'alerts@example.nl',
    opsEmails: 'ops@example.nl',
    accounts: file,
  });
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 200, seed: 1, now: Date.now() }),
    apiKey: KEYS['/domain-sentinel/brand-a/api-key'] as string,
    accounts: [
      {
        apiKey: KEYS['/domain-sentinel/brand-b/api-key'] as string,
        portfolio: generatePortfolio({ domains: 100, seed: 2, now: Date.now() }),
      },
    ],
  });
  world = await startWorld(cdkOut, {
    overrides: { RESELLER_BASE_URL: sim.url },
    secrets: (name) => KEYS[name] ?? signingKey,
    parameters: Object.keys(KEYS),
  });
  const byDescription = (pattern: RegExp) =>
    [...world.functions.values()].find((f) =>
      pattern.test(String(world.resolver.resource(f.id).Properties?.Description)),
    ) as RunningFunction;
  scan = byDescription(/scans the reseller account/);
  web = byDescription(/web links/);
  const [machine] = world.resolver.ofType('AWS::StepFunctions::StateMachine');
  const props = world.resolver.resource(machine as string).Properties ?? {};
  definition = JSON.parse(world.resolver.string(props.DefinitionString, 'the definition')) as Machine;
  machineRole = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(JSON.stringify(props.RoleArn))?.[1] as string;
}, 240_000);

afterAll(async () => {
  await world?.close();
  await sim?.close();
  if (cdkOut) rmSync(cdkOut, { recursive: true, force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** An account link through the API's own routes, as API Gateway invokes the web function for it. */
async function follow(link: string) {
  const base = scan.env.LINK_BASE_URL as string;
  const url = new URL(link);
  const path = `/${url.pathname.slice(new URL(base).pathname.length)}`;
  const pattern = (resourcePath: string) =>
    new RegExp(`^${resourcePath.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`);
  const route = routesOf(world.resolver).find(
    (r) => r.method === 'GET' && pattern(r.resourcePath).test(path),
  );
  if (!route) throw new Error(`the API has no GET ${path}`);
  const pathParameters = pattern(route.resourcePath).exec(path)?.groups ?? {};
  const { result, error } = await web.invoke({
    resource: route.resourcePath,
    path,
    httpMethod: 'GET',
    headers: { Host: url.host },
    multiValueHeaders: {},
    queryStringParameters: Object.fromEntries(url.searchParams),
    multiValueQueryStringParameters: null,
    pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
    stageVariables: null,
    requestContext: {
      identity: { sourceIp: '198.51.100.7' },
      resourcePath: route.resourcePath,
      stage: 'prod',
    },
    body: null,
    isBase64Encoded: false,
  });
  if (error) throw new Error(`GET ${link} threw ${error.name}: ${error.message}`);
  return result as { statusCode: number; body: string };
}

describe('deploy rehearsal with three accounts', { timeout: 180_000 }, () => {
  let output: Json;

  it('writes the accounts for the web function and arms each account’s dead-man switch at deploy', async () => {
    for (const id of world.resolver.ofType('Custom::AWS')) {
      const props = world.resolver.resolve(world.resolver.resource(id).Properties) as Record<string, unknown>;
      const fnId = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(
        JSON.stringify(world.resolver.resource(id).Properties?.ServiceToken),
      )?.[1] as string;
      const fn = world.functions.get(fnId) as RunningFunction;
      const before = fn.cfnResponses.length;
      await fn.invoke({
        RequestType: 'Create',
        ServiceToken: props.ServiceToken,
        ResponseURL: 'https://cloudformation-response.rehearsal.invalid/response',
        StackId: `arn:aws:cloudformation:${PLACE.region}:${PLACE.account}:stack/${world.resolver.env.stackName}/rehearsal`,
        RequestId: `create-${id}`,
        LogicalResourceId: id,
        ResourceType: 'Custom::AWS',
        ResourceProperties: props,
      });
      expect(fn.cfnResponses.slice(before).map((r) => [r.LogicalResourceId, r.Status])).toEqual([
        [id, 'SUCCESS'],
      ]);
    }
    const bucket = world.resolver.ofType('AWS::S3::Bucket')[0] as string;
    const directory = (await world.readObject(bucket, 'accounts.json')) as {
      accounts: Array<{ account: string }>;
    };
    expect(directory.accounts.map((a) => a.account)).toEqual(['brand-a', 'brand-b', 'brand-c']);
  });

  it('runs the state machine: each item invokes the scan bundle, which reads only its own account’s key', async () => {
    const [schedule] = world.resolver.ofType('AWS::Scheduler::Schedule');
    const target = world.resolver.resolve(world.resolver.resource(schedule as string).Properties?.Target) as {
      Arn: string;
    };
    world.calls.push({
      caller: /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(
        JSON.stringify(
          (world.resolver.resource(schedule as string).Properties as { Target: { RoleArn: unknown } }).Target
            .RoleArn,
        ),
      )?.[1] as string,
      action: 'states:StartExecution',
      resource: target.Arn,
      context: {},
      via: 'EventBridge Scheduler running the schedule',
    });
    const execution = await runStateMachine(
      definition,
      {},
      {
        lambda: async (functionName, payload) => {
          world.calls.push({
            caller: machineRole,
            action: 'lambda:InvokeFunction',
            resource: functionName,
            context: {},
            via: `the state machine's ${ACCOUNT_SCAN_STATES.scan} task`,
          });
          expect(functionName).toBe(world.resolver.attribute(scan.id, 'Arn'));
          const { result, error } = await scan.invoke(payload);
          if (error) throw new TaskFailedError(error.name, error.message);
          return result as Json;
        },
        sdk: async (service, action, parameters) => {
          failurePut = parameters as typeof failurePut;
          world.calls.push({
            caller: machineRole,
            action: `${service}:${action.replace(/^./, (c) => c.toUpperCase())}`,
            resource: '*',
            context: { 'cloudwatch:namespace': String((parameters as { Namespace: string }).Namespace) },
            via: `the state machine's ${ACCOUNT_SCAN_STATES.recordFailure} task`,
          });
          return {};
        },
      },
    );
    output = execution.output;
    expect(output).toEqual([
      expect.objectContaining({ account: 'brand-a', published: true }),
      expect.objectContaining({ account: 'brand-b', published: true }),
      { account: 'brand-c', failed: true, error: 'AuthenticationError' },
    ]);
    const alerts = await world.alertMessages();
    expect(alerts.map((a) => a.Subject?.match(/^domain-sentinel \[([^\]]+)\]/)?.[1]).sort()).toEqual([
      'Brand B',
      'brand-a',
    ]);
    // The scan read each account's own parameter; none read another account's.
    const reads = world.calls
      .filter((c) => c.caller === scan.id && c.action === 'ssm:GetParameter')
      .map((c) => c.resource.replace(/^.*:parameter/, ''));
    expect([...new Set(reads)].sort()).toEqual(
      [...Object.keys(KEYS), '/domain-sentinel/link-signing-key'].sort(),
    );
  });

  it('has the scan bundle refuse an account the deployment does not have, before it reads a key', async () => {
    const before = world.calls.length;
    const { error } = await scan.invoke({ account: 'brand-z' });
    expect(error?.name).toBe('ConfigError');
    expect(error?.message).toMatch(
      /^refused the scan of account brand-z: the deployment's accounts \(accounts.json in the report bucket\) have no account of that name; /,
    );
    // It read accounts.json (the grant is judged with every other call below) and, but for its logs, nothing else.
    expect(
      world.calls
        .slice(before)
        .filter((c) => !c.action.startsWith('logs:'))
        .map((c) => `${c.action} ${c.resource.replace(/^.*:::[^/]+/, '')}`),
    ).toEqual(['s3:GetObject /accounts.json']);
  });

  it('serves each account’s report through its own route, and the web function reads only its own things', async () => {
    const bucket = world.resolver.ofType('AWS::S3::Bucket')[0] as string;
    const report = (await world.readObject(bucket, 'accounts/brand-a/latest.json')) as {
      report_url: string;
      findings: DomainFinding[];
    };
    expect(report.report_url).toContain('/accounts/brand-a/report?');
    const page = await follow(report.report_url);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('domain-sentinel (brand-a)');
    const moved = await follow(report.report_url.replace('/accounts/brand-a/', '/accounts/brand-b/'));
    expect(moved.statusCode).toBe(403);
  });

  it('answers a link of the deployment’s own routes, from before it served several accounts, 410 without reading its state', async () => {
    const report = (await world.readObject(
      world.resolver.ofType('AWS::S3::Bucket')[0] as string,
      'accounts/brand-a/latest.json',
    )) as { findings: DomainFinding[] };
    const finding = report.findings[0] as DomainFinding;
    const keys = parseSigningKeys(signingKey);
    const root = scan.env.LINK_BASE_URL as string;
    const before = world.calls.length;
    const links = [
      signLink({
        baseUrl: root,
        action: 'snooze',
        subject: finding.domain_name,
        finding: { kind: finding.kind, severity: finding.severity },
        keys,
        now: Date.now(),
      }),
      signRestoreLink({ baseUrl: root, domain: finding.domain_name, keys, now: Date.now() }),
    ];
    for (const link of links) {
      const answer = await follow(link);
      // Not the 500 "not configured correctly" (no deployment key) nor a 503 "try again" (the
      // state refused by the role's partitions) the deployment's own app gave such a link.
      expect(answer.statusCode).toBe(410);
      expect(answer.body).toContain(RETIRED_LINK.title);
    }
    // Nothing read for it (its own logs aside): no key, no state, no report.
    const read = world.calls
      .slice(before)
      .filter((c) => c.caller === web.id && !c.action.startsWith('logs:'));
    expect(read).toEqual([]);
  });

  it('emits, per account, every metric its alarms watch, with exactly their dimensions', () => {
    const emitted = emfRecords(scan.lines).flatMap((record) =>
      record._aws.CloudWatchMetrics.flatMap((m) =>
        m.Metrics.map((metric) => ({
          name: metric.Name,
          dimensions: Object.fromEntries((m.Dimensions[0] ?? []).map((d) => [d, String(record[d])])),
        })),
      ),
    );
    // ScanFailed is put by the state machine's catch, with the account from its item.
    const put = failurePut?.MetricData[0];
    if (put)
      emitted.push({
        name: put.MetricName,
        dimensions: Object.fromEntries(put.Dimensions.map((d) => [d.Name, d.Value])),
      });
    const same = (a: Record<string, string>, b: Record<string, string>) =>
      JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
    const checked: string[] = [];
    // The accounts' alarms live in their groups' nested stacks.
    const resolvers = nestedTemplates(cdkOut, world.resolver).map(
      (t) => new TemplateResolver(t.template as never, world.resolver.env, t.parameters),
    );
    for (const [resolver, id] of resolvers.flatMap((r) =>
      r.ofType('AWS::CloudWatch::Alarm').map((a) => [r, a] as const),
    )) {
      const props = resolver.resolve(resolver.resource(id).Properties) as Alarm;
      // What this run could make true: brand-a and brand-b completed, brand-c failed.
      const match = /\/(ScanNotCompleted-brand-[ab]|ScanFailed-brand-c)$/.exec(props.AlarmName);
      if (!match) continue;
      const metric = props.MetricName
        ? { name: props.MetricName, dimensions: props.Dimensions ?? [] }
        : (props.Metrics ?? [])
            .filter((m) => m.Id === 'completed')
            .map((m) => ({
              name: m.MetricStat?.Metric.MetricName ?? '',
              dimensions: m.MetricStat?.Metric.Dimensions ?? [],
            }))[0];
      const dimensions = Object.fromEntries((metric?.dimensions ?? []).map((d) => [d.Name, d.Value]));
      expect(
        emitted.some((e) => e.name === metric?.name && same(e.dimensions, dimensions)),
        `${props.AlarmName} watches ${metric?.name} ${JSON.stringify(dimensions)}, never emitted`,
      ).toBe(true);
      checked.push(match[1] as string);
    }
    expect(checked.sort()).toEqual([
      'ScanFailed-brand-c',
      'ScanNotCompleted-brand-a',
      'ScanNotCompleted-brand-b',
    ]);
  });

  it('adds what AWS does for the stack, its nested stacks’ alarms included', () => {
    const nested = nestedTemplates(cdkOut, world.resolver).map(
      (t) => new TemplateResolver(t.template as never, world.resolver.env, t.parameters),
    );
    expect(nested.length).toBeGreaterThan(0);
    const own = [
      ...alarmNotifications([world.resolver, ...nested], world.resolver),
      ...scheduleCalls(world.resolver),
      ...stateMachineCreation(world.resolver),
      ...routeInvocations(world.resolver),
      ...ruleDeliveries(world.resolver),
    ];
    // Each account's own alarms, in their groups' stacks, notify the deployment's ops topic.
    const notified = own.filter((c) => c.action === 'sns:Publish').map((c) => c.via);
    for (const account of ['brand-a', 'brand-b', 'brand-c'])
      for (const alarm of ['ScanFailed', 'ScanNotCompleted'])
        expect(notified).toContain(`CloudWatch notifying for the alarm DomainSentinel/${alarm}-${account}`);
    expect(own.filter((c) => c.action === 'logs:CreateLogDelivery')).toHaveLength(1);
    // Their clearing (ALARM to OK) is told by EventBridge's rule, which publishes and encrypts too.
    expect(
      own
        .filter((c) => c.caller === 'events.amazonaws.com')
        .map((c) => `${c.action} ${c.resource.split(':')[2]}`),
    ).toEqual(['sns:Publish sns', 'kms:GenerateDataKey kms', 'kms:Decrypt kms']);
    world.calls.push(...own);
  });

  it('makes only calls the template’s policies allow, the state machine’s included', async () => {
    const actions = new Set(world.calls.map((c) => `${c.caller.replace(/[A-F0-9]{8}$/, '')} ${c.action}`));
    expect([...actions]).toEqual(
      expect.arrayContaining([
        'ScanAccountsStateMachineRole lambda:InvokeFunction',
        'ScanAccountsStateMachineRole cloudwatch:PutMetricData',
        'ScanFunction ssm:GetParameter',
        'ScanFunction s3:PutObject',
        'ScanFunction s3:GetObject',
        'RestoreFunction s3:GetObject',
      ]),
    );
    const resolver = new TemplateResolver(world.resolver.template, world.resolver.env);
    const ssmKey = `arn:aws:kms:${PLACE.region}:${PLACE.account}:key/aws-ssm-managed-key`;
    const judge = async (template = resolver) => [
      ...new Set(
        (
          await denials(
            template,
            world.calls,
            (caller) => {
              if (caller.endsWith('.amazonaws.com')) return { service: caller };
              const fn = world.functions.get(caller);
              if (fn) return { roleId: fn.roleId, session: fn.name };
              return { roleId: caller, session: 'rehearsal' };
            },
            new Map([[ssmKey, awsManagedKeyPolicy(PLACE.account, 'ssm', PLACE.region)]]),
          )
        ).map(describeDenial),
      ),
    ];
    expect(await judge()).toEqual([]);
    // The functions' state calls, judged above by the partitions they touch: each account's own
    // scope (`account <name> at <url>`) and its shards, never the deployment's own base URL's.
    const base = 'https://api.reseller.example';
    const stateCalls = world.calls.filter((c) => c.action.startsWith('dynamodb:'));
    expect(new Set(stateCalls.map((c) => c.caller))).toEqual(new Set([scan.id, web.id]));
    expect(new Set(stateCalls.map((c) => c.action))).toEqual(
      new Set(['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem']),
    );
    const partitions = new Set(stateCalls.flatMap((c) => c.context['dynamodb:LeadingKeys'] ?? []));
    const scopes = new Set([...partitions].map((p) => p.replace(/#\d{1,2}$/, '')));
    expect(scopes).toEqual(
      new Set(['brand-a', 'brand-b', 'brand-c'].map((name) => `account ${name} at ${base}`)),
    );
    expect(stateCalls.every((c) => (c.context['dynamodb:LeadingKeys'] ?? []).length > 0)).toBe(true);
    // The same calls in the deployment's own partition, or another account's, would be refused.
    const [query] = stateCalls.filter((c) => c.caller === scan.id && c.action === 'dynamodb:Query');
    for (const other of [base, `${base}#3`, `account brand-z at ${base}`]) {
      world.calls.push({ ...(query as AwsCall), context: { 'dynamodb:LeadingKeys': [other] } });
      expect(await judge()).toEqual([
        `${scan.id} may not dynamodb:Query on ${(query as AwsCall).resource}: ImplicitlyDenied`,
      ]);
      world.calls.pop();
    }
    // A scan that read a parameter no account names would be refused: the grant lists only theirs.
    world.calls.push({
      caller: scan.id,
      action: 'ssm:GetParameter',
      resource: `arn:aws:ssm:${PLACE.region}:${PLACE.account}:parameter/domain-sentinel/reseller-api-key`,
      context: {},
    });
    expect(await judge()).toEqual([
      `${scan.id} may not ssm:GetParameter on arn:aws:ssm:${PLACE.region}:${PLACE.account}:parameter/domain-sentinel/reseller-api-key: ImplicitlyDenied`,
    ]);
    world.calls.pop();
    // Step Functions checks the role's log delivery permissions when it creates the state machine.
    const noLogDelivery = structuredClone(world.resolver.template) as Template;
    for (const r of Object.values(noLogDelivery.Resources))
      if (r.Type === 'AWS::IAM::Policy') {
        const document = r.Properties?.PolicyDocument as { Statement: Array<{ Action: unknown }> };
        document.Statement = document.Statement.filter(
          (st) => !JSON.stringify(st.Action).includes('logs:CreateLogDelivery'),
        );
      }
    const refused = await judge(new TemplateResolver(noLogDelivery, world.resolver.env));
    expect(refused).toHaveLength(8);
    for (const line of refused)
      expect(line).toMatch(
        /^ScanAccountsStateMachineRole\w+ may not logs:\w+ on \* \(made by AWS for Step Functions creating the state machine with its log delivery\): ImplicitlyDenied$/,
      );
  });
});
