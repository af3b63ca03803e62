import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Portfolio, RawRecord } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli, startCliServer } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { SIGNING_KEY } from '../support/restore-env';
import { sqsVariant, startSnsEmulator } from '../support/sns-emulator';

/**
 * Issue 20, "memory that cannot be fooled": each numbered case of the issue through the real
 * command line (`scan --state`, publishing through fauxqs, DynamoDB state in dynalite, `serve`).
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const KEY = 'sk_memory_account_a_7f3e21';
const iso = (ms: number) => new Date(ms).toISOString();
/** The machine's clock when the file was loaded: every scan below runs at or before it. */
const R = Date.now();

function record(name: string, overrides: RawRecord = {}): RawRecord {
  return {
    domain_name: name,
    status: ['registered'],
    date_expiry: iso(R + 300 * DAY),
    auto_renew: true,
    registrant_handle: 'C1',
    transfer_lock: true,
    auth_code: null,
    dns_hosted: true,
    nsgroup: null,
    dnssec: 'signed',
    ...overrides,
  };
}
const quarantined = (name: string) =>
  record(name, {
    status: ['quarantine'],
    date_expiry: iso(R - 40 * DAY),
    date_deleted: iso(R - 12 * DAY),
    auto_renew: false,
  });
const portfolio = (domains: RawRecord[]): Portfolio => ({
  domains,
  contacts: [
    { handle: 'C1', name: 'Anna Bakker', company_name: '', email: 'anna@example.nl', status: ['ok'] },
  ],
  truth: { findings: [], problems: [] },
});

let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let db: Awaited<ReturnType<typeof startDynalite>>;
let dir: string;
beforeAll(async () => {
  [emulator, db, dir] = await Promise.all([
    startSnsEmulator(),
    startDynalite(),
    mkdtemp(join(tmpdir(), 'sentinel-memory-')),
  ]);
});
afterAll(async () => {
  await Promise.all([emulator.close(), db.close(), rm(dir, { recursive: true, force: true })]);
});

/** A topic with one queue on it, and what arrived there since the last look. */
async function channel(name: string) {
  const topicArn = await emulator.topic(name);
  const queue = await emulator.queueSubscribedTo(topicArn, `${name}-all`);
  return {
    topicArn,
    messages: async () => (await emulator.drain(queue)).map((e) => JSON.parse(sqsVariant(e))),
  };
}

const io = () => ({ sns: emulator.snsClient, dynamodb: db.client });

describe('1. a clock ahead of real time', () => {
  it('refuses a scan ahead of the clock or before the last scan, and a stored future time never silences a repeat', async () => {
    const sim = await startSimulator({
      portfolio: portfolio([quarantined('lost.nl'), record('fine.nl')]),
      apiKey: KEY,
    });
    const { topicArn, messages } = await channel('memory-clock');
    const state = join(dir, 'clock.json');
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, ALERT_TOPIC_ARN: topicArn };
    const scan = (now: number, ...extra: string[]) =>
      runCli(['scan', '--state', state, '--now', iso(now), ...extra], env, io());
    try {
      expect((await scan(R - 10 * DAY)).stdout).toMatch(/^published alert \S+ to \S+ \(1 new\)/);
      expect(await messages()).toHaveLength(1);
      const before = await readFile(state, 'utf8');

      // A month ahead of the clock: refused in one line, nothing read, published or written.
      const ahead = await scan(R + 30 * DAY);
      expect(ahead.code).toBe(2);
      expect(ahead.stderr).toMatch(
        /^sentinel: the scan's time \S+ is 30 days ahead of this machine's clock \(\S+\): refused; pass --allow-clock-skew to scan anyway \(a replay, or a clock that was wrong\)\n$/,
      );
      expect(await readFile(state, 'utf8')).toBe(before);
      expect(await messages()).toEqual([]);

      // Forced anyway (a clock that jumped): the state now holds times a month in the future.
      expect((await scan(R + 30 * DAY, '--allow-clock-skew')).code).toBe(0);
      expect(await messages()).toHaveLength(1);

      // Back on the real clock, a scan before the state's last one is noticed and refused …
      const back = await scan(R - 8 * DAY);
      expect(back.code).toBe(2);
      expect(back.stderr).toMatch(
        /^sentinel: the scan's time \S+ is 38 days before the state's last scan \(/,
      );
      // … and once allowed, the future times count as due: the ongoing quarantine is repeated in
      // each of four scans across eight days (none of which needs the flag after the first).
      const runs = [
        await scan(R - 8 * DAY, '--allow-clock-skew'),
        await scan(R - 6 * DAY),
        await scan(R - 3 * DAY),
        await scan(R),
      ];
      for (const run of runs)
        expect(run.stdout).toMatch(/^published alert \S+ to \S+ \(1 critical repeated after 20 h\)\n/);
      const repeats = await messages();
      expect(repeats).toHaveLength(4);
      for (const report of repeats)
        expect(report.findings).toContainEqual(
          expect.objectContaining({ domain_name: 'lost.nl', kind: 'quarantine', change: 'ongoing' }),
        );
    } finally {
      await sim.close();
    }
  });
});

describe('2. a stored date that does not parse', () => {
  // Refused as memory, not as a scan: one damaged memory must not stop the alerts about the others.
  it('is refused as memory with the name of its field, and the domain is announced as if seen for the first time', async () => {
    const sim = await startSimulator({
      portfolio: portfolio([quarantined('lost.nl'), quarantined('kept.nl')]),
      apiKey: KEY,
    });
    const { topicArn, messages } = await channel('memory-garbage');
    const state = join(dir, 'garbage.json');
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, ALERT_TOPIC_ARN: topicArn };
    const scan = (now: number) => runCli(['scan', '--state', state, '--now', iso(now)], env, io());
    const setAlertedAt = async (at: string) => {
      const file = JSON.parse(await readFile(state, 'utf8'));
      file.state.domains['lost.nl'].alerted.at = at;
      await writeFile(state, JSON.stringify(file));
    };
    try {
      expect((await scan(R - 13 * DAY)).code).toBe(0);
      expect(await messages()).toHaveLength(1);
      await setAlertedAt('garbage');
      const damaged = await scan(R - 12 * DAY);
      expect(damaged.code).toBe(0);
      // lost.nl is new again; kept.nl's memory held: it is a repeat, as it would have been.
      // Its damaged memory is a record to look at, not an unreadable reseller record: lost.nl was checked.
      expect(damaged.stdout).toMatch(
        /^published alert \S+ to \S+ \(1 new, 1 critical repeated after 20 h, 1 new record to look at\)/,
      );
      const [report] = await messages();
      expect(report.problems).toEqual([
        expect.objectContaining({
          resource: 'state',
          key: 'lost.nl',
          reason: expect.stringMatching(
            /^could not be read \(domains\["lost\.nl"\]\.alerted\.at: not an RFC 3339 date-time: "garbage"\): what it remembers was checked again/,
          ),
        }),
      ]);
      expect(report.findings.map((f: { domain_name: string }) => f.domain_name).sort()).toEqual([
        'kept.nl',
        'lost.nl',
      ]);
      // The save wrote lost.nl's memory again: the next scan finds nothing damaged and repeats as it should.
      expect(JSON.parse(await readFile(state, 'utf8')).state.domains['lost.nl'].alerted.at).toBe(
        iso(R - 12 * DAY),
      );
      expect((await scan(R - 11 * DAY + HOUR)).stdout).toMatch(/\(2 critical repeated after 2\d h\)/);
    } finally {
      await sim.close();
    }
  });
});

describe('3. an oversized record in DynamoDB state', () => {
  it('remembers a 2 KB name and a 500 KB field in a bounded form, saves, and still sees left_account', async () => {
    const table = 'memory-oversized';
    expect((await runCli(['state', 'init', `dynamodb:${table}`], {}, io())).code).toBe(0);
    const long = `${'a'.repeat(2_045)}.nl`;
    const sim = await startSimulator({
      portfolio: portfolio([
        quarantined('lost.nl'),
        quarantined(long),
        record('ns.nl', { dns_hosted: false, nsgroup: 'x'.repeat(500_000) }),
        record('leaving.nl'),
      ]),
      apiKey: KEY,
    });
    const { topicArn, messages } = await channel('memory-oversized');
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, ALERT_TOPIC_ARN: topicArn };
    const scan = (now: number) =>
      runCli(['scan', '--state', `dynamodb:${table}`, '--now', iso(now)], env, io());
    try {
      const first = await scan(R - 3 * HOUR);
      expect([first.code, first.stderr]).toEqual([0, '']);
      expect(first.stdout).toMatch(
        /^published alert \S+ to \S+ \(2 new, 2 new unreadable records\)\nstate saved to /,
      );
      const [report] = await messages();
      // The long name's quarantine is alerted (the message's JSON cuts a name to 260 characters,
      // message.ts); both oversized values are problems, named cut.
      expect(report.findings).toContainEqual(
        expect.objectContaining({
          domain_name: `${long.slice(0, 259)}…`,
          kind: 'quarantine',
          severity: 'critical',
        }),
      );
      expect(report.problems).toEqual([
        expect.objectContaining({
          resource: 'domain',
          key: `${'a'.repeat(79)}…`,
          page: 1,
          reason:
            'the name is 2048 characters, longer than any domain name (253): remembered under a hash of it; the domain itself was checked',
        }),
        expect.objectContaining({
          key: 'ns.nl',
          reason:
            'its nsgroup is 500000 characters, more than the 256 the state keeps: remembered cut, with a hash that still shows a change; the domain itself was checked',
        }),
      ]);
      // Every item within DynamoDB's limits: the account's partition and its 16 shards.
      const partitions = [sim.url, ...Array.from({ length: 16 }, (_, n) => `${sim.url}#${n}`)];
      const items = (
        await Promise.all(
          partitions.map(
            async (pk) =>
              (
                await db.client().send(
                  new QueryCommand({
                    TableName: table,
                    KeyConditionExpression: 'pk = :pk',
                    ExpressionAttributeValues: { ':pk': { S: pk } },
                  }),
                )
              ).Items ?? [],
          ),
        )
      ).flat();
      // The meta item, and the bucket items holding the four domains (one bucket each, or fewer).
      expect(items.filter((item) => item.pk?.S === sim.url)).toHaveLength(1);
      const buckets = items.filter((item) => item.pk?.S !== sim.url);
      expect(buckets.length).toBeGreaterThanOrEqual(1);
      expect(buckets.length).toBeLessThanOrEqual(4);
      for (const item of buckets) expect(item.sk?.S).toMatch(/^b#[0-9a-f]{4}$/);
      expect(buckets.reduce((n, item) => n + Object.keys(JSON.parse(item.m?.S ?? '{}')).length, 0)).toBe(4);
      for (const item of items) {
        expect(Buffer.byteLength(item.sk?.S ?? '')).toBeLessThanOrEqual(1024);
        expect(JSON.stringify(item).length).toBeLessThan(10_000);
      }

      // The next scan is not locked out, and has nothing new to say.
      const second = await scan(R - 2 * HOUR);
      expect(second.stdout).toBe(
        `no alert published: nothing new, escalated, changed or resolved at warning or above\nstate saved to dynamodb:${table}\n`,
      );
      // Two domains leave and the huge nameserver group changes: all three are seen.
      sim.updateDomain('leaving.nl', null);
      sim.updateDomain(long, null);
      sim.updateDomain('ns.nl', { nsgroup: 'y'.repeat(500_000) });
      const third = await scan(R - HOUR);
      expect(third.code).toBe(0);
      const [changed] = await messages();
      expect(
        changed.changes.map((c: { domain_name: string; kind: string }) => [c.domain_name, c.kind]),
      ).toEqual([
        [`${'a'.repeat(79)}…`, 'left_account'],
        ['leaving.nl', 'left_account'],
        ['ns.nl', 'nameservers_changed'],
      ]);
    } finally {
      await sim.close();
    }
  });
});

describe.each([
  ['a state file', 'file'],
  ['a DynamoDB table', 'dynamodb'],
])('a record dated past the year 9999 in UTC, with %s', (_name, kind) => {
  // "9999-12-31T23:00:00-02:00" is valid RFC 3339 (the "never expires" date, with an offset), but
  // in UTC it is 10000-01-01: written back as "+010000-…", a time no reader of the state accepts.
  it('is reported as an unreadable record, and the state stays usable by the next scan', async () => {
    const state = kind === 'file' ? join(dir, 'year-10000.json') : 'dynamodb:memory-year-10000';
    if (kind === 'dynamodb') expect((await runCli(['state', 'init', state], {}, io())).code).toBe(0);
    const sim = await startSimulator({
      portfolio: portfolio([
        quarantined('lost.nl'),
        record('forever.nl', { date_expiry: '9999-12-31T23:00:00-02:00' }),
        record('fine.nl', { date_expiry: '9999-12-31T23:00:00+02:00' }),
      ]),
      apiKey: KEY,
    });
    const { topicArn, messages } = await channel(`memory-year-10000-${kind}`);
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, ALERT_TOPIC_ARN: topicArn };
    const scan = (now: number) => runCli(['scan', '--state', state, '--now', iso(now)], env, io());
    try {
      const first = await scan(R - 2 * HOUR);
      expect([first.code, first.stderr]).toEqual([0, '']);
      const [report] = await messages();
      expect(report.problems).toEqual([
        expect.objectContaining({
          resource: 'domain',
          key: 'forever.nl',
          reason:
            'date_expiry: an RFC 3339 date-time outside the years 0000–9999 in UTC: "9999-12-31T23:00:00-02:00"',
        }),
      ]);
      const second = await scan(R - HOUR);
      expect([second.code, second.stderr]).toEqual([0, '']);
      expect(second.stdout).toMatch(/^no alert published: nothing new/);
    } finally {
      await sim.close();
    }
  });
});

describe('4. an old acting link', () => {
  it('does not acknowledge a quarantine with the link sent for a warning: 409 with what it is now', async () => {
    const warning = record('warn.nl', { auto_renew: false, date_expiry: iso(R + 17 * DAY + HOUR) });
    const sim = await startSimulator({ portfolio: portfolio([warning, record('fine.nl')]), apiKey: KEY });
    const { topicArn, messages } = await channel('memory-link');
    const state = join(dir, 'link.json');
    const env = {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
      ALERT_TOPIC_ARN: topicArn,
      LINK_SIGNING_KEY: SIGNING_KEY,
      STATE: state,
    };
    const serve = await startCliServer(['serve', '--port', '0'], env);
    const scan = (now: number) =>
      runCli(['scan', '--json', '--now', iso(now)], { ...env, LINK_BASE_URL: serve.url }, io());
    try {
      const first = JSON.parse((await scan(R - DAY)).stdout);
      const sent = first.findings.find((f: { domain_name: string }) => f.domain_name === 'warn.nl');
      expect([sent.kind, sent.severity]).toEqual(['expiring', 'warning']);
      expect(await messages()).toHaveLength(1);

      sim.updateDomain('warn.nl', {
        status: ['quarantine'],
        date_expiry: iso(R - DAY),
        date_deleted: iso(R - HOUR),
      });
      const before = await readFile(state, 'utf8');
      const page = await fetch(sent.actions.acknowledge);
      const html = await page.text();
      expect(page.status).toBe(200);
      expect(
        html.indexOf(
          'This link was sent when <code>warn.nl</code> was expiring (warning). It is now in quarantine (critical)',
        ),
      ).toBeGreaterThan(0);
      expect(html.indexOf('This link was sent when')).toBeLessThan(html.indexOf('<form'));

      const post = await fetch(sent.actions.acknowledge, { method: 'POST' });
      const answer = await post.text();
      expect(post.status).toBe(409);
      expect(answer).toContain('warn.nl is now in quarantine (critical)');
      expect(answer).toContain(
        'This link was sent when warn.nl was expiring (warning); it is now in quarantine (critical), so the link does not acknowledge it. Nothing was changed.',
      );
      expect(answer).toMatch(
        /<a href="\.\.\/acknowledge\/warn\.nl\?kind=quarantine&#38;sev=critical&#38;exp=\d+&#38;kid=[0-9a-f]{8}&#38;sig=[\w-]{43}">/,
      );
      expect(await readFile(state, 'utf8')).toBe(before);

      // The quarantine is not acknowledged: the next scan announces it.
      const next = JSON.parse((await scan(R)).stdout);
      expect(next.findings).toContainEqual(
        expect.objectContaining({ domain_name: 'warn.nl', kind: 'quarantine', change: 'escalated' }),
      );
      const [mail] = await messages();
      expect(mail.findings.map((f: { domain_name: string }) => f.domain_name)).toContain('warn.nl');
    } finally {
      await serve.stop();
      await sim.close();
    }
  });
});

/** One reseller with two accounts behind one base URL: each request goes to the account its key opens. */
async function startReseller(accounts: Map<string, Simulator>) {
  const server: Server = createServer(async (req, res) => {
    const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const account = accounts.get(key) ?? [...accounts.values()][0];
    const answer = await fetch(`${account?.url}${req.url}`, {
      method: req.method ?? 'GET',
      headers: { authorization: `Bearer ${[...accounts].find(([, a]) => a === account)?.[0]}` },
    });
    const body = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    res.end(key && accounts.has(key) ? body : '{"error":"unknown key"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.each([
  ['a JSON file', () => join(dir, 'accounts.json')],
  ['DynamoDB (dynalite)', () => 'dynamodb:memory-accounts'],
])('5. another account of the same reseller, with %s', (_label, where) => {
  it('refuses the other account’s state (exit 2) and lets a rotated key take its memory over', async () => {
    const state = where();
    if (state.startsWith('dynamodb:'))
      expect((await runCli(['state', 'init', state], {}, io())).code).toBe(0);
    const a = await startSimulator({
      portfolio: portfolio([
        record('a1.nl', { auto_renew: false, date_expiry: iso(R + 20 * DAY) }),
        record('a2.nl'),
      ]),
      apiKey: 'key-of-account-a-0001',
    });
    const b = await startSimulator({
      portfolio: portfolio([record('b1.nl', { auto_renew: false, date_expiry: iso(R + 20 * DAY) })]),
      apiKey: 'key-of-account-b-0002',
    });
    const accounts = new Map([
      ['key-of-account-a-0001', a],
      ['key-of-account-b-0002', b],
    ]);
    const reseller = await startReseller(accounts);
    const { topicArn, messages } = await channel(
      `memory-accounts-${state.startsWith('dynamodb:') ? 'ddb' : 'file'}`,
    );
    const env = (key: string) => ({
      RESELLER_BASE_URL: reseller.url,
      RESELLER_API_KEY: key,
      ALERT_TOPIC_ARN: topicArn,
    });
    const scan = (key: string, now?: number) =>
      runCli(['scan', '--state', state, '--json', ...(now ? ['--now', iso(now)] : [])], env(key), io());
    // Every item of the account: its partition and the 16 its domains are spread over.
    const snapshot = async () =>
      state.startsWith('dynamodb:')
        ? JSON.stringify(
            await Promise.all(
              [reseller.url, ...Array.from({ length: 16 }, (_, n) => `${reseller.url}#${n}`)].map(
                async (pk) =>
                  (
                    await db.client().send(
                      new QueryCommand({
                        TableName: 'memory-accounts',
                        KeyConditionExpression: 'pk = :pk',
                        ExpressionAttributeValues: { ':pk': { S: pk } },
                      }),
                    )
                  ).Items,
              ),
            ),
          )
        : readFile(state, 'utf8');
    try {
      expect((await scan('key-of-account-a-0001', R - 3 * HOUR)).code).toBe(0);
      expect(await messages()).toHaveLength(1);
      const snoozed = await runCli(['snooze', 'a1.nl', '--state', state], env('key-of-account-a-0001'), io());
      expect(snoozed.code).toBe(0);
      const before = await snapshot();

      const other = await scan('key-of-account-b-0002', R - 2 * HOUR);
      expect([other.code, other.stdout]).toEqual([2, '']);
      expect(other.stderr).toBe(
        `sentinel: the state in ${state} belongs to another account of ${reseller.url} (it was bound to another API key); use another --state for each account, or if this account's key was rotated: sentinel state rebind ${state} --yes\n`,
      );
      expect(await messages()).toEqual([]);
      // Nor can account B's snooze land in it (where b1.nl would look like a domain that left).
      const snoozeB = await runCli(['snooze', 'b1.nl', '--state', state], env('key-of-account-b-0002'), io());
      expect([snoozeB.code, snoozeB.stderr]).toEqual([2, other.stderr]);
      expect(await snapshot()).toBe(before);

      // Account A's key is rotated: refused as well, until the state is rebound to the new key.
      accounts.set('key-of-account-a-0003', a);
      expect((await scan('key-of-account-a-0003', R - 2 * HOUR)).code).toBe(2);
      const unconfirmed = await runCli(['state', 'rebind', state], env('key-of-account-a-0003'), io());
      expect(unconfirmed.code).toBe(2);
      const rebind = await runCli(['state', 'rebind', state, '--yes'], env('key-of-account-a-0003'), io());
      expect([rebind.code, rebind.stdout]).toEqual([
        0,
        `the state in ${state} now belongs to the account of RESELLER_API_KEY; its memory is kept\n`,
      ]);
      // On the machine's clock: the snooze was made on it, after the scans above.
      const rotated = await scan('key-of-account-a-0003');
      expect(rotated.code).toBe(0);
      expect(rotated.stderr).toBe(
        'no alert published: nothing new, escalated, changed or resolved at warning or above\n' +
          `state saved to ${state}\n`,
      );
      const report = JSON.parse(rotated.stdout);
      expect(report.changes).toEqual([]);
      expect(
        report.findings.find((f: { domain_name: string }) => f.domain_name === 'a1.nl').snoozed_until,
      ).toBeTruthy();
      // The old key no longer opens the state.
      expect((await scan('key-of-account-a-0001')).code).toBe(2);
    } finally {
      await Promise.all([reseller.close(), a.close(), b.close()]);
    }
  });
});

describe('6. a damaged stored report', () => {
  it('answers 503 on the report page and the calendar, and serve logs the 503 as an error', async () => {
    const sim = await startSimulator({
      portfolio: portfolio([
        quarantined('lost.nl'),
        record('soon.nl', { auto_renew: false, date_expiry: iso(R + 5 * DAY) }),
      ]),
      apiKey: KEY,
    });
    const reports = join(dir, 'reports');
    const env = {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: KEY,
      LINK_SIGNING_KEY: SIGNING_KEY,
      REPORT_DIR: reports,
    };
    const serve = await startCliServer(['serve', '--port', '0'], env);
    let stopped = false;
    try {
      const scanned = await runCli(['scan', '--json', '--dry-run'], { ...env, LINK_BASE_URL: serve.url });
      const { report_url, calendar_url } = JSON.parse(scanned.stdout);
      expect((await fetch(report_url)).status).toBe(200);

      // The page and the feed read the view kept beside the report; the filter reads the report.
      const view = join(reports, 'latest-view.json');
      const whole = join(reports, 'latest.json');
      // The damage is written into the stored form's text: writing it through the encoder would
      // need a finding whole enough for its next step.
      const damage = async (path: string) => {
        const stored = await readFile(path, 'utf8');
        const damaged = stored.replace(/"domain_name":"[^"]*",?/, '');
        expect(damaged).not.toBe(stored);
        await writeFile(path, damaged);
      };
      await damage(view);
      for (const url of [report_url, calendar_url]) {
        const answer = await fetch(url);
        expect(answer.status).toBe(503);
        expect(answer.headers.get('cache-control')).toBe('no-store');
        expect(await answer.text()).toContain(
          'The latest report could not be read; the next scan writes a new one.',
        );
      }
      await writeFile(view, 'not a report');
      expect((await fetch(report_url)).status).toBe(503);
      await damage(whole);
      const filtered = await fetch(`${report_url}&q=soon.nl`);
      expect(filtered.status).toBe(503);
      expect(await filtered.text()).toContain(
        'The latest report could not be read; the next scan writes a new one.',
      );

      // The next scan writes a new one.
      await runCli(['scan', '--dry-run'], { ...env, LINK_BASE_URL: serve.url });
      expect((await fetch(report_url)).status).toBe(200);

      const { stderr } = await serve.stop();
      stopped = true;
      const lines = stderr
        .trim()
        .split('\n')
        // serve says where it listens in words; each request is one JSON line after that.
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .filter((l) => /view$/.test(l.message));
      expect(lines.map((l) => [l.message, l.status, l.level, l.outcome])).toEqual([
        ['report view', 200, 'info', 'show'],
        ['report view', 503, 'error', 'report_unreadable'],
        ['calendar view', 503, 'error', 'report_unreadable'],
        ['report view', 503, 'error', 'report_unreadable'],
        ['report view', 503, 'error', 'report_unreadable'],
        ['report view', 200, 'info', 'show'],
      ]);
      expect(lines[1].detail).toMatch(
        /latest-view\.json.*findings\.0\.domain_name: Invalid input: expected string, received undefined/,
      );
      expect(lines[3].detail).toMatch(/is not JSON/);
      expect(lines[4].detail).toMatch(
        /latest\.json.*findings\.0\.domain_name: Invalid input: expected string, received undefined/,
      );
    } finally {
      if (!stopped) await serve.stop();
      await sim.close();
    }
  });
});

describe.each([
  ['a state file', 'file'],
  ['a DynamoDB table', 'dynamodb'],
])('a damaged account-wide part of the state, with %s', (_name, kind) => {
  // One damaged header value must not stop every alert of the account until a person repairs it.
  it('alerts as a first scan with the damage as a problem record, writes nothing, and fails the run', async () => {
    const table = `memory-damaged-head-${kind}`;
    const state = kind === 'file' ? join(dir, 'damaged-head.json') : `dynamodb:${table}`;
    if (kind === 'dynamodb') expect((await runCli(['state', 'init', state], {}, io())).code).toBe(0);
    const sim = await startSimulator({
      portfolio: portfolio([quarantined('lost.nl'), record('fine.nl')]),
      apiKey: KEY,
    });
    const { topicArn, messages } = await channel(`memory-damaged-head-${kind}`);
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, ALERT_TOPIC_ARN: topicArn };
    const scan = (now: number) => runCli(['scan', '--state', state, '--now', iso(now)], env, io());
    const meta = async () =>
      (
        await db.client().send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'pk = :pk AND sk = :sk',
            ExpressionAttributeValues: { ':pk': { S: sim.url }, ':sk': { S: '#meta' } },
          }),
        )
      ).Items?.[0];
    /** The stored account-wide part, changed by `change`; returns what is stored after. */
    const damage = async (change: (head: Record<string, unknown>) => void): Promise<unknown> => {
      if (kind === 'file') {
        const file = JSON.parse(await readFile(state, 'utf8'));
        change(file.state);
        await writeFile(state, JSON.stringify(file));
        return readFile(state, 'utf8');
      }
      const head = JSON.parse((await meta())?.h?.S ?? '{}');
      change(head);
      await db.client().send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: sim.url }, sk: { S: '#meta' } },
          UpdateExpression: 'SET h = :h',
          ExpressionAttributeValues: { ':h': { S: JSON.stringify(head) } },
        }),
      );
      return meta();
    };
    const stored = async () => (kind === 'file' ? readFile(state, 'utf8') : meta());
    const item = kind === 'file' ? state : '#meta';
    try {
      expect((await scan(R - 3 * HOUR)).code).toBe(0);
      expect(await messages()).toHaveLength(1);
      const before = await damage((head) => {
        head.last_scan_at = 'garbage';
      });

      const damaged = await scan(R - 2 * HOUR);
      expect(damaged.code).toBe(1);
      expect(damaged.stderr).toBe(
        `sentinel: the state in ${state} cannot be used (last_scan_at: not an RFC 3339 date-time: "garbage"); this scan alerted without memory, as a first scan, and did not write the state: correct that value, or start over with sentinel state reset ${state} --yes\n`,
      );
      expect(damaged.stdout).toMatch(
        new RegExp(
          `^published alert \\S+ to \\S+ \\(1 new, 1 new record to look at\\)\\nstate in ${state.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} not written: it cannot be read, and is left as it is for a person to look at\\n$`,
        ),
      );
      const [report] = await messages();
      expect(report.findings).toEqual([
        expect.objectContaining({ domain_name: 'lost.nl', kind: 'quarantine', change: 'new' }),
      ]);
      expect(report.problems).toEqual([
        expect.objectContaining({
          resource: 'state',
          key: item.length > 80 ? expect.any(String) : item,
          reason: expect.stringMatching(
            /^could not be read \(last_scan_at: not an RFC 3339 date-time: "garbage"\): no memory of earlier scans was used/,
          ),
        }),
      ]);
      // Nothing written: the damage is left for a person. A file's next scan says it all again; a
      // table's keeps the lease of the scan that alerted for 10 minutes (a Lambda retry sends nothing).
      if (kind === 'file') expect(await stored()).toEqual(before);
      else {
        const { lease_owner, lease_expires, ...after } = (await stored()) as Record<string, unknown>;
        expect([after, lease_owner !== undefined, lease_expires !== undefined]).toEqual([before, true, true]);
      }
      const next = await scan(R - HOUR);
      expect(next.code).toBe(1);
      expect(await messages()).toHaveLength(kind === 'file' ? 1 : 0);
      if (kind === 'dynamodb')
        expect(next.stderr).toMatch(
          /; another scan holds it \(one that alerted without memory keeps it 10 minutes/,
        );

      // A state of another release is still refused before anything is published.
      await damage((head) => {
        head.last_scan_at = null;
        head.version = 2;
      });
      const other = await scan(R);
      expect([other.code, other.stdout]).toEqual([1, '']);
      expect(other.stderr).toMatch(/written by another version of domain-sentinel/);
      expect(await messages()).toEqual([]);
    } finally {
      await sim.close();
    }
  });
});
