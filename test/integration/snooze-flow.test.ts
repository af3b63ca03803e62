import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webAppForServe } from '../../bin/commands/serve';
import { EnvSecretSource } from '../../functions/aws/secrets';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { serveLocally } from '../../functions/local/local-server';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { API_KEY, SIGNING_KEY } from '../support/restore-env';
import { startSnsEmulator } from '../support/sns-emulator';

const HOUR = 3_600_000;
let sim: Simulator;
let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let server: Awaited<ReturnType<typeof serveLocally>>;
let dir: string;
let env: Record<string, string>;
let queue: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sentinel-snooze-'));
  [sim, emulator] = await Promise.all([
    startSimulator({
      portfolio: generatePortfolio({ domains: 120, seed: 61, now: Date.now() }),
      apiKey: API_KEY,
    }),
    startSnsEmulator(),
  ]);
  const topicArn = await emulator.topic('snooze-flow');
  queue = await emulator.queueSubscribedTo(topicArn, 'snooze-flow-mail');
  env = {
    ...emulator.sdkEnv,
    RESELLER_BASE_URL: sim.url,
    RESELLER_API_KEY: API_KEY,
    LINK_SIGNING_KEY: SIGNING_KEY,
    ALERT_TOPIC_ARN: topicArn,
    STATE: join(dir, 'state.json'),
  };
  // `sentinel serve`'s own app, on the same state file the scans use.
  server = await serveLocally(
    webAppForServe({ env, secrets: new EnvSecretSource(env), log: () => undefined }),
    { port: 0 },
  );
  env.LINK_BASE_URL = server.url;
});
afterAll(async () => {
  await server?.close();
  await Promise.all([sim?.close(), emulator?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const scan = (now: number) =>
  runCli(['scan', '--json', '--now', new Date(now).toISOString()], env, { sns: emulator.snsClient });
const mails = async () =>
  (await emulator.drain(queue)).map((m) => (JSON.parse(m.Message) as { email: string }).email);

describe('snooze through its link, with the state store', () => {
  it('leaves the snoozed domain out of the next alert while the report shows it snoozed', async () => {
    // The first scan ran 21 hours ago (a scan may not run ahead of the clock).
    const start = Date.now();
    const first = await scan(start - 21 * HOUR);
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout) as { findings: DomainFinding[] };
    const target = report.findings.find(
      (f) => f.kind === 'expiring' && f.severity === 'warning' && f.days_left >= 10,
    );
    if (!target?.actions?.snooze) throw new Error('the portfolio has no warning to snooze');
    const [firstMail] = await mails();
    expect(firstMail).toContain(` ${target.domain_name}: `);
    // One link for the finding: its page, which offers the snooze link the report carries for programs.
    expect(firstMail).toContain(`  Act: ${target.actions.page}`);
    const findingPage = await (await fetch(target.actions.page as string)).text();
    expect(findingPage).toContain('>Snooze</a>');

    // The person opens the link (a mail scanner would too): nothing changes until the button.
    const stateBefore = readFileSync(env.STATE ?? '', 'utf8');
    expect((await fetch(target.actions.snooze)).status).toBe(200);
    expect(readFileSync(env.STATE ?? '', 'utf8')).toBe(stateBefore);
    const post = await fetch(target.actions.snooze, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'days=7',
    });
    expect(post.status).toBe(200);
    expect(await post.text()).toContain(`${target.domain_name} snoozed`);

    // A day later the criticals repeat, so the scan publishes: without the snoozed domain.
    const second = await scan(start);
    expect(second.code).toBe(0);
    const [secondMail] = await mails();
    expect(secondMail).toMatch(/CRITICAL/);
    expect(secondMail).not.toContain(target.domain_name);
    expect(secondMail).toContain('1 snoozed or acknowledged domain left out (see the full report).');
    const again = JSON.parse(second.stdout) as { findings: DomainFinding[] };
    const shown = again.findings.find((f) => f.domain_name === target.domain_name);
    expect(Date.parse(shown?.snoozed_until ?? '') - start).toBeGreaterThan(7 * 24 * HOUR - 60_000);

    // The report page, beside the state file, shows it snoozed.
    const page = await fetch((JSON.parse(second.stdout) as { report_url: string }).report_url);
    expect(await page.text()).toMatch(
      new RegExp(
        `<strong>${target.domain_name.replace(/\./g, '\\.')}</strong><span class="tag">snoozed until`,
      ),
    );
  });

  it('snoozes and acknowledges from the command line into the same state', async () => {
    const { findings } = JSON.parse((await runCli(['scan', '--json', '--dry-run'], env)).stdout) as {
      findings: DomainFinding[];
    };
    const [a, b] = findings.filter((f) => 'domain_name' in f && !f.snoozed_until && !f.acknowledged);
    if (!a || !b) throw new Error('not enough findings');
    const snoozed = await runCli(['snooze', a.domain_name, '--days', '30'], env);
    expect([snoozed.code, snoozed.stderr]).toEqual([0, '']);
    expect(snoozed.stdout).toMatch(new RegExp(`^snoozed ${a.domain_name.replace(/\./g, '\\.')} until `));
    expect((await runCli(['ack', b.domain_name], env)).code).toBe(0);
    const after = JSON.parse((await runCli(['scan', '--json', '--dry-run'], env)).stdout) as {
      findings: DomainFinding[];
    };
    expect(after.findings.find((f) => f.domain_name === a.domain_name)?.snoozed_until).toBeTruthy();
    expect(after.findings.find((f) => f.domain_name === b.domain_name)?.acknowledged).toBe(true);
    const bad = await runCli(['snooze', a.domain_name, '--days', '0'], env);
    expect([bad.code, bad.stderr]).toEqual([2, 'sentinel: --days must be a whole number from 1 to 365\n']);
    const noState = await runCli(['ack', b.domain_name], { ...env, STATE: '' });
    expect(noState.code).toBe(2);
    expect(noState.stderr).toMatch(/ack needs the state store the scans use: pass --state/);
  });
});

describe('snooze and ack from the command line, for a quarantine in its last days to restore', () => {
  it('refuse, say why, and write nothing, as the links do', async () => {
    // Prepare: a .nl domain cancelled 34½ days ago: SIDN's 40 days leave 5 whole days to restore.
    const DAY = 24 * HOUR;
    const now = Date.now();
    const last = await startSimulator({
      portfolio: {
        domains: [
          {
            domain_name: 'last-days.nl',
            status: ['quarantine'],
            date_expiry: new Date(now - 60 * DAY).toISOString(),
            date_deleted: new Date(now - 34.5 * DAY).toISOString(),
            auto_renew: false,
            registrant_handle: 'C1',
          },
        ],
        contacts: [],
        truth: { findings: [], problems: [] },
      },
      apiKey: API_KEY,
    });
    const state = join(dir, 'last-days.json');
    const lastEnv = { RESELLER_BASE_URL: last.url, RESELLER_API_KEY: API_KEY, STATE: state };
    try {
      // Act
      const snoozed = await runCli(['snooze', 'last-days.nl', '--days', '30'], lastEnv);
      const acked = await runCli(['ack', 'last-days.nl'], lastEnv);

      // Assess
      for (const [run, verb] of [
        [snoozed, 'snoozed'],
        [acked, 'acknowledged'],
      ] as const) {
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(
          new RegExp(
            `^sentinel: last-days\\.nl is in its last days to restore, 5 days left \\(restore by .*\\): alerts about it repeat daily until it is restored or gone, and cannot be ${verb}; nothing was changed\\n$`,
          ),
        );
      }
      expect(() => readFileSync(state, 'utf8')).toThrow(/ENOENT/);
    } finally {
      await last.close();
    }
  });
});
