import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { parseSigningKeys, signLink } from '../../functions/core/links/links';
import { reportHistoryKey } from '../../functions/core/memory/report-store';
import { reportJsonUrl } from '../../functions/core/scan/report-links';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { WEB_ROUTES } from '../../lib/web-api';
import { lambdaNodeFlags } from '../support/lambda-bootstrap';
import { type AwsCall, apiGatewaySettings, metricData, schedules, smsSettings } from './aws-calls';
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
  accountSettingRoles,
  alarmNotifications,
  queueDeliveries,
  routeInvocations,
  scheduleCalls,
} from './service-calls';
import { routesOf, type Template, TemplateResolver } from './template';

/**
 * The deploy rehearsal: the stack as `cdk deploy` would build it, run on loopback. bin/app.ts is
 * synthesized with real bundling and a concrete account; every Lambda function in the template is
 * started from its bundle exactly as cdk.out holds it, with the environment the template gives it,
 * against SNS/SQS (fauxqs), DynamoDB (dynalite), S3 (s3rver), SSM and CloudWatch (faked here);
 * a scheduled scan and every web route are driven through them, and every AWS call the bundles
 * make is judged against the role policies of the template by an IAM policy evaluator.
 * Nothing here needs an AWS account; the only value replaced is the reseller's URL (the simulator).
 */

const API_KEY = 'rehearsal-api-key-0123456789';
const ZONE = 'Europe/Amsterdam';
/** Quiet hours from an hour before now to two hours after, in the deployment's zone: the rehearsal runs in them. */
const AROUND_NOW = (() => {
  const [h, m] = new Intl.DateTimeFormat('en-GB', {
    timeZone: ZONE,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  })
    .format(new Date())
    .split(':')
    .map(Number);
  const at = (minutes: number) => {
    const wrapped = ((minutes % 1440) + 1440) % 1440;
    return `${String(Math.floor(wrapped / 60)).padStart(2, '0')}:${String(wrapped % 60).padStart(2, '0')}`;
  };
  const now = (h as number) * 60 + (m as number);
  return `${at(now - 60)}-${at(now + 120)}`;
})();
const SETTINGS = {
  resellerBaseUrl: 'https://api.reseller.example',
  alertEmails: 'alerts@example.nl',
  alertSmsNumbers: '+31612345678',
  opsEmails: 'ops@example.nl',
  timeZone: ZONE,
  // Quiet hours (an SMS held is scheduled) and the heartbeat outside AWS (docs/policies.md).
  smsQuietHours: AROUND_NOW,
  heartbeatUrlParameterName: '/domain-sentinel/heartbeat-url',
  // The chat parts (docs/chat.md): a Slack channel and a webhook of each format.
  slackWorkspaceId: 'T07ABCDEF12',
  slackChannelId: 'C07ABCDEF12',
  webhooks:
    'slack:/domain-sentinel/webhook/slack,teams:/domain-sentinel/webhook/teams,json:/domain-sentinel/webhook/json',
  // The account's own settings too, so the roles AWS acts with for them are rehearsed.
  ownAccountSettings: 'true',
};
const WEBHOOK_SIGNING_KEY = 'rehearsal-webhook-signing-key-0123456789';

let cdkOut: string;
let world: World;
let sim: Simulator;
let scan: RunningFunction;
let web: RunningFunction;
let webhook: RunningFunction;
const signingKey = newSigningKey();
/** The alert as the scan published it (an SQS subscriber's SNS envelope), for the webhook subscriber. */
let alertEnvelope: { Message: string; MessageId?: string };
/** A webhook receiver on 127.0.0.1: each webhook's SSM parameter points here. */
let receiver: Server;
let receiverUrl = '';
const posts: Array<{ path: string; headers: Record<string, unknown>; body: string }> = [];
const receiverAnswers: number[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(receiverAnswers.shift() ?? 200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  cdkOut = await synthesize(SETTINGS);
  // 500 domains of seed 1: findings of every kind, one of them in quarantine (see README).
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 500, seed: 1, now: Date.now() }),
    apiKey: API_KEY,
  });
  world = await startWorld(cdkOut, {
    overrides: { RESELLER_BASE_URL: sim.url },
    secrets: (name) =>
      name.endsWith('reseller-api-key')
        ? API_KEY
        : name.endsWith('heartbeat-url')
          ? `${receiverUrl}/heartbeat/secret-ping`
          : name.startsWith('/domain-sentinel/webhook/')
            ? `${receiverUrl}/${name.split('/').at(-1)}/secret-path`
            : name.endsWith('webhook-signing-key')
              ? WEBHOOK_SIGNING_KEY
              : signingKey,
  });
  const byDescription = (pattern: RegExp) => {
    const found = [...world.functions.values()].find((f) =>
      pattern.test(String(world.resolver.resource(f.id).Properties?.Description)),
    );
    if (!found) throw new Error(`no function ${pattern}`);
    return found;
  };
  scan = byDescription(/scans the reseller account/);
  web = byDescription(/web links/);
  webhook = byDescription(/posts each alert to its webhooks/);
}, 180_000);

afterAll(async () => {
  await world?.close();
  await sim?.close();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  if (cdkOut) rmSync(cdkOut, { recursive: true, force: true });
});

/** The API Gateway proxy event for a link, routed by the template's own resources and methods. */
function apiRequest(link: string, method: string, body?: string) {
  const base = scan.env.LINK_BASE_URL as string;
  if (!link.startsWith(base)) throw new Error(`${link} is not under the API's URL ${base}`);
  const url = new URL(link);
  const path = `/${url.pathname.slice(new URL(base).pathname.length)}`;
  const route = routesOf(world.resolver).find(
    (r) =>
      r.method === method &&
      new RegExp(`^${r.resourcePath.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`).test(path),
  );
  if (!route) throw new Error(`the API has no ${method} ${path}`);
  const match = new RegExp(`^${route.resourcePath.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`).exec(path);
  const pathParameters = Object.fromEntries(
    Object.entries(match?.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]),
  );
  for (const required of route.requiredPathParameters)
    if (!pathParameters[required]) throw new Error(`the API refuses ${path}: ${required} is required`);
  const headers: Record<string, string> = {
    Host: url.host,
    'User-Agent': 'Mozilla/5.0 (rehearsal)',
    ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
  };
  const event = {
    resource: route.resourcePath,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: url.search ? Object.fromEntries(url.searchParams) : null,
    multiValueQueryStringParameters: null,
    pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
    stageVariables: null,
    requestContext: {
      accountId: PLACE.account,
      apiId: url.hostname.split('.')[0],
      stage: 'prod',
      path: url.pathname,
      httpMethod: method,
      resourcePath: route.resourcePath,
      requestId: `rehearsal-${Math.random()}`,
      identity: { sourceIp: '198.51.100.7', userAgent: 'Mozilla/5.0 (rehearsal)' },
    },
    body: body ?? null,
    isBase64Encoded: false,
  };
  const fn = world.functions.get(route.functionId);
  if (!fn) throw new Error(`${route.functionId} is not a function of the template`);
  return { fn, event };
}

async function follow(link: string, method: string, body?: string) {
  const { fn, event } = apiRequest(link, method, body);
  // API Gateway invokes the function as itself; the function's policy (its Lambda permissions) must let it.
  world.calls.push({
    caller: API_GATEWAY,
    action: 'lambda:InvokeFunction',
    resource: world.resolver.attribute(fn.id, 'Arn'),
    context: {
      'aws:SourceArn': `arn:aws:execute-api:${PLACE.region}:${PLACE.account}:${event.requestContext.apiId}/${event.requestContext.stage}/${method}${event.path}`,
      'aws:SourceAccount': PLACE.account,
    },
    via: `API Gateway routing ${method} ${event.resource}`,
  });
  const { result, error } = await fn.invoke(event);
  if (error) throw new Error(`${method} ${link} threw ${error.name}: ${error.message}`);
  return result as { statusCode: number; headers: Record<string, string>; body: string };
}

describe('deploy rehearsal: the built bundles against their own template', { timeout: 120_000 }, () => {
  let report: { findings: DomainFinding[]; report_url: string; calendar_url: string };

  it('runs every function on the Node.js major of its Lambda runtime, and the project’s with the AWS SDK bundled', () => {
    expect(world.functions.size).toBeGreaterThanOrEqual(4);
    for (const fn of world.functions.values()) {
      const runtime = String(world.resolver.resource(fn.id).Properties?.Runtime);
      expect(runtime, fn.id).toBe('nodejs24.x');
      expect(fn.nodeVersion, fn.id).toMatch(/^v24\./);
    }
    // The project's bundles carry the SDK they were built and tested with: nothing is left to the runtime's.
    for (const fn of [scan, web, webhook]) {
      const code = readFileSync(join(cdkOut, bundleOf(fn.id), 'index.js'), 'utf8');
      expect(code, fn.id).not.toMatch(/require\("@aws-sdk\/client-/);
      expect(code, fn.id).toContain('SSMClient');
    }
  });

  it('answers a report not yet stored with 404, as S3 does for a caller that may list the key', async () => {
    const link = signLink({
      action: 'report',
      keys: parseSigningKeys(signingKey),
      now: Date.now(),
      baseUrl: scan.env.LINK_BASE_URL as string,
    });
    const answer = await follow(link, 'GET');
    expect(answer.statusCode, answer.body).toBe(404);
    expect(world.calls.some((c) => c.caller === web.id && c.action === 's3:ListBucket')).toBe(true);
  });

  it('runs every deploy-time call of the stack (custom resources) on Create, Update and Delete', async () => {
    const customs = world.resolver
      .ofType('Custom::AWS')
      .concat(world.resolver.ofType('AWS::CloudFormation::CustomResource'))
      .concat(world.resolver.ofType('Custom::AccountSettingsRelease'));
    expect(customs.length).toBeGreaterThanOrEqual(3);
    for (const id of customs) {
      const created = await driveCustomResource(id, 'Create');
      expect([created.LogicalResourceId, created.Status], String(created.Reason)).toEqual([id, 'SUCCESS']);
      const physical = String(created.PhysicalResourceId);
      for (const kind of ['Update', 'Delete'] as const) {
        const answer = await driveCustomResource(id, kind, physical);
        expect([answer.Status, answer.PhysicalResourceId], `${id} ${kind}: ${answer.Reason}`).toEqual([
          'SUCCESS',
          physical,
        ]);
      }
    }
    // What they did: SMS delivery-status logging on, again on update, and cleared by the release on
    // delete, as it still named the stack's role; API Gateway's role, never set here (that is
    // AWS::ApiGateway::Account), found empty and left; the dead-man alarm armed.
    const role = world.resolver.attribute(
      world.resolver.ofType('AWS::IAM::Role').find((r) => /SmsDeliveryStatus/.test(r)) ?? '',
      'Arn',
    );
    const set = { DeliveryStatusIAMRole: role, DeliveryStatusSuccessSamplingRate: '100' };
    expect(smsSettings).toEqual([
      set,
      set,
      { DeliveryStatusIAMRole: '', DeliveryStatusSuccessSamplingRate: '0' },
    ]);
    expect(apiGatewaySettings).toEqual([]);
    expect(metricData).toEqual([
      expect.objectContaining({
        Namespace: 'DomainSentinel',
        MetricData: [expect.objectContaining({ MetricName: 'DeadManArmed', Value: 1 })],
      }),
    ]);
  });

  it('releases on destroy only the account settings that still name the stack’s roles, through the bundle', async () => {
    // One release per setting, each naming its own role.
    const releases = world.resolver.ofType('Custom::AccountSettingsRelease');
    expect(releases).toHaveLength(2);
    const roleArn = (pattern: RegExp) =>
      world.resolver.attribute(
        world.resolver.ofType('AWS::IAM::Role').find((r) => pattern.test(r)) ?? '',
        'Arn',
      );
    const ours = { api: roleArn(/ApiGatewayCloudWatchRole/), sms: roleArn(/SmsDeliveryStatusRole/) };
    const theirs = `arn:aws:iam::${PLACE.account}:role/other-team-logging`;
    const destroy = async (api: string, sms: string) => {
      // The account as the deploy (AWS::ApiGateway::Account, the SmsAttributes call) or another team left it.
      apiGatewaySettings.push(api);
      smsSettings.push({ DeliveryStatusIAMRole: sms, DeliveryStatusSuccessSamplingRate: '100' });
      for (const release of releases) {
        const answer = await driveCustomResource(
          release,
          'Delete',
          'domain-sentinel-account-settings-release',
        );
        expect(answer.Status, String(answer.Reason)).toBe('SUCCESS');
      }
      return [apiGatewaySettings.at(-1), smsSettings.at(-1)?.DeliveryStatusIAMRole];
    };
    expect(await destroy(ours.api, ours.sms)).toEqual(['', '']);
    expect(await destroy(theirs, theirs)).toEqual([theirs, theirs]);
    expect(await destroy(theirs, ours.sms)).toEqual([theirs, '']);
  });

  it('runs a scheduled scan: reads the account, publishes one alert, keeps the report and its state', async () => {
    const schedule = world.resolver.ofType('AWS::Scheduler::Schedule')[0] as string;
    const target = world.resolver.resource(schedule).Properties?.Target as {
      Arn: unknown;
      RoleArn: unknown;
      Input?: string;
    };
    expect(JSON.stringify(target.Arn)).toContain(scan.id);
    // The schedule invokes the scan with its own role.
    world.calls.push({
      caller: roleIdOf(target.RoleArn),
      action: 'lambda:InvokeFunction',
      resource: world.resolver.string(target.Arn, 'the schedule’s target'),
      context: {},
      via: 'EventBridge Scheduler running the schedule',
    });
    // One 429 on the way, as a busy reseller answers: retried, and counted on the dashboard.
    sim.injectFault({
      fault: { kind: 'status', status: 429, retryAfter: '0' },
      match: (r) => r.path === '/v2/domains',
    });
    const outcome = await scan.invoke(target.Input ? JSON.parse(target.Input) : {});
    expect(outcome.error, JSON.stringify(outcome.error) + scan.lines.join('\n')).toBeUndefined();
    expect(outcome.result).toMatchObject({ published: true, problems: expect.any(Number) });
    // Started as Lambda's runtime starts it for the 3 008 MB lib/scanner.ts gives it: the bootstrap's own flags, no wrapper.
    expect(scan.env.AWS_LAMBDA_EXEC_WRAPPER).toBeUndefined();
    expect(scan.execArgv).toEqual(lambdaNodeFlags(3008));
    expect((outcome.result as { domainsScanned: number }).domainsScanned).toBeGreaterThan(400);

    const alerts = await world.alertMessages();
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.Subject).toMatch(/domain-sentinel/);
    alertEnvelope = alerts[0] as typeof alertEnvelope;

    const counted = emfRecords(scan.lines).find((r) => 'ResellerRequests' in r);
    expect(counted?.ResellerThrottled).toBe(1);
    expect(counted?.ResellerRequests).toBe(sim.requests.length);

    // The heartbeat outside AWS: one ping for the complete scan, its URL read from its SecureString and never logged.
    expect(posts.filter((p) => p.path.startsWith('/heartbeat')).map((p) => p.path)).toEqual([
      '/heartbeat/secret-ping',
    ]);
    expect(scan.lines.join('\n')).not.toContain('secret-ping');

    const bucket = world.resolver.ofType('AWS::S3::Bucket')[0] as string;
    report = (await world.readObject(bucket, 'latest.json')) as typeof report;
    expect(report.findings.length).toBeGreaterThan(10);
    expect(report.report_url.startsWith(scan.env.LINK_BASE_URL as string)).toBe(true);
  });

  it('serves every web route through the API’s own routes: restore, snooze, acknowledge, report, calendar', async () => {
    const quarantined = report.findings.find((f) => f.actions?.restore);
    if (!quarantined?.actions?.restore) throw new Error('the scan found nothing to restore');
    const restore = quarantined.actions.restore;
    expect((await follow(restore, 'GET')).statusCode).toBe(200);
    expect((await follow(restore, 'HEAD')).statusCode).toBe(200);
    // As the confirmation page asks: the domain name typed, and (for .nl) the registrant's consent.
    const restored = await follow(
      restore,
      'POST',
      `confirm_domain=${encodeURIComponent(quarantined.domain_name)}&registrant_consent=yes`,
    );
    expect(restored.statusCode, restored.body).toBe(200);
    expect(sim.restoreCalls).toEqual([quarantined.domain_name]);

    const [toSnooze, toAcknowledge] = report.findings.filter(
      (f) => f.actions?.snooze && f.domain_name !== quarantined.domain_name,
    );
    if (!toSnooze?.actions?.snooze || !toAcknowledge?.actions?.acknowledge)
      throw new Error('nothing to snooze');
    expect((await follow(toSnooze.actions.snooze, 'GET')).statusCode).toBe(200);
    const snoozed = await follow(toSnooze.actions.snooze, 'POST', 'days=7');
    expect(snoozed.statusCode, snoozed.body).toBe(200);
    expect(snoozed.body).toContain(`${toSnooze.domain_name} snoozed`);
    const acknowledged = await follow(toAcknowledge.actions.acknowledge, 'POST', 'confirm=1');
    expect(acknowledged.statusCode, acknowledged.body).toBe(200);

    const page = await follow(report.report_url, 'GET');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(toSnooze.domain_name);
    const calendar = await follow(report.calendar_url, 'GET');
    expect(calendar.statusCode).toBe(200);
    expect(calendar.body).toMatch(/^BEGIN:VCALENDAR/);
  });

  it('serves report.json of a kept report by a presigned URL that reads with the web function’s role, and 410 once none is kept', async () => {
    const generatedAt = (report as unknown as { generated_at: string }).generated_at;
    const answer = await follow(reportJsonUrl(report.report_url, generatedAt), 'GET');
    expect(answer.statusCode, answer.body).toBe(303);
    const location = String(answer.headers.Location);
    expect(location).toContain(reportHistoryKey({ generated_at: generatedAt }).replace(/:/g, '%3A'));
    // Whoever follows the URL reads with its signer's permissions: recorded as the web function's call.
    const before = world.calls.length;
    const read = await fetch(location);
    expect(read.status, await read.clone().text()).toBe(200);
    expect(((await read.json()) as { generated_at: string }).generated_at).toBe(generatedAt);
    expect(
      world.calls.slice(before).map((c) => `${c.caller} ${c.action} ${c.resource.split('/').at(-2)}`),
    ).toEqual([`${web.id} s3:GetObject reports`]);
    // A report no longer kept: S3 answers the HEAD 404 only to a caller that may list reports/.
    const gone = await follow(reportJsonUrl(report.report_url, '2001-01-01T00:00:00Z'), 'GET');
    expect(gone.statusCode, gone.body).toBe(410);
    // Without the read of reports/, both the HEAD and the presigned read are refused, named.
    const refused = await judge(
      withoutResource(world.resolver.template, web.roleId, 's3:GetObject', 'reports/'),
    );
    const kept = reportHistoryKey({ generated_at: generatedAt });
    expect(refused).toContain(
      `${web.id} may not s3:GetObject on arn:aws:s3:::${location.split('/')[3]}/${kept}: ImplicitlyDenied`,
    );
    for (const line of refused)
      expect(line).toMatch(
        new RegExp(`^${web.id} may not s3:GetObject on arn:aws:s3:::\\S+/reports/\\S+: ImplicitlyDenied$`),
      );
  });

  it('posts the alert to each webhook from its own queue, and counts a webhook that answers 4xx', async () => {
    // What Lambda's poller hands the function: each webhook queue's message (real SNS puts only
    // the `sqs` member of the MessageStructure=json message into it; fauxqs keeps them all).
    const message = JSON.parse(alertEnvelope.Message) as { default: string };
    const mappings = world.resolver
      .ofType('AWS::Lambda::EventSourceMapping')
      .map(
        (id) => world.resolver.resolve(world.resolver.resource(id).Properties) as { EventSourceArn: string },
      );
    expect(mappings).toHaveLength(3);
    const eventFor = (queueArn: string) => ({
      Records: [
        {
          messageId: `rehearsal-${queueArn.split(':').at(-1)}`,
          receiptHandle: 'rehearsal',
          body: JSON.stringify({ ...alertEnvelope, Message: message.default }),
          attributes: {},
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: queueArn,
          awsRegion: PLACE.region,
        },
      ],
    });
    const poll = (queueArn: string) => {
      // The event source mapping polls and deletes with the function's role.
      for (const action of [
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:ChangeMessageVisibility',
      ])
        world.calls.push({
          caller: webhook.id,
          action,
          resource: queueArn,
          context: {},
          via: 'Lambda polling the webhook queue',
        });
    };
    receiverAnswers.push(404);
    const first = mappings[0]?.EventSourceArn as string;
    poll(first);
    const refused = await webhook.invoke(eventFor(first));
    expect(refused.result).toEqual({
      batchItemFailures: [{ itemIdentifier: `rehearsal-${first.split(':').at(-1)}` }],
    });
    for (const { EventSourceArn } of mappings) {
      poll(EventSourceArn);
      const delivered = await webhook.invoke(eventFor(EventSourceArn));
      expect(delivered.result, webhook.lines.join('\n')).toEqual({ batchItemFailures: [] });
    }
    expect(
      posts
        .map((p) => p.path)
        .filter((path) => !path.startsWith('/heartbeat'))
        .sort(),
    ).toEqual(['/json/secret-path', '/slack/secret-path', '/slack/secret-path', '/teams/secret-path'].sort());
    const json = posts.find((p) => p.path.startsWith('/json'));
    expect(json?.headers['x-sentinel-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(webhook.lines.join('\n')).not.toContain('secret-path');
  });

  it('holds the SMS of a new critical finding in quiet hours: a one-time schedule in the stack’s group, released with the stack’s role', async () => {
    // In quiet hours only a deadline within 48 hours sends an SMS at once: those domains go.
    const now = Date.now();
    const urgent = (f: DomainFinding) =>
      f.kind === 'quarantine'
        ? !f.restore_by || Date.parse(f.restore_by) - now <= 48 * 3_600_000
        : Math.abs(Date.parse(f.date_expiry) - now - 24 * 3_600_000) <= 24 * 3_600_000;
    for (const f of report.findings)
      if (f.severity === 'critical' && urgent(f)) sim.updateDomain(f.domain_name, null);
    const name = 'held-sms.rehearsal.example';
    sim.updateDomain(name, {
      domain_name: name,
      status: ['registered'],
      date_expiry: new Date(now + 5 * 86_400_000).toISOString(),
      auto_renew: false,
      registrant_handle: 'C00001',
    });
    await world.alertMessages();
    const outcome = await scan.invoke({});
    expect(outcome.error, JSON.stringify(outcome.error) + scan.lines.join('\n')).toBeUndefined();
    const [alert, ...more] = (await world.alertMessages()) as Array<{
      MessageAttributes?: Record<string, { Value: string }>;
    }>;
    expect(more).toHaveLength(0);
    // The e-mail goes out now; the SMS subscriptions skip it (`sms` = `held`).
    expect(alert?.MessageAttributes?.sms?.Value).toBe('held');
    expect(schedules).toHaveLength(1);
    const schedule = schedules[0] as { Target: { Input: string } };
    expect(schedule).toMatchObject({
      Name: expect.stringMatching(/^held-sms-[0-9a-f]{40}$/),
      GroupName: scan.env.HELD_SMS_SCHEDULE_GROUP,
      ScheduleExpressionTimezone: 'UTC',
      ActionAfterCompletion: 'DELETE',
      Target: { Arn: 'arn:aws:scheduler:::aws-sdk:sns:publish', RoleArn: scan.env.HELD_SMS_ROLE_ARN },
    });
    const release = JSON.parse(schedule.Target.Input) as { TopicArn: string; Message: string };
    expect(release.TopicArn).toBe(scan.env.ALERT_TOPIC_ARN);
    expect(release.Message).toContain(name);
    // When the window ends, Scheduler assumes the role for the group and publishes with it (SNS
    // using the topic's key as the role).
    const { resolver } = world;
    const role = resolver
      .ofType('AWS::IAM::Role')
      .find((id) => resolver.attribute(id, 'Arn') === scan.env.HELD_SMS_ROLE_ARN);
    // The held-SMS group, the one the scan is told of (the scan schedule has a group of its own).
    const group = resolver
      .ofType('AWS::Scheduler::ScheduleGroup')
      .find((id) => resolver.ref(id) === scan.env.HELD_SMS_SCHEDULE_GROUP) as string;
    const topic = resolver
      .ofType('AWS::SNS::Topic')
      .find((id) => resolver.ref(id) === release.TopicArn) as string;
    const key = resolver.string(resolver.resource(topic).Properties?.KmsMasterKeyId, 'the alert topic’s key');
    if (!role) throw new Error('HELD_SMS_ROLE_ARN is no role of the template');
    const via = 'EventBridge Scheduler releasing a held SMS';
    world.calls.push(
      {
        caller: 'scheduler.amazonaws.com',
        action: 'sts:AssumeRole',
        resource: scan.env.HELD_SMS_ROLE_ARN as string,
        context: { 'aws:SourceAccount': PLACE.account, 'aws:SourceArn': resolver.attribute(group, 'Arn') },
        via,
      },
      { caller: role, action: 'sns:Publish', resource: release.TopicArn, context: {}, via },
      ...['kms:GenerateDataKey', 'kms:Decrypt'].map((action) => ({
        caller: role,
        action,
        resource: key,
        context: {
          'kms:ViaService': `sns.${PLACE.region}.amazonaws.com`,
          'kms:EncryptionContext:aws:sns:topicArn': release.TopicArn,
        },
        via: `${via}: sns:Publish ${release.TopicArn}`,
      })),
    );
  });

  it('parks a run that fails in the on-failure queue, through the function’s role', async () => {
    sim.injectFault({ fault: { kind: 'status', status: 401 }, times: 20 });
    const outcome = await scan.invoke({});
    expect(outcome.error?.message).toMatch(/401/);
    expect(posts.map((p) => p.path)).toContain('/heartbeat/secret-ping/fail');
    // Lambda, after its retries, sends the event to the on-failure destination as the function.
    const config = world.resolver.ofType('AWS::Lambda::EventInvokeConfig')[0] as string;
    const destination = (
      world.resolver.resolve(world.resolver.resource(config).Properties) as {
        DestinationConfig: { OnFailure: { Destination: string } };
      }
    ).DestinationConfig.OnFailure.Destination;
    world.calls.push({
      caller: scan.id,
      action: 'sqs:SendMessage',
      resource: destination,
      context: {},
      via: 'Lambda sending the failed run to its on-failure destination',
    });
    expect(destination).toMatch(/^arn:aws:sqs:/);
  });

  it('drove every function of the template', () => {
    const invoked = new Set(
      world.calls.filter((c) => c.via === 'Lambda writing the function’s logs').map((c) => c.caller),
    );
    expect([...invoked].sort()).toEqual(world.resolver.ofType('AWS::Lambda::Function').sort());
  });

  it('emits every custom metric the alarms and the dashboard watch, with their dimensions', () => {
    const emitted = [scan, web, webhook].flatMap((f) =>
      emfRecords(f.lines).flatMap((record) =>
        record._aws.CloudWatchMetrics.flatMap((m) =>
          m.Metrics.map((metric) => ({
            key: `${m.Namespace}/${metric.Name}`,
            dimensions: Object.fromEntries((m.Dimensions[0] ?? []).map((d) => [d, String(record[d])])),
          })),
        ),
      ),
    );
    const watched = watchedMetrics(world.resolver.resolve(world.resolver.template.Resources));
    // DeadManArmed is put by the deploy, not emitted by a function (checked above).
    const ours = watched.filter((m) => m.namespace === 'DomainSentinel' && m.name !== 'DeadManArmed');
    expect([...new Set(ours.map((m) => m.name))].sort()).toEqual([
      'CriticalFindings',
      'DomainsScanned',
      'ResellerRequests',
      'ResellerThrottled',
      'ScanCompleted',
      'UnreadableRecords',
      'WarningFindings',
      'WebOutcome',
      'WebhookRejected',
    ]);
    // WebOutcome audit_failed (the AuditWriteFailed alarm) needs a state table that refuses writes,
    // which this rehearsal does not play: test/integration/restore-handler.test.ts drives the web
    // Lambda's entry into it and checks the data point carries exactly these dimensions.
    for (const metric of ours.filter((m) => m.dimensions.outcome !== 'audit_failed'))
      expect(
        emitted.some(
          (e) => e.key === `DomainSentinel/${metric.name}` && same(e.dimensions, metric.dimensions),
        ),
        `${metric.name} ${JSON.stringify(metric.dimensions)} is watched but never emitted`,
      ).toBe(true);
    const outcomes = emitted.filter((e) => e.key === 'DomainSentinel/WebOutcome').map((e) => e.dimensions);
    expect(outcomes).toContainEqual({
      action: 'restore',
      deployment: 'DomainSentinel',
      outcome: 'restored',
      service: 'web',
    });
    expect(outcomes).toContainEqual({
      action: 'snooze',
      deployment: 'DomainSentinel',
      outcome: 'snoozed',
      service: 'web',
    });
  });

  it('adds what AWS does for the stack: alarms notifying, SNS delivering, Scheduler, the account settings’ roles, every route', () => {
    const own = [
      ...alarmNotifications([world.resolver], world.resolver),
      ...queueDeliveries([world.resolver]),
      ...scheduleCalls(world.resolver),
      ...accountSettingRoles(world.resolver),
      ...routeInvocations(world.resolver),
    ];
    const kinds = new Set(own.map((c) => `${c.caller} ${c.action}`));
    expect([...kinds].sort()).toEqual(
      expect.arrayContaining([
        'cloudwatch.amazonaws.com sns:Publish',
        'cloudwatch.amazonaws.com kms:GenerateDataKey',
        'sns.amazonaws.com sqs:SendMessage',
        'scheduler.amazonaws.com sts:AssumeRole',
        'apigateway.amazonaws.com sts:AssumeRole',
        'sns.amazonaws.com sts:AssumeRole',
        'apigateway.amazonaws.com lambda:InvokeFunction',
      ]),
    );
    // Every route and method the API defines, read from the template (GET, HEAD and POST).
    const routes = own.filter((c) => c.action === 'lambda:InvokeFunction' && c.caller === API_GATEWAY);
    expect(routes.map((c) => c.via).sort()).toEqual(
      routesOf(world.resolver)
        .map((r) => `API Gateway routing ${r.method} ${r.resourcePath}`)
        .sort(),
    );
    expect(new Set(routes.map((c) => c.via?.split(' ')[3]))).toEqual(new Set(['GET', 'HEAD', 'POST']));
    world.calls.push(...own);
  });

  it('makes only calls the template’s policies allow, judged by an IAM policy evaluator', async () => {
    expect(world.calls.length).toBeGreaterThan(20);
    const actions = new Set(world.calls.map((c) => `${c.caller.replace(/[A-F0-9]{8}$/, '')} ${c.action}`));
    // The calls of each function, as the rehearsal saw them (a change in what a bundle does shows here).
    expect([...actions].sort()).toEqual(
      expect.arrayContaining([
        'ScanFunction sns:Publish',
        'ScanFunction scheduler:CreateSchedule',
        'ScanFunction iam:PassRole',
        'ScanFunction kms:GenerateDataKey',
        'ScanFunction ssm:GetParameter',
        'ScanFunction kms:Decrypt',
        'ScanFunction s3:PutObject',
        'ScanFunction dynamodb:Query',
        'RestoreFunction ssm:GetParameter',
        'RestoreFunction s3:GetObject',
        'RestoreFunction dynamodb:UpdateItem',
        'WebhooksFunction ssm:GetParameter',
        'WebhooksFunction kms:Decrypt',
        'WebhooksFunction sqs:ReceiveMessage',
      ]),
    );
    const refused = await judge(world.resolver.template);
    expect(refused).toEqual([]);
    // The grants' partition condition (ForAllValues) lets a request that names no partition
    // through: every state call each function made names one, the account's own (its base URL as
    // configured, not the rehearsal's reseller it reads) or a shard of it.
    const stateCalls = world.calls.filter((c) => c.action.startsWith('dynamodb:'));
    expect(new Set(stateCalls.map((c) => c.caller.replace(/[A-F0-9]{8}$/, '')))).toEqual(
      new Set(['ScanFunction', 'RestoreFunction']),
    );
    const scopes = stateCalls.map((c) => [c.context['dynamodb:LeadingKeys'] ?? []].flat().map(unsharded));
    expect(scopes.every((keys) => keys.length > 0)).toBe(true);
    expect(new Set(scopes.flat())).toEqual(new Set([SETTINGS.resellerBaseUrl]));
  });

  // The role may use the topic key only as SNS uses it for a publish: its credentials, taken and
  // used directly, decrypt nothing encrypted with that key.
  it('lets the scan use the alert topic’s key through SNS only', async () => {
    const topic = scan.env.ALERT_TOPIC_ARN as string;
    const topicId = world.resolver
      .ofType('AWS::SNS::Topic')
      .find((id) => world.resolver.ref(id) === topic) as string;
    const key = world.resolver.string(
      world.resolver.resource(topicId).Properties?.KmsMasterKeyId,
      'the alert topic’s key',
    );
    const direct: AwsCall = { caller: scan.id, action: 'kms:Decrypt', resource: key, context: {} };
    const throughSns: AwsCall = {
      ...direct,
      context: {
        'kms:ViaService': `sns.${PLACE.region}.amazonaws.com`,
        'kms:EncryptionContext:aws:sns:topicArn': topic,
      },
    };
    expect(await judge(world.resolver.template, [throughSns])).toEqual([]);
    expect(await judge(world.resolver.template, [direct])).toEqual([
      `${scan.id} may not kms:Decrypt on ${key}: ImplicitlyDenied`,
    ]);
  });

  it('fails, naming the action and the resource, when a statement the functions need is removed', async () => {
    const topic = scan.env.ALERT_TOPIC_ARN as string;
    // The alert topic taken out of the scan's sns:Publish (CDK merges it with the chat topic's).
    const without = withoutResource(world.resolver.template, scan.roleId, 'sns:Publish', 'AlertsTopic');
    expect(await judge(without)).toEqual([`${scan.id} may not sns:Publish on ${topic}: ImplicitlyDenied`]);
    // The webhook subscriber without the read of its Slack webhook's parameter.
    const noSlackUrl = withoutResource(
      world.resolver.template,
      webhook.roleId,
      'ssm:GetParameter',
      'webhook/slack',
    );
    expect(await judge(noSlackUrl)).toEqual([
      `${webhook.id} may not ssm:GetParameter on arn:aws:ssm:${PLACE.region}:${PLACE.account}:parameter/domain-sentinel/webhook/slack: ImplicitlyDenied`,
    ]);
    const table = world.resolver.ofType('AWS::DynamoDB::Table')[0] as string;
    const noState = withoutStatement(world.resolver.template, web.roleId, (s) =>
      JSON.stringify(s.Resource).includes(table),
    );
    const refused = await judge(noState);
    expect(refused.length).toBeGreaterThan(0);
    for (const line of refused)
      expect(line).toMatch(
        new RegExp(
          `^${web.id} may not dynamodb:\\w+ on ${world.resolver.attribute(table, 'Arn')}: ImplicitlyDenied$`,
        ),
      );
  });

  /**
   * One permission of each path AWS takes for the stack, removed from the template: the rehearsal
   * must fail, naming who may not do what, on which resource, and for what.
   */
  const MUTATIONS: ReadonlyArray<[string, (t: Template) => void, RegExp, number?]> = [
    [
      'the ops topic’s policy statement that lets CloudWatch publish',
      (t) => dropStatements(t, 'AWS::SNS::TopicPolicy', (st) => st.Sid === 'AllowAlarmsOfThisStackToPublish'),
      /^cloudwatch\.amazonaws\.com may not sns:Publish on arn:aws:sns:\S+ \(made by AWS for CloudWatch notifying for the alarm DomainSentinel\/\w+\): ImplicitlyDenied$/,
      // One per alarm of the stack (AuditWriteFailed is the 14th, HeldSmsNotPublished the 15th).
      15,
    ],
    [
      'the key policy statement that lets CloudWatch use the topics’ key',
      (t) => dropKeyStatement(t, 'AllowAlarmsOfThisStackToEncrypt'),
      /^cloudwatch\.amazonaws\.com may not kms:(GenerateDataKey|Decrypt) on arn:aws:kms:\S+ \(made by AWS for CloudWatch notifying for the alarm DomainSentinel\/\w+\): ImplicitlyDenied$/,
      30,
    ],
    [
      'a webhook queue’s policy statement that lets SNS send',
      (t) =>
        dropStatements(
          t,
          'AWS::SQS::QueuePolicy',
          (st) => JSON.stringify(st).includes('sns.amazonaws.com'),
          1,
        ),
      /^sns\.amazonaws\.com may not sqs:SendMessage on arn:aws:sqs:\S+WebhooksQueue\S+ \(made by AWS for SNS delivering \S+ to its subscribed queue\): ImplicitlyDenied$/,
      1,
    ],
    [
      'the Scheduler role’s sqs:SendMessage to its dead-letter queue',
      (t) =>
        dropStatements(
          t,
          'AWS::IAM::Policy',
          (st) => st.Action === 'sqs:SendMessage' && JSON.stringify(st).includes('ScheduleDeadLetters'),
        ),
      /^SchedulerRoleForTarget\w+ may not sqs:SendMessage on arn:aws:sqs:\S+ScheduleDeadLetters\S+ \(made by AWS for EventBridge Scheduler running the schedule: its dead-letter queue\): ImplicitlyDenied$/,
      1,
    ],
    [
      'the SMS delivery-status role’s policy',
      (t) => {
        for (const r of Object.values(t.Resources))
          if (r.Type === 'AWS::IAM::Role' && JSON.stringify(r).includes('SmsDeliveryLogs'))
            delete r.Properties?.Policies;
      },
      /^AccountSettingsSmsDeliveryStatusRole\w+ may not logs:(CreateLogGroup|CreateLogStream|PutLogEvents) on arn:aws:logs:\S+:log-group:sns\/eu-west-1\/000000000000\/DirectPublishToPhoneNumber\S* \(made by AWS for SNS writing SMS delivery status\): ImplicitlyDenied$/,
      6,
    ],
    [
      'the API Gateway CloudWatch Logs role’s managed policy',
      (t) => {
        for (const r of Object.values(t.Resources))
          if (
            r.Type === 'AWS::IAM::Role' &&
            JSON.stringify(r).includes('AmazonAPIGatewayPushToCloudWatchLogs')
          )
            delete r.Properties?.ManagedPolicyArns;
      },
      /^AccountSettingsApiGatewayCloudWatchRole\w+ may not logs:\w+ on arn:aws:logs:\S+ \(made by AWS for API Gateway writing the stage’s logs\): ImplicitlyDenied$/,
      6,
    ],
    [
      'the web function’s permission for API Gateway, narrowed to GET',
      (t) => {
        for (const r of Object.values(t.Resources))
          if (r.Type === 'AWS::Lambda::Permission' && JSON.stringify(r).includes('execute-api'))
            (r.Properties as Record<string, unknown>).SourceArn = JSON.parse(
              JSON.stringify(r.Properties?.SourceArn).replace('/*/*/*"', '/*/GET/*"'),
            );
      },
      /^apigateway\.amazonaws\.com may not lambda:InvokeFunction on \S+ \(made by AWS for API Gateway routing (HEAD|POST) \/[\w{}./]+\): ImplicitlyDenied$/,
      // Every method of every route but GET.
      WEB_ROUTES.reduce((n, route) => n + route.methods.filter((m) => m !== 'GET').length, 0),
    ],
    [
      'the custom resource’s iam:PassRole of the SMS delivery-status role',
      (t) =>
        dropStatements(
          t,
          'AWS::IAM::Policy',
          (st) => st.Action === 'iam:PassRole' && JSON.stringify(st).includes('SmsDeliveryStatus'),
        ),
      /^AWS679f53fac002430cb0da5b7982bd2287\w+ may not iam:PassRole on arn:aws:iam::000000000000:role\/\S+SmsDeliveryStatus\S+ \(made by AWS for sns:SetSMSAttributes\): ImplicitlyDenied$/,
      1,
    ],
    [
      'the release function’s apigateway:PATCH that clears the account’s role (still ours) on delete',
      (t) => {
        for (const r of Object.values(t.Resources)) {
          const statements =
            (r.Properties?.PolicyDocument as { Statement?: Array<Record<string, unknown>> })?.Statement ?? [];
          for (const st of statements)
            if (Array.isArray(st.Action) && st.Action.includes('apigateway:PATCH'))
              st.Action = ['apigateway:GET'];
        }
      },
      /^AccountSettingsSettingsRelease\w+ may not apigateway:PATCH on arn:aws:apigateway:eu-west-1::\/account: ImplicitlyDenied$/,
      1,
    ],
    [
      'the scan’s right to make held-SMS schedules',
      (t) =>
        dropStatements(t, 'AWS::IAM::Policy', (st) =>
          JSON.stringify(st.Action).includes('scheduler:CreateSchedule'),
        ),
      /^ScanFunction\w+ may not scheduler:CreateSchedule on arn:aws:scheduler:eu-west-1:000000000000:schedule\/\S+\/held-sms-[0-9a-f]{40}: ImplicitlyDenied$/,
      1,
    ],
    [
      'the scan’s iam:PassRole of the held-SMS role',
      (t) =>
        dropStatements(
          t,
          'AWS::IAM::Policy',
          (st) => st.Action === 'iam:PassRole' && JSON.stringify(st).includes('HeldSmsPublishRole'),
        ),
      /^ScanFunction\w+ may not iam:PassRole on arn:aws:iam::000000000000:role\/\S+HeldSmsPublishRole\w+ \(made by AWS for scheduler:CreateSchedule\): ImplicitlyDenied$/,
      1,
    ],
    [
      'the held-SMS role’s sns:Publish',
      (t) => {
        for (const r of Object.values(t.Resources)) {
          if (
            r.Type !== 'AWS::IAM::Policy' ||
            !JSON.stringify(r.Properties?.Roles).includes('HeldSmsPublishRole')
          )
            continue;
          const document = r.Properties?.PolicyDocument as { Statement: Array<Record<string, unknown>> };
          document.Statement = document.Statement.filter((st) => st.Action !== 'sns:Publish');
        }
      },
      /^HeldSmsPublishRole\w+ may not sns:Publish on arn:aws:sns:\S+ \(made by AWS for EventBridge Scheduler releasing a held SMS\): ImplicitlyDenied$/,
    ],
    [
      'the web function’s s3:ListBucket (a missing report would answer 403)',
      (t) => dropStatements(t, 'AWS::IAM::Policy', (st) => st.Action === 's3:ListBucket'),
      /^RestoreFunction\w+ may not s3:ListBucket on arn:aws:s3:::\S+ \(made by AWS for s3:GetObject of the missing (latest(-view)?|reports\/\S+)\.json\): ImplicitlyDenied$/,
    ],
  ];

  it.each(MUTATIONS.map(([name, mutate, line, count]) => [name, mutate, line, count] as const))(
    'fails without %s, naming what is missing',
    async (_name, mutate, line, count) => {
      const template = structuredClone(world.resolver.template) as Template;
      mutate(template);
      const refused = await judge(template);
      expect(refused.length, refused.join('\n')).toBeGreaterThan(0);
      for (const refusal of refused) expect(refusal).toMatch(line);
      if (count !== undefined) expect(refused).toHaveLength(count);
    },
  );
});

interface WatchedMetric {
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: Record<string, string>;
}

/** Every metric an alarm or a dashboard of the (resolved) template reads, with its dimensions. */
function watchedMetrics(resources: unknown): WatchedMetric[] {
  const out: WatchedMetric[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const v = value as Record<string, unknown>;
    if (typeof v.Namespace === 'string' && typeof v.MetricName === 'string')
      out.push({
        namespace: v.Namespace,
        name: v.MetricName,
        dimensions: Object.fromEntries(
          ((v.Dimensions as Array<{ Name: string; Value: string }>) ?? []).map((d) => [d.Name, d.Value]),
        ),
      });
    if (typeof v.DashboardBody === 'string')
      for (const widget of JSON.parse(v.DashboardBody).widgets ?? [])
        for (const row of widget.properties?.metrics ?? []) {
          const plain = (row as unknown[]).filter((x) => typeof x === 'string') as string[];
          const [namespace, name, ...pairs] = plain;
          if (!namespace || !name || namespace.startsWith('SEARCH')) continue;
          const dimensions: Record<string, string> = {};
          for (let i = 0; i + 1 < pairs.length; i += 2)
            dimensions[pairs[i] as string] = pairs[i + 1] as string;
          out.push({ namespace, name, dimensions });
        }
    for (const item of Object.values(v)) walk(item);
  };
  walk(resources);
  return out;
}

/** A state partition without its shard number (`#0` to `#15`): the account's scope. */
const unsharded = (key: string): string => key.replace(/#\d{1,2}$/, '');

const same = (a: Record<string, string>, b: Record<string, string>) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

const API_GATEWAY = 'apigateway.amazonaws.com';

/** The logical id of the role a `Fn::GetAtt [Role, Arn]` names. */
function roleIdOf(value: unknown): string {
  const id = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(JSON.stringify(value))?.[1];
  if (!id) throw new Error(`not a role of the template: ${JSON.stringify(value)}`);
  return id;
}

/** The rehearsal's calls judged against a template's policies; each refusal in words. */
async function judge(template: Template, calls: readonly AwsCall[] = world.calls): Promise<string[]> {
  const resolver = new TemplateResolver(template, world.resolver.env);
  const ssmKey = `arn:aws:kms:${PLACE.region}:${PLACE.account}:key/aws-ssm-managed-key`;
  const refused = await denials(
    resolver,
    calls,
    (caller) => {
      // AWS services acting for the stack (API Gateway, CloudWatch, SNS, Scheduler…), judged by the resource's policy.
      if (caller.endsWith('.amazonaws.com')) return { service: caller };
      const fn = world.functions.get(caller);
      if (fn) return { roleId: fn.roleId, session: fn.name };
      if (resolver.template.Resources[caller]?.Type === 'AWS::IAM::Role')
        return { roleId: caller, session: 'rehearsal' };
      throw new Error(`a call by ${caller}, which is no function or role of the template`);
    },
    new Map([[ssmKey, awsManagedKeyPolicy(PLACE.account, 'ssm', PLACE.region)]]),
  );
  return [...new Set(refused.map(describeDenial))];
}

/** A copy of the template whose `action` statements of a role's policies no longer name resources holding `part`. */
function withoutResource(template: Template, roleId: string, action: string, part: string): Template {
  const copy = structuredClone(template) as Template;
  let dropped = 0;
  for (const resource of Object.values(copy.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const props = resource.Properties as {
      Roles: Array<{ Ref?: string }>;
      PolicyDocument: { Statement: Array<Record<string, unknown>> };
    };
    if (!props.Roles.some((r) => r.Ref === roleId)) continue;
    for (const statement of props.PolicyDocument.Statement) {
      if (statement.Action !== action) continue;
      const all = ([] as unknown[]).concat(statement.Resource);
      const kept = all.filter((r) => !JSON.stringify(r).includes(part));
      dropped += all.length - kept.length;
      statement.Resource = kept;
    }
  }
  if (dropped === 0) throw new Error(`no ${action} of ${roleId} names ${part}`);
  return copy;
}

/** A copy of the template without the statements of a role's policies that `drop` picks. */
function withoutStatement(
  template: Template,
  roleId: string,
  drop: (statement: Record<string, unknown>) => boolean,
): Template {
  const copy = structuredClone(template) as Template;
  let dropped = 0;
  for (const resource of Object.values(copy.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const props = resource.Properties as {
      Roles: Array<{ Ref?: string }>;
      PolicyDocument: { Statement: Array<Record<string, unknown>> };
    };
    if (!props.Roles.some((r) => r.Ref === roleId)) continue;
    const kept = props.PolicyDocument.Statement.filter((s) => !drop(s));
    dropped += props.PolicyDocument.Statement.length - kept.length;
    props.PolicyDocument.Statement = kept;
  }
  if (dropped === 0) throw new Error(`no statement of ${roleId} matched`);
  return copy;
}

/** The directory of a function's bundle in cdk.out, from the assets manifest. */
function bundleOf(functionId: string): string {
  const code = world.resolver.resource(functionId).Properties?.Code as { S3Key?: string } | undefined;
  const key = String(code?.S3Key);
  const assets = JSON.parse(
    readFileSync(join(cdkOut, `${world.resolver.env.stackName}.assets.json`), 'utf8'),
  );
  return assets.files[key.replace(/\.zip$/, '')].source.path;
}

/** Plays CloudFormation for one custom resource: sends it the request and resolves to its answer. */
async function driveCustomResource(
  id: string,
  kind: 'Create' | 'Update' | 'Delete',
  physicalResourceId?: string,
): Promise<Record<string, unknown>> {
  const resource = world.resolver.resource(id);
  const props = world.resolver.resolve(resource.Properties) as Record<string, unknown>;
  const functionId = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(
    JSON.stringify(resource.Properties?.ServiceToken),
  )?.[1];
  const fn = functionId ? world.functions.get(functionId) : undefined;
  if (!fn) throw new Error(`${id}: no function of the template serves it`);
  const before = fn.cfnResponses.length;
  await fn.invoke({
    RequestType: kind,
    ServiceToken: props.ServiceToken,
    ResponseURL: 'https://cloudformation-response.rehearsal.invalid/response',
    StackId: `arn:aws:cloudformation:${PLACE.region}:${PLACE.account}:stack/${world.resolver.env.stackName}/rehearsal`,
    RequestId: `${kind}-${id}`,
    LogicalResourceId: id,
    ResourceType: resource.Type,
    ResourceProperties: props,
    ...(kind === 'Create' ? {} : { PhysicalResourceId: physicalResourceId }),
    ...(kind === 'Update' ? { OldResourceProperties: props } : {}),
  });
  const answers = fn.cfnResponses.slice(before);
  if (answers.length !== 1) throw new Error(`${id} ${kind}: ${answers.length} answers to CloudFormation`);
  return answers[0] as Record<string, unknown>;
}

/** Removes the statements `drop` picks from every policy document of resources of `type` (at most `limit` resources). */
function dropStatements(
  template: Template,
  type: string,
  drop: (statement: Record<string, unknown>) => boolean,
  limit = Number.POSITIVE_INFINITY,
): void {
  let changed = 0;
  for (const resource of Object.values(template.Resources)) {
    if (resource.Type !== type || changed >= limit) continue;
    const document = resource.Properties?.PolicyDocument as { Statement: Array<Record<string, unknown>> };
    const kept = document.Statement.filter((st) => !drop(st));
    if (kept.length < document.Statement.length) changed++;
    document.Statement = kept;
  }
  if (changed === 0) throw new Error(`no ${type} statement to drop`);
}

/** Removes a statement, by its Sid, from the KMS keys' policies. */
function dropKeyStatement(template: Template, sid: string): void {
  for (const resource of Object.values(template.Resources))
    if (resource.Type === 'AWS::KMS::Key') {
      const policy = resource.Properties?.KeyPolicy as { Statement: Array<{ Sid?: string }> };
      policy.Statement = policy.Statement.filter((st) => st.Sid !== sid);
    }
}
