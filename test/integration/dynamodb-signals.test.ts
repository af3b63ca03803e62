import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  type DynamoDBClient,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InterruptedError } from '../../bin/interrupt';
import { createStateTable } from '../../functions/aws/dynamodb-state-store';
import { META_SORT_KEY } from '../../functions/aws/state-table-definition';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { startDynalite } from '../support/dynalite';

/**
 * Ctrl-C with `--state dynamodb:TABLE` while the table does not answer: the command must end by
 * its own stop (in-process there is no shell whose grace would end it), exit 130, and leave no
 * lease in the table, so the next scan runs at once. The table hangs for ever where the test says
 * (before or after the request reached it): only the signal can end the wait.
 */

const KEY = 'ddb-signals-key-4c1a';
let db: Awaited<ReturnType<typeof startDynalite>>;
let sim: Simulator;
const portfolio = generatePortfolio({ domains: 40, seed: 5, now: Date.now() });
const scratch = mkdtempSync(join(tmpdir(), 'ddb-signals-'));

beforeAll(async () => {
  [db, sim] = await Promise.all([startDynalite(), startSimulator({ portfolio, apiKey: KEY })]);
});
afterAll(async () => {
  await Promise.all([db.close(), sim.close()]);
  rmSync(scratch, { recursive: true, force: true });
});

type Command = { readonly input: unknown; readonly constructor: { readonly name: string } };
type Hang = (command: Command) => 'before' | 'after' | undefined;

/**
 * dynalite's client, whose send hangs for ever on the commands `hang` picks: before the request
 * goes out, or once the table has carried it out (an answer lost). It ends only when the caller
 * aborts through the `abortSignal` it passed; `hung` counts the hangs begun.
 */
function hangingClient(hang: Hang) {
  const real = db.client();
  const counter = { hung: 0 };
  const send = async (command: Command, options?: { abortSignal?: AbortSignal }) => {
    const when = hang(command);
    if (when === 'after') await real.send(command as never);
    if (when === undefined) return real.send(command as never, options as never);
    counter.hung += 1;
    return new Promise((_, reject) => {
      const signal = options?.abortSignal;
      if (signal?.aborted) reject(signal.reason);
      signal?.addEventListener('abort', () =>
        reject(Object.assign(new Error('aborted'), { name: 'AbortError' })),
      );
    });
  };
  const client = Object.assign(Object.create(real) as DynamoDBClient, { send });
  return { client, counter };
}

const isMetaUpdate = (command: Command, expression: string) =>
  command instanceof UpdateItemCommand && (command.input.UpdateExpression ?? '').includes(expression);

async function meta(table: string): Promise<Record<string, AttributeValue> | undefined> {
  const out = await db.client().send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND sk = :sk',
      ExpressionAttributeValues: { ':pk': { S: sim.url }, ':sk': { S: META_SORT_KEY } },
      ConsistentRead: true,
    }),
  );
  return out.Items?.[0];
}

const env = (): NodeJS.ProcessEnv => ({ ...db.sdkEnv, RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY });

/** Runs `argv` against a client that hangs where `hang` says, stopped by SIGINT once it hangs. */
async function stoppedWhileHanging(argv: readonly string[], hang: Hang) {
  const { client, counter } = hangingClient(hang);
  const controller = new AbortController();
  const done = runCli(argv, env(), { signal: controller.signal, dynamodb: () => client, cwd: scratch });
  await vi.waitFor(() => expect(counter.hung).toBeGreaterThan(0), { timeout: 20_000, interval: 20 });
  controller.abort(InterruptedError.of('SIGINT'));
  return done;
}

let n = 0;
async function freshTable(): Promise<string> {
  const table = `ddb-signals-${++n}`;
  await createStateTable(db.client(), table);
  return table;
}

const scan = (table: string) => [
  'scan',
  '--state',
  `dynamodb:${table}`,
  '--alert-to',
  join(scratch, `${table}.alerts`),
];

describe('a stop while the DynamoDB state store waits', () => {
  it('during the claim whose answer is lost: exit 130, and the lease it took is released', async () => {
    const table = await freshTable();
    const run = await stoppedWhileHanging(scan(table), (c) =>
      isMetaUpdate(c, 'if_not_exists(generation') ? 'after' : undefined,
    );
    expect(run).toMatchObject({ code: 130, stderr: 'sentinel: interrupted by SIGINT\n' });
    const item = await meta(table);
    expect(item?.generation?.N).toBe('0');
    expect(item?.lease_owner).toBeUndefined();
    const next = await runCli(scan(table), env(), { dynamodb: () => db.client(), cwd: scratch });
    expect(next.code, next.stderr).toBe(0);
    expect((await meta(table))?.generation?.N).toBe('1');
  }, 20_000);

  it('between the bucket writes and the switch of generation: the old generation stands, no lease, the next scan whole', async () => {
    const table = await freshTable();
    const first = await runCli([...scan(table), '--json'], env(), {
      dynamodb: () => db.client(),
      cwd: scratch,
    });
    expect(first.code, first.stderr).toBe(0);
    // News since: the second scan has buckets to write.
    sim.updateDomain('stop-news.nl', {
      ...portfolio.domains[0],
      domain_name: 'stop-news.nl',
      auto_renew: false,
      date_expiry: new Date(Date.now() + 3 * 86_400_000).toISOString(),
    });
    let bucketsWritten = 0;
    const run = await stoppedWhileHanging(scan(table), (c) => {
      if (c instanceof BatchWriteItemCommand) bucketsWritten += 1;
      return isMetaUpdate(c, 'generation = :next') ? 'before' : undefined;
    });
    expect(bucketsWritten).toBeGreaterThan(0);
    expect(run).toMatchObject({ code: 130, stderr: 'sentinel: interrupted by SIGINT\n' });
    const item = await meta(table);
    expect(item?.generation?.N).toBe('1');
    expect(item?.lease_owner).toBeUndefined();
    const next = await runCli([...scan(table), '--json'], env(), {
      dynamodb: () => db.client(),
      cwd: scratch,
    });
    expect(next.code, next.stderr).toBe(0);
    // Nothing the stopped save left is a problem: the problems are the account's own, as before.
    expect(JSON.parse(next.stdout).problems).toEqual(JSON.parse(first.stdout).problems);
    expect((await meta(table))?.generation?.N).toBe('2');
  }, 20_000);

  it('scan --accounts stopped while a claim hangs: the account was stopped, not unreadable', async () => {
    const table = await freshTable();
    const accounts = join(scratch, 'accounts.json');
    writeFileSync(accounts, JSON.stringify({ accounts: [{ name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' }] }));
    const { client, counter } = hangingClient((c) =>
      isMetaUpdate(c, 'if_not_exists(generation') ? 'before' : undefined,
    );
    const controller = new AbortController();
    const done = runCli(
      [...scan(table), '--accounts', accounts],
      { ...env(), BRAND_A_KEY: KEY },
      { signal: controller.signal, dynamodb: () => client, cwd: scratch },
    );
    await vi.waitFor(() => expect(counter.hung).toBeGreaterThan(0), { timeout: 20_000, interval: 20 });
    controller.abort(InterruptedError.of('SIGINT'));
    const run = await done;
    expect(run.code).toBe(130);
    expect(run.stdout).toContain('brand-a: STOPPED by SIGINT before it finished');
    expect(run.stdout).not.toContain('COULD NOT BE READ');
    expect(run.stderr).toBe('sentinel: interrupted by SIGINT\n');
  }, 20_000);

  it('state reset stopped while its deletes hang: exit 130', async () => {
    const table = await freshTable();
    expect((await runCli(scan(table), env(), { dynamodb: () => db.client(), cwd: scratch })).code).toBe(0);
    const run = await stoppedWhileHanging(['state', 'reset', `dynamodb:${table}`, '--yes'], (c) =>
      c instanceof BatchWriteItemCommand ? 'before' : undefined,
    );
    expect(run).toMatchObject({ code: 130, stdout: '', stderr: 'sentinel: interrupted by SIGINT\n' });
  }, 20_000);

  it('audit stopped while its query hangs: exit 130', async () => {
    const table = await freshTable();
    const run = await stoppedWhileHanging(['audit', '--state', `dynamodb:${table}`], (c) =>
      c instanceof QueryCommand ? 'before' : undefined,
    );
    expect(run).toMatchObject({ code: 130, stdout: '', stderr: 'sentinel: interrupted by SIGINT\n' });
  }, 20_000);

  it('state init stopped while the table is being created: exit 130', async () => {
    const run = await stoppedWhileHanging(['state', 'init', 'dynamodb:ddb-signals-init'], (c) =>
      c instanceof CreateTableCommand ? 'before' : undefined,
    );
    expect(run).toMatchObject({ code: 130, stdout: '', stderr: 'sentinel: interrupted by SIGINT\n' });
  }, 20_000);

  it('snooze stopped while its save hangs: exit 130, and no lease left', async () => {
    const table = await freshTable();
    const first = await runCli([...scan(table), '--json'], env(), {
      dynamodb: () => db.client(),
      cwd: scratch,
    });
    expect(first.code, first.stderr).toBe(0);
    const finding = (
      JSON.parse(first.stdout).findings as Array<{ domain_name?: string; severity: string }>
    ).find((f) => f.domain_name !== undefined && f.severity !== 'critical');
    const run = await stoppedWhileHanging(
      ['snooze', finding?.domain_name as string, '--state', `dynamodb:${table}`],
      (c) => (isMetaUpdate(c, 'generation = :next') ? 'before' : undefined),
    );
    expect(run).toMatchObject({ code: 130, stderr: 'sentinel: interrupted by SIGINT\n' });
    const item = await meta(table);
    expect(item?.generation?.N).toBe('1');
    expect(item?.lease_owner).toBeUndefined();
  }, 20_000);
});
