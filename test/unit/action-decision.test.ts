import { describe, expect, it } from 'vitest';
import { AuthenticationError, ConfigError, NotFoundError } from '../../functions/core/base/errors';
import { type ActionInput, decideAction } from '../../functions/core/decisions/action-decision';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { parseSigningKeys, signLink } from '../../functions/core/links/links';
import { MemoryActionStore } from '../support/memory-action-store';

// The failure paths of decideAction's steps that test/unit/actions.test.ts does not reach: what
// each failing port answers, and that none of them writes.

const NOW = Date.parse('2026-11-22T06:00:00Z');
const keys = parseSigningKeys('s'.repeat(40));

const expiring: DomainFinding = {
  domain_name: 'example.nl',
  kind: 'expiring',
  severity: 'warning',
  date_expiry: new Date(NOW + 20 * 86_400_000).toISOString(),
  days_left: 20,
  auto_renew: false,
  registrant: null,
};

function request(action: 'snooze' | 'acknowledge', over: Partial<ActionInput> = {}) {
  const store = new MemoryActionStore();
  const link = signLink({
    baseUrl: 'https://x.example',
    action,
    subject: 'example.nl',
    finding: { kind: 'expiring', severity: 'warning' },
    keys,
    now: NOW,
  });
  const value: ActionInput = {
    action,
    method: 'POST',
    domain: 'example.nl',
    token: Object.fromEntries(new URL(link).searchParams),
    form: {},
    now: NOW,
    signingKeys: async () => keys,
    port: async () => ({ store, findFinding: async () => expiring }),
    ...over,
  };
  return { value, store };
}

const failingLookup = (error: Error): Pick<ActionInput, 'port'> => ({
  port: async () => ({
    store: new MemoryActionStore(),
    findFinding: async () => {
      throw error;
    },
  }),
});

describe('decideAction, when a step fails', () => {
  it('says the reseller could not be reached when the lookup fails, naming the failure for the log only', async () => {
    const { value } = request('snooze', failingLookup(new Error('connect ECONNREFUSED')));
    const outcome = await decideAction(value);
    expect(outcome).toMatchObject({
      kind: 'lookup_failed',
      status: 502,
      title: 'The reseller could not be reached',
      detail: 'Error: connect ECONNREFUSED',
    });
    expect(outcome.message).toMatch(/^Nothing was changed: .* example\.nl was looked up/);
    expect(outcome.message).not.toContain('ECONNREFUSED');
  });

  it('says the search answered 404, not that the reseller did not answer, when the lookup is answered 404', async () => {
    // The API does not say what a search without a hit answers: a 404 is an answer, and may mean
    // the domain left the account (or a wrong route); it is no unreachable reseller.
    const notFound = new NotFoundError(
      'not found (HTTP 404): domain list page 1 (https://api.example/v2/domains)',
      {
        status: 404,
        url: 'https://api.example/v2/domains',
      },
    );
    const { value } = request('snooze', failingLookup(notFound));
    const outcome = await decideAction(value);
    expect(outcome).toMatchObject({
      kind: 'lookup_not_found',
      status: 502,
      detail: expect.stringMatching(/HTTP 404/),
    });
    expect(outcome.title).not.toMatch(/could not be reached/);
    expect(outcome.message).toMatch(
      /^Nothing was changed: the reseller’s search answered 404 \(not found\) for example\.nl: it may have left the account/,
    );
  });

  it('treats a key the reseller refuses as the operator’s to fix: a generic page, the reason in the log', async () => {
    const refused = new AuthenticationError('the reseller API refused the API key (HTTP 401)', {
      status: 401,
      url: 'https://api.example/v2/domains',
    });
    const outcome = await decideAction(request('acknowledge', failingLookup(refused)).value);
    expect(outcome).toMatchObject({
      kind: 'misconfigured',
      status: 500,
      detail: 'the reseller API refused the API key (HTTP 401)',
    });
    expect(outcome.message).not.toContain('401');
  });

  it('names a configuration error for the log when the port cannot be built, and only the error’s name otherwise', async () => {
    const config = request('snooze', {
      port: async () => {
        throw new ConfigError('RESELLER_BASE_URL is not set');
      },
    });
    await expect(decideAction(config.value)).resolves.toMatchObject({
      kind: 'misconfigured',
      status: 500,
      detail: 'RESELLER_BASE_URL is not set',
    });
    const other = request('snooze', {
      port: async () => {
        throw new TypeError('secret-bearing detail');
      },
    });
    await expect(decideAction(other.value)).resolves.toMatchObject({
      kind: 'misconfigured',
      detail: 'TypeError',
    });
  });

  it('writes nothing for a changed finding when the keys for its fresh links cannot be read', async () => {
    let reads = 0;
    const { value, store } = request('snooze', {
      // The gate reads the keys first; the links for the finding as it is now read them again.
      signingKeys: async () => {
        if (++reads > 1) throw new Error('parameter store unavailable');
        return keys;
      },
    });
    const quarantine = { ...expiring, kind: 'quarantine', severity: 'critical' } as const;
    const outcome = await decideAction({
      ...value,
      port: async () => ({ store, findFinding: async () => quarantine }),
    });
    expect(outcome).toMatchObject({ kind: 'misconfigured', status: 500, detail: 'Error' });
    expect([reads, store.writes]).toEqual([2, 0]);
  });

  it('ignores a days field posted to an acknowledge link: only a snooze has a length', async () => {
    const { value, store } = request('acknowledge', { form: { days: '999' } });
    await expect(decideAction(value)).resolves.toMatchObject({ kind: 'acknowledged', status: 200 });
    expect(store.writes).toBe(1);
  });
});
