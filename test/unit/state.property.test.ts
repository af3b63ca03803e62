import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isDomainFinding, type Severity, severityRank } from '../../functions/core/findings/classify';
import { stageOf } from '../../functions/core/memory/escalation';
import type { Domain } from '../../functions/core/reseller/schemas';
import { DAY, domain, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE, type ScanState } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const NAMES = ['a.nl', 'b.com', 'c.eu'] as const;

type Step =
  | { readonly kind: 'wait'; readonly hours: number }
  | { readonly kind: 'auto_renew'; readonly name: string; readonly on: boolean }
  | { readonly kind: 'renew'; readonly name: string }
  | { readonly kind: 'quarantine'; readonly name: string }
  | { readonly kind: 'restore'; readonly name: string }
  | { readonly kind: 'leave'; readonly name: string }
  | { readonly kind: 'return'; readonly name: string }
  | { readonly kind: 'unlock'; readonly name: string }
  | { readonly kind: 'scan'; readonly outcome: 'delivered' | 'publish_failed' | 'dry_run' };

const name = fc.constantFrom(...NAMES);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('wait' as const), hours: fc.integer({ min: 1, max: 400 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('auto_renew' as const), name, on: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('renew' as const), name }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('quarantine' as const), name }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restore' as const), name }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('leave' as const), name }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('return' as const), name }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('unlock' as const), name }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('scan' as const),
      outcome: fc.constantFrom('delivered', 'delivered', 'publish_failed', 'dry_run'),
    }),
  },
);

describe('compareWithState over any sequence of scans and account changes', () => {
  it('announces each (domain, threshold) at most once until it is resolved, and resolves every finding that goes away', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -3, max: 45 }), { minLength: NAMES.length, maxLength: NAMES.length }),
        fc.array(step, { maxLength: 60 }),
        fc.constantFrom<Severity>('warning', 'critical'),
        (expiryDays, steps, minSeverity) => {
          const policy = { ...DEFAULT_STATE_POLICY, minSeverity };
          let now = T0;
          const account = new Map<string, Domain>(
            NAMES.map((n, i) => [
              n,
              domain(n, T0, { auto_renew: false, date_expiry: T0 + (expiryDays[i] ?? 0) * DAY + 3_600_000 }),
            ]),
          );
          const gone = new Map<string, Domain>();
          let state: ScanState = EMPTY_STATE;
          const episode = new Map<string, number>();
          const announced = new Set<string>();

          for (const s of [...steps, { kind: 'scan', outcome: 'delivered' } as const]) {
            const d = 'name' in s ? account.get(s.name) : undefined;
            switch (s.kind) {
              case 'wait':
                now += s.hours * 3_600_000;
                break;
              case 'auto_renew':
                if (d) account.set(s.name, { ...d, auto_renew: s.on });
                break;
              case 'renew':
                if (d) account.set(s.name, { ...d, date_expiry: Math.max(d.date_expiry, now) + 365 * DAY });
                break;
              case 'quarantine':
                if (d && d.date_expiry <= now)
                  account.set(s.name, { ...d, status: ['quarantine'], date_deleted: now });
                break;
              case 'restore':
                if (d?.status.includes('quarantine'))
                  account.set(s.name, {
                    ...d,
                    status: ['registered'],
                    date_deleted: null,
                    date_expiry: now + 365 * DAY,
                  });
                break;
              case 'leave':
                if (d) {
                  account.delete(s.name);
                  gone.set(s.name, d);
                }
                break;
              case 'return': {
                const back = gone.get(s.name);
                if (back && !d) {
                  account.set(s.name, back);
                  gone.delete(s.name);
                }
                break;
              }
              case 'unlock':
                if (d) account.set(s.name, { ...d, transfer_lock: false });
                break;
              case 'scan': {
                const first = state.last_scan_at === null;
                const { report, observed } = scanOf([...account.values()], now);
                const result = compareWithState({ report, observed, state, policy });
                if (first) expect(result.report.changes.filter((c) => c.kind === 'left_account')).toEqual([]);
                if (s.outcome !== 'delivered') break; // nothing delivered, nothing saved: the next run says it again

                // No finding disappears (or falls in severity) without a resolved entry.
                for (const [n, memory] of Object.entries(state.domains)) {
                  if (!memory.finding) continue;
                  const nowFinding = report.findings.find((f) => isDomainFinding(f) && f.domain_name === n);
                  if (
                    !nowFinding ||
                    severityRank(nowFinding.severity) < severityRank(memory.finding.severity)
                  )
                    expect(result.report.resolved.map((r) => r.domain_name)).toContain(n);
                }
                for (const r of result.report.resolved) {
                  const key = r.domain_name ?? '';
                  episode.set(key, (episode.get(key) ?? 0) + 1);
                }
                // Each (domain, threshold) announced at most once per episode.
                for (const f of result.report.findings) {
                  if (!isDomainFinding(f) || f.change === 'ongoing') continue;
                  if (severityRank(f.severity) < severityRank(minSeverity)) continue;
                  expect(result.publish).toBe(true);
                  const key = `${f.domain_name} #${episode.get(f.domain_name) ?? 0} at ${stageOf(f, policy.thresholds)}`;
                  expect(announced.has(key), `announced twice: ${key}`).toBe(false);
                  announced.add(key);
                }
                state = result.next;
                break;
              }
            }
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
