import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderReportStore, S3ReportStore } from '../../functions/adapters/report-stores';
import { domainFinding, reportOf } from '../support/report';

const BUCKET = 'sentinel-reports';
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'sentinel-reports-'));
  dirs.push(dir);
  return dir;
};
let server: S3rver;
let client: S3Client;

beforeAll(async () => {
  server = new S3rver({ port: 0, address: '127.0.0.1', directory: tempDir(), silent: true });
  const { port } = await server.run();
  client = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
});
afterAll(async () => {
  client?.destroy();
  await server?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const first = reportOf([domainFinding('soon.nl', 'expiring', 'critical', 3)]);
const second = {
  ...reportOf([domainFinding('later.nl', 'expiring', 'warning', 20)]),
  generated_at: '2026-11-23T06:00:00.000Z',
};

describe('S3ReportStore (real S3 client against s3rver)', () => {
  it('has no report before the first scan, then always the latest, and keeps each one under reports/', async () => {
    const store = new S3ReportStore(client, BUCKET);
    await expect(store.latest()).resolves.toBeNull();
    await store.put(first);
    await store.put(second);
    await expect(store.latest()).resolves.toEqual(second);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    expect(listed.Contents?.map((o) => o.Key).sort()).toEqual([
      'latest.json',
      'reports/2026-11-22T06-00-00-000Z.json',
      'reports/2026-11-23T06-00-00-000Z.json',
    ]);
  });

  it('fails with the bucket named when it cannot write', async () => {
    await expect(new S3ReportStore(client, 'no-such-bucket').put(first)).rejects.toThrow(
      /could not write the report to s3:\/\/no-such-bucket: NoSuchBucket/,
    );
  });
});

describe('FolderReportStore', () => {
  it('has no report before the first scan, then the latest one', async () => {
    const store = new FolderReportStore(join(tempDir(), 'nested', 'reports'));
    await expect(store.latest()).resolves.toBeNull();
    await store.put(first);
    await store.put(second);
    await expect(store.latest()).resolves.toEqual(second);
  });

  it('refuses a file that is not a report, naming it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'latest.json'), '{"hello":1}');
    await expect(new FolderReportStore(dir).latest()).rejects.toThrow(
      new RegExp(`the report in ${join(dir, 'latest.json')} is not a domain-sentinel report \\(generated_at`),
    );
  });
});
