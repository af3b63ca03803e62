import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { StateConflictError, StateError } from '../../functions/core/memory/state';
import { loadScanSettings, settingsFromEnv } from '../../functions/core/scan/config';
import { FileStateStore } from '../../functions/local/file-state-store';
import { parseStateLocation } from '../../functions/local/state-location';
import type { Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import type { Lease, StateStore } from '../../functions/use-cases/state-store';
import { runStatefulScan } from '../../functions/use-cases/stateful-scan';
import { runCli } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { DEFAULT_STATE_POLICY, EMPTY_STATE, loadState, saveState } from '../support/whole-state';

const KEY = 'sk_guards_0c41aa';
const HOUR = 3_600_000;
const R = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

const portfolio: Portfolio = {
  domains: [
    {
      domain_name: 'lost.nl',
      status: ['quarantine'],
      date_expiry: iso(R - 40 * 86_400_000),
      date_deleted: iso(R - 10 * 86_400_000),
      auto_renew: false,
    },
  ],
  contacts: [],
  truth: { findings: [], problems: [] },
};

let sim: Simulator;
let db: Awaited<ReturnType<typeof startDynalite>>;
let dir: string;
beforeAll(async () => {
  [sim, db, dir] = await Promise.all([
    startSimulator({ portfolio, apiKey: KEY }),
    startDynalite(),
    mkdtemp(join(tmpdir(), 'sentinel-guards-')),
  ]);
});
afterAll(async () => {
  await Promise.all([sim.close(), db.close(), rm(dir, { recursive: true, force: true })]);
});

const job = (now: number) => ({
  settings: loadScanSettings(settingsFromEnv({ RESELLER_BASE_URL: sim.url })),
  secrets: new EnvSecretSource({ RESELLER_API_KEY: KEY }),
  now,
});
const publish = async () => ({ messageId: 'm-1', findingsCut: 0 });

describe('runStatefulScan guards', () => {
  it('releases the lease when the save fails, and says what failed', async () => {
    const path = join(dir, 'failing.json');
    const file = new FileStateStore(path);
    // The file store, but its save fails.
    const failing: StateStore = Object.assign(Object.create(file) as StateStore, {
      save: async () => {
        throw new Error('disk full');
      },
    });
    const run = runStatefulScan({
      job: job(R - HOUR),
      store: failing,
      policy: DEFAULT_STATE_POLICY,
      publish,
    });
    await expect(run).rejects.toThrow(StateError);
    await expect(run).rejects.toThrow(
      `the alert was published (m-1) but the state could not be saved to ${path} (disk full); the lease was released and the next scan will announce the same again`,
    );
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ generation: 0, lease: null });
    // The next scan is not held up.
    await expect(
      runStatefulScan({ job: job(R - HOUR), store: file, policy: DEFAULT_STATE_POLICY, publish }),
    ).resolves.toMatchObject({ saved: true });
  });

  it('leaves a scan that lost the race to a later one unpublished and unsaved (superseded)', async () => {
    const store = new FileStateStore(join(dir, 'race.json'));
    let raced = false;
    const racing: StateStore = Object.assign(Object.create(store) as StateStore, {
      claim: async (generation: number, lease: Lease) => {
        if (!raced) {
          raced = true;
          // Another scan, of a later instant, saves first.
          await runStatefulScan({ job: job(R - HOUR), store, policy: DEFAULT_STATE_POLICY, publish });
        }
        return store.claim(generation, lease);
      },
    });
    const outcome = await runStatefulScan({
      job: job(R - 2 * HOUR),
      store: racing,
      policy: DEFAULT_STATE_POLICY,
      publish,
    });
    expect(outcome).toMatchObject({ saved: false, published: null, conflicts: 1 });
    expect(outcome.superseded).toBe(
      `another scan saved a later scan (${iso(R - HOUR)}) while this one ran, so this one's older read was not used`,
    );
    expect((await loadState(store, sim.url)).state.last_scan_at).toBe(iso(R - HOUR));
  });
});

/**
 * A loopback proxy in front of the simulator that holds every request arriving while `hold` is on
 * until `release()`: one scan stays in the middle of its read while another runs to the end, both
 * through the same base URL (the state's scope).
 */
async function holdingProxy(target: string) {
  let holding = true;
  const held: Array<() => void> = [];
  let heldOne: () => void = () => undefined;
  const firstHeld = new Promise<void>((resolve) => {
    heldOne = resolve;
  });
  const server = createServer((req, res) => {
    const forward = () => {
      const upstream = request(
        new URL(req.url ?? '/', target),
        { method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    };
    if (!holding) return forward();
    held.push(forward);
    heldOne();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    firstHeld,
    /** New requests pass; the held ones stay held until {@link release}. */
    stopHolding: () => {
      holding = false;
    },
    release: () => {
      for (const forward of held.splice(0)) forward();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a scan that lost the race, through the command line', () => {
  it('prints its JSON and says it was superseded, publishes and saves nothing, and leaves --fail-on to the later scan', async () => {
    const proxy = await holdingProxy(sim.url);
    try {
      const state = join(dir, 'race-cli.json');
      const alerts = join(dir, 'race-cli-alerts.txt');
      const env = { RESELLER_BASE_URL: proxy.url, RESELLER_API_KEY: KEY };
      const scan = (now: number) =>
        runCli(
          [
            'scan',
            '--json',
            '--state',
            state,
            '--alert-to',
            alerts,
            '--fail-on',
            'critical',
            '--now',
            iso(now),
          ],
          env,
        );
      // The earlier scan reads first and is held mid-read; the later one runs to the end meanwhile.
      const earlier = scan(R - 2 * HOUR);
      await proxy.firstHeld;
      proxy.stopHolding();
      const later = await scan(R - HOUR);
      expect(later.code, later.stderr).toBe(3);
      const delivered = await readFile(alerts, 'utf8');
      proxy.release();
      const lost = await earlier;

      expect(lost.code, lost.stderr).toBe(0);
      expect(JSON.parse(lost.stdout)).toMatchObject({
        now: iso(R - 2 * HOUR),
        findings: [{ domain_name: 'lost.nl', kind: 'quarantine', severity: 'critical' }],
      });
      expect(lost.stderr).toBe(
        `no alert published and state not written: another scan saved a later scan (${iso(R - HOUR)}) while this one ran, so this one's older read was not used\n`,
      );
      expect(await readFile(alerts, 'utf8')).toBe(delivered);
      expect(JSON.parse(await readFile(state, 'utf8'))).toMatchObject({
        generation: 1,
        state: { last_scan_at: iso(R - HOUR) },
      });
    } finally {
      await proxy.close();
    }
  });
});

describe('leases a clock ran ahead for', () => {
  it.each([
    ['a file', async () => new FileStateStore(join(dir, 'lease.json'))],
    [
      'DynamoDB',
      async () => {
        await createStateTable(db.client(), 'guards-lease');
        return new DynamoDbStateStore({ client: db.client(), tableName: 'guards-lease', scope: sim.url });
      },
    ],
  ] as const)('counts a lease longer than any is taken for as lapsed (%s)', async (_label, open) => {
    const store = await open();
    await store.claim(0, { owner: 'jumped', expiresAt: Date.now() + 30 * 86_400_000 });
    await store.claim(0, { owner: 'next', expiresAt: Date.now() + 120_000 });
    await expect(store.claim(0, { owner: 'third', expiresAt: Date.now() + 120_000 })).rejects.toThrow(
      StateConflictError,
    );
  });
});

describe('the state path', () => {
  it('reads and writes the file a symbolic link points at, never replacing the link', async () => {
    const target = join(dir, 'real', 'state.json');
    await mkdir(join(dir, 'real'));
    const link = join(dir, 'link.json');
    await symlink(target, link);
    await writeFile(
      target,
      JSON.stringify({
        format: 'domain-sentinel-state',
        version: 1,
        generation: 0,
        lease: null,
        state: EMPTY_STATE,
      }),
    );
    const store = new FileStateStore(link);
    const loaded = await loadState(store);
    await store.claim(0, { owner: 'a', expiresAt: Date.now() + 60_000 });
    await saveState(store, { ...loaded.state, last_scan_at: iso(R) }, loaded, 'a');
    expect(JSON.parse(await readFile(target, 'utf8')).generation).toBe(1);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
  });

  it('refuses --allow-clock-skew without a state: there is no time to check', async () => {
    const run = await runCli(['scan', '--dry-run', '--allow-clock-skew'], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
    });
    expect([run.code, run.stderr]).toEqual([
      2,
      'sentinel: --allow-clock-skew is for scans with --state (or STATE): without state no time is checked\n',
    ]);
  });

  it('refuses a path with white space around it instead of using another file', () => {
    expect(() => parseStateLocation(' state.json')).toThrow(
      '--state: " state.json" starts or ends with white space; give the path or dynamodb:TABLE without it',
    );
    expect(parseStateLocation('./dynamodb:x')).toEqual({ kind: 'file', path: './dynamodb:x' });
  });

  it('refuses a dynamodb: prefix in other letters or spelling instead of writing a file of that name', () => {
    for (const value of [
      'DynamoDB:sentinel-state',
      'DYNAMODB:sentinel-state',
      'dynamo:sentinel-state',
      'ddb:sentinel-state',
    ])
      expect(() => parseStateLocation(value), value).toThrow(
        `--state: ${JSON.stringify(value)} reads as a table, but a table is written dynamodb:TABLE (in lower case); for a file of that name write ./${value}`,
      );
    expect(parseStateLocation('./DynamoDB:x')).toEqual({ kind: 'file', path: './DynamoDB:x' });
    expect(parseStateLocation('state/dynamo:x.json')).toEqual({ kind: 'file', path: 'state/dynamo:x.json' });
  });
});
