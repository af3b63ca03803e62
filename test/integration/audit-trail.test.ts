import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AttributeValue, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { readEarlierRestore } from '../../functions/core/decisions/restore-again';
import {
  AUDIT_MAX_ENTRIES,
  AUDIT_MAX_REFUSALS,
  AUDIT_UNREADABLE,
  type AuditEntry,
  type AuditTrail,
  auditEntry,
  REFUSALS_PER_LINK_HOUR,
  RESTORE_SENDING,
} from '../../functions/core/memory/audit';
import { FileStateStore } from '../../functions/local/file-state-store';
import type { StateStore } from '../../functions/use-cases/state-store';
import { runCli } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { EMPTY_STATE, loadState, type ScanState, saveState } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;
const SCOPE = 'https://reseller.test';

const attempt = (n: number, extra: Partial<Parameters<typeof auditEntry>[0]> = {}): AuditEntry =>
  auditEntry({
    at: T0 + n * 1000,
    domain: `d${n}.nl`,
    outcome: 'restored',
    status: 200,
    via: 'web',
    keyId: 'abcd1234',
    clientIp: '203.0.113.9',
    userAgent: 'Mozilla/5.0',
    sent: true,
    ...extra,
  });

const state: ScanState = {
  ...EMPTY_STATE,
  scope: SCOPE,
  started_at: new Date(T0).toISOString(),
  last_scan_at: new Date(T0).toISOString(),
  domains: { 'kept.nl': { watched: { auto_renew: true }, finding: null, alerted: null } },
};

let db: Awaited<ReturnType<typeof startDynalite>>;
let dir: string;
let tables = 0;
beforeAll(async () => {
  [db, dir] = await Promise.all([startDynalite(), mkdtemp(join(tmpdir(), 'sentinel-audit-'))]);
});
afterAll(async () => {
  await Promise.all([db.close(), rm(dir, { recursive: true, force: true })]);
});

async function newTable(): Promise<string> {
  const name = `audit-${++tables}`;
  await createStateTable(db.client(), name);
  return name;
}

/** What both stores keep: every attempt, newest first, bounded, and apart from the scans' state. */
function trailContract(open: () => Promise<StateStore & AuditTrail>) {
  it('keeps every attempt, newest first, and lists none before the first', async () => {
    const store = await open();
    expect(await store.listAudit()).toEqual([]);
    for (const n of [1, 2, 3]) await store.recordAudit(attempt(n));
    expect((await store.listAudit()).map((e) => e.domain)).toEqual(['d3.nl', 'd2.nl', 'd1.nl']);
    expect((await store.listAudit())[0]).toEqual(attempt(3));
  });

  it('writes a restore ahead and its outcome over it, in its place: one entry per attempt', async () => {
    const store = await open();
    const ref = await store.beginAudit(attempt(1, { outcome: RESTORE_SENDING }));
    expect(await store.listAudit()).toMatchObject([
      { domain: 'd1.nl', outcome: RESTORE_SENDING, sent: true },
    ]);
    await store.recordAudit(attempt(2)); // another domain's restore, meanwhile
    await store.completeAudit(ref, attempt(1));
    expect(await store.listAudit()).toEqual([attempt(2), attempt(1)]);
  });

  it('stays bounded: beyond the limit the oldest attempts go', async () => {
    const store = await open();
    for (let n = 0; n < AUDIT_MAX_ENTRIES + 5; n++) await store.recordAudit(attempt(n));
    const kept = await store.listAudit();
    expect(kept).toHaveLength(AUDIT_MAX_ENTRIES);
    expect(kept[0]?.domain).toBe(`d${AUDIT_MAX_ENTRIES + 4}.nl`);
    expect(kept.at(-1)?.domain).toBe('d5.nl');
  });

  it('orders and trims by arrival, not by the clock: an attempt recorded after the clock stepped back is kept, first', async () => {
    const store = await open();
    for (let n = 0; n < AUDIT_MAX_ENTRIES; n++) await store.recordAudit(attempt(n));
    // An NTP correction, or another function whose clock ran behind: an hour before the others.
    const latest = attempt(0, { at: T0 - HOUR, domain: 'latest.nl' });
    await store.recordAudit(latest);
    const kept = await store.listAudit();
    expect(kept).toHaveLength(AUDIT_MAX_ENTRIES);
    expect(kept[0]).toEqual(latest);
    expect(kept.at(-1)?.domain).toBe('d1.nl');
    // And it ages by arrival: the next attempts push out the oldest before it, not it.
    await store.recordAudit(attempt(AUDIT_MAX_ENTRIES));
    expect((await store.listAudit()).map((e) => e.domain).slice(0, 2)).toEqual([
      `d${AUDIT_MAX_ENTRIES}.nl`,
      'latest.nl',
    ]);
  });

  it('cuts what a request can make large: a megabyte of user agent is kept as 120 characters', async () => {
    const store = await open();
    await store.recordAudit(attempt(1, { userAgent: 'x'.repeat(1_000_000), clientIp: '1'.repeat(5_000) }));
    const [entry] = await store.listAudit();
    expect(entry?.user_agent).toHaveLength(120);
    expect(entry?.client_ip).toHaveLength(64);
  });

  it('never lets refusals push out an attempt that reached the reseller, and keeps 5 refusals per link and hour, counting the rest', async () => {
    const store = await open();
    await store.recordAudit(attempt(1));
    const refusal = (n: number, link = 1) =>
      attempt(n, {
        domain: 'other.nl',
        outcome: 'confirmation_missing',
        status: 422,
        sent: false,
        linkExpires: link,
      });
    for (let n = 2; n < 2 + AUDIT_MAX_ENTRIES + 20; n++) await store.recordAudit(refusal(n));
    const kept = await store.listAudit();
    expect(kept.filter((e) => e.sent)).toEqual([attempt(1)]);
    const refused = kept.filter((e) => !e.sent);
    expect(refused).toHaveLength(REFUSALS_PER_LINK_HOUR);
    expect(refused.reduce((sum, e) => sum + e.repeats, 0)).toBe(
      AUDIT_MAX_ENTRIES + 20 - REFUSALS_PER_LINK_HOUR,
    );
    // Many links: refusals push out only older refusals, never the paid attempt.
    for (let link = 2; link < 2 + AUDIT_MAX_REFUSALS + 10; link++)
      await store.recordAudit(refusal(1000 + link, link));
    const after = await store.listAudit();
    expect(after.filter((e) => e.sent)).toEqual([attempt(1)]);
    expect(after.filter((e) => !e.sent)).toHaveLength(AUDIT_MAX_REFUSALS);
  });

  it('takes no part in the scans’ state: a save neither loses nor moves the trail, nor the trail the state', async () => {
    const store = await open();
    const empty = await loadState(store, SCOPE);
    await store.claim(0, { owner: 'scan', expiresAt: Date.now() + HOUR });
    await store.recordAudit(attempt(1)); // a click while a scan holds the lease
    await saveState(store, state, empty, 'scan');
    await store.recordAudit(attempt(2));
    const loaded = await loadState(store, SCOPE);
    expect(loaded).toEqual({ state, generation: 1, lease: null });
    expect((await store.listAudit()).map((e) => e.domain)).toEqual(['d2.nl', 'd1.nl']);
    await store.claim(1, { owner: 'next', expiresAt: Date.now() + HOUR });
    await saveState(store, { ...state, domains: {} }, loaded, 'next');
    expect(await store.listAudit()).toHaveLength(2);
  });
}

describe('the audit trail in the file store', () => {
  let n = 0;
  trailContract(async () => new FileStateStore(join(dir, `state-${++n}.json`)));

  it('lists an entry a hand edit broke as one that could not be read, names it before another restore, and still reads the state', async () => {
    const path = join(dir, 'edited.json');
    const store = new FileStateStore(path);
    await store.recordAudit(attempt(1));
    await store.recordAudit(attempt(2, { outcome: 'outcome_unknown' }));
    await store.recordAudit(attempt(3, { outcome: 'refused', sent: false }));
    const content = JSON.parse(await readFile(path, 'utf8'));
    content.audit[1].status = 'two hundred';
    content.audit[2] = 'garbage';
    await writeFile(path, JSON.stringify(content));
    expect(await store.listAudit()).toMatchObject([
      { domain: 'd3.nl', outcome: 'refused' },
      { domain: 'd2.nl', outcome: AUDIT_UNREADABLE, sent: true, at: attempt(2).at },
      { domain: '', outcome: AUDIT_UNREADABLE, sent: true, at: 'unknown' },
    ]);
    // The outcome_unknown restore of d2.nl may have been paid: the next one asks first.
    const earlier = await readEarlierRestore(() => store.listAudit(), 'd2.nl', T0 + HOUR);
    expect(earlier).toMatchObject({ ok: true, entry: { domain: 'd2.nl', outcome: AUDIT_UNREADABLE } });
    // An entry whose domain does not read may be any domain's restore.
    const other = await readEarlierRestore(() => store.listAudit(), 'other.nl', T0 + HOUR);
    expect(other).toMatchObject({ ok: true, entry: { domain: '', outcome: AUDIT_UNREADABLE } });
    expect((await loadState(store, SCOPE)).generation).toBe(0);
    // A later write keeps them, as entries that could not be read.
    await store.recordAudit(attempt(4));
    expect((await store.listAudit()).map((e) => e.outcome)).toEqual([
      'restored',
      'refused',
      AUDIT_UNREADABLE,
      AUDIT_UNREADABLE,
    ]);
  });
});

describe('the audit trail in DynamoDB (dynalite)', () => {
  trailContract(
    async () => new DynamoDbStateStore({ client: db.client(), tableName: await newTable(), scope: SCOPE }),
  );

  it('keeps each account’s trail in its own partition', async () => {
    const table = await newTable();
    const one = new DynamoDbStateStore({ client: db.client(), tableName: table, scope: SCOPE });
    const other = new DynamoDbStateStore({
      client: db.client(),
      tableName: table,
      scope: 'http://other.test',
    });
    await one.recordAudit(attempt(1));
    expect(await other.listAudit()).toEqual([]);
    expect(await one.listAudit()).toHaveLength(1);
  });

  it('leaves no "sent, outcome unknown" behind when the write-ahead landed but its answer was lost', async () => {
    const table = await newTable();
    const real = db.client();
    // The item is written, then the answer never arrives (the SDK's retries spent): nothing is sent.
    const lossy = Object.create(real, {
      send: {
        value: async (command: unknown) => {
          const out = await real.send(command as UpdateItemCommand);
          const written = (command as UpdateItemCommand).input?.ExpressionAttributeValues?.[':a']?.S ?? '';
          if (written.includes(RESTORE_SENDING)) throw new Error('socket hang up');
          return out;
        },
      },
    });
    const store = new DynamoDbStateStore({ client: lossy, tableName: table, scope: SCOPE });
    await expect(store.beginAudit(attempt(1, { outcome: RESTORE_SENDING }))).rejects.toThrow(
      /socket hang up/,
    );
    // Else the next click read "a restore was sent at …, outcome unknown" of one never sent.
    expect(await store.listAudit()).toEqual([]);
  });

  it('lists an item that does not parse as one that could not be read, and names one kept with the restores sent before another', async () => {
    const table = await newTable();
    const store = new DynamoDbStateStore({ client: db.client(), tableName: table, scope: SCOPE });
    await store.recordAudit(attempt(1));
    const put = (sk: string, a: string) =>
      db.client().send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: SCOPE }, sk: { S: sk } },
          UpdateExpression: 'SET a = :a',
          ExpressionAttributeValues: { ':a': { S: a } },
        }),
      );
    await put('audit#ref#0000000000000008', '{"not":"an entry"');
    await put(
      'audit#seq#0000000000000009',
      JSON.stringify({ ...attempt(2, { outcome: RESTORE_SENDING }), via: 'sms' }),
    );
    expect(await store.listAudit()).toMatchObject([
      { domain: 'd2.nl', outcome: AUDIT_UNREADABLE, sent: true },
      { domain: '', outcome: AUDIT_UNREADABLE, sent: false },
      { domain: 'd1.nl', outcome: 'restored' },
    ]);
    // A restore of d2.nl written ahead and maybe paid: the next one asks first; a refusal names nothing.
    const earlier = await readEarlierRestore(() => store.listAudit(), 'd2.nl', T0 + HOUR);
    expect(earlier).toMatchObject({ ok: true, entry: { domain: 'd2.nl', outcome: AUDIT_UNREADABLE } });
    expect(await readEarlierRestore(() => store.listAudit(), 'd3.nl', T0 + HOUR)).toEqual({ ok: true });
  });

  it('a restore claim a hand edit left without a numeric until holds nothing, as in the file store', async () => {
    const table = await newTable();
    const store = new DynamoDbStateStore({ client: db.client(), tableName: table, scope: SCOPE });
    const now = T0;
    const damaged: AttributeValue[] = [{ S: String(now + 60_000) }, { L: [] }, { NULL: true }];
    for (const until of damaged) {
      await db.client().send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: SCOPE }, sk: { S: 'restore#lost.com' } },
          UpdateExpression: 'SET #owner = :owner, #until = :until',
          ExpressionAttributeNames: { '#owner': 'owner', '#until': 'until' },
          ExpressionAttributeValues: { ':owner': { S: 'web-damaged' }, ':until': until },
        }),
      );
      // Else every restore of the domain is answered 409 'in progress or done' for good.
      expect(await store.claimRestore('lost.com', { owner: 'web-next', until: now + 60_000 }, now)).toEqual({
        taken: true,
        until: now + 60_000,
      });
      expect(
        (await store.claimRestore('lost.com', { owner: 'web-third', until: now + 60_000 }, now)).taken,
      ).toBe(false);
    }
  });

  it('is read by `sentinel audit --state dynamodb:TABLE --json`', async () => {
    const table = await newTable();
    const store = new DynamoDbStateStore({ client: db.client(), tableName: table, scope: SCOPE });
    await store.recordAudit(attempt(1, { outcome: 'confirmation_missing', status: 422 }));
    const run = await runCli(
      ['audit', '--state', `dynamodb:${table}`, '--json'],
      { RESELLER_BASE_URL: SCOPE },
      { dynamodb: db.client },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      location: `dynamodb:${table}`,
      entries: [attempt(1, { outcome: 'confirmation_missing', status: 422 })],
    });
    const none = await runCli(['audit'], { RESELLER_BASE_URL: SCOPE });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('pass --state PATH|dynamodb:TABLE or set STATE');
  });
});
