import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FolderAccountSummaries } from '../../functions/local/folder-account-summaries';
import { runCli } from '../support/cli';
import {
  HOSTILE_NOW,
  type HostileMode,
  type HostileServer,
  ODD_NAMES,
  startHostileServer,
} from '../support/hostile-server';

const KEY = 'sk_live_h0stile_9f8e7d6c5b4a3928';

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function scanAgainst(
  mode: HostileMode,
  options: { args?: string[]; env?: NodeJS.ProcessEnv; key?: string } = {},
) {
  server = await startHostileServer({ mode, apiKey: KEY });
  const run = await runCli(['scan', '--json', '--dry-run', '--now', HOSTILE_NOW, ...(options.args ?? [])], {
    RESELLER_BASE_URL: server.url,
    RESELLER_API_KEY: options.key ?? KEY,
    ...options.env,
  });
  // Whatever happened, the key is never shown to the user.
  expect(run.stdout).not.toContain(KEY);
  expect(run.stderr).not.toContain(KEY);
  return { run, server };
}

/** Exit 1 with one line on stderr matching `line`, and no report on stdout. */
function expectFailure(run: { code: number; stdout: string; stderr: string }, line: RegExp) {
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(line);
}

/**
 * Exit 1 with one line on stderr matching `line`, after the report of what was read: marked
 * incomplete, with one unnamed problem saying the domain list moved (nothing judged to have left).
 */
function expectIncomplete(run: { code: number; stdout: string; stderr: string }, line: RegExp) {
  expect(run.code).toBe(1);
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(
    /^sentinel: the scan could not read the whole account \(the domain list (changed while it was read|holds more than its totals say) \(/,
  );
  expect(run.stderr).toMatch(line);
  const report = JSON.parse(run.stdout);
  expect(report.source.incomplete).toMatch(line);
  expect(report.problems.filter((p: { key: string | null }) => p.key === null)).toEqual([
    expect.objectContaining({ resource: 'domain', reason: report.source.incomplete }),
  ]);
  return report;
}

const domainRequests = (s: HostileServer) => s.requests.filter((r) => r.path === '/v2/domains');
const findingNames = (stdout: string) =>
  (JSON.parse(stdout) as { findings: Array<{ domain_name?: string; kind: string }> }).findings.map(
    (f) => `${f.domain_name} ${f.kind}`,
  );

describe('sentinel scan against a hostile reseller (issue 15)', () => {
  it('reads a faithful account whole (the control)', async () => {
    const { run } = await scanAgainst('healthy');
    expect(run.code).toBe(0);
    expect(findingNames(run.stdout)).toEqual(['d0250.nl quarantine']);
  });

  describe('1. a listing that moves while it is read (full mode: the read these lies aim at)', () => {
    it('does not say the account changed when a capped result window undercounts it in the default mode', async () => {
      const { run } = await scanAgainst('result-window-400');
      const report = expectIncomplete(run, /total_results \(200\) undercounts the account/);
      // The second read of the default mode reads in full, saying why: not a change it never saw.
      expect(report.source.fallback_reason).toMatch(/^the first read /);
      expect(report.source.fallback_reason).not.toMatch(/changed/);
    });

    it.each(['shrinking-listing', 'totals-change-after-page-1', 'growing-pages'] as const)(
      'never passes as complete in the default mode either (%s): reported as incomplete, exit 1',
      async (mode) => {
        const { run } = await scanAgainst(mode);
        expectIncomplete(run, /changed/);
      },
    );

    it.each(['result-window-400', 'result-window-empty'] as const)(
      'never passes as complete when a result window caps the totals at 200 of 300 (%s): the other end holds the rest',
      async (mode) => {
        const { run, server } = await scanAgainst(mode, { args: ['--mode', 'full'] });
        expectIncomplete(
          run,
          /domain list sorted the other way \(sort=-domain_name\) holds d0299\.nl and 99 more records, which the 2 pages page 1 promised did not: total_results \(200\) undercounts the account/,
        );
        // d0250.nl lies beyond the window: the other end's page, read and checked, alerts it.
        expect(findingNames(run.stdout)).toEqual(['d0250.nl quarantine']);
        // Said as what it is, with the advice that fits: no time budget reads past a capped window.
        expect(run.stderr).toMatch(
          /\(the domain list holds more than its totals say \(domain list sorted the other way/,
        );
        expect(run.stderr).toMatch(
          /lists fewer domains than the account holds \(a search back end capping its result window\): ask the reseller/,
        );
        expect(run.stderr).not.toMatch(/raise the time budget/);
        const otherEnd = domainRequests(server).filter((r) => r.query.get('sort') === '-domain_name');
        expect(otherEnd.length).toBeGreaterThanOrEqual(1);
      },
    );

    it('never passes as complete when the capped window ignores sort: status=quarantine counts the domain beyond it', async () => {
      const { run, server } = await scanAgainst('result-window-unsorted', { args: ['--mode', 'full'] });
      expectIncomplete(
        run,
        /domain list sorted the other way \(sort=-domain_name\) came back in the order of page 1, so its other end cannot be seen, and status=quarantine counts 1 domain where the read held 0: total_results \(200\) undercounts the account/,
      );
      const counted = domainRequests(server).filter((r) => r.query.get('status') === 'quarantine');
      expect(counted.length).toBeGreaterThanOrEqual(1);
    });

    it('finds the quarantined domain in the default mode when the account lost domains once', async () => {
      const { run } = await scanAgainst('loses-domains-after-page-1');
      expect(run.code).toBe(0);
      expect(findingNames(run.stdout)).toEqual(['d0250.nl quarantine']);
    });

    it('fails, after one more read, when later pages report fewer domains than page 1: what page 1 held is reported', async () => {
      const { run, server } = await scanAgainst('shrinking-listing', { args: ['--mode', 'full'] });
      const report = expectIncomplete(
        run,
        /total_results changed from 300 to 100 while domain list pages were read/,
      );
      // Page 1's hundred domains were read and checked; d0250.nl was on a page that came back empty.
      expect(report.stats.domains_scanned).toBe(100);
      expect(domainRequests(server).filter((r) => r.query.get('page') === '1')).toHaveLength(2);
    });

    it('fails when the totals change after page 1 on every read, after reporting every finding it read', async () => {
      const { run } = await scanAgainst('totals-change-after-page-1', { args: ['--mode', 'full'] });
      expectIncomplete(run, /total_results changed from 300 to 200 while domain list pages were read/);
      // The quarantined domain was still on a page read: it is alerted although the read moved.
      expect(findingNames(run.stdout)).toEqual(['d0250.nl quarantine']);
    });

    it('reads again from the start when the account lost domains once, and finds the quarantined one', async () => {
      const { run, server } = await scanAgainst('loses-domains-after-page-1', { args: ['--mode', 'full'] });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.stats.domains_scanned).toBe(200);
      expect(findingNames(run.stdout)).toEqual(['d0250.nl quarantine']);
      // page 1 twice as the read asks it (sorted by name), not counting the other end's page 1, nor
      // the count of status=quarantine asked when the other end comes back in page 1's order
      const pageOnes = domainRequests(server).filter(
        (r) => r.query.get('page') === '1' && !r.query.has('status'),
      );
      expect(pageOnes.filter((r) => r.query.get('sort') === 'domain_name')).toHaveLength(2);
    });

    it('delivers the alert of what it read and saves the state, then fails (--state, --alert-to FILE)', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'sentinel-moving-'));
      try {
        server = await startHostileServer({ mode: 'totals-change-after-page-1', apiKey: KEY });
        const env = { RESELLER_BASE_URL: server.url, RESELLER_API_KEY: KEY };
        const args = ['scan', '--now', HOSTILE_NOW, '--state', join(dir, 'state.json')];
        const run = await runCli([...args, '--alert-to', join(dir, 'alert.txt')], env);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/^sentinel: the scan could not read the whole account \(the domain list/m);
        const alert = await readFile(join(dir, 'alert.txt'), 'utf8');
        expect(alert).toContain('INCOMPLETE: the scan could not read the whole account.');
        expect(alert).toContain('d0250.nl');
        expect(alert).toMatch(/- domain \(no name\) on page 2: the domain list changed while it was read/);
        expect(run.stdout).toContain('state saved to');
        // Saved: the next run has nothing new to say of the quarantine it announced.
        const again = await runCli([...args, '--alert-to', 'stdout'], env);
        expect(again.code).toBe(1);
        expect(again.stderr).toContain('no alert published');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('keeps the overview summary of an account of several whose listing moved, then fails it (--accounts)', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'sentinel-moving-accounts-'));
      try {
        server = await startHostileServer({ mode: 'totals-change-after-page-1', apiKey: KEY });
        const file = join(dir, 'accounts.json');
        await writeFile(file, JSON.stringify({ accounts: [{ name: 'moving', apiKeyEnv: 'MOVING_KEY' }] }));
        const run = await runCli(
          ['scan', '--accounts', file, '--dry-run', '--now', HOSTILE_NOW, '--mode', 'full'],
          { RESELLER_BASE_URL: server.url, MOVING_KEY: KEY, REPORT_DIR: join(dir, 'reports') },
        );
        expect(run.code).toBe(1);
        expect(run.stdout + run.stderr).toMatch(
          /the scan could not read the whole account \(the domain list/,
        );
        const summary = await new FolderAccountSummaries(join(dir, 'reports')).get('moving');
        expect(summary).toMatchObject({ account: 'moving', incomplete: true });
        expect(JSON.stringify(summary)).toMatch(/"critical":1/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('stops near the page count page 1 promised when every page reports one more', async () => {
      const { run, server } = await scanAgainst('growing-pages', { args: ['--mode', 'full'] });
      expectIncomplete(run, /total_pages changed from 3 to 4 while domain list pages were read/);
      // The first read stopped within page 1's promise of 3 pages; the second read on, to 3 + 2 at most.
      expect(domainRequests(server).length).toBeLessThanOrEqual(3 + 5);
      expect(findingNames(run.stdout)).toEqual(['d0250.nl quarantine']);
    });
  });

  it('reads records with CR/LF, markup and Unicode in their names whole: every odd quarantined name is a finding', async () => {
    const { run } = await scanAgainst('odd-names');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.stats.domains_scanned).toBe(300 + ODD_NAMES.length);
    expect(report.summary.critical).toBe(1 + ODD_NAMES.length);
  });

  describe('2 and 3. odd names with restore links on (as in the deployed stack)', () => {
    const links = {
      LINK_BASE_URL: 'https://restore.example/prod',
      LINK_SIGNING_KEY: 'hostile-link-signing-key-0123456789abcdef',
    };

    it('still alerts about every domain, with a link or "no restore link" for each odd name, exit 0', async () => {
      const { run } = await scanAgainst('odd-names', { env: links });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout) as {
        findings: Array<{
          domain_name?: string;
          kind: string;
          restore_url?: string;
          restore_unavailable?: string;
        }>;
      };
      const quarantined = report.findings.filter((f) => f.kind === 'quarantine');
      expect(quarantined).toHaveLength(1 + ODD_NAMES.length);
      for (const f of quarantined) {
        expect(f.restore_url ?? f.restore_unavailable).toMatch(
          /^(https:\/\/restore\.example\/prod\/restore\/[a-z0-9.-]+\?exp=\d+&kid=\w+&sig=[\w-]+|no restore link: .+; restore it in the reseller's control panel)$/,
        );
      }
    });

    it('shows the digest and SMS without a forged line or a hidden character', async () => {
      server = await startHostileServer({ mode: 'odd-names', apiKey: KEY });
      const run = await runCli(['scan', '--dry-run', '--now', HOSTILE_NOW], {
        RESELLER_BASE_URL: server.url,
        RESELLER_API_KEY: KEY,
        ...links,
      });
      expect(run.code).toBe(0);
      const lines = run.stdout.split('\n');
      expect(lines.filter((l) => l.startsWith('- paypal.com'))).toEqual([]);
      expect(lines.filter((l) => l.startsWith('Restore: http://phish'))).toEqual([]);
      expect(lines.filter((l) => /[\p{Cc}\u202e]/u.test(l))).toEqual([]); // no control or bidi character on any line
      expect(run.stdout).toContain('- xn--pypal-4ve.com (p\u0430ypal.com): in quarantine');
      expect(run.stdout).toContain('<script>alert(1)</script>.nl: in quarantine'); // text, not markup, in a plain-text mail
    });
  });

  describe('5. the key', () => {
    it('refuses a key holding a CR before any request, without printing it', async () => {
      const [head, tail] = [KEY.slice(0, 16), KEY.slice(16)];
      const { run, server } = await scanAgainst('healthy', { key: `${head}\r${tail}` });
      expect(run.code).toBe(2);
      // The configuration layer names the variable; the client's own check is the one behind it.
      expect(run.stderr).toMatch(
        /(RESELLER_API_KEY|the reseller API key) holds a (carriage return|control character)/,
      );
      expect(run.stderr).not.toContain(head);
      expect(run.stderr).not.toContain(tail);
      expect(server.requests).toHaveLength(0);
    });

    it('never prints the key a server echoes in the records of a list it answers 200', async () => {
      const { run } = await scanAgainst('echo-key-in-records');
      // scanAgainst asserts the key is in neither stdout nor stderr; the scan still reads the account.
      expect(run.code).toBe(0);
      expect(findingNames(run.stdout)).toEqual(['[redacted].nl quarantine', 'd0250.nl quarantine']);
    });

    it('never prints the key a server echoes in its body and headers', async () => {
      const { run } = await scanAgainst('echo-key');
      expectFailure(run, /rejected domain list page 1 .*\(HTTP 400\).*Bearer \[redacted\]/);
    });
  });

  describe('6. unbounded waits and bodies', () => {
    it('fails at once when Retry-After does not fit in the time budget', async () => {
      const started = Date.now();
      const { run, server } = await scanAgainst('retry-after-day'); // the default time budget of 900 s
      expectFailure(
        run,
        /the reseller asked to wait 86400 s \(Retry-After\) before domain list page 1 but the scan's time budget has (899|900) s left/,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(domainRequests(server)).toHaveLength(1);
    });

    it('aborts a 64 MiB body at the 32 MiB limit', async () => {
      const { run } = await scanAgainst('huge-body');
      expectFailure(
        run,
        /answer to domain list page 1 ran past 32 MiB( together with the other answers being read at once)?, more than the limit of 32 MiB \(maxResponseBytes\)/,
      );
    });

    it('fails before reading a body whose Content-Length is over the limit', async () => {
      const { run } = await scanAgainst('content-length-lie');
      expectFailure(run, /declares 10240 MiB \(Content-Length\), more than the limit of 32 MiB/);
    });

    it('gives up on a server that never answers, after the per-request timeout and retries', async () => {
      const { run } = await scanAgainst('hang', { env: { RESELLER_TIMEOUT_MS: '100' } });
      expectFailure(run, /no answer within 100 ms for domain list page 1/);
    });
  });

  describe('7. smaller ones', () => {
    it('reads status values whatever their case, and a string where an array is documented', async () => {
      const upper = await scanAgainst('upper-case-status');
      expect(upper.run.code).toBe(0);
      expect(findingNames(upper.run.stdout)).toEqual(
        expect.arrayContaining(['upper.nl quarantine', 'title.nl quarantine']),
      );
      await server?.close();
      const single = await scanAgainst('string-status');
      expect(findingNames(single.run.stdout)).toEqual(expect.arrayContaining(['single.nl quarantine']));
    });

    it('reports two names differing only in case as one problem record, not a changed account', async () => {
      const { run } = await scanAgainst('case-duplicates');
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.problems).toEqual([
        expect.objectContaining({
          key: 'shop.nl',
          reason: expect.stringContaining(
            'duplicate domain name differing only in case: "Shop.nl" and "shop.nl"',
          ),
        }),
      ]);
      expect(findingNames(run.stdout)).toEqual(expect.arrayContaining(['shop.nl quarantine']));
    });

    it('says 401 refused the key, and 403 that the key lacks access to that resource', async () => {
      const unauthorized = await scanAgainst('unauthorized');
      expectFailure(unauthorized.run, /refused the API key \(HTTP 401\)/);
      await server?.close();
      // A key that may read domains but not contacts still gets every domain alert, with the
      // contact list named as a problem (registrants unnamed, validations unchecked).
      const forbidden = await scanAgainst('forbidden-contacts');
      expect(forbidden.run.code).toBe(0);
      const report = JSON.parse(forbidden.run.stdout);
      expect(report.stats.domains_scanned).toBe(300);
      expect(report.summary.critical).toBeGreaterThan(0);
      expect(report.problems).toEqual([
        {
          resource: 'contact',
          key: null,
          page: 0,
          reason: expect.stringMatching(
            /^the contact list could not be read \(.*accepted the API key but it lacks access to contact list page 1 .*\(HTTP 403\).*\); registrants are not named and contacts pending validation are not checked$/,
          ),
        },
      ]);
    });

    for (const status of [302, 307] as const) {
      it(`fails on a ${status} to another origin, which never hears from the scan`, async () => {
        const { run, server } = await scanAgainst(`redirect-${status}`);
        expectFailure(
          run,
          new RegExp(
            `with a redirect \\(HTTP ${status}\\) to ${server.otherOrigin.url.replace(/\./g, '\\.')};`,
          ),
        );
        expect(server.otherOrigin.requests).toHaveLength(0);
      });
    }
  });
});
