import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isDomainFinding } from '../../functions/core/findings/classify';
import { alertView } from '../../functions/core/memory/actions';
import { scanTimeProblem } from '../../functions/core/memory/state-time';
import { parseRfc3339 } from '../../functions/core/reseller/schemas';
import { DAY, domain, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, parseState, type ScanState } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;
const REPEAT_MS = DEFAULT_STATE_POLICY.repeat.critical * HOUR;
const QUARANTINED = 'lost.nl';

/** An instant within 120 days of T0, as stored: ISO 8601, sometimes with an offset or no fraction. */
const storedTime = fc
  .tuple(fc.integer({ min: -120 * 24, max: 120 * 24 }), fc.constantFrom('iso', 'offset', 'seconds'))
  .map(([hours, form]) => {
    const ms = T0 + hours * HOUR;
    if (form === 'offset') return new Date(ms + 2 * HOUR).toISOString().replace('Z', '+02:00');
    if (form === 'seconds') return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return new Date(ms).toISOString();
  });
const severity = fc.constantFrom('info', 'warning', 'critical');
const kind = fc.constantFrom('quarantine', 'expired', 'expiring', 'auto_renew_off');
const findingMemory = fc.record({
  kind,
  severity,
  stage: fc.option(fc.integer({ min: -1, max: 30 }), { nil: null }),
  date_expiry: fc.option(storedTime, { nil: undefined }),
});
const memory = fc.record({
  watched: fc.record({ auto_renew: fc.option(fc.boolean(), { nil: null }) }),
  finding: fc.option(findingMemory, { nil: null }),
  alerted: fc.option(
    fc.record({ kind, severity, stage: fc.constant(null), at: storedTime, first_at: storedTime }),
    { nil: null },
  ),
});
/** Names a hostile store could hold besides the quarantined domain's own memory. */
const otherName = fc.constantFrom(
  'other.nl',
  '__proto__',
  'constructor',
  'toString',
  'x'.repeat(300),
  '#sha256:00',
);

/** Any state the schema accepts (the quarantined domain carries no snooze: that silence is chosen). */
const anyState = fc
  .record({
    started_at: fc.option(storedTime, { nil: null }),
    last_scan_at: fc.option(storedTime, { nil: null }),
    last_published_at: fc.option(storedTime, { nil: null }),
    problem_keys: fc.array(fc.constantFrom('domain:other.nl', 'domain@page1'), { maxLength: 2 }),
    own: fc.option(memory, { nil: undefined }),
    others: fc.array(fc.tuple(otherName, memory), { maxLength: 3 }),
  })
  .map(({ own, others, ...header }): ScanState => {
    const domains: Record<string, unknown> = Object.fromEntries(others);
    if (own) domains[QUARANTINED] = own;
    return parseState(
      { version: 1, scope: null, account: null, ...header, domains, contacts: {} },
      'the generated state',
    );
  });

/** One scan: the machine's clock moves on, and the scan's `now` is anywhere around it. */
const scanStep = fc.record({
  clockHours: fc.integer({ min: 0, max: 48 }),
  offset: fc.oneof(
    fc.constant(0),
    fc.integer({ min: -10, max: 10 }).map((m) => m * 60_000),
    fc.integer({ min: -60 * 24, max: 60 * 24 }).map((h) => h * HOUR),
  ),
  allowClockSkew: fc.boolean(),
});

describe('memory and time', () => {
  it('publishes an ongoing critical finding at least once every critical repeat cadence of scan time, or refuses the scan', () => {
    fc.assert(
      fc.property(
        anyState,
        fc.array(scanStep, { minLength: 1, maxLength: 25 }),
        fc.constantFrom('warning', 'critical') as fc.Arbitrary<'warning' | 'critical'>,
        (initial, steps, minSeverity) => {
          const policy = { ...DEFAULT_STATE_POLICY, minSeverity };
          const lost = domain(QUARANTINED, T0 - 120 * DAY, {
            status: ['quarantine'],
            date_expiry: T0 - 60 * DAY,
            date_deleted: T0 - 20 * DAY,
            auto_renew: false,
          });
          let state = initial;
          let clock = T0 - 60 * DAY;
          const publishedAt: number[] = [];
          const storedAt = initial.domains[QUARANTINED]?.alerted?.at;
          const initialAlert = storedAt === undefined ? Number.NaN : parseRfc3339(storedAt);
          for (const step of steps) {
            clock += step.clockHours * HOUR;
            const now = clock + step.offset;
            const refusal = step.allowClockSkew ? null : scanTimeProblem(now, clock, state.last_scan_at);
            if (refusal) continue; // refused: nothing read, published or saved
            const { report, observed } = scanOf([lost], now);
            const result = compareWithState({ report, observed, state, policy });
            const inMessage =
              result.publish &&
              alertView(result.report, result.silenced).findings.some(
                (f) => isDomainFinding(f) && f.domain_name === QUARANTINED,
              );
            // The last time the finding was told, as far as this scan can know: a publish of this run
            // at or before its `now`, else the stored alert when that is not in the future.
            const told = [...publishedAt, ...(initialAlert <= now ? [initialAlert] : [])].filter(
              (t) => t <= now,
            );
            const last = told.length ? Math.max(...told) : Number.NEGATIVE_INFINITY;
            if (now - last >= REPEAT_MS)
              expect(inMessage, `scan at ${new Date(now).toISOString()}, last told ${last}`).toBe(true);
            if (inMessage) publishedAt.push(now);
            state = result.next;
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never lets a scan without --allow-clock-skew store a time ahead of the clock or move the state back', () => {
    fc.assert(
      fc.property(anyState, fc.array(scanStep, { minLength: 1, maxLength: 15 }), (initial, steps) => {
        let state = initial;
        let clock = T0 - 60 * DAY;
        for (const step of steps) {
          clock += step.clockHours * HOUR;
          const now = clock + step.offset;
          if (scanTimeProblem(now, clock, state.last_scan_at)) continue;
          const before =
            state.last_scan_at === null ? Number.NEGATIVE_INFINITY : parseRfc3339(state.last_scan_at);
          const { report, observed } = scanOf([domain('a.nl', T0)], now);
          state = compareWithState({ report, observed, state, policy: DEFAULT_STATE_POLICY }).next;
          const after = parseRfc3339(state.last_scan_at ?? '');
          expect(after).toBeGreaterThanOrEqual(before);
          expect(after - clock).toBeLessThanOrEqual(5 * 60_000);
        }
      }),
      { numRuns: 300 },
    );
  });
});
