import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { parseSigningKeys, signLink } from '../../functions/core/links/links';
import { runCli } from '../support/cli';
import type { MemoryActionStore } from '../support/memory-action-store';
import { SIGNING_KEY } from '../support/restore-env';
import { startWebStack } from '../support/web-env';

let stack: Awaited<ReturnType<typeof startWebStack>>;
let report: { findings: DomainFinding[]; report_url: string; calendar_url: string };
let target: DomainFinding;

beforeAll(async () => {
  stack = await startWebStack();
  // Snooze and acknowledge links are offered with a state store only (it keeps them); a dry run
  // reads the state file but never writes it.
  const stateFile = join(mkdtempSync(join(tmpdir(), 'web-flow-')), 'state.json');
  const scan = await runCli(['scan', '--json', '--dry-run', '--state', stateFile], stack.env);
  expect(scan.code).toBe(0);
  report = JSON.parse(scan.stdout);
  const found = report.findings.find((f) => f.kind === 'expiring' && f.severity === 'warning');
  if (!found) throw new Error('the portfolio has no warning to snooze');
  target = found;
});
afterAll(async () => {
  await stack?.close();
});

const store = () => stack.actions as MemoryActionStore;
const send = (url: string, init: RequestInit = {}) => fetch(url, { redirect: 'manual', ...init });

describe('the web links through serve, from a scan report', () => {
  it('lists restore, snooze and acknowledge under actions, and the report and calendar links', () => {
    const domainFindings = report.findings.filter((f) => 'domain_name' in f);
    expect(domainFindings.every((f) => f.actions?.snooze && f.actions.acknowledge)).toBe(true);
    const quarantined = domainFindings.filter((f) => f.kind === 'quarantine');
    expect(quarantined.length).toBeGreaterThan(0);
    expect(quarantined.every((f) => f.actions?.restore === f.restore_url)).toBe(true);
    expect(report.report_url.startsWith(`${stack.server.url}/report?exp=`)).toBe(true);
    expect(report.calendar_url.startsWith(`${stack.server.url}/calendar.ics?exp=`)).toBe(true);
  });

  it('offers no snooze or acknowledge link without a state store to keep them', async () => {
    const scan = await runCli(['scan', '--json', '--dry-run'], stack.env);
    const stateless = JSON.parse(scan.stdout) as { findings: DomainFinding[] };
    const actions = stateless.findings.filter((f) => 'domain_name' in f).map((f) => f.actions ?? {});
    expect(actions.length).toBeGreaterThan(0);
    expect(actions.some((a) => a.snooze || a.acknowledge)).toBe(false);
    expect(actions.some((a) => a.restore)).toBe(true);
  });

  it('serves the report page the scan stored, with the strict headers', async () => {
    const answer = await send(report.report_url);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'sha256-/);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const html = await answer.text();
    expect(html).toContain(`<strong>${target.domain_name}</strong>`);
  });

  it('serves the calendar feed as text/calendar with one event per domain finding', async () => {
    const answer = await send(report.calendar_url);
    expect(answer.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    const events = new ICAL.Component(ICAL.parse(await answer.text())).getAllSubcomponents('vevent');
    expect(events.length).toBe(report.findings.filter((f) => 'domain_name' in f).length);
  });

  it('refuses a report link used for the calendar, and a tampered one', async () => {
    const moved = report.report_url.replace('/report?', '/calendar.ics?');
    expect((await send(moved)).status).toBe(403);
    // One character of the signature changed, never to itself (a signature starting with A stayed whole).
    const tampered = report.report_url.replace(
      /sig=(.)/,
      (_: string, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`,
    );
    expect(tampered).not.toBe(report.report_url);
    expect((await send(tampered)).status).toBe(403);
    expect((await send(report.report_url, { method: 'POST' })).status).toBe(405);
  });

  it('GET and HEAD on a snooze link change nothing; POST snoozes for the chosen days', async () => {
    const link = target.actions?.snooze ?? '';
    const get = await send(link);
    expect(get.status).toBe(200);
    const html = await get.text();
    expect(html).toContain('<input type="radio" name="days" value="7" checked>');
    expect(html).toContain('value="1"');
    expect(html).toContain('value="30"');
    expect((await send(link, { method: 'HEAD' })).status).toBe(200);
    expect(store().writes).toBe(0);

    const post = await send(link, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: 'days=30',
    });
    expect(post.status).toBe(200);
    const body = await post.json();
    expect(body.outcome).toBe('snoozed');
    expect(Date.parse(body.snoozed_until) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(store().actions.get(target.domain_name)?.snooze?.severity).toBe('warning');
  });

  it('refuses tampered, expired, wrong-action and wrong-domain links with no change of state', async () => {
    const before = store().writes;
    const link = target.actions?.acknowledge ?? '';
    const keys = parseSigningKeys(SIGNING_KEY);
    const expired = signLink({
      baseUrl: stack.server.url,
      action: 'acknowledge',
      subject: target.domain_name,
      finding: target,
      keys,
      now: Date.now() - 8 * 86_400_000,
    });
    const other = report.findings.find((f) => 'domain_name' in f && f.domain_name !== target.domain_name);
    const cases: Array<[string, number]> = [
      [link.replace(/sig=(.)/, (_, c) => `sig=${c === 'A' ? 'B' : 'A'}`), 403],
      [link.replace('/acknowledge/', '/snooze/'), 403],
      [link.replace('/acknowledge/', '/restore/'), 403],
      [link.replace(target.domain_name, other?.domain_name ?? 'x.nl'), 403],
      [expired, 410],
    ];
    for (const [url, status] of cases) {
      for (const method of ['GET', 'HEAD', 'POST']) {
        expect([url, method, (await send(url, { method })).status]).toEqual([url, method, status]);
      }
    }
    expect(store().writes).toBe(before);
    expect(store().actions.get(target.domain_name)?.acknowledged).toBeUndefined();
  });

  it('answers 404 with the security headers on any other path', async () => {
    const answer = await send(`${stack.server.url}/snooze`);
    expect(answer.status).toBe(404);
    expect(answer.headers.get('x-frame-options')).toBe('DENY');
  });
});

describe('read-only links', () => {
  it('answer HEAD without a body, and an expired calendar link with 410 and how to subscribe again', async () => {
    const head = await send(report.calendar_url, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
    const expired = signLink({
      baseUrl: stack.server.url,
      action: 'calendar',
      keys: parseSigningKeys(SIGNING_KEY),
      now: Date.now() - 400 * 86_400_000,
      ttlSeconds: 365 * 86_400,
    });
    const answer = await send(expired);
    expect(answer.status).toBe(410);
    expect(await answer.text()).toContain('Subscribe again with the calendar link of the latest alert.');
  });
});
