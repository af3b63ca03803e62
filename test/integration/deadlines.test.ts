import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { FileStateStore } from '../../functions/local/file-state-store';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { API_KEY, confirmedPost } from '../support/restore-env';
import { startWebStack } from '../support/web-env';

const DAY = 86_400_000;
/**
 * The registries' restore periods as this test knows them, written out on their own (not read from
 * the table under test): .nl, .be and .eu 40 days, .de 30, gTLDs 30 (docs/deadlines.md).
 */
const PERIOD: Readonly<Record<string, number>> = { nl: 40, be: 40, eu: 40, de: 30, com: 30, org: 30 };
const periodOf = (name: string) => PERIOD[name.split('.').pop() ?? ''];

interface Report {
  now: string;
  findings: DomainFinding[];
  calendar_url: string;
  report_url: string;
  renewal_costs?: { totals: Array<{ currency: string; amount: number; count: number }> };
}

describe('restore deadlines and failed renewals through the simulator', () => {
  const now = Date.now();
  const portfolio = generatePortfolio({ domains: 400, seed: 21, now, profile: 'stress' });
  const raw = new Map(portfolio.domains.map((d) => [String(d.domain_name), d]));
  let stack: Awaited<ReturnType<typeof startWebStack>>;
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  let env: Record<string, string>;
  let report: Report;
  /** The web app's own settings (ALERT_TIME_ZONE), read at each request. */
  const webSettings: Record<string, string> = {};

  beforeAll(async () => {
    stack = await startWebStack({ domains: 10, seed: 1, settings: webSettings });
    // The web stack serves the report and calendar; its scans read this portfolio instead.
    sim = await startSimulator({ portfolio, apiKey: API_KEY });
    env = { ...stack.env, RESELLER_BASE_URL: sim.url };
    const scan = await runCli(['scan', '--json', '--dry-run', '--now', new Date(now).toISOString()], env);
    expect(scan.code).toBe(0);
    report = JSON.parse(scan.stdout);
  });
  afterAll(async () => {
    await sim?.close();
    await stack?.close();
  });

  const quarantines = () => report.findings.filter((f) => f.kind === 'quarantine');

  it('puts restore_by at date_deleted + the TLD’s period, and days_to_restore from the scan’s now', () => {
    const expected = portfolio.truth.findings.filter((f) => f.kind === 'quarantine').map((f) => f.key);
    expect(
      quarantines()
        .map((f) => f.domain_name)
        .sort(),
    ).toEqual(expected.sort());
    let known = 0;
    for (const f of quarantines()) {
      const days = periodOf(f.domain_name);
      if (days === undefined) {
        expect(f, f.domain_name).toMatchObject({ restore_by: null, days_to_restore: null });
        expect(f.restore_deadline_unknown).toMatch(/no quarantine period is known/);
        continue;
      }
      known++;
      const restoreBy = Date.parse(String(raw.get(f.domain_name)?.date_deleted)) + days * DAY;
      expect(f.restore_by, f.domain_name).toBe(new Date(restoreBy).toISOString());
      expect(f.days_to_restore, f.domain_name).toBe(Math.floor((restoreBy - now) / DAY));
      // The simulator keeps every name inside its period: a released name would not be listed.
      expect(f.days_to_restore).toBeGreaterThanOrEqual(0);
    }
    expect(known).toBeGreaterThanOrEqual(4);
    expect(quarantines().length - known).toBeGreaterThanOrEqual(2);
  });

  it('orders quarantined domains by days left to restore, unknown last, ahead of every other critical', () => {
    const critical = report.findings.filter((f) => f.severity === 'critical');
    const firstOther = critical.findIndex((f) => f.kind !== 'quarantine');
    expect(firstOther).toBe(quarantines().length);
    const left = quarantines().map((f) => f.days_to_restore ?? Number.POSITIVE_INFINITY);
    expect(left).toEqual([...left].sort((a, b) => a - b));
  });

  it('finds the renewals that failed, as the simulator made them', () => {
    const truth = portfolio.truth.findings.filter((f) => f.kind === 'renewal_failed').map((f) => f.key);
    expect(truth.length).toBeGreaterThan(0);
    const found = report.findings.filter((f) => f.kind === 'renewal_failed');
    expect(found.map((f) => f.domain_name).sort()).toEqual(truth.sort());
    for (const f of found)
      expect(f.date_renewal).toBe(
        new Date(Date.parse(String(raw.get(f.domain_name)?.date_renewal))).toISOString(),
      );
  });

  it('totals the premium renewals due in the window per currency, as the records price them', () => {
    const totals = new Map<string, number>();
    for (const f of report.findings) {
      if (f.kind !== 'expiring' && f.kind !== 'renewal_failed') continue;
      const price = raw.get(f.domain_name)?.premium_price as { currency: string; price: number } | undefined;
      if (raw.get(f.domain_name)?.premium_domain !== true || !price) continue;
      totals.set(price.currency, Math.round(((totals.get(price.currency) ?? 0) + price.price) * 100) / 100);
    }
    expect(totals.size).toBeGreaterThan(0);
    expect(report.renewal_costs?.totals.map((t) => [t.currency, t.amount])).toEqual([...totals].sort());
  });

  it('puts an event on each restore-by day of the alert’s time zone in the calendar feed, with a UID of its own', async () => {
    // A zone where some deadline's local day is not its UTC day: UTC-11 for deadlines before 10:00
    // UTC, UTC+14 for the rest, whatever the hour this test runs at.
    const utcHours = quarantines().flatMap((f) =>
      f.restore_by ? [new Date(f.restore_by).getUTCHours()] : [],
    );
    expect(utcHours.length).toBeGreaterThan(0);
    const zone = utcHours.some((h) => h < 10) ? 'Pacific/Pago_Pago' : 'Pacific/Kiritimati';
    webSettings.ALERT_TIME_ZONE = zone;
    const feed = await (await fetch(report.calendar_url)).text();
    const events = new ICAL.Component(ICAL.parse(feed))
      .getAllSubcomponents('vevent')
      .map((e) => new ICAL.Event(e));
    for (const f of quarantines()) {
      const restore = events.filter(
        (e) => e.summary === `Restore by: ${f.domain_name} (last day to restore)`,
      );
      if (!f.restore_by) {
        expect(restore).toEqual([]);
        continue;
      }
      // The last day a restore is possible where the alert's readers are: the day the deadline
      // falls on in ALERT_TIME_ZONE (the day before, for a deadline at midnight sharp).
      const lastDay = new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(
        new Date(Date.parse(f.restore_by) - 1),
      );
      expect(restore.map((e) => e.startDate.toString())).toEqual([lastDay]);
      const quarantine = events.find((e) => e.summary === `Quarantine: ${f.domain_name}`);
      expect(quarantine?.uid).toMatch(/@domain-sentinel$/);
      expect(restore[0]?.uid).not.toBe(quarantine?.uid);
    }
  });

  it('says LAST DAYS in the SMS and "restore by …, N days left" in the digest', async () => {
    const run = await runCli(['scan', '--dry-run', '--now', new Date(now).toISOString()], env);
    const lastDays = quarantines().find(
      (f) => typeof f.days_to_restore === 'number' && f.days_to_restore <= 7,
    );
    expect(lastDays).toMatchObject({ kind: 'quarantine' });
    const sms = run.stdout.slice(run.stdout.indexOf('--- SMS')).split('\n')[1] ?? '';
    expect(sms).toContain(`${lastDays?.domain_name} LAST DAYS ${lastDays?.days_to_restore}d to restore`);
    expect(run.stdout).toMatch(
      new RegExp(
        `- ${lastDays?.domain_name.replaceAll('.', '\\.')}: in quarantine since .*; LAST DAYS: restore by \\d{1,2} \\w{3} \\d{4} \\d{2}:\\d{2} UTC, \\d+ days? left`,
      ),
    );
    expect(run.stdout).toMatch(
      /RENEWAL COSTS: \d+ premium (and \d+ custom-priced )?renewals? due in 30 days: EUR [\d .]+; USD [\d .]+/,
    );
  });

  it('shows the restore deadlines on the report page', async () => {
    const page = await (await fetch(report.report_url)).text();
    expect(page).toContain(`<h2>Restore deadlines (${quarantines().length})</h2>`);
    const first = quarantines()[0] as DomainFinding;
    expect(page).toMatch(
      new RegExp(`<strong>${first.domain_name.replaceAll('.', '\\.')}</strong>: (LAST DAYS: )?restore by `),
    );
  });
});

describe('a restore no robot can press, kept in the audit trail', () => {
  let dir: string;
  let trail: FileStateStore;
  let stack: Awaited<ReturnType<typeof startWebStack>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sentinel-audit-'));
    trail = new FileStateStore(join(dir, 'state.json'));
    stack = await startWebStack({ domains: 150, seed: 52, audit: trail });
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a POST without the typed name (422) calling nothing, refuses .nl without consent, restores with both, and keeps every attempt', async () => {
    const scan = await runCli(['scan', '--json', '--dry-run'], stack.env);
    const findings = (JSON.parse(scan.stdout) as Report).findings;
    const nl = findings.find(
      (f) => f.kind === 'quarantine' && f.domain_name.endsWith('.nl'),
    ) as DomainFinding;
    const link = nl.restore_url as string;
    const requests = stack.sim.requests.length;

    const robot = await fetch(link, { method: 'POST', headers: { 'User-Agent': 'LinkScanner/2.0' } });
    expect(robot.status).toBe(422);
    const withoutConsent = await fetch(link, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: `confirm_domain=${nl.domain_name}`,
    });
    expect(withoutConsent.status).toBe(422);
    expect((await withoutConsent.json()).outcome).toBe('consent_missing');
    // The recording reseller saw nothing: no look-up, no restore.
    expect(stack.sim.requests.length).toBe(requests);
    expect(stack.sim.restoreCalls).toEqual([]);

    const person = await fetch(link, confirmedPost(nl.domain_name, { 'User-Agent': 'Mozilla/5.0 (person)' }));
    expect(person.status).toBe(200);
    expect(stack.sim.restoreCalls).toEqual([nl.domain_name]);

    const kid = new URL(link).searchParams.get('kid');
    const entries = await trail.listAudit();
    expect(entries.map((e) => [e.domain, e.outcome, e.status, e.user_agent])).toEqual([
      [nl.domain_name, 'restored', 200, 'Mozilla/5.0 (person)'],
      [nl.domain_name, 'consent_missing', 422, 'node'], // fetch's own user agent
      [nl.domain_name, 'confirmation_missing', 422, 'LinkScanner/2.0'],
    ]);
    for (const e of entries)
      expect(e).toMatchObject({ via: 'web', key_id: kid, client_ip: expect.stringMatching(/127\.0\.0\.1/) });
    const file = JSON.stringify(await trail.listAudit());
    expect(file).not.toContain(new URL(link).searchParams.get('sig'));

    // `sentinel audit` shows the same trail, as text and as JSON.
    const env = { ...stack.env, STATE: join(dir, 'state.json') };
    const text = await runCli(['audit'], env);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toBe(
      `3 restore attempts in ${join(dir, 'state.json')}, newest first:`,
    );
    expect(text.stdout).toContain(
      `${nl.domain_name}: restored (HTTP 200), sent to the reseller; link key ${kid}`,
    );
    const json = await runCli(['audit', '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual({ location: join(dir, 'state.json'), entries });

    // The report page lists them.
    const page = await (
      await fetch(JSON.parse((await runCli(['scan', '--json', '--dry-run'], stack.env)).stdout).report_url)
    ).text();
    expect(page).toContain('<h2>Restore attempts (3)</h2>');
  });
});
