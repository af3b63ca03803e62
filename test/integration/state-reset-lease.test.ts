import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unlessLeased } from '../../bin/commands/state';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { FileStateStore } from '../../functions/local/file-state-store';
import type { StateStore } from '../../functions/use-cases/state-store';
import { runCli } from '../support/cli';
import { startDynalite } from '../support/dynalite';

/**
 * `state reset --yes` while a scan holds the state's lease (it has claimed the state and is
 * publishing its alert): the reset must not delete what that scan is about to save over, so it is
 * refused, saying until when the lease holds; once the lease has lapsed, the reset goes ahead.
 */

const SCOPE = 'https://api.reseller.example';
const env = { RESELLER_BASE_URL: SCOPE };
let db: Awaited<ReturnType<typeof startDynalite>>;
const dir = mkdtempSync(join(tmpdir(), 'state-reset-lease-'));
const TABLE = 'reset-lease';

beforeAll(async () => {
  db = await startDynalite();
  await createStateTable(db.client(), TABLE);
});

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Takes the lease as a scan does before it publishes: open, then claim the generation opened. */
async function leased(store: StateStore, expiresAt: number): Promise<void> {
  const opened = await store.open(SCOPE);
  await store.claim(opened.generation, { owner: 'scan-running', expiresAt });
}

const stores = {
  file: (name: string) => ({ target: join(dir, name), store: new FileStateStore(join(dir, name)) }),
  dynamodb: (_name: string) => ({
    target: `dynamodb:${TABLE}`,
    store: new DynamoDbStateStore({ client: db.client(), tableName: TABLE, scope: SCOPE }),
  }),
};

describe('state reset of a state never written', () => {
  it('says there was none, and writes none on its way (file and table)', async () => {
    const missing = join(dir, 'never.json');
    const file = await runCli(['state', 'reset', missing, '--yes'], env);
    expect(file).toMatchObject({ code: 0, stdout: `no state file at ${missing}\n` });
    expect(existsSync(missing)).toBe(false);
    const other = { RESELLER_BASE_URL: 'https://other.reseller.example' };
    const table = await runCli(['state', 'reset', `dynamodb:${TABLE}`, '--yes'], other, {
      dynamodb: db.client,
    });
    expect(table).toMatchObject({
      code: 0,
      stdout: `removed 0 state items of https://other.reseller.example from dynamodb:${TABLE}\n`,
    });
  });
});

describe.each(Object.keys(stores) as Array<keyof typeof stores>)('state reset with %s state', (kind) => {
  it('refuses while a running scan holds the lease, naming until when, and resets once it lapsed', async () => {
    const { target, store } = stores[kind]('held.json');
    const until = Date.now() + 60_000;
    await leased(store, until);
    const refused = await runCli(['state', 'reset', target, '--yes'], env, { dynamodb: db.client });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `a scan is running on it: it holds the state until ${new Date(until).toISOString()}`,
    );
    expect(refused.stderr).toContain('nothing was reset');
    expect(refused.stdout).toBe('');
    // Still there: the held scan's lease and generation as they were.
    expect((await store.open(SCOPE)).lease).toEqual({ owner: 'scan-running', expiresAt: until });
    if (kind === 'file') expect(existsSync(target)).toBe(true);

    // A scan that crashed holding it: its lease lapsed, nothing holds the state any more.
    await store.release((await store.open(SCOPE)).generation, 'scan-running');
    await leased(store, Date.now() - 1);
    const reset = await runCli(['state', 'reset', target, '--yes'], env, { dynamodb: db.client });
    expect(reset.code, reset.stderr).toBe(0);
    expect((await store.open(SCOPE)).lease).toBeNull();
    if (kind === 'file') expect(existsSync(target)).toBe(false);
  });
});

describe.each(Object.keys(stores) as Array<keyof typeof stores>)(
  'state reset of %s state never saved',
  (kind) => {
    it('refuses when a first scan claims it between the reset reading it and clearing it', async () => {
      const { target, store } = stores[kind](`first-${kind}.json`);
      const scan = kind === 'file' ? new FileStateStore(target) : store;
      const until = Date.now() + 60_000;
      // The reset opens the state (never saved, nobody holding it); a first scan claims it right after.
      const racing = new Proxy(store, {
        get(held, name, receiver) {
          const value = Reflect.get(held, name, receiver);
          if (name !== 'open') return typeof value === 'function' ? value.bind(held) : value;
          return async (scope: string) => {
            const opened = await held.open(scope);
            await leased(scan, until);
            return opened;
          };
        },
      });
      const owner = {
        location:
          kind === 'file'
            ? { kind: 'file' as const, path: target }
            : { kind: 'dynamodb' as const, table: TABLE },
        scope: SCOPE,
        apiKey: async () => 'unused',
        keyWords: 'the account of RESELLER_API_KEY',
        where: target,
      };
      await expect(unlessLeased<unknown>(racing, owner, () => store.clear())).rejects.toThrow(
        'nothing was reset',
      );
      // The scan still holds what it claimed: its save will land.
      expect((await store.open(SCOPE)).lease).toEqual({ owner: 'scan-running', expiresAt: until });
      await store.release(0, 'scan-running');
    });
  },
);

describe('state reset of a state file whose values do not read', () => {
  // The error names `sentinel state reset PATH --yes` as a remedy (docs/troubleshooting.md): the
  // reset must remove such a file, which carries the state's own format marker.
  it.each([
    ['a generation that is text', '"3"'],
    ['a generation that is null', 'null'],
    ['a negative generation', '-1'],
  ])('removes it for %s', async (_what, generation) => {
    const path = join(dir, `unreadable-${generation.replace(/\W/g, '')}.json`);
    writeFileSync(
      path,
      `{"format":"domain-sentinel-state","version":1,"generation":${generation},"lease":null,"state":{"domains":{},"contacts":{}}}`,
    );
    await expect(new FileStateStore(path).open(SCOPE)).rejects.toThrow('is not a whole number');
    const reset = await runCli(['state', 'reset', path, '--yes'], env);
    expect(reset).toMatchObject({ code: 0, stdout: `removed the state file ${path}\n` });
    expect(existsSync(path)).toBe(false);
  });

  it('still refuses a file that is not state at all', async () => {
    const path = join(dir, 'notes.json');
    writeFileSync(path, '{"notes":"keep me"}');
    const reset = await runCli(['state', 'reset', path, '--yes'], env);
    expect(reset.code).not.toBe(0);
    expect(existsSync(path)).toBe(true);
  });
});
