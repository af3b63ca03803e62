import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseSigningKeys, signLinkQuery } from '../../functions/core/links/links';
import { DEADLINES_LISTED, type ViewSelection, viewOf } from '../../functions/core/memory/report-view';
import type { Problem } from '../../functions/core/reseller/client';
import { createFindingHandler } from '../../functions/handlers/web-handler';
import { keptRecord, unreadable } from '../support/kept-records';
import { NOW_ISO, reportOf } from '../support/report';

/**
 * A finding link (the `page` link of an alert sent while the domain was read in quarantine) opened
 * once its record reads as nothing to report under a status the API does not document, while the
 * scans' memory keeps the quarantine (a problem record marked `kept_quarantine`): the page says
 * what memory keeps, its restore-by and the next step, as the snooze and acknowledge links answer
 * it, not "nothing to do": the domain may be days from being lost.
 */

const KEYS = parseSigningKeys('f'.repeat(40));
const NOW = Date.parse(NOW_ISO);
const kept = keptRecord('kept.nl', {
  restore_by: '2026-11-25T06:00:00.000Z',
  reason: 'read by its dates only; last read in quarantine, restore by 2026-11-25 06:00 UTC (days left: 3)',
});

/**
 * The finding page of kept.nl over a report of `problems`; `reads` learns each view the page reads,
 * made with `urgentKept` (lowered: a view that carries fewer kept quarantines).
 */
async function open(problems: Problem[], reads: ViewSelection[] = [], urgentKept?: number) {
  const logged: Array<Record<string, unknown>> = [];
  const report = reportOf([], problems);
  const view = async (selection: ViewSelection) => {
    reads.push(selection);
    return viewOf(report, selection, urgentKept);
  };
  const handler = createFindingHandler({
    secrets: { signingKeys: async () => KEYS } as never,
    reports: () => ({ view }) as never,
    silencing: async () => true,
    clock: () => NOW,
    log: (entry) => logged.push(entry),
  });
  const query = signLinkQuery({ action: 'finding', subject: 'kept.nl', keys: KEYS, now: NOW });
  const result = await handler({
    httpMethod: 'GET',
    resource: '/finding/{domain}',
    pathParameters: { domain: 'kept.nl' },
    queryStringParameters: Object.fromEntries(new URLSearchParams(query)),
    headers: {},
    requestContext: { identity: { sourceIp: '203.0.113.9' } },
  } as unknown as APIGatewayProxyEvent);
  return { result, logged };
}

describe('the finding page of a quarantine memory keeps while the record reads as nothing to report', () => {
  it.each([
    ['its record among the first unreadable ones', [kept]],
    ['its record behind a hundred others', [...Array.from({ length: 150 }, (_, i) => unreadable(i)), kept]],
  ])('says the remembered restore-by and the next step (%s)', async (_where, problems) => {
    const { result, logged } = await open(problems);
    expect(result.statusCode).toBe(200);
    expect(logged[0]).toMatchObject({ outcome: 'kept_quarantine', status: 200 });
    expect(result.body).toContain('kept.nl was last read in quarantine');
    expect(result.body).toContain('restore by 2026-11-25 06:00 UTC (3 days left)');
    expect(result.body).toContain('restore it there by then');
    expect(result.body).not.toContain('Nothing to do');
    // It silences nothing: the page offers no snooze, and says nothing was done.
    expect(result.body).not.toMatch(/Nothing was (snoozed|acknowledged)/);
  });
});

describe('the finding page of a kept quarantine while a snooze of it holds', () => {
  it('says the latest scan had it snoozed, not that alerts say it', async () => {
    const snoozed = keptRecord('kept.nl', { restore_by: '2026-12-20T06:00:00.000Z', snoozed: true });
    const { result } = await open([snoozed]);
    expect(result.statusCode).toBe(200);
    expect(result.body).toContain('kept.nl was last read in quarantine');
    expect(result.body).not.toContain('Alerts say it until');
    expect(result.body).toContain('A snooze of it held at the latest scan');
    // The digest still lists it (as an unreadable record): alerts did not leave it out.
    expect(result.body).toContain('not as critical');
    expect(result.body).not.toContain('left it out');
    // Not snoozed: alerts say it.
    expect((await open([kept])).result.body).toContain('Alerts say it until');
  });
});

describe('the finding page of a kept quarantine past the deadlines the view carries', () => {
  it('reads the whole report once, not once for the finding and again for the record', async () => {
    const others = Array.from({ length: 30 }, (_, i) => ({
      ...kept,
      key: `early-${i}.nl`,
      restore_by: '2026-11-23T06:00:00.000Z',
    }));
    const reads: ViewSelection[] = [];
    // A view that carries 20 kept quarantines after the first hundred records (KEPT_CARRIED, lowered).
    const { result } = await open(
      [...Array.from({ length: 150 }, (_, i) => unreadable(i)), ...others, kept],
      reads,
      2 * DEADLINES_LISTED,
    );
    expect(result.body).toContain('kept.nl was last read in quarantine');
    // A filter reads the whole report (some 100 MB at a million domains): once is enough.
    expect(reads.filter((s) => s.query)).toHaveLength(1);
  });
});
