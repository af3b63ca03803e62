import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import { auditEntry, RESTORE_CLAIM_MS } from '../../functions/core/memory/audit';
import { settingsFromEnv } from '../../functions/core/scan/config';
import { createRestoreHandler } from '../../functions/handlers/restore-handler';
import { FileStateStore } from '../../functions/local/file-state-store';
import { serveLocally } from '../../functions/local/local-server';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';
import { restorablePortfolio } from '../support/fixed-reseller';
import { confirmedPost } from '../support/restore-env';

/**
 * A restore the reseller answered 202 (queued) leaves the domain in quarantine beyond the
 * 15-minute claim. Opening the link again, or `sentinel restore`, must say a restore was sent and
 * send another only when asked for again: through `sentinel serve`'s handler and the file state.
 */

const KEY = 'restore-again-key-0123';
const SIGNING_KEY = 'restore-again-signing-key-0123456789abcdef';
const DOMAIN = 'lost.com';
const LATER = RESTORE_CLAIM_MS + 60_000;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

/** The simulator answering every restore 202 without carrying it out, the handler on a file state. */
async function stack() {
  const sim: Simulator = await startSimulator({
    portfolio: restorablePortfolio([DOMAIN]),
    apiKey: KEY,
  });
  sim.injectFault({
    fault: { kind: 'status', status: 202 },
    match: (r) => r.method === 'POST' && r.path.endsWith('/restore'),
    times: 100,
  });
  const dir = await mkdtemp(join(tmpdir(), 'restore-again-'));
  const state = join(dir, 'state.json');
  const trail = new FileStateStore(state);
  const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY, LINK_SIGNING_KEY: SIGNING_KEY };
  // The first restore happens LATER ago: its claim has lapsed by now.
  let shift = -LATER;
  const handler = createRestoreHandler({
    settings: () => settingsFromEnv(env),
    secrets: new EnvSecretSource(env),
    log: () => undefined,
    audit: () => trail,
    clock: () => Date.now() + shift,
  });
  const server = await serveLocally(handler, { port: 0 });
  closers.push(server.close, sim.close, () => rm(dir, { recursive: true, force: true }));
  const link = signRestoreLink({
    baseUrl: server.url,
    domain: DOMAIN,
    keys: parseSigningKeys(SIGNING_KEY),
    now: Date.now(),
  });
  const post = async (extra: Record<string, string> = {}) => {
    const init = confirmedPost(DOMAIN, { Accept: 'application/json' });
    const body = new URLSearchParams(init.body as string);
    for (const [k, v] of Object.entries(extra)) body.set(k, v);
    const res = await fetch(link, { ...init, body: body.toString() });
    return { status: res.status, ...((await res.json()) as { outcome: string; message: string }) };
  };
  const restores = () =>
    sim.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/restore')).length;
  const first = await post();
  shift = 0;
  return { sim, state, trail, env, link, post, restores, first };
}

describe('a restore answered 202, the domain still in quarantine after the claim lapsed', () => {
  it('the link page names the restore sent, and a POST sends another only with restore_again', async () => {
    const { link, post, restores, first } = await stack();
    expect(first).toMatchObject({ status: 504, outcome: 'outcome_unknown' });
    expect(restores()).toBe(1);

    const page = await fetch(link);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`A restore of ${DOMAIN} was sent at`);
    expect(html).toContain('a second restore may be charged again. Check the domain in the reseller');
    expect(html).toMatch(/<input type="checkbox" name="restore_again" value="[0-9T:.Z-]{24}" required>/);

    const refused = await post();
    expect(refused.status).toBe(409);
    expect(refused.outcome).toBe('resend_unconfirmed');
    expect(refused.message).toContain('(outcome: unknown, it may still be queued at the reseller)');
    expect(restores()).toBe(1);

    const again = await post({ restore_again: 'yes' });
    expect(again.outcome).toBe('outcome_unknown');
    expect(restores()).toBe(2);
  });

  it('a trail that cannot be read answers 503 on the page and sends nothing', async () => {
    const { link, post, restores, state } = await stack();
    await writeFile(state, '{ not json');
    const page = await fetch(link);
    expect(page.status).toBe(503);
    expect(await page.text()).toContain('the audit trail could not be read');
    const refused = await post({ restore_again: 'yes' });
    // The claim in the same unreadable file refuses it first (claim_unavailable): 503 all the same.
    expect(refused.status).toBe(503);
    expect(refused.message).toContain(`${DOMAIN} was NOT restored`);
    expect(restores()).toBe(1);
  });

  it('sentinel restore --yes refuses without --again, naming the restore; --again sends another', async () => {
    const { env, state, restores } = await stack();
    const refused = await runCli(['restore', DOMAIN, '--yes', '--state', state], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`A restore of ${DOMAIN} was sent at`);
    expect(refused.stderr).toContain('through a restore link (outcome: unknown');
    expect(refused.stderr).toContain('pass --again to send another restore');
    expect(restores()).toBe(1);

    const again = await runCli(['restore', DOMAIN, '--yes', '--again', '--state', state], env);
    expect(again.stdout).toContain(`A restore of ${DOMAIN} was sent at`);
    expect(again.stderr).toContain('may or may not have been restored');
    expect(restores()).toBe(2);
  });

  it('sentinel restore at a terminal asks for another restore and sends nothing on no', async () => {
    const { env, state, restores } = await stack();
    const answers =
      (...said: string[]) =>
      async () =>
        said.shift();
    const no = await runCli(['restore', DOMAIN, '--state', state], env, { ask: answers(DOMAIN, 'n') });
    expect(no.code).toBe(0);
    expect(no.stdout).toContain(`A restore of ${DOMAIN} was sent at`);
    expect(no.stdout).toContain('not restored: another restore was not confirmed');
    expect(restores()).toBe(1);

    const yes = await runCli(['restore', DOMAIN, '--state', state], env, { ask: answers(DOMAIN, 'y') });
    expect(yes.stderr).toContain('may or may not have been restored');
    expect(restores()).toBe(2);
  });
});

describe('a restore sent through a link while sentinel restore waited at the terminal', () => {
  it('sentinel restore reads the trail again after the claim and sends nothing unasked', async () => {
    const sim: Simulator = await startSimulator({
      portfolio: restorablePortfolio([DOMAIN]),
      apiKey: KEY,
    });
    const dir = await mkdtemp(join(tmpdir(), 'restore-again-'));
    closers.push(sim.close, () => rm(dir, { recursive: true, force: true }));
    const state = join(dir, 'state.json');
    const trail = new FileStateStore(state);
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY };
    // While the name is asked for, a link restore goes out, is queued (202), and its claim lapses.
    const ask = async () => {
      const at = Date.now() - LATER;
      const sending = auditEntry({
        at,
        domain: DOMAIN,
        outcome: 'outcome_unknown',
        status: 504,
        via: 'web',
        sent: true,
      });
      await trail.recordAudit(sending);
      return DOMAIN;
    };
    const run = await runCli(['restore', DOMAIN, '--state', state], env, { ask });
    expect(run.stderr).toContain(`A restore of ${DOMAIN} was sent at`);
    expect(run.stderr).toContain('Nothing was sent');
    expect(run.code).toBe(1);
    expect(sim.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/restore'))).toHaveLength(0);
  });
});
