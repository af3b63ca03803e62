import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ConnectionError,
  DeadlineError,
  NotFoundError,
  RateLimitError,
  RequestRejectedError,
  ResellerApiError,
  SecretError,
  ServerError,
  StoppedError,
  TimeoutError,
} from '../../functions/core/base/errors';
import { decideRestore, type RestoreInput, type RestorePort } from '../../functions/core/decisions/restore';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import type { RestoreAnswer } from '../../functions/core/reseller/client';
import type { Domain } from '../../functions/core/reseller/schemas';

const KEYS = parseSigningKeys('decision-signing-key-0123456789abcdef0123');
const NOW = Date.parse('2026-11-22T06:00:00Z');

const domainRecord = (name: string, status: string[]): Domain => ({
  domain_name: name,
  status,
  date_expiry: NOW - 20 * 86_400_000,
  auto_renew: false,
  auto_renew_period: 12,
  date_deleted: NOW - 19 * 86_400_000,
  registrant_handle: 'C1',
});

type Found = Domain | null | Error;

/**
 * A reseller port that records every call and answers from the given record and restore behaviour;
 * `after` is what look-ups answer once restore was called (by default the same as before).
 */
function port(
  found: Found,
  restore: () => Promise<RestoreAnswer> = async () => ({ status: 204, bodyEmpty: true }),
  after: Found = found,
) {
  const calls: string[] = [];
  let restoreCalled = false;
  const reseller: RestorePort = {
    findDomain: async (name) => {
      calls.push(`find ${name}`);
      const answer = restoreCalled ? after : found;
      if (answer instanceof Error) throw answer;
      return answer;
    },
    restoreDomain: async (name) => {
      calls.push(`restore ${name}`);
      restoreCalled = true;
      return restore();
    },
  };
  return { reseller, calls };
}

function tokenFor(domain: string, now = NOW) {
  const url = new URL(signRestoreLink({ baseUrl: 'https://x.test/', domain, keys: KEYS, now }));
  return Object.fromEntries(url.searchParams);
}

/** The request; a POST carries the confirmation page's form filled in, unless `overrides.form` says otherwise. */
function input(method: string, reseller: RestorePort, overrides: Partial<RestoreInput> = {}): RestoreInput {
  const domain = overrides.domain ?? 'example.nl';
  return {
    method,
    domain,
    token: tokenFor('example.nl'),
    now: NOW,
    signingKeys: async () => KEYS,
    reseller: async () => reseller,
    form: { confirm_domain: domain, registrant_consent: 'yes' },
    ...overrides,
  };
}

describe('decideRestore', () => {
  it('confirms on GET without restoring, carrying the link’s own query for the form', async () => {
    const { reseller, calls } = port(domainRecord('example.nl', ['quarantine']));
    const outcome = await decideRestore(input('GET', reseller));
    expect(outcome).toMatchObject({ kind: 'confirm', status: 200 });
    expect(outcome.confirm?.formAction).toMatch(/^\?exp=\d+&kid=[0-9a-f]{8}&sig=[\w-]{43}$/);
    expect(calls).toEqual(['find example.nl']);
  });

  it('shows the restore-by date and asks for the registrant’s consent on a .nl confirmation', async () => {
    const { reseller } = port(domainRecord('example.nl', ['quarantine']));
    const outcome = await decideRestore(input('GET', reseller));
    // Deleted 19 days before NOW: .nl's 40 days leave 21.
    expect(outcome.confirm).toMatchObject({
      deadline: {
        known: true,
        restore_by: new Date(NOW + 21 * 86_400_000).toISOString(),
        days_to_restore: 21,
      },
      consentRequired: true,
    });
    expect(outcome.attempt).toBeUndefined();
  });

  it('asks no consent for a TLD whose registry does not require it', async () => {
    const { reseller } = port(domainRecord('example.com', ['quarantine']));
    const outcome = await decideRestore(
      input('GET', reseller, { domain: 'example.com', token: tokenFor('example.com') }),
    );
    expect(outcome.confirm?.consentRequired).toBe(false);
    const post = await decideRestore(
      input('POST', reseller, {
        domain: 'example.com',
        token: tokenFor('example.com'),
        form: { confirm_domain: 'example.com' },
      }),
    );
    expect(post).toMatchObject({ kind: 'restored', attempt: true });
  });

  it('refuses a POST without the typed name (422) before building the reseller or calling anything', async () => {
    let built = 0;
    const { reseller, calls } = port(domainRecord('example.nl', ['quarantine']));
    for (const form of [
      {},
      { confirm_domain: '' },
      { confirm_domain: 'example.com' },
      { confirm_domain: 'x'.repeat(5000) },
    ]) {
      const outcome = await decideRestore(
        input('POST', reseller, {
          form: { ...form, registrant_consent: 'yes' },
          reseller: async () => {
            built++;
            return reseller;
          },
        }),
      );
      expect(outcome).toMatchObject({ kind: 'confirmation_missing', status: 422, attempt: true });
    }
    expect(built).toBe(0);
    expect(calls).toEqual([]);
  });

  it('refuses a .nl POST without the registrant’s consent (422), calling nothing', async () => {
    const { reseller, calls } = port(domainRecord('example.nl', ['quarantine']));
    for (const consent of [undefined, '', 'no', 'false']) {
      const outcome = await decideRestore(
        input('POST', reseller, { form: { confirm_domain: 'EXAMPLE.nl', registrant_consent: consent } }),
      );
      expect(outcome).toMatchObject({ kind: 'consent_missing', status: 422 });
      expect(outcome.message).toMatch(/only with the registrant's consent/);
    }
    expect(calls).toEqual([]);
  });

  it('checks the link on HEAD and asks the reseller nothing', async () => {
    const { reseller, calls } = port(domainRecord('example.nl', ['quarantine']));
    expect(await decideRestore(input('HEAD', reseller))).toMatchObject({ kind: 'head', status: 200 });
    expect(calls).toEqual([]);
  });

  it('restores on POST after checking the domain is in quarantine', async () => {
    const { reseller, calls } = port(domainRecord('example.nl', ['quarantine']));
    expect(await decideRestore(input('POST', reseller))).toMatchObject({ kind: 'restored', status: 200 });
    expect(calls).toEqual(['find example.nl', 'restore example.nl']);
  });

  it('answers 409 "not in quarantine (already restored?)" to a POST for a restored domain, without a restore call', async () => {
    const { reseller, calls } = port(domainRecord('example.nl', ['registered']));
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({ kind: 'not_in_quarantine', status: 409 });
    expect(outcome.message).toContain('not in quarantine (already restored?)');
    expect(calls).toEqual(['find example.nl']);
  });

  it('names a status of megabytes, or a million of them, cut: the page stays far inside the 6 MB a Lambda may answer', async () => {
    for (const status of [
      ['registered', 'x'.repeat(7_000_000)],
      Array.from({ length: 1_000_000 }, () => 'held'),
    ]) {
      const { reseller } = port(domainRecord('example.nl', status));
      for (const method of ['GET', 'POST']) {
        const outcome = await decideRestore(input(method, reseller));
        expect(outcome.kind).toBe('not_in_quarantine');
        expect(outcome.message).toMatch(
          /^example\.nl is not in quarantine \(already restored\?\): its status is (registered, x+…|held, held, .*more)/,
        );
        expect(outcome.message.length).toBeLessThan(1_000);
      }
    }
  });

  it('answers 404 for a domain the account does not hold', async () => {
    const { reseller, calls } = port(null);
    expect(await decideRestore(input('POST', reseller))).toMatchObject({
      kind: 'not_in_account',
      status: 404,
    });
    expect(calls).toEqual(['find example.nl']);
  });

  it('says the search answered 404, not that the reseller did not answer, and sends no restore', async () => {
    const notFound = new NotFoundError(
      'not found (HTTP 404): domain list page 1 (https://api.test/v2/domains)',
      {
        status: 404,
        url: 'https://api.test/v2/domains',
      },
    );
    for (const method of ['GET', 'POST']) {
      const { reseller, calls } = port(notFound);
      const outcome = await decideRestore(input(method, reseller));
      expect(outcome).toMatchObject({
        kind: 'lookup_not_found',
        status: 502,
        detail: expect.stringMatching(/HTTP 404/),
      });
      expect(outcome.message).toMatch(
        /^example\.nl was NOT restored: the reseller’s search answered 404 \(not found\) for example\.nl: it may have left the account/,
      );
      expect(outcome.message).not.toMatch(/did not answer/);
      expect(calls).toEqual(['find example.nl']);
    }
  });

  it('says the search answered 404 after an unexpected restore answer, with the outcome unknown', async () => {
    const notFound = new NotFoundError(
      'not found (HTTP 404): domain list page 1 (https://api.test/v2/domains)',
      {
        status: 404,
        url: 'https://api.test/v2/domains',
      },
    );
    const { reseller } = port(
      domainRecord('example.nl', ['quarantine']),
      async () => ({ status: 202, bodyEmpty: true }),
      notFound,
    );
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({ kind: 'outcome_unknown', status: 504, sent: true });
    expect(outcome.message).toMatch(
      /^The reseller answered the restore of example\.nl with HTTP 202, and a search for it afterwards answered 404 \(not found\), so example\.nl may or may not have been restored/,
    );
  });

  it('says the outcome is unknown (504) when the restore call times out', async () => {
    const timeout = new TimeoutError('no answer within 5000 ms for restore of example.nl', {
      status: 0,
      url: 'https://api.test/v2/domains/example.nl/restore',
    });
    const { reseller } = port(domainRecord('example.nl', ['quarantine']), async () => {
      throw timeout;
    });
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({ kind: 'outcome_unknown', status: 504 });
    expect(outcome.message).toMatch(/may or may not have been restored.*Check the domain’s status/);
    expect(outcome.detail).toMatch(/^outcome unknown: /);
  });

  it.each([301, 302, 303, 307, 308])(
    'treats a %i answer to restore as unexpected: 502, NOT restored',
    async (status) => {
      const redirect = new ResellerApiError(`the reseller answered with a redirect (HTTP ${status})`, {
        status,
        url: 'https://api.test/v2/domains/example.nl/restore',
      });
      const { reseller } = port(domainRecord('example.nl', ['quarantine']), async () => {
        throw redirect;
      });
      const outcome = await decideRestore(input('POST', reseller));
      expect(outcome).toMatchObject({ kind: 'reseller_unexpected', status: 502 });
      expect(outcome.message).toBe(
        `The reseller answered unexpectedly (HTTP ${status}); the domain was NOT restored. Check the domain’s status in the reseller’s control panel before trying again.`,
      );
    },
  );

  it('answers 409 when the reseller refuses, with what it said made safe', async () => {
    const refused = new RequestRejectedError('rejected', {
      status: 422,
      url: 'https://api.test/v2/domains/example.nl/restore',
      bodyExcerpt: 'not in quarantine\u202e',
    });
    const { reseller } = port(domainRecord('example.nl', ['quarantine']), async () => {
      throw refused;
    });
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({ kind: 'refused', status: 409 });
    expect(outcome.message).toContain('It said: not in quarantine\\u202e');
  });

  it('says a 429 to the restore call was a rate limit, that nothing was restored, and to try again in a minute', async () => {
    const limited = new RateLimitError(
      'rate limited by the reseller API (HTTP 429) on the restore, sent once',
      {
        status: 429,
        url: URL_,
      },
    );
    const { reseller } = port(QUARANTINED, async () => Promise.reject(limited), QUARANTINED);
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({
      kind: 'refused',
      status: 409,
      title: 'example.nl was not restored',
      message:
        'example.nl was NOT restored: the reseller’s API is limiting how often it is called (HTTP 429, rate limited), so it did not take the restore: nothing was restored. Please try again in a minute.',
    });
  });

  it.each([
    [
      'still in quarantine',
      domainRecord('example.nl', ['quarantine']),
      'example.nl was NOT restored: the reseller answered its restore with HTTP 404 (not found), yet its search finds example.nl in quarantine: not the answer for a domain it lacks (a wrong route, or the name spelled another way). Restore it in the reseller’s control panel before its restore-by date.',
    ],
    [
      'gone from the account',
      null,
      'example.nl was NOT restored: the reseller answered its restore with HTTP 404 (not found), and its search no longer finds example.nl: it may have left the account. Check the domain’s status in the reseller’s control panel before trying again.',
    ],
  ] as const)(
    'says what a 404 from the restore call means when a fresh look-up finds the domain %s',
    async (_n, after, said) => {
      const notFound = new NotFoundError('not found', { status: 404, url: URL_ });
      const { reseller } = port(QUARANTINED, async () => Promise.reject(notFound), after);
      const outcome = await decideRestore(input('POST', reseller));
      expect(outcome).toMatchObject({ kind: 'refused', status: 409, message: said });
    },
  );

  it('answers 502 NOT restored when the reseller fails or cannot be reached', async () => {
    const down = new ConnectionError('could not reach', { status: 0, url: 'https://api.test' });
    const { reseller, calls } = port(down);
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({ kind: 'reseller_unreachable', status: 502 });
    expect(outcome.message).toContain('NOT restored');
    expect(calls).toEqual(['find example.nl']);
  });

  it('hides an authentication failure behind a generic page and logs it', async () => {
    const auth = new AuthenticationError('the reseller API refused the API key (HTTP 401)', {
      status: 401,
      url: 'https://api.test',
    });
    const outcome = await decideRestore(input('GET', port(auth).reseller));
    expect(outcome).toMatchObject({ kind: 'reseller_auth_failed', status: 502 });
    expect(outcome.message).not.toContain('401');
    expect(outcome.detail).toContain('HTTP 401');
  });

  const QUARANTINED = domainRecord('example.nl', ['quarantine']);
  const RESTORED = domainRecord('example.nl', ['registered']);
  const URL_ = 'https://api.test/v2/domains/example.nl/restore';
  const serverError = () =>
    new ServerError('the reseller API failed (HTTP 500) on restore of example.nl, sent once', {
      status: 500,
      url: URL_,
    });
  const reset = () =>
    new ConnectionError(
      'the connection to the reseller API broke (ECONNRESET) after restore of example.nl was sent',
      {
        status: 0,
        url: URL_,
        code: 'ECONNRESET',
      },
    );

  it.each([
    [
      'a connection refused (it never reached the reseller)',
      async () =>
        Promise.reject(new ConnectionError('refused', { status: 0, url: URL_, code: 'ECONNREFUSED' })),
      'a broken connection',
    ],
    [
      'a connect timeout (undici writes no request before its connection opens)',
      async () =>
        Promise.reject(
          new ConnectionError('connect timeout', { status: 0, url: URL_, code: 'UND_ERR_CONNECT_TIMEOUT' }),
        ),
      'a broken connection',
    ],
    ['a 200 with an error body', async () => ({ status: 200, bodyEmpty: false }), 'HTTP 200 with a body'],
    [
      'a 503 (a refusal to start)',
      async () =>
        Promise.reject(
          new ServerError('the reseller API failed (HTTP 503) on restore of example.nl, sent once', {
            status: 503,
            url: URL_,
          }),
        ),
      'HTTP 503',
    ],
  ] as const)(
    'after %s, re-checks: still in quarantine is 502 NOT restored, never "after retries"',
    async (_n, restore, said) => {
      const { reseller, calls } = port(QUARANTINED, restore);
      const outcome = await decideRestore(input('POST', reseller));
      expect(outcome.status).toBe(502);
      expect(outcome.message).toBe(
        `example.nl was NOT restored: the reseller answered the restore with ${said}, and a fresh look-up shows the domain still in quarantine. Please try again in a few minutes.`,
      );
      expect(`${outcome.message} ${outcome.detail}`).not.toMatch(/retr/i);
      expect(calls).toEqual(['find example.nl', 'restore example.nl', 'find example.nl']);
    },
  );

  it.each([
    ['a 202', async () => ({ status: 202, bodyEmpty: true }), 'HTTP 202'],
    [
      'a 504 from the reseller gateway',
      async () =>
        Promise.reject(
          new ServerError('the reseller API failed (HTTP 504) on restore of example.nl, sent once', {
            status: 504,
            url: URL_,
          }),
        ),
      'HTTP 504',
    ],
    [
      'a 502 from the reseller gateway',
      async () =>
        Promise.reject(
          new ServerError('the reseller API failed (HTTP 502) on restore of example.nl, sent once', {
            status: 502,
            url: URL_,
          }),
        ),
      'HTTP 502',
    ],
    ['a connection reset after sending', async () => Promise.reject(reset()), 'a broken connection'],
    ['a 500', async () => Promise.reject(serverError()), 'HTTP 500'],
    [
      'a 524 from a CDN in front of the reseller (its origin took the request and did not answer in time)',
      async () =>
        Promise.reject(
          new ServerError('the reseller API failed (HTTP 524) on restore of example.nl, sent once', {
            status: 524,
            url: URL_,
          }),
        ),
      'HTTP 524',
    ],
  ] as const)(
    'after %s, still in quarantine is unknown (504) and keeps the claim: the accepted restore may still run',
    async (_n, restore, said) => {
      const { reseller, calls } = port(QUARANTINED, restore);
      const released: string[] = [];
      const claim = {
        take: async () => ({ taken: true, until: NOW + 15 * 60_000 }),
        release: async () => void released.push('released'),
      };
      const outcome = await decideRestore(input('POST', reseller, { claim }));
      expect(outcome).toMatchObject({ kind: 'outcome_unknown', status: 504, sent: true });
      expect(outcome.message).toContain(`answered the restore of example.nl with ${said}`);
      expect(outcome.message).not.toContain('NOT restored');
      expect(released).toEqual([]);
      expect(calls).toEqual(['find example.nl', 'restore example.nl', 'find example.nl']);
    },
  );

  it.each([
    ['a 500', async () => Promise.reject(serverError())],
    ['a connection reset after sending', async () => Promise.reject(reset())],
    ['a 202', async () => ({ status: 202, bodyEmpty: true })],
    ['a 200 with a body', async () => ({ status: 200, bodyEmpty: false })],
    ['a timeout', async () => Promise.reject(new TimeoutError('no answer', { status: 0, url: URL_ }))],
  ] as const)(
    'after %s, re-checks: out of quarantine is restored, confirmed by the look-up',
    async (_n, restore) => {
      const { reseller } = port(QUARANTINED, restore, RESTORED);
      const outcome = await decideRestore(input('POST', reseller));
      expect(outcome).toMatchObject({ kind: 'restored', status: 200 });
      expect(outcome.message).toBe(
        'example.nl has been restored from quarantine (confirmed by a fresh look-up of its status).',
      );
    },
  );

  it.each([
    ['a 500', async () => Promise.reject(serverError())],
    ['a reset', async () => Promise.reject(reset())],
    ['a 202', async () => ({ status: 202, bodyEmpty: true })],
  ] as const)('after %s, a failing re-check makes the outcome unknown (504)', async (_n, restore) => {
    const down = new ConnectionError('could not reach', { status: 0, url: 'https://api.test' });
    const { reseller } = port(QUARANTINED, restore, down);
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({ kind: 'outcome_unknown', status: 504 });
    expect(outcome.message).toMatch(
      /may or may not have been restored\. Check the domain’s status .* before trying again/,
    );
  });

  it('says until when the domain is held when a refused restore could not give its claim up', async () => {
    const refused = new RequestRejectedError('rejected', { status: 422, url: URL_ });
    const { reseller } = port(QUARANTINED, async () => Promise.reject(refused));
    const claim = {
      take: async () => ({ taken: true, until: NOW + 15 * 60_000 }),
      release: async () => Promise.reject(new Error('ProvisionedThroughputExceededException')),
    };
    const outcome = await decideRestore(input('POST', reseller, { claim }));
    expect(outcome.kind).toBe('refused');
    // NOW is 06:00; the claim holds 15 minutes: the next click before then is refused as "in progress".
    expect(outcome.message).toContain(
      'This restore’s hold on example.nl could not be given up, so another try is refused until 06:15 UTC.',
    );
    expect(outcome.detail).toContain(
      'the restore claim could not be released: ProvisionedThroughputExceededException',
    );
  });

  it('answers 409 with the time another restore’s claim lapses (the minute after), and calls nothing', async () => {
    const { reseller, calls } = port(QUARANTINED);
    const claim = {
      take: async () => ({ taken: false, until: NOW + 12 * 60_000 + 30_000 }),
      release: async () => undefined,
    };
    const outcome = await decideRestore(input('POST', reseller, { claim }));
    expect(outcome).toMatchObject({ kind: 'restore_claimed', status: 409 });
    expect(outcome.message).toBe(
      'A restore of example.nl is in progress or done (another request started it within the last 15 minutes, and it holds the domain until 06:13 UTC: try again after that); nothing was sent again. Check the domain’s status in the reseller’s control panel before trying again.',
    );
    expect(calls).toEqual([]);
  });

  // A claim taken by a clock running ahead holds up to CLAIM_CLOCK_SLACK_MS past its 15 minutes (audit.ts):
  // "at most 15 minutes" was not the longest it can hold.
  it('answers 409 with the claim’s longest life when the store does not say when the claim lapses', async () => {
    const { reseller } = port(QUARANTINED);
    const claim = { take: async () => ({ taken: false }), release: async () => undefined };
    const outcome = await decideRestore(input('POST', reseller, { claim }));
    expect(outcome.message).toContain('and it holds the domain at most 30 minutes); nothing was sent again.');
  });

  it('answers a refusal that lost a race with "not in quarantine (already restored?)", not "refused"', async () => {
    const refused = new RequestRejectedError('rejected', {
      status: 422,
      url: URL_,
      bodyExcerpt: 'not in quarantine',
    });
    const { reseller } = port(QUARANTINED, async () => Promise.reject(refused), RESTORED);
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({ kind: 'not_in_quarantine', status: 409 });
    expect(outcome.message).toContain('not in quarantine (already restored?)');
    expect(outcome.message).not.toContain('refused');
  });

  it('says NOT restored, without a re-check, when the time budget ran out before the restore was sent', async () => {
    const { reseller, calls } = port(QUARANTINED, async () =>
      Promise.reject(new DeadlineError('the time budget ran out before restore of example.nl')),
    );
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({ kind: 'reseller_unreachable', status: 502 });
    expect(outcome.message).toContain('so the restore was not sent');
    expect(calls).toEqual(['find example.nl', 'restore example.nl']);
  });

  it('keeps a restore stopped (Ctrl-C) after it was sent as sent, outcome unknown: check the status first', async () => {
    const { reseller, calls } = port(QUARANTINED, async () =>
      Promise.reject(new StoppedError('restore of example.nl was stopped after it was sent', true)),
    );
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({ kind: 'outcome_unknown', status: 504, sent: true });
    expect(outcome.message).toMatch(
      /stopped after it was sent.*may or may not have been restored.*Check the domain’s status/,
    );
    // The stop ends a look-up too: none is tried.
    expect(calls).toEqual(['find example.nl', 'restore example.nl']);
  });

  it('keeps a restore stopped (Ctrl-C) before it was sent as not sent, NOT restored', async () => {
    const { reseller, calls } = port(QUARANTINED, async () =>
      Promise.reject(new StoppedError('restore of example.nl was stopped before it was sent', false)),
    );
    const outcome = await decideRestore(input('POST', reseller));
    expect(outcome).toMatchObject({ kind: 'interrupted', status: 503 });
    expect(outcome.sent).toBeUndefined();
    expect(outcome.message).toBe('example.nl was NOT restored: the restore was stopped before it was sent.');
    expect(calls).toEqual(['find example.nl', 'restore example.nl']);
  });

  it.each([
    ['a tampered signature', { sig: `${'A'.repeat(42)}B` }, 'bad_signature', 403],
    ['a missing signature', { sig: undefined }, 'malformed', 403],
    ['an unknown key id', { kid: 'ffffffff' }, 'unknown_key', 403],
    ['a key id that no key could have', { kid: '<b>x</b>' }, 'malformed', 403],
  ])('refuses %s with 403 and no reseller call', async (_name, change, kind, status) => {
    const { reseller, calls } = port(domainRecord('example.nl', ['quarantine']));
    const token = { ...tokenFor('example.nl'), ...change };
    expect(await decideRestore(input('POST', reseller, { token }))).toMatchObject({ kind, status });
    expect(calls).toEqual([]);
  });

  it('tells a link signed with a key this server does not hold from a changed one, naming both key ids', async () => {
    const { reseller } = port(domainRecord('example.nl', ['quarantine']));
    const other = parseSigningKeys('another-setup-signing-key-0123456789abcdef');
    const foreign = Object.fromEntries(
      new URL(signRestoreLink({ baseUrl: 'https://x.test/', domain: 'example.nl', keys: other, now: NOW }))
        .searchParams,
    );
    const held = KEYS.map((k) => k.id).join(', ');
    const outcome = await decideRestore(input('GET', reseller, { token: foreign }));
    expect(outcome).toMatchObject({ kind: 'unknown_key', status: 403 });
    expect(outcome.message).toBe(
      `This link was signed with key id ${other[0]?.id}; this server holds ${held}: are both sides using the same LINK_SIGNING_KEY?`,
    );
    const changed = await decideRestore(
      input('GET', reseller, { token: { ...tokenFor('example.nl'), sig: `${'A'.repeat(42)}B` } }),
    );
    expect(changed).toMatchObject({ kind: 'bad_signature', status: 403 });
    expect(changed.message).toContain('The link was changed');
  });

  it('refuses a link for another domain (403) and an expired one (410), with no reseller call', async () => {
    const { reseller, calls } = port(domainRecord('example.nl', ['quarantine']));
    const other = await decideRestore(input('POST', reseller, { token: tokenFor('other.nl') }));
    expect(other).toMatchObject({ kind: 'bad_signature', status: 403 });
    const old = await decideRestore(
      input('POST', reseller, { token: tokenFor('example.nl', NOW - 8 * 86_400_000) }),
    );
    expect(old).toMatchObject({ kind: 'link_expired', status: 410 });
    expect(calls).toEqual([]);
  });

  it('answers 400 for a name that is not a domain, 405 for another method, 500 without keys', async () => {
    const { reseller, calls } = port(domainRecord('example.nl', ['quarantine']));
    expect(await decideRestore(input('POST', reseller, { domain: 'EXAMPLE.nl' }))).toMatchObject({
      status: 400,
    });
    expect(await decideRestore(input('DELETE', reseller))).toMatchObject({
      kind: 'method_not_allowed',
      status: 405,
    });
    const noKeys = await decideRestore(
      input('POST', reseller, {
        signingKeys: async () => {
          throw new SecretError('could not read SSM parameter /x (ParameterNotFound)');
        },
      }),
    );
    expect(noKeys).toMatchObject({
      kind: 'misconfigured',
      status: 500,
      detail: expect.stringContaining('/x'),
    });
    expect(calls).toEqual([]);
  });

  it('restores under the account’s own spelling of the name', async () => {
    const { reseller, calls } = port(domainRecord('ørsted.dk', ['quarantine']));
    const outcome = await decideRestore(
      input('POST', reseller, { domain: 'xn--rsted-uua.dk', token: tokenFor('xn--rsted-uua.dk') }),
    );
    expect(outcome.kind).toBe('restored');
    expect(calls).toEqual(['find xn--rsted-uua.dk', 'restore ørsted.dk']);
  });
});
