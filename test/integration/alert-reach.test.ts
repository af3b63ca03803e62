import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import { displayDomain } from '../../functions/core/base/text';
import { generatePortfolio, type PortfolioProfile } from '../../functions/simulator/portfolio';
import { startSimulator } from '../../functions/simulator/server';
import { findingKeys, runCli, startCliServer } from '../support/cli';
import { type SnsEnvelope, startSnsEmulator } from '../support/sns-emulator';

/**
 * What a reader and a program get from one alert at 1 000 and 10 000 domains, through fauxqs (real
 * SDK clients) with `sentinel serve` holding the links: the e-mail names what matters, the JSON is
 * in the message once, and a queue subscriber fetches the complete report through the message's
 * own link. Sizes are measured as SNS counts them, not as fauxqs lets them through.
 */

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'alert-reach-key-9f2e';
const SIGNING_KEY = 'alert-reach-signing-key-0123456789abcdef';

let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
beforeAll(async () => {
  emulator = await startSnsEmulator();
});
afterAll(() => emulator.close());

/** The bytes SNS counts for the publish that made this delivery: message, subject, attributes. */
function publishedBytes(envelope: SnsEnvelope): number {
  let n = Buffer.byteLength(envelope.Message) + Buffer.byteLength(envelope.Subject ?? '');
  for (const [name, a] of Object.entries(envelope.MessageAttributes))
    n += Buffer.byteLength(name) + Buffer.byteLength(a.Type) + Buffer.byteLength(a.Value);
  return n;
}

/** Scans a simulated account of `domains` into SNS, with serve holding the links; returns what the queue got. */
async function alertOf(profile: PortfolioProfile, domains: number) {
  const portfolio = generatePortfolio({ profile, domains, now: Date.parse(NOW) });
  const sim = await startSimulator({ portfolio, apiKey: KEY });
  const dir = mkdtempSync(join(tmpdir(), 'sentinel-reach-'));
  const env = {
    RESELLER_BASE_URL: sim.url,
    RESELLER_API_KEY: KEY,
    LINK_SIGNING_KEY: SIGNING_KEY,
    REPORT_DIR: join(dir, 'reports'),
  };
  const serve = await startCliServer(['serve', '--port', '0'], env);
  const topicArn = await emulator.topic(`reach-${profile}-${domains}`);
  const queue = await emulator.queueSubscribedTo(topicArn, `reach-${profile}-${domains}`);
  try {
    const run = await runCli(
      ['scan', '--now', NOW],
      { ...env, LINK_BASE_URL: serve.url, ALERT_TOPIC_ARN: topicArn },
      { sns: emulator.snsClient },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [envelope, ...more] = await emulator.drain(queue);
    expect(more).toHaveLength(0);
    return { portfolio, envelope: envelope as SnsEnvelope, serve, close: cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
  async function cleanup() {
    await serve.stop();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The keys of the ground truth's critical or warning findings. */
const truthOf = (portfolio: ReturnType<typeof generatePortfolio>, severity: string) =>
  portfolio.truth.findings.filter((f) => f.severity === severity);

/** True when the digest names the finding of `key` (a domain, or a contact's handle) as an item. */
const named = (email: string, key: string) =>
  email.includes(`\n- ${displayDomain(key)}: `) || email.includes(`\n- contact ${key}: `);

/** What a queue subscriber does: read `default`; when it says it is cut, fetch the whole through its link. */
async function wholeReport(envelope: SnsEnvelope) {
  const structure = JSON.parse(envelope.Message) as Record<string, string>;
  // The JSON once: SNS gives `default` to sqs, lambda, http(s) and email-json alike.
  expect(Object.keys(structure).sort()).toEqual(['default', 'email', 'sms']);
  const carried = JSON.parse(structure.default as string);
  if (!carried.truncated) return { carried, whole: carried, linked: false };
  expect(carried.report_json_url).toMatch(/\/report\.json\?of=/);
  const answer = await fetch(carried.report_json_url);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const whole = await answer.json();
  expect(whole.generated_at).toBe(carried.generated_at);
  // What the message carried is the first of the whole, in the same (priority) order.
  expect(whole.findings.slice(0, carried.findings.length)).toEqual(carried.findings);
  expect(carried.omitted.findings).toBe(whole.findings.length - carried.findings.length);
  return { carried, whole, linked: true };
}

describe('an alert reaches a person and a program at any account size (fauxqs, sentinel serve)', () => {
  for (const profile of ['realistic', 'stress'] as const) {
    it(`1 000 domains (${profile}): the e-mail names every critical and warning finding, the JSON is once, the whole is one link away`, async () => {
      const { portfolio, envelope, close } = await alertOf(profile, 1_000);
      try {
        expect(publishedBytes(envelope)).toBeLessThanOrEqual(SNS_MAX_BYTES);
        const email = JSON.parse(envelope.Message).email as string;
        for (const severity of ['critical', 'warning'])
          for (const f of truthOf(portfolio, severity)) expect(named(email, f.key), f.key).toBe(true);
        expect(email).not.toContain('Not named in this e-mail');
        const { whole, linked } = await wholeReport(envelope);
        if (profile === 'stress') expect(linked).toBe(true);
        expect(findingKeys(whole)).toEqual(
          portfolio.truth.findings.map((f) => `${f.key} ${f.kind} ${f.severity}`).sort(),
        );
      } finally {
        await close();
      }
    }, 120_000);
  }

  it('10 000 domains (stress): every critical finding named, what is left out counted per severity, the whole report through the link', async () => {
    const { portfolio, envelope, close } = await alertOf('stress', 10_000);
    try {
      expect(publishedBytes(envelope)).toBeLessThanOrEqual(SNS_MAX_BYTES);
      const email = JSON.parse(envelope.Message).email as string;
      for (const f of truthOf(portfolio, 'critical')) expect(named(email, f.key), f.key).toBe(true);
      // Warnings: named, or counted in the line that links exactly the rest.
      const warnings = truthOf(portfolio, 'warning');
      const namedWarnings = warnings.filter((f) => named(email, f.key)).length;
      const counted = Number(/- and (\d+) more warning, not named here: /.exec(email)?.[1] ?? 0);
      expect(namedWarnings + counted).toBe(warnings.length);
      expect(email).not.toMatch(/more critical, not named here/);

      const { whole, linked } = await wholeReport(envelope);
      expect(linked).toBe(true);
      expect(findingKeys(whole)).toEqual(
        portfolio.truth.findings.map((f) => `${f.key} ${f.kind} ${f.severity}`).sort(),
      );
      expect(whole.findings.every((f: { next_step?: string }) => typeof f.next_step === 'string')).toBe(true);

      // One link per finding: the most urgent one's page says what to do and offers restore, which confirms first.
      const act = /\n {2}Act: (\S+)/.exec(email)?.[1] as string;
      expect(act).toMatch(/\/finding\//);
      expect(
        (email.match(/\n {2}(Restore|Snooze 7 days|Acknowledge \(we let it go\)): /g) ?? []).length,
      ).toBe(0);
      const page = await fetch(act);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('<strong>Next step:</strong> Restore it by');
      const restore = /<a href="([^"]+)" rel="noreferrer">Restore<\/a>/.exec(html)?.[1] as string;
      const confirm = await fetch(new URL(restore.replaceAll('&#38;', '&'), act));
      expect(confirm.status).toBe(200);
      await expect(confirm.text()).resolves.toContain('from quarantine?</h1>');
    } finally {
      await close();
    }
  }, 240_000);
});
