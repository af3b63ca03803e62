import { type AttributeValue, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStateTable } from '../../functions/aws/dynamodb-state-store';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { handleScheduledScan, type ScheduledScanDeps } from '../../functions/handlers/scheduled-scan';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { startDynalite } from '../support/dynalite';
import { sqsVariant, startSnsEmulator } from '../support/sns-emulator';

const KEY = 'sk_state_lambda_51c2';
// The handler's clock also sets the scan's deadline, so it runs on real time, shifted per run.
const NOW = Date.now();
let sim: Simulator;
let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let db: Awaited<ReturnType<typeof startDynalite>>;
beforeAll(async () => {
  [sim, emulator, db] = await Promise.all([
    startSimulator({ portfolio: generatePortfolio({ domains: 80, seed: 4, now: NOW }), apiKey: KEY }),
    startSnsEmulator(),
    startDynalite(),
  ]);
});
afterAll(() => Promise.all([sim.close(), emulator.close(), db.close()]));

describe('the scan Lambda with a state table', () => {
  it('publishes the first scan, stays silent on the unchanged second, and speaks when a domain leaves', async () => {
    await createStateTable(db.client(), 'lambda-state');
    const topicArn = await emulator.topic('lambda-state');
    const queue = await emulator.queueSubscribedTo(topicArn, 'lambda-state-all');
    const logs: Array<[string, unknown]> = [];
    const deps = (offsetMs: number): ScheduledScanDeps => ({
      env: {
        RESELLER_BASE_URL: sim.url,
        RESELLER_API_KEY_PARAMETER: '/sentinel/key',
        ALERT_TOPIC_ARN: topicArn,
        STATE_TABLE_NAME: 'lambda-state',
      },
      secrets: new EnvSecretSource({ RESELLER_API_KEY: KEY }),
      sns: emulator.snsClient(),
      dynamodb: db.client(),
      logger: {
        info: (m: string, ...x: unknown[]) => {
          logs.push([m, x[0]]);
        },
        error: (m: string, ...x: unknown[]) => {
          logs.push([m, x[0]]);
        },
      },
      metrics: {
        addMetric: () => undefined,
        publishStoredMetrics: () => undefined,
      } as unknown as ScheduledScanDeps['metrics'],
      clock: () => Date.now() + offsetMs,
    });

    expect((await handleScheduledScan(deps(0), 60_000)).published).toBe(true);
    expect(await emulator.drain(queue)).toHaveLength(1);
    expect((await handleScheduledScan(deps(3_600_000), 60_000)).published).toBe(false);
    expect(await emulator.drain(queue)).toHaveLength(0);
    expect(logs.at(-1)).toEqual([
      'no alert published',
      { why: ['nothing new, escalated, changed or resolved at warning or above'], published: null },
    ]);

    const leaving = generatePortfolio({ domains: 80, seed: 4, now: NOW }).domains[10]?.domain_name as string;
    sim.updateDomain(leaving, null);
    expect((await handleScheduledScan(deps(2 * 3_600_000), 60_000)).published).toBe(true);
    const [message] = await emulator.drain(queue);
    const report = JSON.parse(sqsVariant(message as never));
    expect(report.changes).toContainEqual(
      expect.objectContaining({ domain_name: leaving, kind: 'left_account', severity: 'critical' }),
    );
  });
});

/** The handler's dependencies for one state table and topic, each metric name put into `metrics`. */
function lambdaDeps(
  table: string,
  topicArn: string,
  metrics: string[],
  extra: { readonly env?: Record<string, string>; readonly fetch?: typeof globalThis.fetch } = {},
) {
  return (offsetMs: number): ScheduledScanDeps => ({
    env: {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY_PARAMETER: '/sentinel/key',
      ALERT_TOPIC_ARN: topicArn,
      STATE_TABLE_NAME: table,
      ...extra.env,
    },
    secrets: new EnvSecretSource({ RESELLER_API_KEY: KEY }),
    sns: emulator.snsClient(),
    dynamodb: db.client(),
    ...(extra.fetch ? { fetch: extra.fetch } : {}),
    logger: { info: () => undefined, error: () => undefined },
    metrics: {
      addMetric: (name: string) => {
        metrics.push(name);
      },
      publishStoredMetrics: () => undefined,
    } as unknown as ScheduledScanDeps['metrics'],
    clock: () => Date.now() + offsetMs,
  });
}

describe('the scan Lambda when the account changes on every read', () => {
  it('publishes what it read, marked incomplete, saves, then fails without counting a completed scan', async () => {
    await createStateTable(db.client(), 'moving-state');
    const topicArn = await emulator.topic('moving-state');
    const queue = await emulator.queueSubscribedTo(topicArn, 'moving-state-all');
    const names = generatePortfolio({ domains: 80, seed: 4, now: NOW }).domains.map((d) => d.domain_name);
    let moving = false;
    // Each read of page 1 of the domain list sees one domain of page 1 leave: later pages shift.
    const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const answer = await globalThis.fetch(input, init);
      const url = new URL(String(input));
      if (moving && url.pathname === '/v2/domains' && url.searchParams.get('page') === '1')
        sim.updateDomain(names.shift() as string, null);
      return answer;
    }) as typeof globalThis.fetch;
    const metrics: string[] = [];
    const deps = lambdaDeps('moving-state', topicArn, metrics, { env: { PER_PAGE: '20' }, fetch });

    expect((await handleScheduledScan(deps(0), 60_000)).published).toBe(true);
    await emulator.drain(queue);
    moving = true;
    metrics.length = 0;
    await expect(handleScheduledScan(deps(3_600_000), 60_000)).rejects.toThrow(
      /^the scan could not read the whole account \(the domain list changed while it was read/,
    );
    const [message] = await emulator.drain(queue);
    const report = JSON.parse(sqsVariant(message as never));
    expect(report.source.incomplete).toMatch(/^the domain list changed while it was read/);
    expect(report.changes.filter((c: { kind: string }) => c.kind === 'left_account')).toEqual([]);
    expect(metrics).toContain('UnreadableRecords');
    expect(metrics).not.toContain('ScanCompleted');
  });
});

describe('the scan Lambda when the #meta item of its state is damaged', () => {
  it('publishes as a first scan with the damage named, writes nothing, then fails; a damaged generation is still refused', async () => {
    await createStateTable(db.client(), 'damaged-state');
    const topicArn = await emulator.topic('damaged-state');
    const queue = await emulator.queueSubscribedTo(topicArn, 'damaged-state-all');
    const metrics: string[] = [];
    const deps = lambdaDeps('damaged-state', topicArn, metrics);
    const Key = { pk: { S: sim.url }, sk: { S: '#meta' } };
    const meta = async () =>
      (
        await db.client().send(
          new QueryCommand({
            TableName: 'damaged-state',
            KeyConditionExpression: 'pk = :pk AND sk = :sk',
            ExpressionAttributeValues: { ':pk': Key.pk, ':sk': Key.sk },
          }),
        )
      ).Items?.[0];
    const set = (name: string, value: AttributeValue) =>
      db.client().send(
        new UpdateItemCommand({
          TableName: 'damaged-state',
          Key,
          UpdateExpression: 'SET #a = :v',
          ExpressionAttributeNames: { '#a': name },
          ExpressionAttributeValues: { ':v': value },
        }),
      );

    const first = await handleScheduledScan(deps(0), 60_000);
    expect(first.published).toBe(true);
    const [firstMessage] = await emulator.drain(queue);
    const firstFindings = JSON.parse(sqsVariant(firstMessage as never)).findings.length;
    // The second scan would have nothing new to say; with its header damaged, it says everything.
    const head = JSON.parse((await meta())?.h?.S ?? '{}');
    await set('h', { S: JSON.stringify({ ...head, problem_keys: 'none' }) });
    const before = await meta();
    metrics.length = 0;
    await expect(handleScheduledScan(deps(3_600_000), 60_000)).rejects.toThrow(
      `the state in dynamodb:damaged-state cannot be used (problem_keys: Invalid input: expected array, received string); this scan alerted without memory, as a first scan, and did not write the state: correct that value, or start over with sentinel state reset dynamodb:damaged-state --base-url ${sim.url} --yes`,
    );
    const [message] = await emulator.drain(queue);
    const report = JSON.parse(sqsVariant(message as never));
    expect(report.findings.length).toBe(firstFindings);
    expect(report.findings.every((f: { change: string }) => f.change === 'new')).toBe(true);
    expect(report.problems).toContainEqual(
      expect.objectContaining({
        resource: 'state',
        key: '#meta',
        reason: expect.stringMatching(/^could not be read \(problem_keys: /),
      }),
    );
    expect(metrics).toContain('UnreadableRecords');
    expect(metrics).not.toContain('ScanCompleted');
    // Nothing of the state written: only the lease, kept for its 10 minutes after the alert.
    const { lease_owner, lease_expires, ...rest } = (await meta()) ?? {};
    const { lease_owner: _o, lease_expires: _e, ...restBefore } = before ?? {};
    expect(rest).toEqual(restBefore);
    expect(Number(lease_expires?.N) - (Date.now() + 3_600_000)).toBeGreaterThan(9 * 60_000);
    expect(lease_owner?.S).toBeDefined();
    // Lambda retries the failed run a minute later: the state is held, and nothing is sent again.
    await expect(handleScheduledScan(deps(3_660_000), 60_000)).rejects.toThrow(
      /; another scan holds it \(one that alerted without memory keeps it 10 minutes, so a retry sends the alert no second time\): nothing was published$/,
    );
    expect(await emulator.drain(queue)).toEqual([]);

    // A generation that cannot be read: no lease can be taken on it, so nothing is published.
    await set('generation', { S: '1' });
    await expect(handleScheduledScan(deps(2 * 3_600_000), 60_000)).rejects.toThrow(
      /has no generation as a whole number; reset the state$/,
    );
    expect(await emulator.drain(queue)).toEqual([]);
  });
});

// Found by a review: a first save is all or nothing, and the Lambda's timeout killed one of a large
// account in the middle: nothing kept, so every run was a first scan, announced every finding
// again, and was killed again. The save now keeps what it wrote by the Lambda's last seconds.
describe('the scan Lambda whose first save does not fit the time left', () => {
  it('keeps the domains it wrote, fails naming what to raise, and the next run saves the others', async () => {
    const large = await startSimulator({
      portfolio: generatePortfolio({ domains: 4_000, seed: 9, now: NOW }),
      apiKey: KEY,
    });
    try {
      await createStateTable(db.client(), 'slow-state');
      const topicArn = await emulator.topic('slow-state');
      const queue = await emulator.queueSubscribedTo(topicArn, 'slow-state-all');
      // Each BatchWriteItem of memories takes a minute of the Lambda's time.
      const { run, metrics, restart } = slowSaves('slow-state', topicArn, large);
      const failed = await handleScheduledScan(run(0), 120_000).then(
        () => new Error('the run did not fail'),
        (error: Error) => error,
      );
      const said =
        /^the first save to dynamodb:slow-state ran out of the time left and kept the memory of (\d+) of (\d+) domains; the next scan announces the others again and saves them; raise the scan function's timeout/.exec(
          failed.message,
        );
      expect(said, failed.message).not.toBeNull();
      const [kept, all] = [Number(said?.[1]), Number(said?.[2])];
      expect(metrics).not.toContain('ScanCompleted');
      const first = JSON.parse(sqsVariant((await emulator.drain(queue))[0] as never));
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(all);
      expect(await memories('slow-state', large.url)).toBe(kept);
      // The next run remembers what was kept: it announces the others' findings only, and saves them.
      restart();
      metrics.length = 0;
      await handleScheduledScan(run(3_600_000), 3_600_000);
      const [message] = await emulator.drain(queue);
      const second = message ? JSON.parse(sqsVariant(message as never)) : { findings: [] };
      expect(second.findings.length).toBeLessThan(first.findings.length);
      expect(await memories('slow-state', large.url)).toBe(all);
      expect(metrics).toContain('ScanCompleted');
    } finally {
      await large.close();
    }
  });
});

/**
 * A Lambda's runs against `sim` over the table `table`, whose every BatchWriteItem of memories takes
 * a minute of the Lambda's clock.
 */
function slowSaves(table: string, topicArn: string, sim: Simulator) {
  let offset = 0;
  const dynamodb = db.client();
  dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      const input = args.input as { RequestItems?: Record<string, Array<{ PutRequest?: unknown }>> };
      const first = Object.values(input.RequestItems ?? {})[0]?.[0];
      if (context.commandName === 'BatchWriteItemCommand' && first?.PutRequest) offset += 60_000;
      return out;
    },
    { step: 'initialize' },
  );
  const metrics: string[] = [];
  const run = (shift: number): ScheduledScanDeps => ({
    ...lambdaDeps(table, topicArn, metrics)(0),
    env: {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY_PARAMETER: '/sentinel/key',
      ALERT_TOPIC_ARN: topicArn,
      STATE_TABLE_NAME: table,
    },
    dynamodb,
    clock: () => Date.now() + shift + offset,
  });
  return { run, metrics, restart: () => (offset = 0) };
}

/** How many domains the table's state of `scope` remembers (each once). */
async function memories(table: string, scope: string): Promise<number> {
  const keys = new Set<string>();
  for (let shard = 0; shard < 16; shard++) {
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await db.client().send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: `${scope}#${shard}` } },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? [])
        for (const key of Object.keys(JSON.parse(item.m?.S ?? '{}'))) keys.add(key);
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }
  return keys.size;
}
