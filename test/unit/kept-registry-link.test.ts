import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { DomainMemory } from '../../functions/core/memory/state';
import { recordingActionHandler, signedActionPost } from '../support/action-post';
import { domain, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE } from '../support/whole-state';

/**
 * The snooze link of a domain memory keeps as a registry finding (on hold at the registry) while
 * the reseller's record reads a less severe one: the scan that could not check the registry again
 * publishes it as remembered (registry_unconfirmed), and the link, which does no registry check,
 * says the same on its page.
 */

const SIGNING_KEY = 'unit-signing-key-0123456789abcdef01234567';
const env = {
  RESELLER_BASE_URL: 'https://api.test',
  RESELLER_API_KEY: 'k-unit-kept-registry',
  LINK_SIGNING_KEY: SIGNING_KEY,
};
const DAY = 86_400_000;
const HOUR = 3_600_000;
const NOW = Date.now();

/** Expiring in 20 days, auto-renew off: a warning as the reseller reads it. */
const record = domain('hold.nl', NOW, { auto_renew: false, date_expiry: NOW + 20 * DAY });

/** What the scans remember of hold.nl: on hold at the registry, critical, alerted an hour ago. */
function remembered(): DomainMemory {
  const { report, observed } = scanOf([record], NOW - HOUR);
  const first = compareWithState({ report, observed, state: EMPTY_STATE, policy: DEFAULT_STATE_POLICY });
  const memory = first.next.domains['hold.nl'] as DomainMemory;
  return {
    ...memory,
    finding: {
      kind: 'registry_hold',
      severity: 'critical',
      stage: null,
      date_expiry: memory.finding?.date_expiry,
    },
  } as DomainMemory;
}

const fetch = (async () =>
  new Response(
    JSON.stringify({
      data: [{ ...record, date_expiry: new Date(record.date_expiry).toISOString() }],
      pagination: { current_page: 1, per_page: 100, total_pages: 1, total_results: 1 },
    }),
    { status: 200, headers: { 'content-type': 'application/json' } },
  )) as typeof globalThis.fetch;

/** A GET of the snooze link the alert sent for the finding as published: expiring, critical. */
const get = (): APIGatewayProxyEvent => ({
  ...signedActionPost({
    action: 'snooze',
    domain: 'hold.nl',
    finding: { kind: 'expiring', severity: 'critical' },
    signingKey: SIGNING_KEY,
    now: NOW,
    body: '',
    contentType: 'text/plain',
    accept: 'text/html',
  }),
  httpMethod: 'GET',
  body: null,
});

describe('the snooze link of a registry finding kept as remembered', () => {
  it('says on its page what memory keeps: on hold at the registry, not checked again', async () => {
    const { handle } = recordingActionHandler({
      env,
      fetch,
      memoryOf: async () => remembered(),
      clock: () => NOW,
    });
    const res = await handle('snooze', get());
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/hold at the registry/i);
    expect(res.body).not.toContain('It is now');
  });

  it('says the finding as read when memory keeps no registry finding', async () => {
    const { handle } = recordingActionHandler({
      env,
      fetch,
      memoryOf: async () => undefined,
      clock: () => NOW,
    });
    const res = await handle('snooze', get());
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toMatch(/hold at the registry/i);
  });
});
