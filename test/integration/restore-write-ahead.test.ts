import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import { type AuditTrail, auditLine } from '../../functions/core/memory/audit';
import { settingsFromEnv } from '../../functions/core/scan/config';
import type { RestoreLogEntry } from '../../functions/handlers/restore-handler';
import { createWebApp } from '../../functions/handlers/web-app';
import { FileStateStore } from '../../functions/local/file-state-store';
import { serveLocally } from '../../functions/local/local-server';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { restorablePortfolio } from '../support/fixed-reseller';
import { confirmedPost } from '../support/restore-env';

/**
 * A restore is paid: the audit trail keeps it before it is sent (write-ahead) and completes the
 * entry with its outcome after, so a function that dies between the two (timeout, out of memory)
 * leaves "sent, outcome unknown" in the trail, not nothing. Through the web app on a real server
 * and the real stores; the store's writes fail from a chosen moment on, as they do for a function
 * that stopped.
 */

const KEY = 'write-ahead-key-0123';
const SIGNING_KEY = 'write-ahead-signing-key-0123456789abcdef';
const DOMAIN = 'lost.com';

/** When the store's writes fail: never, every one after the restore call, or the first after the look-up. */
type Failing = 'never' | 'after-restore' | 'first-after-lookup';

let db: Awaited<ReturnType<typeof startDynalite>>;
let dir: string;
let tables = 0;
const closers: Array<() => Promise<void>> = [];
beforeAll(async () => {
  [db, dir] = await Promise.all([startDynalite(), mkdtemp(join(tmpdir(), 'sentinel-write-ahead-'))]);
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
afterAll(async () => {
  await Promise.all([db.close(), rm(dir, { recursive: true, force: true })]);
});

/** Opens a store whose writes throw while `fail()` says so. */
type OpenStore = (scope: string, fail: () => boolean) => Promise<AuditTrail>;

const stores: Array<[string, OpenStore, () => { dynamodb?: typeof db.client }]> = [
  [
    'the file store',
    async (_scope, fail) =>
      new FileStateStore(join(dir, `state-${++tables}.json`), {
        beforeRename: async () => {
          if (fail()) throw new Error('the function stopped');
        },
      }),
    () => ({}),
  ],
  [
    'DynamoDB (dynalite)',
    async (scope, fail) => {
      const tableName = `write-ahead-${++tables}`;
      const real = db.client();
      await createStateTable(real, tableName);
      const client = {
        send: (...args: Parameters<DynamoDBClient['send']>) =>
          fail() ? Promise.reject(new Error('the function stopped')) : real.send(...args),
      } as unknown as DynamoDBClient;
      return new DynamoDbStateStore({ client, tableName, scope });
    },
    () => ({ dynamodb: db.client }),
  ],
];

/** The simulator and the web app on a local server, restores kept in `open`'s store, failing as `failing` says. */
async function stack(open: OpenStore, failing: Failing) {
  let sim: Simulator | undefined;
  let stopped = false;
  let failed = 0;
  const fail = (): boolean => {
    if (stopped || !sim) return false;
    if (failing === 'after-restore') return sim.restoreCalls.length > 0;
    if (failing !== 'first-after-lookup' || failed > 0) return false;
    if (!sim.requests.some((r) => r.path === '/v2/domains')) return false;
    failed++;
    return true;
  };
  sim = await startSimulator({
    portfolio: restorablePortfolio([DOMAIN]),
    apiKey: KEY,
  });
  const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, LINK_SIGNING_KEY: SIGNING_KEY };
  const trail = await open(sim.url, fail);
  const logs: RestoreLogEntry[] = [];
  const app = createWebApp({
    settings: () => settingsFromEnv(env),
    secrets: new EnvSecretSource(env),
    actions: () => null,
    reports: () => null,
    audit: () => trail,
    log: (_message, entry) => logs.push(entry as unknown as RestoreLogEntry),
  });
  const server = await serveLocally(app, { port: 0 });
  closers.push(server.close, sim.close);
  const link = signRestoreLink({
    baseUrl: server.url,
    domain: DOMAIN,
    keys: parseSigningKeys(SIGNING_KEY),
    now: Date.now(),
  });
  const post = async () => {
    const res = await fetch(link, confirmedPost(DOMAIN, { Accept: 'application/json' }));
    return { status: res.status, ...((await res.json()) as { outcome: string; message: string }) };
  };
  /** The store works again: the function that stopped is gone, and its trail is read. */
  const restart = () => {
    stopped = true;
  };
  return { sim, env, trail, post, logs, restart };
}

describe.each(stores)('the restore is written ahead in the audit trail, in %s', (_name, open, cliExtra) => {
  it('a restore whose outcome is never written (the function stopped after the POST) is listed as sent, outcome unknown', async () => {
    const { sim, env, trail, post, logs, restart } = await stack(open, 'after-restore');
    const answered = await post();
    expect(sim.restoreCalls).toEqual([DOMAIN]);
    expect(answered.outcome).toBe('restored'); // the person is told what the reseller did
    expect(logs.some((l) => l.outcome === 'audit_failed')).toBe(true);
    restart();
    const kept = await trail.listAudit();
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ domain: DOMAIN, outcome: 'restore_sending', sent: true });
    const listed = await runCli(['audit', '--state', trail.location], env, cliExtra());
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${DOMAIN}: sent, outcome unknown`);
    expect(listed.stdout).toContain('check the domain’s status');
  });

  it('a write-ahead that fails sends no restore and says nothing was restored; the next click restores', async () => {
    const { sim, trail, post, restart } = await stack(open, 'first-after-lookup');
    const refused = await post();
    expect(sim.restoreCalls).toEqual([]);
    expect(refused.status).toBe(503);
    expect(refused.outcome).toBe('audit_unavailable');
    expect(refused.message).toContain(`${DOMAIN} was NOT restored`);
    expect(refused.message).toContain('try again');
    // The claim was given up (nothing was sent), so trying again works at once.
    const again = await post();
    expect(again.outcome).toBe('restored');
    expect(sim.restoreCalls).toEqual([DOMAIN]);
    restart();
    const kept = await trail.listAudit();
    expect(kept.map((e) => [e.outcome, e.sent])).toEqual([
      ['restored', true],
      ['audit_unavailable', false],
    ]);
  });

  it('the normal path lists one restore with its outcome, not an attempt and an outcome apart', async () => {
    const { sim, trail, post } = await stack(open, 'never');
    expect((await post()).outcome).toBe('restored');
    expect(sim.restoreCalls).toEqual([DOMAIN]);
    const kept = await trail.listAudit();
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ domain: DOMAIN, outcome: 'restored', status: 200, sent: true });
    expect(auditLine(kept[0] as (typeof kept)[number])).not.toContain('outcome unknown');
  });
});
