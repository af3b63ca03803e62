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
    expect(run.stdout).toMatch(/ {2}Restore: https:\/\/restore\.example\/prod\/restore\/normal\.nl\?/);
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
      '- fake.nl\\u000a- fake-bank.com: in quarantine since 1 nov 2026\\u000a  restore: http://phish.example/restore: in quarantine',
    );
    expect(run.stdout).toContain(
      'Registrant: Anna\\u000d\\u000aRestore: http://phish.example/x (Bloem\\u200b BV)',
    );
    expect(run.stdout).toContain('- bank\\u202egro.nl: in quarantine');
    expect(run.stdout).not.toMatch(/[\u202e\u200b\r]/);
  });

  it('keeps the SMS to one line of GSM-7', async () => {
    const run = await scanOf(domains, contacts, false);
    const sms = run.stdout.slice(run.stdout.indexOf('--- SMS')).split('\n');
    expect(sms[1]).toMatch(/^domain-sentinel> 4 critical: .*fake\.nl\?- fake-bank\.com/);
    expect(sms.slice(2).join('').trim()).toBe('');
  });

  it('shows a confusable name as punycode first, the Unicode beside it', async () => {
    const run = await scanOf([quarantinedRecord('p\u0430ypal.com')], [], false);
    expect(run.stdout).toContain('- xn--pypal-4ve.com (p\u0430ypal.com): in quarantine');
    expect(run.stdout).toContain('domain-sentinel> 1 critical: xn--pypal-4ve.com quarantine');
  });
});
