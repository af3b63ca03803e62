import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DomainFinding, isDomainFinding } from '../../functions/core/findings/classify';
import { acknowledgementOf, snoozeOf } from '../../functions/core/memory/actions';
import { StoredDateTime } from '../../functions/core/memory/state-time';
import {
  DomainSchema,
  MAX_INSTANT_MS,
  MIN_INSTANT_MS,
  parseRfc3339,
} from '../../functions/core/reseller/schemas';
import { scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE, parseState } from '../support/whole-state';

/**
 * Every time the state stores is one it reads back: a record's date that parses can be kept and
 * loaded again by either store (they share these schemas), and one that cannot be kept is refused
 * at the record, where it becomes a problem, instead of wedging the state on its next load.
 */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const daysIn = (year: number, month: number) =>
  month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;

/** A calendar date: any, or the first and last days a four-digit year holds (where offsets matter). */
const calendarDate = fc.oneof(
  fc.record({
    year: fc.integer({ min: 0, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 31 }),
  }),
  fc.constantFrom({ year: 0, month: 1, day: 1 }, { year: 9999, month: 12, day: 31 }),
);
/** Any RFC 3339 date-time with a four-digit year: any offset RFC 3339 allows, any fraction. */
const rfc3339 = fc
  .record({
    date: calendarDate,
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    fraction: fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }),
    offset: fc.oneof(
      fc.constant('Z'),
      fc
        .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
        .map(([sign, h, m]) => `${sign}${pad(h)}:${pad(m)}`),
    ),
  })
  .map(({ date, ...t }) => ({
    text: `${pad(date.year, 4)}-${pad(date.month)}-${pad(date.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}${t.fraction === undefined ? '' : `.${t.fraction}`}${t.offset}`,
    possible: date.day <= daysIn(date.year, date.month),
    /** The first or last day of the range: only there can an offset take the instant out of it. */
    edge:
      (date.year === 0 && date.month === 1 && date.day === 1) ||
      (date.year === 9999 && date.month === 12 && date.day === 31),
  }));

const NOW = Date.parse('2026-11-22T06:00:00Z');

describe('stored times', () => {
  it('reads back every record date it keeps, in a state both stores accept, and refuses the rest at the record', () => {
    fc.assert(
      fc.property(
        rfc3339,
        fc.constantFrom('registered', 'quarantine'),
        fc.boolean(),
        (date, status, renews) => {
          const { text } = date;
          const parsed = DomainSchema.safeParse({
            domain_name: 'dated.nl',
            status: [status],
            date_expiry: text,
            date_deleted: text,
            date_renewal: text,
            auto_renew: renews,
          });
          if (!parsed.success) {
            // Only an impossible date, or an instant outside 0000–9999 in UTC, is refused, saying which.
            const [issue] = parsed.error.issues;
            expect(issue?.path).toEqual(['date_expiry']);
            if (date.possible) {
              expect(date.edge).toBe(true);
              expect(issue?.message).toMatch(/outside the years 0000–9999 in UTC/);
            } else expect(issue?.message).toMatch(/^not an RFC 3339 date-time/);
            return;
          }
          const ms = parsed.data.date_expiry;
          expect(ms).toBeGreaterThanOrEqual(MIN_INSTANT_MS);
          expect(ms).toBeLessThanOrEqual(MAX_INSTANT_MS);
          const { report, observed } = scanOf([parsed.data], NOW);
          const first = compareWithState({
            report,
            observed,
            state: EMPTY_STATE,
            policy: DEFAULT_STATE_POLICY,
            scope: 'http://reseller.test',
          });
          // The person snoozes and acknowledges it: those times are kept too.
          const finding = first.report.findings.find(isDomainFinding) as DomainFinding | undefined;
          const memory = first.next.domains['dated.nl'];
          const next =
            finding && memory
              ? {
                  ...first.next,
                  domains: {
                    'dated.nl': {
                      ...memory,
                      actions: {
                        snooze: snoozeOf(finding, 365, NOW),
                        acknowledged: acknowledgementOf(finding, NOW),
                      },
                    },
                  },
                }
              : first.next;
          const loaded = parseState(JSON.parse(JSON.stringify(next)), 'the state as stored');
          const kept = loaded.domains['dated.nl'];
          if (kept?.finding?.date_expiry) expect(parseRfc3339(kept.finding.date_expiry)).toBe(ms);
          if (kept?.watched.renewal) expect(parseRfc3339(kept.watched.renewal.expiry)).toBe(ms);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('writes every instant it accepts as a date-time it accepts again, to the millisecond', () => {
    fc.assert(
      fc.property(rfc3339, ({ text }) => {
        const ms = parseRfc3339(text);
        if (Number.isNaN(ms)) return;
        const written = new Date(ms).toISOString();
        expect(StoredDateTime.safeParse(written).success).toBe(true);
        expect(parseRfc3339(written)).toBe(ms);
      }),
      { numRuns: 5000 },
    );
  });

  it('refuses 9999-12-31 with an offset west of UTC at the record (the year 10000 in UTC), and keeps it east of UTC', () => {
    const at = (date_expiry: string) =>
      DomainSchema.safeParse({ domain_name: 'forever.nl', date_expiry, auto_renew: true });
    expect(
      at('9999-12-31T23:00:00-02:00').error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
    ).toEqual([
      'date_expiry: an RFC 3339 date-time outside the years 0000–9999 in UTC: "9999-12-31T23:00:00-02:00"',
    ]);
    expect(at('0000-01-01T00:30:00+01:00').success).toBe(false);
    expect(at('9999-12-31T23:00:00+02:00').data?.date_expiry).toBe(Date.parse('9999-12-31T21:00:00Z'));
    expect(at('0000-01-01T00:30:00-01:00').data?.date_expiry).toBe(Date.parse('0000-01-01T01:30:00Z'));
  });

  it('snoozes no later than the last instant a four-digit year holds', () => {
    const finding = { kind: 'expiring', severity: 'warning' } as DomainFinding;
    expect(snoozeOf(finding, 30, Date.parse('9999-12-20T00:00:00Z')).until).toBe('9999-12-31T23:59:59.999Z');
  });
});
