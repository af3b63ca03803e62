import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { DEFAULT_POLICY, type DomainFinding } from '../../functions/core/findings/classify';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import { ResellerClient } from '../../functions/core/reseller/client';
import { settingsFromEnv } from '../../functions/core/scan/config';
import { scanAccount } from '../../functions/core/scan/scan';
import { createRestoreHandler } from '../../functions/handlers/restore-handler';
import { serveLocally } from '../../functions/local/local-server';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { confirmedPost } from '../support/restore-env';

const API_KEY = 'sk_review_idn_restore_7a1c';
const SIGNING_KEY = 'review-idn-signing-key-0123456789abcdef0123';
const NOW = Date.now();
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Review: the account holds a quarantined domain under its Unicode spelling (or with a trailing dot),
 * as reseller-api.md allows (`domain_name`: "Full domain name"; `idn_language` exists). The scan
 * signs its restore link under the normalised name (punycode, no trailing dot), and the restore
 * handler looks the domain up with `domain_name=<normalised name>`: a reseller that matches the
 * name it holds (the embedded simulator does, case-insensitively) answers "none", so the restore
 * link in the alert answers 404 "not in this reseller account" for a domain in its last days.
 */
describe('review: the restore link of a quarantined domain the account spells in Unicode', () => {
  let sim: Simulator;
  let server: Awaited<ReturnType<typeof serveLocally>>;
  beforeAll(async () => {
    sim = await startSimulator({
      portfolio: generatePortfolio({ domains: 5, seed: 3, now: NOW }),
      apiKey: API_KEY,
    });
    for (const name of ['ørsted-review.dk', 'trailing-review.dk.'])
      sim.updateDomain(name, {
        status: ['quarantine'],
        date_expiry: iso(NOW - 40 * DAY),
        date_deleted: iso(NOW - 10 * DAY),
        auto_renew: false,
      });
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: API_KEY, LINK_SIGNING_KEY: SIGNING_KEY };
    const handler = createRestoreHandler({
      settings: () => settingsFromEnv(env),
      secrets: new EnvSecretSource(env),
      log: () => undefined,
    });
    server = await serveLocally(handler, { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await sim?.close();
  });

  it.each([
    ['ørsted-review.dk', 'xn--rsted-review-ujb.dk'],
    ['trailing-review.dk.', 'trailing-review.dk'],
  ])('restores %s through the link its scan finding carries', async (held, signed) => {
    const keys = parseSigningKeys(SIGNING_KEY);
    const report = await scanAccount({
      client: new ResellerClient({ baseUrl: sim.url, apiKey: API_KEY }),
      now: NOW,
      policy: DEFAULT_POLICY,
      restoreLinkFor: (domain) => signRestoreLink({ baseUrl: server.url, domain, keys, now: NOW }),
    });
    const finding = report.findings.find(
      (f): f is DomainFinding => 'domain_name' in f && f.domain_name === held,
    );
    expect(finding?.kind).toBe('quarantine');
    expect(finding?.restore_url).toContain(`/restore/${signed}?`);

    const post = await fetch(
      finding?.restore_url as string,
      confirmedPost(signed, { Accept: 'application/json' }),
    );
    expect(await post.json()).toMatchObject({ outcome: 'restored' });
    expect(sim.domain(held)?.status).toEqual(['registered']);
  });
});
