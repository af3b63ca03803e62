import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';
import { quarantinedRecord, startFixedReseller } from '../support/fixed-reseller';

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'sk_live_hostile_records_41b2';
const SIGNING_KEY = 'hostile-records-signing-key-0123456789abcdef';
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function scanOf(
  domains: Array<Record<string, unknown>>,
  contacts: Array<Record<string, unknown>> = [],
  json = true,
) {
  const server = await startFixedReseller({ apiKey: KEY, domains, contacts });
  close = server.close;
  return runCli(['scan', ...(json ? ['--json'] : []), '--dry-run', '--now', NOW], {
    RESELLER_BASE_URL: server.url,
    RESELLER_API_KEY: KEY,
    LINK_BASE_URL: 'https://restore.example/prod',
    LINK_SIGNING_KEY: SIGNING_KEY,
  });
}

describe('odd quarantined names never stop the alert about the others', () => {
  const longLabel = `${'a'.repeat(64)}.nl`;
  const records = [
    quarantinedRecord('ørsted.dk'),
    quarantinedRecord('Example.NL.'),
    quarantinedRecord(longLabel),
    quarantinedRecord('<b>bold</b>.nl'),
    quarantinedRecord('normal.nl'),
  ];

  it('signs what can be normalised, and says "no restore link" for the rest, with exit 0', async () => {
    const run = await scanOf(records);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    const byName = new Map(report.findings.map((f: { domain_name: string }) => [f.domain_name, f]));
    expect(report.summary.critical).toBe(5);
    const link = (name: string) => (byName.get(name) as { restore_url?: string } | undefined)?.restore_url;
    expect(link('ørsted.dk')).toMatch(/^https:\/\/restore\.example\/prod\/restore\/xn--rsted-uua\.dk\?exp=/);
    expect(link('example.nl.')).toMatch(/\/restore\/example\.nl\?exp=/);
    expect(link('normal.nl')).toMatch(/\/restore\/normal\.nl\?exp=/);
    for (const odd of [longLabel, '<b>bold</b>.nl']) {
      const finding = byName.get(odd) as {
        severity: string;
        restore_url?: string;
        restore_unavailable?: string;
      };
      expect(finding.severity).toBe('critical');
      expect(finding.restore_url).toBeUndefined();
      expect(finding.restore_unavailable).toMatch(
        /^no restore link: invalid label .*; restore it in the reseller's control panel$/,
      );
    }
  });

  it('says so in the digest, beside the other domains', async () => {
    const run = await scanOf(records, [], false);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`- ${longLabel}: in quarantine`);
    expect(run.stdout).toContain('  no restore link: invalid label');
    expect(run.stdout).toContain('- xn--rsted-uua.dk (ørsted.dk): in quarantine');
    // Its one link: the finding's page, which offers the restore.
    expect(run.stdout).toMatch(/ {2}Act: https:\/\/restore\.example\/prod\/finding\/normal\.nl\?/);
  });
});

describe('text from the API cannot forge lines or pass for another name', () => {
  const forged =
    'fake.nl\n- fake-bank.com: in quarantine since 1 Nov 2026\n  Restore: http://phish.example/restore';
  const domains = [
    quarantinedRecord(forged),
    quarantinedRecord('p\u0430ypal.com'), // Cyrillic а
    quarantinedRecord('bank\u202egro.nl'),
    quarantinedRecord('good.nl', { registrant_handle: 'C1' }),
  ];
  const contacts = [
    {
      handle: 'C1',
      name: 'Anna\r\nRestore: http://phish.example/x',
      company_name: 'Bloem\u200b BV',
      email: 'anna@example.nl',
      status: ['ok'],
    },
  ];

  it('escapes controls and invisible characters in the digest and SMS', async () => {
    const run = await scanOf(domains, contacts, false);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    const digest = lines.slice(0, lines.indexOf('--- SMS (critical only, as a phone receives it) ---'));
    expect(digest.some((l) => l.startsWith('- fake-bank.com'))).toBe(false);
    expect(digest.some((l) => /^\s*Restore: http:\/\/phish/.test(l))).toBe(false);
    expect(run.stdout).toContain(
      '- fake[.]nl\\u000a- fake-bank[.]com: in quarantine since 1 nov 2026\\u000a  restore: http[:]//phish[.]example/restore: in quarantine',
    );
    // A URL in a registrant's name, or in a name that is no domain name, is no link in an e-mail.
    expect(run.stdout).toContain(
      'Registrant: Anna\\u000d\\u000aRestore: http[:]//phish[.]example/x (Bloem\\u200b BV)',
    );
    expect(digest.join('\n')).not.toMatch(/https?:\/\/phish/);
    expect(run.stdout).toContain('- bank\\u202egro[.]nl: in quarantine');
    expect(run.stdout).not.toMatch(/[\u202e\u200b\r]/);
  });

  it('keeps the SMS to one line of GSM-7', async () => {
    const run = await scanOf(domains, contacts, false);
    const sms = run.stdout.slice(run.stdout.indexOf('--- SMS')).split('\n');
    // Quarantines come first by days left to restore; the bidi override in the second name is a '?'.
    expect(sms[1]).toMatch(
      /^domain-sentinel> 4 critical: xn--pypal-4ve\.com restore-by PASSED; bank\?gro\.nl /,
    );
    expect(sms.slice(2).join('').trim()).toBe('');
  });

  it('shows a confusable name as punycode first, the Unicode beside it', async () => {
    const run = await scanOf([quarantinedRecord('p\u0430ypal.com')], [], false);
    expect(run.stdout).toContain('- xn--pypal-4ve.com (p\u0430ypal.com): in quarantine');
    // Deleted 21 Oct: .com's 30-day redemption period ended 20 Nov.
    expect(run.stdout).toContain('domain-sentinel> 1 critical: xn--pypal-4ve.com restore-by PASSED');
  });
});

describe('what a record says is never lost because another field of it is odd', () => {
  it('keeps a quarantined domain with an unreadable date critical: in the digest, the SMS, the severity and --fail-on', async () => {
    const domains = [
      { ...quarantinedRecord('odd-date.nl'), date_expiry: '2026-11-25' },
      { ...quarantinedRecord('no-date.nl'), date_expiry: undefined },
      {
        domain_name: 'fine.nl',
        status: ['registered'],
        date_expiry: '2027-06-01T00:00:00Z',
        auto_renew: true,
      },
    ];
    const report = JSON.parse((await scanOf(domains)).stdout);
    expect(report.summary.critical).toBe(0);
    expect(report.problems.map((p: { key: string; severity?: string }) => [p.key, p.severity])).toEqual([
      ['odd-date.nl', 'critical'],
      ['no-date.nl', 'critical'],
    ]);
    const digest = await scanOf(domains, [], false);
    expect(digest.stdout.split('\n')[0]).toBe('domain-sentinel: 2 critical, 0 warning, 2 unreadable records');
    expect(digest.stdout).toContain(
      'CRITICAL (2)\n- odd-date.nl: says it is in quarantine, but its record could not be read',
    );
    expect(digest.stdout).not.toContain('Nothing critical');
    expect(digest.stdout).toContain(
      'domain-sentinel> 2 critical: odd-date.nl quarantine?; no-date.nl quarantine?',
    );
    const failOn = await runCli(['scan', '--json', '--dry-run', '--now', NOW, '--fail-on', 'critical'], {
      RESELLER_BASE_URL: (await startFixedReseller({ apiKey: KEY, domains })).url,
      RESELLER_API_KEY: KEY,
    });
    expect(failOn.code).toBe(3);
  });

  it('reads status values trimmed, split on commas and in any case, and reports one the API does not document', async () => {
    const domains = [
      quarantinedRecord('spaced.nl', { status: [' Quarantine '] }),
      quarantinedRecord('joined.nl', { status: 'registered,quarantine' }),
      quarantinedRecord('pending.nl', {
        status: ['pending_delete'],
        date_expiry: '2027-06-01T00:00:00Z',
        auto_renew: true,
      }),
    ];
    const report = JSON.parse((await scanOf(domains)).stdout);
    expect(
      report.findings.map((f: { domain_name: string; kind: string }) => `${f.domain_name} ${f.kind}`).sort(),
    ).toEqual(['joined.nl quarantine', 'spaced.nl quarantine']);
    expect(report.problems).toEqual([
      {
        resource: 'domain',
        key: 'pending.nl',
        page: 1,
        reason: expect.stringMatching(/^status "pending_delete" is not one the API documents/),
        dates_only: true,
      },
    ]);
  });

  it('reports a second record under the same name with other content, critical when it says quarantine', async () => {
    const domains = [
      {
        domain_name: 'twice.nl',
        status: ['registered'],
        date_expiry: '2027-06-01T00:00:00Z',
        auto_renew: true,
      },
      quarantinedRecord('twice.nl'),
    ];
    const report = JSON.parse((await scanOf(domains)).stdout);
    expect(report.problems).toEqual([
      {
        resource: 'domain',
        key: 'twice.nl',
        page: 1,
        reason: 'a second domain record named "twice.nl" with different content; only the first was checked',
        severity: 'critical',
      },
    ]);
  });

  it('says so when the account lists no domains at all (the wrong key or environment, or everything left)', async () => {
    const run = await scanOf([], [], false);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('the account lists no domains at all');
    expect(run.stdout).not.toMatch(/^Nothing critical or urgent\.$/m);
  });

  it('does not date a quarantine from the expiry when the record does not say when it began', async () => {
    const run = await scanOf(
      [quarantinedRecord('early.nl', { date_deleted: null, date_expiry: '2027-11-01T00:00:00Z' })],
      [],
      false,
    );
    expect(run.stdout).toContain('- early.nl: in quarantine (since when not given; expiry date 1 Nov 2027)');
  });

  it('gives no restore deadline from a date_deleted in the future: unknown, never more days than the TLD allows', async () => {
    const records = [quarantinedRecord('future-deleted.nl', { date_deleted: '2027-11-22T00:00:00Z' })];
    const json = await scanOf(records);
    expect(json.code, json.stderr).toBe(0);
    const [finding] = JSON.parse(json.stdout).findings;
    expect(finding).toMatchObject({
      domain_name: 'future-deleted.nl',
      kind: 'quarantine',
      severity: 'critical',
      restore_by: null,
      days_to_restore: null,
      restore_deadline_unknown: expect.stringMatching(/^date_deleted is in the future/),
    });
    const digest = await scanOf(records, [], false);
    expect(digest.stdout).toContain(
      '- future-deleted.nl: in quarantine (the record dates it from 22 Nov 2027, still to come); restore deadline unknown (date_deleted is in the future',
    );
    expect(digest.stdout).not.toMatch(/days left/);
  });
});

describe('a filtered read must list what its proof counted', () => {
  it('reads again, in full, when the searches count domains the reads then do not list', async () => {
    const { startSimulator } = await import('../../functions/simulator/server');
    const { generatePortfolio } = await import('../../functions/simulator/portfolio');
    const full = generatePortfolio({ domains: 60, seed: 4, now: Date.parse(NOW) });
    // Without the malformed records no search can select, so that the proof holds.
    const domains = full.domains.filter((d) => !full.truth.problems.includes(String(d.domain_name)));
    const sim = await startSimulator({ portfolio: { ...full, domains }, apiKey: KEY });
    // Honest counts (per_page=1, and page 1 of the whole account, which measures the page size), but
    // every read of a part of the proof comes back empty.
    const { createServer } = await import('node:http');
    const proxy = createServer(async (req, res) => {
      const url = new URL(req.url ?? '/', sim.url);
      const answer = await fetch(url, { headers: { authorization: req.headers.authorization ?? '' } });
      let body = await answer.text();
      if (
        url.pathname === '/v2/domains' &&
        url.searchParams.get('per_page') !== '1' &&
        url.searchParams.has('date_expiry') &&
        answer.status === 200
      ) {
        const parsed = JSON.parse(body);
        body = JSON.stringify({
          data: [],
          pagination: { ...parsed.pagination, total_pages: 0, total_results: 0 },
        });
      }
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    close = async () => {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
      await sim.close();
    };
    const port = (proxy.address() as { port: number }).port;
    const run = await runCli(['scan', '--json', '--dry-run', '--now', NOW, '--mode', 'filtered'], {
      RESELLER_BASE_URL: `http://127.0.0.1:${port}`,
      RESELLER_API_KEY: KEY,
    });
    // The second read is a full one, which proves itself by its own totals: the whole account, read.
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.source).toMatchObject({
      mode: 'filtered',
      read: 'full',
      fallback_reason:
        'the first read could not be proven whole, as its pages did not match its totals (a listing that moved, or totals that fall short of the account)',
    });
    expect(report.source.incomplete).toBeUndefined();
    expect(report.stats.domains_scanned).toBe(domains.length);
  });
});
