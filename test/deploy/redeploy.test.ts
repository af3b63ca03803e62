import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import {
  type Emulators,
  newSigningKey,
  type RunningFunction,
  startEmulators,
  startWorld,
  synthesize,
  type World,
} from './rehearsal';

/**
 * Memory across a redeploy (issue 35): a deployment scans and keeps its state; the stack is
 * destroyed, leaving its state table and report bucket (kept on destroy) in DynamoDB (dynalite)
 * and S3 (s3rver); a new deployment adopts them by name (stateTableName, reportBucketName), and
 * its first scan finds the state and announces nothing new. Both deployments are bin/app.ts as
 * `cdk deploy` builds it, their bundles run on the emulators the first one left.
 */

const API_KEY = 'redeploy-api-key-0123456789';
const SETTINGS = {
  resellerBaseUrl: 'https://api.reseller.example',
  alertEmails: 'alerts@example.nl',
  opsEmails: 'ops@example.nl',
};
/** The names the rehearsal gives the first deployment's table and bucket (CloudFormation's, as it would make them). */
const KEPT = { table: 'DomainSentinel-StateTable962DE04C', bucket: 'domainsentinel-reportsbucket95fe29a2' };

let first: string;
let second: string;
let emulators: Emulators;
let sim: Simulator;
let world: World | undefined;
const signingKey = newSigningKey();
let scannedFirst = 0;

beforeAll(async () => {
  // Both synthesized at once: the second names what the first will keep.
  [first, second] = await Promise.all([
    synthesize(SETTINGS),
    synthesize({ ...SETTINGS, stateTableName: KEPT.table, reportBucketName: KEPT.bucket }),
  ]);
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 300, seed: 3, now: Date.now() }),
    apiKey: API_KEY,
  });
  emulators = await startEmulators();
}, 300_000);

afterAll(async () => {
  await world?.close();
  await emulators?.close();
  await sim?.close();
  for (const dir of [first, second]) if (dir) rmSync(dir, { recursive: true, force: true });
});

const deploy = (cdkOut: string) =>
  startWorld(cdkOut, {
    emulators,
    overrides: { RESELLER_BASE_URL: sim.url },
    secrets: (name) => (name.endsWith('reseller-api-key') ? API_KEY : signingKey),
  });

function scanOf(w: World): RunningFunction {
  const found = [...w.functions.values()].find((f) =>
    /scans the reseller account/.test(String(w.resolver.resource(f.id).Properties?.Description)),
  );
  if (!found) throw new Error('no scan function');
  return found;
}

/** Runs the scheduled scan the way the schedule invokes it. */
async function scheduledScan(w: World) {
  const outcome = await scanOf(w).invoke({});
  if (outcome.error)
    throw new Error(`${outcome.error.name}: ${outcome.error.message}\n${scanOf(w).lines.join('\n')}`);
  return outcome.result as { published: boolean; summary: Record<string, number>; domainsScanned: number };
}

describe('deploy, scan, destroy, deploy adopting what was kept, scan', { timeout: 180_000 }, () => {
  it('the first deployment announces its findings and keeps them in its own table and bucket', async () => {
    world = await deploy(first);
    const [table] = world.resolver.ofType('AWS::DynamoDB::Table');
    const [bucket] = world.resolver.ofType('AWS::S3::Bucket');
    expect([world.resolver.ref(table as string), world.resolver.ref(bucket as string)]).toEqual([
      KEPT.table,
      KEPT.bucket,
    ]);
    const result = await scheduledScan(world);
    expect(result.published).toBe(true);
    expect(result.domainsScanned).toBeGreaterThan(250);
    scannedFirst = result.domainsScanned;
    expect(await world.alertMessages()).toHaveLength(1);
    expect(await world.readObject(bucket as string, 'latest.json')).toMatchObject({
      findings: expect.any(Array),
    });
    // The destroy: the functions and the rest go; the table and the bucket (Retain) stay in the emulators.
    await world.close();
    world = undefined;
  });

  it('the second deployment adopts them by name, and its first scan finds the state and announces nothing new', async () => {
    world = await deploy(second);
    // It made neither: it names the kept ones, in its functions' environment and its outputs.
    expect(world.resolver.ofType('AWS::DynamoDB::Table')).toEqual([]);
    expect(world.resolver.ofType('AWS::S3::Bucket')).toEqual([]);
    const scan = scanOf(world);
    expect([scan.env.STATE_TABLE_NAME, scan.env.REPORT_BUCKET]).toEqual([KEPT.table, KEPT.bucket]);
    const result = await scheduledScan(world);
    expect(result.domainsScanned).toBe(scannedFirst);
    expect(result.published).toBe(false);
    expect(world.calls.filter((c) => c.action === 'sns:Publish')).toEqual([]);
    // What it read and wrote: the kept table, and the kept bucket's report, judged nowhere else.
    const tables = new Set(
      world.calls.filter((c) => c.action.startsWith('dynamodb:')).map((c) => c.resource),
    );
    expect([...tables]).toEqual([`arn:aws:dynamodb:eu-west-1:000000000000:table/${KEPT.table}`]);
    expect(
      world.calls.some(
        (c) => c.action === 's3:PutObject' && c.resource.startsWith(`arn:aws:s3:::${KEPT.bucket}/`),
      ),
    ).toBe(true);
  });
});
