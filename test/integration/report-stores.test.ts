import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ReportStore } from '../../functions/aws/s3-report-store';
import { parseSigningKeys, signLink } from '../../functions/core/links/links';
import { reportLines, withNextSteps } from '../../functions/core/memory/report-json';
import { INFO_LISTED } from '../../functions/core/memory/report-view';
import { reportJsonUrl } from '../../functions/core/scan/report-links';
import { createWholeReportHandler } from '../../functions/handlers/web-handler';
import { FolderReportStore } from '../../functions/local/folder-report-store';
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

/** The report the bucket keeps as the latest, parsed; null before the first. */
async function storedInBucket(): Promise<unknown> {
  try {
    const answer = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'latest.json' }));
    return JSON.parse((await answer.Body?.transformToString('utf-8')) ?? '');
  } catch (error) {
    if ((error as Error).name === 'NoSuchKey') return null;
    throw error;
  }
}

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
/** A report of `n` findings: a third critical, the rest info. */
const many = (n: number) =>
  reportOf(
    Array.from({ length: n }, (_, i) =>
      i < n / 3
        ? domainFinding(`crit-${i}.nl`, 'expiring', 'critical', 3)
        : domainFinding(`info-${i}.nl`, 'auto_renew_off', 'info', 200),
    ),
  );
const second = {
  ...reportOf([domainFinding('later.nl', 'expiring', 'warning', 20)]),
  generated_at: '2026-11-23T06:00:00.000Z',
};

/** `method` (GET by default) of report.json of `store` through the web handler, its link signed at `at` and naming the report `of`. */
function reportJsonOf(store: S3ReportStore, at: string, method = 'GET') {
  const keys = parseSigningKeys('w'.repeat(40));
  const now = Date.parse(at);
  const handler = createWholeReportHandler({
    secrets: { signingKeys: async () => keys } as never,
    reports: () => store,
    log: () => undefined,
    clock: () => now,
  });
  return (of: string) => {
    const link = new URL(
      reportJsonUrl(signLink({ baseUrl: 'https://x.example', action: 'report', keys, now }), of),
    );
    return handler({
      httpMethod: method,
      resource: '/report.json',
      path: '/report.json',
      headers: {},
      queryStringParameters: Object.fromEntries(link.searchParams),
      requestContext: { identity: { sourceIp: '192.0.2.1' } },
    } as never);
  };
}

/**
 * Whether S3 would take presigned `location` for a request of `method`: its signature computed
 * again as S3 does, from the method and the URL (s3rver does not check V4 signatures).
 */
async function signedFor(location: string, method: string): Promise<boolean> {
  const url = new URL(location);
  const at = (url.searchParams.get('X-Amz-Date') ?? '').replace(
    /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
    '$1-$2-$3T$4:$5:$6Z',
  );
  type Source = string | ArrayBuffer | ArrayBufferView;
  const bytes = (data: Source) =>
    typeof data === 'string'
      ? data
      : ArrayBuffer.isView(data)
        ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
        : Buffer.from(data);
  const sha256 = class {
    private readonly hash;
    constructor(secret?: Source) {
      this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
    }
    update(data: Source) {
      this.hash.update(bytes(data));
    }
    async digest() {
      return new Uint8Array(this.hash.digest());
    }
  };
  const presigner = new S3RequestPresigner({
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    region: 'us-east-1',
    sha256,
  });
  const query = Object.fromEntries([...url.searchParams].filter(([name]) => !name.startsWith('X-Amz-')));
  const signed = await presigner.presign(
    {
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query,
      headers: { host: url.host },
    },
    { signingDate: new Date(at), expiresIn: Number(url.searchParams.get('X-Amz-Expires')) },
  );
  return signed.query?.['X-Amz-Signature'] === url.searchParams.get('X-Amz-Signature');
}

describe('S3ReportStore (real S3 client against s3rver)', () => {
  it('report.json answered to HEAD redirects to a URL signed for HEAD, so curl -I -L gets the headers and not 403', async () => {
    await client.send(new CreateBucketCommand({ Bucket: `${BUCKET}-head` }));
    const store = new S3ReportStore(client, `${BUCKET}-head`);
    await store.put(first);
    const get = await reportJsonOf(store, first.generated_at)(first.generated_at);
    const head = await reportJsonOf(store, first.generated_at, 'HEAD')(first.generated_at);
    expect([get.statusCode, head.statusCode]).toEqual([303, 303]);
    // The check tells the two apart: a URL signed for GET is refused to HEAD, as S3 refuses it.
    await expect(signedFor(String(get.headers?.Location), 'GET')).resolves.toBe(true);
    await expect(signedFor(String(get.headers?.Location), 'HEAD')).resolves.toBe(false);
    await expect(signedFor(String(head.headers?.Location), 'HEAD')).resolves.toBe(true);
    const followed = await fetch(String(head.headers?.Location), { method: 'HEAD' });
    expect(followed.status).toBe(200);
    expect(Number(followed.headers.get('content-length'))).toBe(
      Buffer.byteLength([...reportLines(first)].join('')),
    );
  });

  it('hands out the whole latest report as a short-lived presigned URL that serves exactly its stored text', async () => {
    await client.send(new CreateBucketCommand({ Bucket: `${BUCKET}-whole` }));
    const store = new S3ReportStore(client, `${BUCKET}-whole`, 'acme/');
    await expect(store.whole()).resolves.toBeNull();
    const report = many(2_000);
    await store.put(report);
    const whole = await store.whole();
    expect(whole?.generated_at).toBe(report.generated_at);
    expect(whole?.text).toBeUndefined();
    const url = new URL((await whole?.url?.()) ?? '');
    // Its copy under reports/, which no later scan overwrites.
    expect(url.pathname).toBe(`/${BUCKET}-whole/acme/reports/2026-11-22T06-00-00-000Z.json`);
    // Signed with the store's own credentials (the web function's role on AWS, which may read reports/).
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^S3RVER\//);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300');
    const answer = await fetch(url);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe([...reportLines(report)].join(''));
  });

  it('links to exactly the report it names, though a scan keeps a newer one before the link is followed', async () => {
    await client.send(new CreateBucketCommand({ Bucket: `${BUCKET}-race` }));
    const store = new S3ReportStore(client, `${BUCKET}-race`, 'acme/');
    await store.put(first);
    const whole = await store.whole();
    expect(whole?.generated_at).toBe(first.generated_at);
    await store.put(second);
    const answer = await fetch(new URL((await whole?.url?.()) ?? ''));
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe([...reportLines(first)].join(''));
  });

  it('report.json of an alert redirects to its own report, though a scan keeps a newer one before the redirect is followed', async () => {
    await client.send(new CreateBucketCommand({ Bucket: `${BUCKET}-link` }));
    const store = new S3ReportStore(client, `${BUCKET}-link`);
    const get = reportJsonOf(store, first.generated_at);
    const getFirst = () => get(first.generated_at);
    await store.put(first);
    const answer = await getFirst();
    expect(answer.statusCode).toBe(303);
    await store.put(second);
    const followed = await fetch(String(answer.headers?.Location));
    expect(await followed.text()).toBe([...reportLines(first)].join(''));
    // The link itself, asked again once a newer scan replaced its report, still serves its own
    // report from reports/ (the claim check of an alert read after the next scan).
    const again = await getFirst();
    expect(again.statusCode).toBe(303);
    expect(await (await fetch(String(again.headers?.Location))).text()).toBe(
      [...reportLines(first)].join(''),
    );
  });

  it('report.json of an alert answers 410 once its copy under reports/ expired, and reads no other key for a changed of', async () => {
    await client.send(new CreateBucketCommand({ Bucket: `${BUCKET}-gone` }));
    const store = new S3ReportStore(client, `${BUCKET}-gone`, 'acme/');
    const get = reportJsonOf(store, first.generated_at);
    await store.put(first);
    await store.put(second);
    await client.send(
      new DeleteObjectCommand({
        Bucket: `${BUCKET}-gone`,
        Key: 'acme/reports/2026-11-22T06-00-00-000Z.json',
      }),
    );
    const gone = await get(first.generated_at);
    expect(gone.statusCode).toBe(410);
    expect(JSON.parse(gone.body).outcome).toBe('not_kept');
    // An `of` that is not a scan's time (it is not signed) names no key at all: the latest's own
    // 410, never another object of the bucket.
    for (const of of ['../latest', '2026-11-22T06:00:00.000Z/../../latest', 'x'.repeat(5000)]) {
      const answer = await get(of);
      expect(answer.statusCode).toBe(410);
      expect(JSON.parse(answer.body).outcome).toBe('replaced');
    }
  });

  it('has no URL for a report whose copy under reports/ the lifecycle rule expired', async () => {
    await client.send(new CreateBucketCommand({ Bucket: `${BUCKET}-expired` }));
    const store = new S3ReportStore(client, `${BUCKET}-expired`, 'acme/');
    await store.put(first);
    await client.send(
      new DeleteObjectCommand({
        Bucket: `${BUCKET}-expired`,
        Key: 'acme/reports/2026-11-22T06-00-00-000Z.json',
      }),
    );
    const whole = await store.whole();
    expect(whole?.generated_at).toBe(first.generated_at);
    await expect(whole?.url?.()).resolves.toBeNull();
  });

  it('has no report before the first scan, then always the latest, and keeps each one under reports/', async () => {
    const store = new S3ReportStore(client, BUCKET);
    await expect(storedInBucket()).resolves.toBeNull();
    await store.put(first);
    await store.put(second);
    // Kept as every JSON form of the report writes it: each finding with its next step.
    await expect(storedInBucket()).resolves.toEqual(withNextSteps(second));
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    expect(listed.Contents?.map((o) => o.Key).sort()).toEqual([
      'latest-view.json',
      'latest.json',
      'reports/2026-11-22T06-00-00-000Z.json',
      'reports/2026-11-23T06-00-00-000Z.json',
    ]);
  });

  it('streams the report in its stored form, one finding a line, the body S3 received exactly that', async () => {
    const store = new S3ReportStore(client, BUCKET);
    const report = many(3_000);
    await store.put(report);
    const text = await (
      await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'latest.json' }))
    ).Body?.transformToString('utf-8');
    expect(text).toBe([...reportLines(report)].join(''));
    const lines = text?.split('\n') ?? [];
    expect(lines.slice(1, 3_001).map((line) => JSON.parse(line.replace(/,$/, '')))).toEqual(
      withNextSteps(report).findings,
    );
    await expect(storedInBucket()).resolves.toEqual(withNextSteps(report));
  });

  it('answers the page and the feed from the view beside the report, and a filter from the report itself', async () => {
    const store = new S3ReportStore(client, BUCKET);
    const report = many(3_000);
    await store.put(report);
    const page = await store.view({ purpose: 'page' });
    // Every critical and warning finding, the first info ones, the rest counted by kind.
    expect(page?.findings.filter((f) => f.severity !== 'info')).toHaveLength(1_000);
    expect(page?.findings.filter((f) => f.severity === 'info')).toHaveLength(INFO_LISTED);
    expect(page?.view?.omitted).toEqual({ auto_renew_off: 2_000 - INFO_LISTED });
    const filtered = await store.view({ purpose: 'page', query: 'info-1999.nl' });
    expect(filtered?.view?.matches).toBe(1);
    expect(filtered?.findings.map((f) => ('domain_name' in f ? f.domain_name : ''))).toContain(
      'info-1999.nl',
    );
    const calendar = await store.view({ purpose: 'calendar' });
    expect(calendar?.findings).toHaveLength(1_000 + INFO_LISTED);
  });

  it('fails with the bucket named when it cannot write', async () => {
    await expect(new S3ReportStore(client, 'no-such-bucket').put(first)).rejects.toThrow(
      /could not write the report to s3:\/\/no-such-bucket: NoSuchBucket/,
    );
  });
});

describe('FolderReportStore', () => {
  it('has no report before the first scan, then the latest one', async () => {
    const dir = join(tempDir(), 'nested', 'reports');
    const store = new FolderReportStore(dir);
    const stored = () => readFileSync(join(dir, 'latest.json'), 'utf8');
    expect(stored).toThrow(/ENOENT/);
    await store.put(first);
    await store.put(second);
    expect(JSON.parse(stored())).toEqual(withNextSteps(second));
  });

  it('answers the text of the report it named, and none once a scan kept a newer one before it is read', async () => {
    const store = new FolderReportStore(tempDir());
    await store.put(first);
    const named = await store.whole();
    expect(named?.generated_at).toBe(first.generated_at);
    await expect(named?.text?.()).resolves.toBe([...reportLines(first)].join(''));
    await store.put(second);
    // The folder keeps the latest alone: not the newer report in place of the one named.
    await expect(named?.text?.()).resolves.toBeNull();
  });

  it('keeps the view beside the report, and refuses a damaged one with the place and the reason', async () => {
    const dir = tempDir();
    const store = new FolderReportStore(dir);
    await store.put(many(1_500));
    expect((await store.view({ purpose: 'page' }))?.view?.omittedTotal).toBe(500 - (INFO_LISTED - 500));
    const view = readFileSync(join(dir, 'latest-view.json'), 'utf8').split('\n');
    view[3] = '{"kind":"expiring","severity":"critical"},';
    writeFileSync(join(dir, 'latest-view.json'), view.join('\n'));
    await expect(store.view({ purpose: 'page' })).rejects.toThrow(
      new RegExp(
        `the report in ${join(dir, 'latest-view.json')} is not a domain-sentinel report \\(findings\\.2\\.domain_name`,
      ),
    );
  });
});
