import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import { runCli } from '../support/cli';
import { API_KEY, confirmedPost, SIGNING_KEY, startRestoreStack } from '../support/restore-env';

let stack: Awaited<ReturnType<typeof startRestoreStack>>;
const keys = parseSigningKeys(SIGNING_KEY);
const link = (domain: string, now = Date.now()) =>
  signRestoreLink({ baseUrl: stack.server.url, domain, keys, now });
const restoreCalls = () => stack.sim.restoreCalls.length;

beforeAll(async () => {
  stack = await startRestoreStack({ domains: 400 });
  expect(stack.quarantined.length).toBeGreaterThanOrEqual(8); // each test takes its own domains
});
afterAll(() => stack.close());

describe('restore flow: sentinel serve + simulator', () => {
  it('confirms on GET and HEAD without restoring, restores on POST, and answers 409 to a second POST', async () => {
    const domain = stack.quarantined[0] as string;
    // The link as a scan report carries it.
    const scan = await runCli(['scan', '--json', '--dry-run'], stack.env);
    const url = JSON.parse(scan.stdout).findings.find(
      (f: { domain_name: string }) => f.domain_name === domain,
    ).restore_url;
    expect(url).toContain(`${stack.server.url}/restore/${domain}?`);

    const get = await fetch(url);
    expect(get.status).toBe(200);
    const html = await get.text();
    expect(html).toContain(`Restore <code>${domain}</code> from quarantine?`);
    expect(html).toMatch(
      /<form class="confirm" method="post" action="\?exp=\d+&#38;kid=[0-9a-f]{8}&#38;sig=[\w-]+"><label for="confirm_domain">/,
    );
    expect(html).not.toMatch(/<script/i);
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(stack.sim.domain(domain)?.status).toEqual(['quarantine']);
    expect(restoreCalls()).toBe(0);

    // The form as it stands, untyped (what a robot that submits forms sends): refused, nothing called.
    const robot = await fetch(url, { method: 'POST' });
    expect(robot.status).toBe(422);
    expect(stack.sim.restoreCalls).toEqual([]);

    const post = await fetch(url, confirmedPost(domain));
    expect(post.status).toBe(200);
    expect(await post.text()).toContain(`${domain} restored`);
    expect(stack.sim.domain(domain)?.status).toEqual(['registered']);
    expect(stack.sim.restoreCalls).toEqual([domain]);

    const again = await fetch(url, confirmedPost(domain, { Accept: 'application/json' }));
    expect(again.status).toBe(409);
    // The replay finds the restore's claim on the domain and calls nothing.
    expect(await again.json()).toMatchObject({ outcome: 'restore_claimed' });
    expect(stack.sim.restoreCalls).toEqual([domain]);

    const after = await fetch(url);
    expect(after.status).toBe(200);
    const page = await after.text();
    expect(page).toContain('is not in quarantine');
    expect(page).not.toContain('<form');
  });

  it('sends the security headers on every answer', async () => {
    for (const res of [
      await fetch(link(stack.quarantined[1] as string)),
      await fetch(`${stack.server.url}/restore/Bad..name`),
    ]) {
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-robots-tag')).toContain('noindex');
      expect(res.headers.get('content-security-policy')).toMatch(
        /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self'; frame-ancestors 'none'/,
      );
    }
  });

  it('rejects tampered, misdirected, expired and malformed links without calling the reseller', async () => {
    const [a, b] = stack.quarantined.slice(6, 8) as [string, string];
    const requestsBefore = stack.sim.requests.length;
    const good = new URL(link(a));
    const sig = good.searchParams.get('sig') as string;
    const tampered = new URL(good);
    tampered.searchParams.set('sig', `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`);
    const misdirected = new URL(good);
    misdirected.pathname = `/restore/${b}`;
    const expired = link(a, Date.now() - 8 * 86_400_000);
    const cases: Array<[string, number]> = [
      [tampered.href, 403],
      [misdirected.href, 403],
      [expired, 410],
      [`${stack.server.url}/restore/..%2F..%2Fetc${good.search}`, 400],
      [`${stack.server.url}/restore/${a.toUpperCase()}${good.search}`, 400],
      [`${stack.server.url}/restore/${'a'.repeat(64)}.nl${good.search}`, 400],
      [`${stack.server.url}/restore/${a}`, 403],
    ];
    for (const [url, status] of cases) {
      for (const method of ['GET', 'POST']) {
        const res = await fetch(url, { method });
        expect({ url, method, status: res.status }).toEqual({ url, method, status });
      }
    }
    expect(stack.sim.requests.length).toBe(requestsBefore);
    expect(stack.sim.domain(a)?.status).toEqual(['quarantine']);
  });

  it('answers 502 when the reseller cannot be reached', async () => {
    const domain = stack.quarantined[2] as string;
    stack.sim.injectFault({
      fault: { kind: 'status', status: 503 },
      match: (r) => r.method === 'POST',
      times: 1,
    });
    const res = await fetch(link(domain), confirmedPost(domain, { Accept: 'application/json' }));
    expect(res.status).toBe(502);
    expect((await res.json()).outcome).toBe('reseller_unreachable');
    expect(stack.sim.domain(domain)?.status).toEqual(['quarantine']);
  });

  it('logs one structured line per attempt, with no secret and no signature', async () => {
    const url = link(stack.quarantined[3] as string);
    const before = stack.logs.length;
    await fetch(url, { headers: { 'User-Agent': 'MailScanner/1.0' } });
    const entry = stack.logs[before];
    expect(stack.logs.length).toBe(before + 1);
    expect(entry).toMatchObject({
      domain: stack.quarantined[3],
      method: 'GET',
      outcome: 'confirm',
      status: 200,
      userAgent: 'MailScanner/1.0',
    });
    expect(entry?.sourceIp).toMatch(/127\.0\.0\.1/);
    const everything = JSON.stringify(stack.logs);
    const sig = new URL(url).searchParams.get('sig') as string;
    for (const secret of [API_KEY, SIGNING_KEY, sig]) expect(everything).not.toContain(secret);
  });

  it('prints a signed link with `sentinel link` that the server accepts', async () => {
    const domain = stack.quarantined[4] as string;
    const run = await runCli(['link', domain], stack.env);
    expect(run.code).toBe(0);
    const res = await fetch(run.stdout.trim());
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(`Restore <code>${domain}</code>`);
    expect((await runCli(['link', 'Not_A_Domain'], stack.env)).code).toBe(2);
  });

  it('restores at once with `sentinel restore --yes` (and --consent for .nl), and refuses to run unasked without it', async () => {
    const domain = stack.quarantined.slice(5).find((d) => !d.endsWith('.nl')) as string;
    const unasked = await runCli(['restore', domain], stack.env);
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain('pass --yes');
    const declined = await runCli(['restore', domain], stack.env, { ask: async () => 'n' });
    expect(declined.stdout).toContain(`not restored: the name typed is not ${domain}\n`);
    // The person answered and nothing was sent: the command completed (docs/cli.md, Exit status).
    expect(declined.code).toBe(0);
    expect(declined.stdout).toContain('A restore is a paid action');
    expect(stack.sim.domain(domain)?.status).toEqual(['quarantine']);
    const run = await runCli(['restore', domain, '--yes'], stack.env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`restored ${domain.replaceAll('.', '\\.')}\n$`));
    expect(stack.sim.domain(domain)?.status).toEqual(['registered']);

    const nl = stack.quarantined.slice(5).find((d) => d.endsWith('.nl')) as string;
    const noConsent = await runCli(['restore', nl, '--yes'], stack.env);
    expect(noConsent.code).toBe(2);
    expect(noConsent.stderr).toContain('only with the registrant’s consent; pass --consent with --yes');
    expect(stack.sim.domain(nl)?.status).toEqual(['quarantine']);
    const state = join(mkdtempSync(join(tmpdir(), 'restore-flow-')), 'state.json');
    const consented = await runCli(['restore', nl, '--yes', '--consent', '--state', state], stack.env);
    expect(consented.code).toBe(0);
    expect(stack.sim.domain(nl)?.status).toEqual(['registered']);
    // The attempt is kept in the audit trail of the state it was given, as a link's would be.
    const audit = JSON.parse((await runCli(['audit', '--json', '--state', state], stack.env)).stdout);
    expect(audit.entries).toEqual([
      expect.objectContaining({ domain: nl, outcome: 'restored', via: 'cli', key_id: null, client_ip: null }),
    ]);
  });

  it('says a domain is not in quarantine before it asks for consent or flags (tulip-4.nl --yes)', async () => {
    // A .nl domain of the account that is registered, not in quarantine (restored already, say).
    const registered = 'tulip-restored.nl';
    const record = stack.sim.domain(stack.quarantined[0] as string);
    stack.sim.updateDomain(registered, {
      ...record,
      domain_name: registered,
      sld: 'tulip-restored',
      tld: 'nl',
      status: ['registered'],
    });
    const asked: string[] = [];
    for (const argv of [
      ['restore', registered, '--yes'],
      ['restore', registered],
    ]) {
      const run = await runCli(argv, stack.env, {
        ask: async (q) => {
          asked.push(q);
          return registered;
        },
      });
      expect(run.code, argv.join(' ')).toBe(1);
      expect(run.stderr).toMatch(
        new RegExp(`^sentinel: ${registered.replaceAll('.', '\\.')} is not in quarantine`),
      );
      expect(run.stderr).not.toContain('consent');
    }
    expect(asked).toEqual([]);
  });

  it('says nothing was restored, and exits 1, when the input ends (Ctrl-D) at either question', async () => {
    // Left in quarantine: the next test restores the second .nl name of this slice.
    const nl = stack.quarantined.slice(5).filter((d) => d.endsWith('.nl'))[1] as string;
    const calls = restoreCalls();
    // undefined: what the terminal's asker answers when the input ends (bin/ask.ts).
    for (const answers of [[undefined], [nl, undefined]]) {
      const queue = [...answers];
      const run = await runCli(['restore', nl], stack.env, { ask: async () => queue.shift() });
      expect(run.code, String(answers)).toBe(1);
      expect(run.stderr).toBe(
        `sentinel: ${nl} was not restored: the input ended (Ctrl-D) before an answer; nothing was sent\n`,
      );
    }
    expect(restoreCalls()).toBe(calls);
    expect(stack.sim.domain(nl)?.status).toEqual(['quarantine']);
  });

  it('asks for the name typed and, for .nl, the registrant’s consent before restoring from the command line', async () => {
    const nl = stack.quarantined.slice(5).filter((d) => d.endsWith('.nl'))[1] as string;
    const questions: string[] = [];
    const answers = [nl.toUpperCase(), 'n', nl, 'yes'];
    const ask = async (question: string) => {
      questions.push(question);
      return answers.shift() ?? '';
    };
    const refused = await runCli(['restore', nl], stack.env, { ask });
    expect(refused.stdout).toContain('not restored: the registrant’s consent was not confirmed');
    expect(stack.sim.domain(nl)?.status).toEqual(['quarantine']);
    const run = await runCli(['restore', nl], stack.env, { ask });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/restore by \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC \(\d+ days left\)/);
    expect(questions[0]).toMatch(/^Type the domain name to restore it through /);
    expect(questions[1]).toMatch(/^Did the registrant .* agree to this restore\?/);
    expect(stack.sim.domain(nl)?.status).toEqual(['registered']);
  });
});
