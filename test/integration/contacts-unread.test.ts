import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli } from '../support/cli';

const KEY = 'sk_review_contacts_unread_4e2a';
const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;

let sim: Simulator;
let dir: string;
beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 60, seed: 2, now: NOW }),
    apiKey: KEY,
  });
  dir = await mkdtemp(join(tmpdir(), 'sentinel-review-contacts-'));
});
afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Review, end to end: `sentinel scan --state FILE` remembers a contact pending validation; the
 * next day the contact list answers 503 on every try. The scan goes on (rightly: the domains were
 * read) but its digest says "Resolved since the last alert: contact C00002 … contact no longer
 * pending validation", and the state forgets the contact: nothing was known about it that day.
 */
describe('scan --state when the contact list is down for a day', () => {
  it('does not tell the reader a pending validation was resolved when no contact could be read', async () => {
    const state = join(dir, 'state.json');
    const env = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY };
    const scan = (now: number) =>
      runCli(['scan', '--now', new Date(now).toISOString(), '--state', state, '--alert-to', 'stdout'], env);

    const first = await scan(NOW);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('NEW contact C00002: validation pending');

    sim.injectFault({
      fault: { kind: 'status', status: 503 },
      match: (r) => r.path === '/v2/contacts',
      times: 1_000,
    });
    const second = await scan(NOW + DAY);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('the contact list could not be read');
    expect(second.stdout).not.toMatch(/C00002.*no longer pending validation/);
  }, 30_000);
});
