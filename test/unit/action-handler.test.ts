import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { MAX_FORM_CHARS } from '../../functions/handlers/http-answer';
import { recordingActionHandler, signedActionPost } from '../support/action-post';

/**
 * The body of a snooze or acknowledge POST, read by the parser the restore link uses: a body over
 * its limit, a JSON array and text that is not JSON are refused, said so, and nothing is stored.
 */

const SIGNING_KEY = 'unit-signing-key-0123456789abcdef01234567';
const env = {
  RESELLER_BASE_URL: 'https://api.test',
  RESELLER_API_KEY: 'k-unit-action-handler',
  LINK_SIGNING_KEY: SIGNING_KEY,
};
const DAY = 86_400_000;

/** A reseller holding example.nl expiring in 20 days without auto-renew: a warning. */
const fetch = (async () =>
  new Response(
    JSON.stringify({
      data: [
        {
          domain_name: 'example.nl',
          status: ['registered'],
          auto_renew: false,
          date_expiry: new Date(Date.now() + 20 * DAY).toISOString(),
        },
      ],
      pagination: { current_page: 1, per_page: 100, total_pages: 1, total_results: 1 },
    }),
    { status: 200, headers: { 'content-type': 'application/json' } },
  )) as typeof globalThis.fetch;

const handler = () => recordingActionHandler({ env, fetch });

const post = (
  action: 'snooze' | 'acknowledge',
  body: string,
  contentType: string,
  accept = 'application/json',
): APIGatewayProxyEvent =>
  signedActionPost({
    action,
    domain: 'example.nl',
    finding: { kind: 'expiring', severity: 'warning' },
    signingKey: SIGNING_KEY,
    now: Date.now(),
    body,
    contentType,
    accept,
  });

describe('the body of a snooze or acknowledge POST', () => {
  it('snoozes and acknowledges with a form or a JSON object (the parser reads both)', async () => {
    const { handle, stored } = handler();
    const form = await handle('snooze', post('snooze', 'days=7', 'application/x-www-form-urlencoded'));
    expect([form.statusCode, JSON.parse(form.body).outcome]).toEqual([200, 'snoozed']);
    const json = await handle('snooze', post('snooze', '{"days":30}', 'application/json'));
    expect([json.statusCode, JSON.parse(json.body).outcome]).toEqual([200, 'snoozed']);
    const ack = await handle('acknowledge', post('acknowledge', '{}', 'application/json'));
    expect([ack.statusCode, JSON.parse(ack.body).outcome]).toEqual([200, 'acknowledged']);
    expect(stored).toHaveLength(3);
  });

  it('refuses a body over the limit with 413, and stores nothing', async () => {
    const { handle, stored } = handler();
    const padded = `days=7&pad=${'x'.repeat(MAX_FORM_CHARS)}`;
    for (const action of ['snooze', 'acknowledge'] as const) {
      const res = await handle(action, post(action, padded, 'application/x-www-form-urlencoded'));
      expect(res.statusCode).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({
        outcome: 'bad_form',
        message: expect.stringMatching(/larger than 16384 characters/),
      });
    }
    // The same limit counted on the decoded body when API Gateway passes it base64-encoded.
    const encoded = post(
      'snooze',
      Buffer.from(padded).toString('base64'),
      'application/x-www-form-urlencoded',
    );
    const res = await handle('snooze', { ...encoded, isBase64Encoded: true });
    expect(res.statusCode).toBe(413);
    expect(stored).toEqual([]);
  });

  it('refuses a form that gives a field twice with a 400 naming it, rather than act on one of them, and stores nothing', async () => {
    // Found by a hostile review: days=1&days=30 snoozed for 30 days, whatever a proxy or log read as the days.
    const { handle, stored } = handler();
    for (const action of ['snooze', 'acknowledge'] as const) {
      const res = await handle(action, post(action, 'days=1&days=30', 'application/x-www-form-urlencoded'));
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({
        outcome: 'bad_form',
        message: expect.stringMatching(/^The form gives days twice/),
      });
    }
    expect(stored).toEqual([]);
  });

  it('refuses a JSON body that gives a field twice with a 400 naming it, as a form, and stores nothing', async () => {
    // Found by a hostile review: {"days":1,"days":30} snoozed for 30 days (JSON.parse keeps the
    // last), whatever a proxy, log or other parser (some keep the first) read as the days.
    const { handle, stored } = handler();
    for (const body of [
      '{"days":1,"days":30}',
      '{"days":1,"d\\u0061ys":30}',
      '{"days":1,"x":{"a":1,"a":2},"days":30}',
    ]) {
      const res = await handle('snooze', post('snooze', body, 'application/json'));
      expect([body, res.statusCode]).toEqual([body, 400]);
      expect(JSON.parse(res.body)).toMatchObject({
        outcome: 'bad_form',
        message: expect.stringMatching(/^The form gives days twice/),
      });
    }
    expect(stored).toEqual([]);
  });

  it('reads a JSON body whose nested objects repeat a name of the form, once each', async () => {
    const { handle } = handler();
    const res = await handle(
      'snooze',
      post('snooze', '{"days":30,"note":"{\\"days\\":1}"}', 'application/json'),
    );
    expect(res.statusCode).not.toBe(400);
  });

  it('reads only application/json as JSON, not a type that merely contains it, and stores nothing', async () => {
    const { handle, stored } = handler();
    for (const type of ['text/x-application/json', 'application/jsonp', 'application/json-seq']) {
      const res = await handle('snooze', post('snooze', '{"days":30}', type));
      expect([type, res.statusCode]).toEqual([type, 415]);
    }
    expect(stored).toEqual([]);
  });

  it('refuses a JSON array with a 400 that says a JSON object is wanted, and stores nothing', async () => {
    const { handle, stored } = handler();
    for (const action of ['snooze', 'acknowledge'] as const) {
      const res = await handle(action, post(action, '[7]', 'application/json'));
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({
        outcome: 'bad_form',
        message: expect.stringMatching(/^The JSON body is an array, not an object/),
      });
    }
    const page = await handle('acknowledge', post('acknowledge', '[]', 'application/json', 'text/html'));
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('The form is not a JSON object');
    expect(stored).toEqual([]);
  });

  it('refuses text that is not JSON with a 400 that names the problem, and stores nothing', async () => {
    const { handle, stored } = handler();
    for (const action of ['snooze', 'acknowledge'] as const) {
      const res = await handle(action, post(action, '{"days": 7,}', 'application/json'));
      expect(res.statusCode).toBe(400);
      const answer = JSON.parse(res.body);
      expect(answer.outcome).toBe('bad_form');
      expect(answer.message).toMatch(
        /^The body is labelled application\/json but is not JSON \(.*position 11.*\)/,
      );
      // Never the days the old parser made of it.
      expect(answer.message).not.toMatch(/snooze length/);
    }
    const res = await handle('snooze', post('snooze', 'not JSON', 'application/json'));
    expect(JSON.parse(res.body).message).toMatch(/is not JSON/);
    expect(stored).toEqual([]);
  });
});
