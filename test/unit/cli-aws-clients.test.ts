import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliS3Client, cliSchedulerClient, cliSnsClient } from '../../bin/aws-clients';
import { SCAN_SDK_TIMEOUTS, type SdkTimeouts } from '../../functions/aws/sdk-timeouts';
import { dynamoDbClientFromEnv } from '../../functions/local/state-location';
import { ROOT } from '../../scripts/docs';

/*
 * The command line's AWS clients are bounded as the scan function's are (functions/aws/sdk-timeouts.ts):
 * a Scheduler or SNS that never answers fails the call, rather than holding the scan (and its lease)
 * for good.
 */

/** The bounds a built client holds: its HTTP handler's timeouts and its attempts. */
async function boundsOf(client: { config: { requestHandler: unknown; maxAttempts: () => Promise<number> } }) {
  const handler = client.config.requestHandler as { configProvider: Promise<Record<string, unknown>> };
  const config = await handler.configProvider;
  return {
    connectionTimeout: config.connectionTimeout,
    requestTimeout: config.requestTimeout,
    throwOnRequestTimeout: config.throwOnRequestTimeout,
    maxAttempts: await client.config.maxAttempts(),
  };
}

const expected = (timeouts: SdkTimeouts) => ({
  connectionTimeout: timeouts.connectionTimeoutMs,
  requestTimeout: timeouts.requestTimeoutMs,
  throwOnRequestTimeout: true,
  maxAttempts: timeouts.maxAttempts,
});

describe('the command line AWS clients', () => {
  it('build the held SMS Scheduler client with the scan function bounds', async () => {
    expect(await boundsOf(cliSchedulerClient())).toEqual(expected(SCAN_SDK_TIMEOUTS.scheduler));
  });

  it('build the alert SNS client with the scan function bounds', async () => {
    expect(await boundsOf(cliSnsClient())).toEqual(expected(SCAN_SDK_TIMEOUTS.sns));
  });

  it('build the report S3 client with the scan function bounds, with or without a local endpoint', async () => {
    expect(await boundsOf(cliS3Client(undefined))).toEqual(expected(SCAN_SDK_TIMEOUTS.s3));
    expect(await boundsOf(cliS3Client('http://127.0.0.1:9000'))).toEqual(expected(SCAN_SDK_TIMEOUTS.s3));
  });

  it('build the state DynamoDB client with the scan function bounds', async () => {
    const env = { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000' };
    expect(await boundsOf(dynamoDbClientFromEnv(env))).toEqual(expected(SCAN_SDK_TIMEOUTS.dynamodb));
  });

  it('are built in bin/aws-clients.ts only: no command builds an SDK client of its own', () => {
    const builds: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts') && path !== join(ROOT, 'bin', 'aws-clients.ts')) {
          const text = readFileSync(path, 'utf8');
          for (const client of ['SchedulerClient', 'SNSClient', 'S3Client'])
            if (text.includes(`new ${client}(`)) builds.push(`${relative(ROOT, path)}: ${client}`);
        }
      }
    };
    walk(join(ROOT, 'bin'));
    // try-alerts talks to a local SNS/SQS emulator it starts itself.
    expect(builds.filter((b) => !b.startsWith('bin/commands/try-alerts.ts'))).toEqual([]);
  });
});
