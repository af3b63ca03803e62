import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { DomainMemory } from '../../functions/core/memory/state';
import type { Domain } from '../../functions/core/reseller/schemas';
import { recordingActionHandler, signedActionPost } from '../support/action-post';
import { domain, heldInQuarantine, renewedUndocumented, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE } from '../support/whole-state';

/**
 * The snooze link of a quarantine memory keeps as remembered while its record reads expired (a
 * status the API does not document): the alert sent it for the expired finding, and its page offers
 * a snooze no longer than the remembered quarantine's last days allow, as it does for a quarantine.
 */

const SIGNING_KEY = 'unit-signing-key-0123456789abcdef01234567';
const env = {
  RESELLER_BASE_URL: 'https://api.test',
  RESELLER_API_KEY: 'k-unit-kept-snooze',
  LINK_SIGNING_KEY: SIGNING_KEY,
};
const DAY = 86_400_000;
const HOUR = 3_600_000;
const NOW = Date.now();

/** In .nl quarantine (40 days to restore) since 28 days ago: restore by 12 days from now. */
const held = heldInQuarantine(NOW, 28);
const odd: Domain = { ...held, status: ['pendingDelete'] };

/** What the scans remember of held.nl: alerted in quarantine an hour ago. */
function remembered(): DomainMemory {
  const { report, observed } = scanOf([held], NOW - HOUR);
  const first = compareWithState({ report, observed, state: EMPTY_STATE, policy: DEFAULT_STATE_POLICY });
  return first.next.domains['held.nl'] as DomainMemory;
}

/** The reseller, answering the search with `record`. */
const answering = (record: Record<string, unknown>) =>
  (async () =>
    new Response(
      JSON.stringify({
        data: [record],
        pagination: { current_page: 1, per_page: 100, total_pages: 1, total_results: 1 },
      }),
      { status: 200, headers: { 'content-type': 'application/json' } },
    )) as typeof globalThis.fetch;

const fetch = answering({
  ...odd,
  date_expiry: new Date(odd.date_expiry).toISOString(),
  date_deleted: new Date(NOW - 28 * DAY).toISOString(),
});

const handler = (memory: DomainMemory | undefined, reseller = fetch) =>
  recordingActionHandler({ env, fetch: reseller, memoryOf: async () => memory, clock: () => NOW });

/** A snooze POST on the link the alert sent for the finding as read: expired, critical. */
const post = (body: string): APIGatewayProxyEvent =>
  signedActionPost({
    action: 'snooze',
    domain: 'held.nl',
    finding: { kind: 'expired', severity: 'critical' },
    signingKey: SIGNING_KEY,
    now: NOW,
    body,
    contentType: 'application/json',
    accept: 'application/json',
  });

describe('the snooze link of a quarantine kept as remembered while its record reads expired', () => {
  it('refuses a 30-day snooze: it offers only the days before the remembered last days begin', async () => {
    const { handle, stored } = handler(remembered());
    const res = await handle('snooze', post('{"days":30}'));
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({
      outcome: 'bad_days',
      message: 'Choose 1, 5 days. Nothing was changed.',
    });
    expect(stored).toEqual([]);
  });

  it('snoozes until the remembered last days begin, not past them', async () => {
    const { handle, stored } = handler(remembered());
    const res = await handle('snooze', post('{"days":5}'));
    expect(JSON.parse(res.body)).toMatchObject({ outcome: 'snoozed' });
    const restoreBy = NOW - 28 * DAY + 40 * DAY;
    expect(stored).toEqual([
      `snooze held.nl ${new Date(Math.min(NOW + 5 * DAY, restoreBy - 8 * DAY)).toISOString()}`,
    ]);
  });

  it('refuses any snooze in the remembered last days to restore', async () => {
    const late = domain('held.nl', NOW, {
      ...held,
      date_deleted: NOW - 35 * DAY,
      date_expiry: NOW - 36 * DAY,
    });
    const { report, observed } = scanOf([late], NOW - HOUR);
    const first = compareWithState({ report, observed, state: EMPTY_STATE, policy: DEFAULT_STATE_POLICY });
    const { handle, stored } = handler(first.next.domains['held.nl'] as DomainMemory);
    const res = await handle('snooze', post('{"days":1}'));
    expect(JSON.parse(res.body).message).toMatch(/is in its last days to restore, 5 days left/);
    expect(stored).toEqual([]);
  });

  it('says what memory keeps, and what to do, when the record reads as nothing to report', async () => {
    const renewed = renewedUndocumented(held, NOW);
    const reseller = answering({ ...renewed, date_expiry: new Date(renewed.date_expiry).toISOString() });
    const { handle, stored } = handler(remembered(), reseller);
    const res = await handle('snooze', post('{"days":5}'));
    expect(res.statusCode).toBe(409);
    const body = JSON.parse(res.body);
    expect(body.outcome).toBe('kept_quarantine');
    expect(body.message).toContain('last read in quarantine');
    const restoreBy = new Date(NOW - 28 * DAY + 40 * DAY).toISOString().replace('T', ' ').slice(0, 16);
    expect(body.message).toContain(`restore by ${restoreBy} UTC (12 days left)`);
    expect(body.message).toContain('control panel');
    expect(stored).toEqual([]);
    // Memory keeps no quarantine: nothing to report, as before.
    const none = await handler(undefined, reseller).handle('snooze', post('{"days":5}'));
    expect(JSON.parse(none.body).outcome).toBe('no_finding');
  });

  it('says until when a snooze of it holds, not that alerts say it, when the record reads as nothing to report', async () => {
    const renewed = renewedUndocumented(held, NOW);
    const reseller = answering({ ...renewed, date_expiry: new Date(renewed.date_expiry).toISOString() });
    const until = new Date(NOW + 2 * DAY).toISOString();
    const snooze = {
      until,
      at: new Date(NOW - HOUR).toISOString(),
      kind: 'quarantine',
      severity: 'critical',
    } as const;
    const memory = { ...remembered(), actions: { snooze } } as DomainMemory;
    const res = await handler(memory, reseller).handle('snooze', post('{"days":5}'));
    const body = JSON.parse(res.body);
    expect(body.outcome).toBe('kept_quarantine');
    expect(body.message).not.toContain('Alerts say it until');
    expect(body.message).toContain(`It is snoozed until ${until.replace('T', ' ').slice(0, 16)} UTC`);
    // The digest still lists it (as an unreadable record): alerts do not leave it out.
    expect(body.message).toContain('not as critical');
    expect(body.message).not.toContain('leave it out');
    // A snooze that ended holds nothing: alerts say it.
    const ended = { ...snooze, until: new Date(NOW - 1).toISOString() };
    const again = await handler({ ...memory, actions: { snooze: ended } }, reseller).handle(
      'snooze',
      post('{"days":5}'),
    );
    expect(JSON.parse(again.body).message).toContain('Alerts say it until');
  });

  it('offers 30 days to an expired domain memory knows no quarantine of', async () => {
    const { handle, stored } = handler(undefined);
    const res = await handle('snooze', post('{"days":30}'));
    expect(JSON.parse(res.body)).toMatchObject({ outcome: 'snoozed' });
    expect(stored).toHaveLength(1);
  });
});
