import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import { type AuditTrail, RESTORE_CLAIM_MS } from '../../functions/core/memory/audit';
import { settingsFromEnv } from '../../functions/core/scan/config';
import { createWebApp } from '../../functions/handlers/web-app';
import { FileStateStore } from '../../functions/local/file-state-store';
import { serveLocally } from '../../functions/local/local-server';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { restorablePortfolio } from '../support/fixed-reseller';
import { confirmedPost } from '../support/restore-env';

/**
 * Issue 33, through the web app on a real server and the real stores (the file, and the DynamoDB
 * table on dynalite). Item 2: two confirmed restores of one domain at once pay once; the second
 * finds the first one's claim and calls nothing, also for `sentinel restore` against the same
 * state. Item 1: no holder of one link can flush the audit trail.
 */

const KEY = 'restore-claims-key-0123';
const SIGNING_KEY = 'restore-claims-signing-key-0123456789abcd';
const DOMAIN = 'lost.com';
const OTHER = 'other.com';
/** The reseller's answer time: wide enough for both requests to look the domain up before either restores. */
const LATENCY_MS = 150;

let db: Awaited<ReturnType<typeof startDynalite>>;
let dir: string;
let tables = 0;
const closers: Array<() => Promise<void>> = [];
beforeAll(async () => {
  [db, dir] = await Promise.all([startDynalite(), mkdtemp(join(tmpdir(), 'sentinel-claims-'))]);
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
afterAll(async () => {
  await Promise.all([db.close(), rm(dir, { recursive: true, force: true })]);
});

/** The simulator (slow, as a reseller under load) and the web app on a local server, keeping restores in `store`. */
async function stack(store: (scope: string) => Promise<AuditTrail>, latencyMs = LATENCY_MS) {
  const sim: Simulator = await startSimulator({
    portfolio: restorablePortfolio([DOMAIN, OTHER]),
    apiKey: KEY,
    latencyMs,
  });
  const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, LINK_SIGNING_KEY: SIGNING_KEY };
  const trail = await store(sim.url);
  const app = createWebApp({
    settings: () => settingsFromEnv(env),
    secrets: new EnvSecretSource(env),
    actions: () => null,
    reports: () => null,
    audit: () => trail,
    log: () => undefined,
  });
  const server = await serveLocally(app, { port: 0 });
  closers.push(server.close, sim.close);
  // One link per domain, as an alert carries it.
  const now = Date.now();
  const linkOf = (domain: string) =>
    signRestoreLink({ baseUrl: server.url, domain, keys: parseSigningKeys(SIGNING_KEY), now });
  const post = async (domain: string = DOMAIN, init?: RequestInit) => {
    const res = await fetch(linkOf(domain), init ?? confirmedPost(domain, { Accept: 'application/json' }));
    return { status: res.status, ...((await res.json()) as { outcome: string; message: string }) };
  };
  return { sim, env, trail, post };
}

const stores: Array<[string, (scope: string) => Promise<AuditTrail>, () => { dynamodb?: typeof db.client }]> =
  [
    ['the file store', async () => new FileStateStore(join(dir, `state-${++tables}.json`)), () => ({})],
    [
      'DynamoDB (dynalite)',
      async (scope) => {
        const tableName = `claims-${++tables}`;
        await createStateTable(db.client(), tableName);
        return new DynamoDbStateStore({ client: db.client(), tableName, scope });
      },
      () => ({ dynamodb: db.client }),
    ],
  ];

describe.each(stores)('one paid restore per click, in %s', (_name, store, cliExtra) => {
  it('two confirmed POSTs of one link at the same moment: one restore call, the other answered 409 "in progress or done"', async () => {
    const { sim, post } = await stack(store);
    const answers = await Promise.all([post(), post()]);
    expect(sim.restoreCalls).toEqual([DOMAIN]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const loser = answers.find((a) => a.status === 409);
    expect(loser?.outcome).toBe('restore_claimed');
    expect(loser?.message).toContain(`A restore of ${DOMAIN} is in progress or done`);
    // The loser reached nothing: two look-ups would have been two list requests.
    expect(sim.requests.filter((r) => r.path === '/v2/domains')).toHaveLength(1);
  });

  it('a POST and `sentinel restore --yes` against the same state at the same moment: one restore call', async () => {
    const { sim, env, trail, post } = await stack(store);
    const [web, cli] = await Promise.all([
      post(),
      runCli(['restore', DOMAIN, '--yes', '--state', trail.location], env, cliExtra()),
    ]);
    expect(sim.restoreCalls).toEqual([DOMAIN]);
    const cliWon = cli.code === 0;
    expect(cliWon ? web.outcome : 'restored').toBe(cliWon ? 'restore_claimed' : web.outcome);
    // The command line, a process of its own, may start after the click's restore is done: it
    // then finds the click's restore in the trail (written ahead, the domain still in quarantine),
    // or the claim, or, later still, the domain out of quarantine. Either way, nothing sent.
    if (!cliWon)
      expect(cli.stderr).toMatch(
        new RegExp(
          `A restore of ${DOMAIN} was sent at .* pass --again|${DOMAIN}: a restore of it is in progress or done|${DOMAIN} is not in quarantine \\(already restored\\?\\)`,
        ),
      );
  });

  it('gives the claim up when nothing was restored, so the next click may try; keeps it after a restore', async () => {
    const { sim, trail, post } = await stack(store);
    sim.injectFault({ fault: { kind: 'status', status: 422 }, match: (r) => r.path.endsWith('/restore') });
    const refused = await post();
    expect(refused.outcome).toBe('refused');
    expect((await post()).outcome).toBe('restored');
    expect(sim.requests.filter((r) => r.path.endsWith('/restore'))).toHaveLength(2);
    const now = Date.now();
    expect((await trail.claimRestore(DOMAIN, { owner: 'someone', until: now + 60_000 }, now)).taken).toBe(
      false,
    );
    // Lapsed, the claim is anyone's again.
    const later = now + RESTORE_CLAIM_MS + 1;
    expect((await trail.claimRestore(DOMAIN, { owner: 'someone', until: later + 60_000 }, later)).taken).toBe(
      true,
    );
  });
});

describe.each(stores)('restore claims across clocks, in %s', (_name, store) => {
  it('a claim taken by a clock seconds ahead (a laptop running sentinel restore, the web function) holds for the other', async () => {
    const trail = await store('https://reseller.test');
    const lambda = Date.parse('2026-11-27T12:00:00Z');
    const laptop = lambda - 5_000; // 5 s behind
    // The click claims first; the laptop, a moment later in real time, reads its own clock.
    expect(
      (await trail.claimRestore(DOMAIN, { owner: 'web-1', until: lambda + RESTORE_CLAIM_MS }, lambda)).taken,
    ).toBe(true);
    expect(
      (await trail.claimRestore(DOMAIN, { owner: 'cli-1', until: laptop + 1 + RESTORE_CLAIM_MS }, laptop + 1))
        .taken,
    ).toBe(false);
    // A claim from a clock that ran far ahead still holds nothing for good.
    const days = 24 * 3_600_000;
    expect(
      (
        await trail.claimRestore(
          OTHER,
          { owner: 'web-2', until: lambda + days },
          lambda + days - RESTORE_CLAIM_MS,
        )
      ).taken,
    ).toBe(true);
    expect(
      (await trail.claimRestore(OTHER, { owner: 'cli-2', until: lambda + RESTORE_CLAIM_MS }, lambda)).taken,
    ).toBe(true);
  });
});

/** A DynamoDB client on dynalite whose table takes a restore claim, then fails its release (a throttled write, say). */
function releaseFailing(): DynamoDBClient {
  const real = db.client();
  return {
    send: (command: UpdateItemCommand) =>
      command.input.UpdateExpression === 'SET #until = :lapsed'
        ? Promise.reject(new Error('ProvisionedThroughputExceededException'))
        : real.send(command),
  } as unknown as DynamoDBClient;
}

describe('sentinel restore says until when a domain is held', () => {
  it('refused by another restore’s claim, names the minute it lapses', async () => {
    const { sim, env, trail } = await stack(
      async () => new FileStateStore(join(dir, `state-${++tables}.json`)),
    );
    const until = Date.now() + 10 * 60_000;
    expect((await trail.claimRestore(DOMAIN, { owner: 'web-1', until }, Date.now())).taken).toBe(true);
    const run = await runCli(['restore', DOMAIN, '--yes', '--state', trail.location], env);
    const lapses = new Date(Math.ceil(until / 60_000) * 60_000).toISOString().slice(11, 16);
    expect(sim.restoreCalls).toEqual([]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `and it holds the domain until ${lapses} UTC: try again after that); nothing was sent.`,
    );
  });

  it('whose claim could not be given up after it refused to restore a domain restored while it asked, says until when', async () => {
    const tableName = `claims-${++tables}`;
    await createStateTable(db.client(), tableName);
    const { sim, env, trail } = await stack(
      async (scope) => new DynamoDbStateStore({ client: db.client(), tableName, scope }),
    );
    const releaseFails = releaseFailing();
    const run = await runCli(['restore', DOMAIN, '--state', trail.location], env, {
      dynamodb: () => releaseFails,
      // Restored in the control panel while the person typed the name.
      ask: async () => {
        (sim.domain(DOMAIN) as { status: string[] }).status = ['registered'];
        return DOMAIN;
      },
    });
    expect(sim.requests.filter((r) => r.path.endsWith('/restore'))).toHaveLength(0);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /lost\.com is not in quarantine \(already restored\?\): its status is registered This restore’s hold on lost\.com could not be given up, so another try is refused until \d\d:\d\d UTC\./,
    );
  });

  it.each([
    [
      422,
      /This restore’s hold on lost\.com could not be given up, so another try is refused until \d\d:\d\d UTC\. \(.*the restore claim could not be released: .*ProvisionedThroughputExceededException/,
    ],
    // A refused key: the terminal shows the reason itself, and still until when the domain is held.
    [
      401,
      /the restore claim could not be released: .*ProvisionedThroughputExceededException This restore’s hold on lost\.com could not be given up, so another try is refused until \d\d:\d\d UTC\./,
    ],
  ])(
    'whose claim could not be given up after a restore refused with HTTP %i, says until when another try is refused',
    async (status, said) => {
      const tableName = `claims-${++tables}`;
      await createStateTable(db.client(), tableName);
      const { sim, env, trail } = await stack(
        async (scope) => new DynamoDbStateStore({ client: db.client(), tableName, scope }),
      );
      sim.injectFault({ fault: { kind: 'status', status }, match: (r) => r.path.endsWith('/restore') });
      const releaseFails = releaseFailing();
      const run = await runCli(['restore', DOMAIN, '--yes', '--state', trail.location], env, {
        dynamodb: () => releaseFails,
      });
      expect(sim.requests.filter((r) => r.path.endsWith('/restore'))).toHaveLength(1);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(said);
    },
  );
});

describe.each(stores)('an audit trail no link can flush, in %s', (_name, store) => {
  it('a restore stays in the trail after 200 refused POSTs of another domain’s link; those keep 5 entries, the rest counted, their user agent cut', async () => {
    const { trail, post } = await stack(store, 0);
    expect((await post()).outcome).toBe('restored');
    const agent = `${'<script>alert(1)</script>'.repeat(12)}`;
    for (let n = 0; n < 200; n++) {
      const refused = await post(OTHER, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
          'User-Agent': agent,
        },
        body: 'confirm_domain=wrong.com',
      });
      expect(refused.status).toBe(422);
    }
    const kept = await trail.listAudit();
    expect(kept.filter((e) => e.outcome === 'restored')).toMatchObject([{ domain: DOMAIN, sent: true }]);
    const refusals = kept.filter((e) => e.domain === OTHER);
    expect(refusals).toHaveLength(5);
    expect(refusals.reduce((sum, e) => sum + e.repeats, 0)).toBe(195);
    for (const e of refusals) expect(e.user_agent?.length).toBe(120);
  });
});
