import { createServer, type IncomingMessage } from 'node:http';
import { S3Client } from '@aws-sdk/client-s3';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { S3ReportStore } from '../../functions/aws/s3-report-store';
import { type ScanSdkTimeouts, type SdkTimeouts, timedClientConfig } from '../../functions/aws/sdk-timeouts';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { captureOutput } from '../support/capture';
import { listenOnLoopback } from '../support/loopback';
import { domainFinding, reportOf } from '../support/report';

/*
 * The scan entry's AWS clients give up on a call that never answers, so the run fails with the
 * scan's own error inside the time it keeps back for publishing, rather than running into Lambda's
 * timeout. The real SDK clients against a real server on loopback that takes each request and never
 * answers; small timeouts given as the entry's configuration.
 */

const API_KEY = 'sk_scan_timeouts_3c9e1d';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:domain-sentinel-alerts';
const BUCKET = 'scan-timeouts-reports';
const SMALL: SdkTimeouts = { connectionTimeoutMs: 200, requestTimeoutMs: 300, maxAttempts: 2 };
const TIMEOUTS: ScanSdkTimeouts = {
  sns: SMALL,
  dynamodb: SMALL,
  s3: { ...SMALL, uploadBytesPerSecond: 1_000_000 },
  ssm: SMALL,
  scheduler: SMALL,
};
const ssm = mockClient(SSMClient);
const context = { getRemainingTimeInMillis: () => 120_000 };
let sim: Simulator;
const closers: Array<() => Promise<void>> = [];

/** A server on loopback that takes each request whole and never answers; `seen` holds their method and path. */
async function silentServer() {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
  });
  const { url, close } = await listenOnLoopback(server);
  closers.push(close);
  return { url, seen };
}

/**
 * An S3 endpoint on loopback that reads each request body at `bytesPerSecond` (a slow network),
 * then answers it as S3 answers a PutObject; `seen` holds each body's size.
 */
async function slowS3(bytesPerSecond: number) {
  const seen: number[] = [];
  const server = createServer((req, res) => {
    const started = Date.now();
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      const ahead = (bytes * 1000) / bytesPerSecond - (Date.now() - started);
      if (ahead > 0) {
        req.pause();
        setTimeout(() => req.resume(), ahead);
      }
    });
    req.on('end', () => {
      seen.push(bytes);
      res.writeHead(200, { ETag: '"0123456789abcdef"' }).end();
    });
  });
  const { url, close } = await listenOnLoopback(server);
  closers.push(close);
  return { url, seen };
}

/** The scan entry as the stack configures it, with the timeouts above. */
async function scanEntry() {
  const { createScanEntry } = await import('../../functions/handlers/scan');
  return createScanEntry(process.env, TIMEOUTS);
}

beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 150, seed: 9, now: Date.now() }),
    apiKey: API_KEY,
  });
});
afterAll(() => sim.close());
beforeEach(() => {
  ssm.reset();
  for (const [name, value] of Object.entries({
    RESELLER_BASE_URL: sim.url,
    RESELLER_API_KEY_PARAMETER: '/ds/api-key',
    ALERT_TOPIC_ARN: TOPIC,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    POWERTOOLS_METRICS_NAMESPACE: 'DomainSentinel',
  }))
    vi.stubEnv(name, value);
  ssm.on(GetParameterCommand, { Name: '/ds/api-key' }).resolves({ Parameter: { Value: API_KEY } });
});
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('the scan entry when AWS does not answer', () => {
  it('fails the run with its own publish error when SNS never answers, after the configured attempts', async () => {
    const output = captureOutput();
    const sns = await silentServer();
    vi.stubEnv('AWS_ENDPOINT_URL_SNS', sns.url);
    const handler = await scanEntry();
    await expect(handler({}, context)).rejects.toThrow(
      `could not publish the alert to ${TOPIC}: TimeoutError`,
    );
    // The alert's publish, tried as often as configured, then given up: the chat message never sent.
    expect(sns.seen).toEqual(Array(SMALL.maxAttempts).fill('POST /'));
    expect(output()).toContain('"message":"scan failed"');
    expect(output()).not.toMatch(/"ScanCompleted":1/);
  });

  it('fails the run with the report store error when S3 never answers the report, publishing nothing', async () => {
    const output = captureOutput();
    const [s3, sns] = await Promise.all([silentServer(), silentServer()]);
    vi.stubEnv('AWS_ENDPOINT_URL_S3', s3.url);
    vi.stubEnv('AWS_ENDPOINT_URL_SNS', sns.url);
    vi.stubEnv('REPORT_BUCKET', BUCKET);
    const handler = await scanEntry();
    await expect(handler({}, context)).rejects.toThrow(
      `could not write the report to s3://${BUCKET}: TimeoutError`,
    );
    // The history's copy first, one attempt (the SDK does not send a streamed body twice), and
    // nothing after it: no latest.json, no alert.
    expect(s3.seen).toHaveLength(1);
    expect(s3.seen[0]).toMatch(new RegExp(`^PUT /${BUCKET}/reports/`));
    expect(sns.seen).toEqual([]);
    expect(output()).toContain('"message":"scan failed"');
  });
});

describe('the scan entry when its state does not answer', () => {
  it('fails the run with the state error when DynamoDB never answers, publishing nothing', async () => {
    const output = captureOutput();
    const [dynamo, sns] = await Promise.all([silentServer(), silentServer()]);
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', dynamo.url);
    vi.stubEnv('AWS_ENDPOINT_URL_SNS', sns.url);
    vi.stubEnv('STATE_TABLE_NAME', 'scan-timeouts-state');
    const handler = await scanEntry();
    await expect(handler({}, context)).rejects.toThrow(
      'could not read the state in dynamodb:scan-timeouts-state: TimeoutError',
    );
    expect(dynamo.seen.length).toBeGreaterThanOrEqual(SMALL.maxAttempts);
    expect(dynamo.seen.length % SMALL.maxAttempts).toBe(0);
    expect(sns.seen).toEqual([]);
    expect(output()).toContain('"message":"scan failed"');
  });
});

describe('a report upload on a slow network', () => {
  // 5 000 findings: a report of about 1.5 MB, sent at 2 MB/s, well past the 300 ms of a small call.
  const report = reportOf(
    Array.from({ length: 5_000 }, (_, i) => domainFinding(`slow-upload-${i}.nl`, 'expiring', 'warning', 20)),
  );
  const timeouts: SdkTimeouts = { ...SMALL, maxAttempts: 1, uploadBytesPerSecond: 1_000_000 };
  const client = (url: string) =>
    new S3Client({ ...timedClientConfig(timeouts), endpoint: url, forcePathStyle: true });

  it('is given the time its size takes at the slowest pace, so it is not cut', async () => {
    const s3 = await slowS3(2_000_000);
    await new S3ReportStore(client(s3.url), BUCKET, '', timeouts).put(report);
    expect(s3.seen).toHaveLength(3);
    expect(s3.seen[0]).toBeGreaterThan(1_000_000);
  });

  it('is cut by the time of a small call when its size is not counted (the negative control)', async () => {
    const s3 = await slowS3(2_000_000);
    await expect(new S3ReportStore(client(s3.url), BUCKET).put(report)).rejects.toThrow(
      /could not write the report to s3:\/\/scan-timeouts-reports: TimeoutError/,
    );
  });
});
