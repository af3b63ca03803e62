import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { captureOutput } from '../support/capture';
import { runCli } from '../support/cli';

const API_KEY = 'sk_scan_handler_7b3f9a2e';
const SIGNING_KEY = 'sign-0123456789abcdef0123456789abcdef';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:domain-sentinel-alerts';
const ssm = mockClient(SSMClient);
const sns = mockClient(SNSClient);
const context = {
  getRemainingTimeInMillis: () => 120_000,
  functionName: 'scan',
  awsRequestId: 'req-1',
} as unknown as Context;
const scheduledEvent = {
  version: '0',
  id: '5f3f3f3f-1111-2222-3333-444444444444',
  'detail-type': 'Scheduled Event',
  source: 'aws.scheduler',
  time: '2026-11-22T06:00:00Z',
  detail: {},
};

let sim: Simulator;
const portfolio = generatePortfolio({ domains: 150, seed: 9, now: Date.now() });
let output: () => string;

beforeAll(async () => {
  sim = await startSimulator({ portfolio, apiKey: API_KEY });
});
afterAll(() => sim.close());

beforeEach(() => {
  ssm.reset();
  sns.reset();
  // Each test gets a fresh module: a cold start, with an empty secret cache.
  vi.resetModules(); // a cold start: empty secret cache
  output = captureOutput();
  vi.stubEnv('RESELLER_BASE_URL', sim.url);
  vi.stubEnv('RESELLER_API_KEY_PARAMETER', '/domain-sentinel/api-key');
  vi.stubEnv('LINK_SIGNING_KEY_PARAMETER', '/domain-sentinel/link-signing-key');
  vi.stubEnv('LINK_BASE_URL', 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/');
  vi.stubEnv('ALERT_TOPIC_ARN', TOPIC);
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'DomainSentinel');
  ssm
    .on(GetParameterCommand, { Name: '/domain-sentinel/api-key' })
    .resolves({ Parameter: { Value: API_KEY } });
  ssm
    .on(GetParameterCommand, { Name: '/domain-sentinel/link-signing-key' })
    .resolves({ Parameter: { Value: SIGNING_KEY } });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('scan Lambda entry point', () => {
  it('reads both secrets with decryption, scans, publishes one alert with signed restore links, and reports completion', async () => {
    sns.on(PublishCommand).resolves({ MessageId: 'm-1' });
    const { handler } = await import('../../functions/handlers/scan');
    const result = await handler(scheduledEvent, context);

    expect(ssm.commandCalls(GetParameterCommand).map((c) => c.args[0].input)).toEqual([
      { Name: '/domain-sentinel/api-key', WithDecryption: true },
      { Name: '/domain-sentinel/link-signing-key', WithDecryption: true },
    ]);
    const publishes = sns.commandCalls(PublishCommand);
    expect(publishes).toHaveLength(1);
    const input = publishes[0]?.args[0].input;
    expect(input).toMatchObject({ TopicArn: TOPIC, MessageStructure: 'json' });
    const report = JSON.parse(JSON.parse(input?.Message ?? '{}').default);
    const quarantined = report.findings.filter((f: { kind: string }) => f.kind === 'quarantine');
    expect(quarantined.length).toBeGreaterThan(0);
    for (const f of quarantined) {
      expect(f.restore_url).toMatch(
        /^https:\/\/abc123\.execute-api\.eu-west-1\.amazonaws\.com\/prod\/restore\/[a-z0-9.-]+\?exp=\d+&kid=[0-9a-f]{8}&sig=/,
      );
    }
    expect(result).toMatchObject({ published: true, summary: { critical: report.summary.critical } });

    // Logs: structured JSON lines, an EMF ScanCompleted metric, and no secret anywhere.
    expect(output()).toContain('"message":"scan completed"');
    expect(output()).toMatch(/"ScanCompleted":1/);
    expect(output()).not.toContain(API_KEY);
    expect(output()).not.toContain(SIGNING_KEY);
  });

  it('reads the secrets once across warm invocations (cached for a few minutes)', async () => {
    sns.on(PublishCommand).resolves({ MessageId: 'm-2' });
    const { handler } = await import('../../functions/handlers/scan');
    await handler(scheduledEvent, context);
    await handler(scheduledEvent, context);
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(2);
    expect(sns.commandCalls(PublishCommand)).toHaveLength(2);
  });

  it('fails the invocation when the publish fails, logs why, and does not report completion', async () => {
    sns.on(PublishCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottledException' }));
    const { handler } = await import('../../functions/handlers/scan');
    await expect(handler(scheduledEvent, context)).rejects.toThrow(
      `could not publish the alert to ${TOPIC}: ThrottledException: Rate exceeded`,
    );
    expect(output()).toContain('"message":"scan failed"');
    expect(output()).not.toMatch(/"ScanCompleted":1/);
  });

  it('fails naming the parameter when a secret cannot be read', async () => {
    ssm
      .on(GetParameterCommand, { Name: '/domain-sentinel/api-key' })
      .rejects(Object.assign(new Error('not found'), { name: 'ParameterNotFound' }));
    const { handler } = await import('../../functions/handlers/scan');
    await expect(handler(scheduledEvent, context)).rejects.toThrow(
      /SSM parameter \/domain-sentinel\/api-key/,
    );
    expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
  });
});

describe('sentinel scan with a failing publish', () => {
  it('exits 1 with a clear message', async () => {
    sns
      .on(PublishCommand)
      .rejects(Object.assign(new Error('Topic does not exist'), { name: 'NotFoundException' }));
    const run = await runCli(['scan'], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: API_KEY,
      ALERT_TOPIC_ARN: TOPIC,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `sentinel: could not publish the alert to ${TOPIC}: NotFoundException: Topic does not exist\n`,
    );
  });
});
