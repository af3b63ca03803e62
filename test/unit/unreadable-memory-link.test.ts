import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { DomainMemory } from '../../functions/core/memory/state';
import { StateDamagedError } from '../../functions/core/memory/state-header';
import type { Domain } from '../../functions/core/reseller/schemas';
import { recordingActionHandler, signedActionPost } from '../support/action-post';
import { heldInQuarantine } from '../support/state-scan';

/**
 * A snooze or acknowledge link of a domain whose record has a status the API does not document
 * (pendingDelete) while the scans' memory of it cannot be read (the store fails, or what it keeps
 * does not parse). Memory may keep it as a quarantine in its last days, which the next scan ends a
 * snooze at: the link cannot know how long a silence holds, so it refuses (503, try again) rather
 * than confirm "snoozed 30 days". A record of documented statuses is judged by the record alone.
 */

const SIGNING_KEY = 'unit-signing-key-0123456789abcdef01234567';
const API_KEY = 'k-unit-unreadable-memory-secret';
const env = {
  RESELLER_BASE_URL: 'https://api.test',
  RESELLER_API_KEY: API_KEY,
  LINK_SIGNING_KEY: SIGNING_KEY,
};
const DAY = 86_400_000;
const NOW = Date.now();

/** In .nl quarantine since 35 days ago (5 days to restore), its record now reading expired. */
const held = heldInQuarantine(NOW, 35);
const odd: Domain = { ...held, status: ['pendingDelete'] };
/** The same expired record, of statuses the API documents. */
const plain: Domain = { ...held, status: ['registered'] };

const answering = (record: Domain) =>
  (async () =>
    new Response(
      JSON.stringify({
        data: [
          {
            ...record,
            date_expiry: new Date(record.date_expiry).toISOString(),
            date_deleted: null,
          },
        ],
        pagination: { current_page: 1, per_page: 100, total_pages: 1, total_results: 1 },
      }),
      { status: 200, headers: { 'content-type': 'application/json' } },
    )) as typeof globalThis.fetch;

/** The store's memory read fails for now (a passing S3 or DynamoDB error), naming the key it was given. */
const failing = async (): Promise<DomainMemory | undefined> => {
  throw new Error(`ThrottlingException: rate exceeded for ${API_KEY}`);
};
/** What the store keeps of the domain is damaged: it does not parse as a domain's memory. */
const damaged = async () =>
  ({ finding: { kind: 'quarantine' }, alerted: 'yesterday' }) as unknown as DomainMemory;

const handler = (record: Domain, memoryOf: () => Promise<DomainMemory | undefined>) =>
  recordingActionHandler({ env, fetch: answering(record), memoryOf, clock: () => NOW });

const request = (action: 'snooze' | 'acknowledge', body: string): APIGatewayProxyEvent =>
  signedActionPost({
    action,
    domain: 'held.nl',
    finding: { kind: 'expired', severity: 'critical' },
    signingKey: SIGNING_KEY,
    now: NOW,
    body,
    contentType: 'application/json',
    accept: 'application/json',
  });

describe('a link of a record with an undocumented status whose memory cannot be read', () => {
  for (const [what, memoryOf] of [
    ['fails to read', failing],
    ['does not parse', damaged],
  ] as const) {
    it(`refuses a 30-day snooze when memory ${what}: 503, nothing stored, try again`, async () => {
      const { handle, stored } = handler(odd, memoryOf);
      const res = await handle('snooze', request('snooze', '{"days":30}'));
      expect(res.statusCode).toBe(503);
      const body = JSON.parse(res.body);
      expect(body).toMatchObject({ outcome: 'store_failed' });
      expect(body.message).toMatch(/^Nothing was changed: /);
      expect(body.message).toContain('the scans’ memory of held.nl could not be read');
      expect(body.message).toContain('Please try again in a few minutes.');
      expect(res.body).not.toContain(API_KEY);
      expect(res.body).not.toContain('ThrottlingException');
      expect(stored).toEqual([]);
    });

    it(`refuses to acknowledge when memory ${what}`, async () => {
      const { handle, stored } = handler(odd, memoryOf);
      const res = await handle('acknowledge', request('acknowledge', '{}'));
      expect([res.statusCode, JSON.parse(res.body).outcome]).toEqual([503, 'store_failed']);
      expect(stored).toEqual([]);
    });

    it(`offers no confirmation page when memory ${what}`, async () => {
      const { handle } = handler(odd, memoryOf);
      const post = request('snooze', '');
      const res = await handle('snooze', { ...post, httpMethod: 'GET', body: null, headers: {} });
      expect(res.statusCode).toBe(503);
      expect(res.body).toContain('could not be read');
      expect(res.body).not.toContain('<form');
      expect(res.body).not.toContain(API_KEY);
    });

    it(`lets the record alone decide for documented statuses when memory ${what}`, async () => {
      const { handle, stored } = handler(plain, memoryOf);
      const res = await handle('snooze', request('snooze', '{"days":30}'));
      expect([res.statusCode, JSON.parse(res.body).outcome]).toEqual([200, 'snoozed']);
      expect(stored).toEqual([`snooze held.nl ${new Date(NOW + 30 * DAY).toISOString()}`]);
    });
  }

  it('says the operator mends a damaged state, where trying again will not help', async () => {
    const { handle, stored } = handler(odd, async () => {
      throw new StateDamagedError('the state in memory cannot be used', { item: '#meta', damage: 'x' });
    });
    const res = await handle('snooze', request('snooze', '{"days":30}'));
    expect(res.statusCode).toBe(503);
    const { message } = JSON.parse(res.body);
    expect(message).toContain('the scans’ memory of held.nl could not be read');
    expect(message).toContain('trying again will not help');
    expect(stored).toEqual([]);
  });
});
