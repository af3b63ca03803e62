import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DomainFinding, isDomainFinding } from '../../functions/core/findings/classify';
import { isNews } from '../../functions/core/memory/group-news';
import type { StatefulFinding } from '../../functions/core/memory/state';
import {
  applyDomainEvent,
  CUT,
  type DomainEvent,
  eventOf,
  HOUR,
  type Modelled,
  modelOf,
  nextScanAt,
  PROPERTY_TIMEOUT_MS,
  readModel,
  stepOf,
  T0,
  withAction,
} from '../support/account-model';
import { groupScanner } from '../support/group-scan';
import { EMPTY_STATE, parseState, type ScanState } from '../support/whole-state';

/**
 * The model of memory-model.property.test.ts with policy groups (docs/policies.md): 2 to 5 domains,
 * each in a group by its tag — `vip` (recipients of its own, critical every 12 h), `slow` (recipients
 * of its own, critical every 48 h, at most 2 repeats), `lapse` (letLapse) or none — moved between
 * groups now and then, over up to 40 scans with every domain event, snoozes and cut reads. The
 * messages are the ones alerts/groups.ts plans from the comparison. What a group relies on: it hears
 * each of its own critical findings within its cadence (and a record of its domain published critical
 * by what memory knew, whatever the cap), never another group's news, of its domain
 * that left or came back; a domain let lapse is never repeated nor escalated, nor its unreadable
 * record repeated; an escalation reaches the account's message (the escalation recipients); no
 * finding is published to a group twice within its cadence. 2 000 runs on a fixed seed (about 2 s);
 * run against the code before 270d3d7 and 6dcfb54 it finds both (memory-groups-regressions.test.ts).
 */

const GROUPS = ['', 'vip', 'slow', 'lapse'] as const;
type Group = (typeof GROUPS)[number];
const CADENCE: Record<string, number> = { vip: 12, slow: 48 };
const CAP: Record<string, number> = { slow: 2 };
/** The least severity each group hears of. */
const LEVEL: Record<string, string[]> = { vip: ['warning', 'critical'], slow: ['critical'] };

const FILE = {
  policies: [
    {
      name: 'vip',
      match: { tags: ['vip'] },
      alertEmails: ['vip@example.nl'],
      repeat: { critical: 12 },
      alertThresholds: [60, 14, 2],
    },
    {
      name: 'slow',
      match: { tags: ['slow'] },
      alertEmails: ['slow@example.nl'],
      repeat: { critical: 48, cap: 2 },
      minSeverity: 'critical',
    },
    { name: 'lapse', match: { tags: ['lapse'] }, letLapse: true },
  ],
  escalation: { afterHours: 24, withinDays: 7 },
};
const { scan } = groupScanner(FILE);

type Event = DomainEvent | 'none' | 'snooze' | 'ack' | 'regroup';

const step = stepOf(
  eventOf<Event>([
    'renew',
    'expiring',
    'expire',
    'quarantine',
    'restore',
    'leave',
    'return',
    'undocumented',
    'unreadable',
    'readable',
    'lock',
    'snooze',
    'ack',
    'regroup',
  ]),
);

/** One scan at `now`, compared with `state`, and the messages alerts/groups.ts plans from it. */
function scanModel(model: readonly Modelled[], now: number, state: ScanState, incomplete: boolean) {
  const { read, problems } = readModel(model, incomplete);
  const out = scan(read, now, state, { problems, ...(incomplete ? { incomplete: CUT } : {}) });
  return { ...out, read: new Set(read.map((d) => d.domain_name)) };
}

/** A domain event, or the domain moved to group `n` of GROUPS (its tag). */
function apply(m: Modelled, e: Event, n: number, now: number): void {
  if (e !== 'regroup') applyDomainEvent(m, e, n, now);
  else {
    const g = GROUPS[n % GROUPS.length] as Group;
    m.record = { ...m.record, tags: g ? [g] : [] };
  }
}

type Marked = DomainFinding & StatefulFinding & { repeated?: boolean };

const sig = (f: Marked) => `${f.kind} ${f.severity} ${f.date_expiry}`;

describe('memory between scans, with policy groups', () => {
  it(
    'gives each group its own news, within its cadence, and nothing of another group',
    () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 2, max: 5 }),
          fc.array(fc.constantFrom<Group>(...GROUPS), { minLength: 5, maxLength: 5 }),
          fc.array(step, { minLength: 1, maxLength: 40 }),
          (size, initial, steps) => {
            const model = modelOf(size, (i) => ({ tags: initial[i] ? [initial[i] as string] : [] }));
            let now = T0;
            let latest = now;
            let out = scanModel(model, now, EMPTY_STATE, false);
            let state = out.next;
            /** When a group's message last carried each of its critical findings, by `group name`. */
            const heard = new Map<string, { at: number; sig: string }>();
            /** When a group's message last carried each problem record of its domains, by `group key`. */
            const heardRecord = new Map<string, number>();
            const lastFinding = new Map<string, Marked>();
            const trace: unknown[] = [];
            const hear = (o: typeof out) => {
              for (const p of o.plan) {
                if (p.group === undefined) continue;
                for (const f of p.report.findings as Marked[])
                  if (isDomainFinding(f) && f.severity === 'critical')
                    heard.set(`${p.group} ${f.domain_name}`, { at: now, sig: sig(f) });
              }
            };
            hear(out);
            for (const f of out.result.report.findings as Marked[])
              if (isDomainFinding(f)) lastFinding.set(f.domain_name, f);
            for (const s of steps) {
              const before = now;
              now = nextScanAt(now, latest, s.minutes);
              latest = Math.max(latest, now);
              const events: string[] = [];
              for (const [i, e, n] of s.events) {
                const m = model[i % size] as Modelled;
                const name = m.record.domain_name;
                events.push(`${name} ${e} ${n}`);
                const f = lastFinding.get(name);
                if (e === 'snooze' || e === 'ack')
                  state = withAction(state, name, e, f, n, before, now) ?? state;
                else apply(m, e, n, now);
              }
              const prev = state;
              out = scanModel(model, now, prev, s.incomplete);
              const r = out.result;
              trace.push({
                at: (now - T0) / HOUR,
                events,
                incomplete: s.incomplete,
                why: r.why,
                sent: out.plan.map((p) => p.group ?? 'account'),
              });
              const where = () => JSON.stringify(trace);
              const findings = (r.report.findings as Marked[]).filter(isDomainFinding) as Marked[];
              const sentTo = new Map(out.plan.map((p) => [p.group ?? '', p.report]));
              // Never another group's news: a group's message names its own domains alone.
              for (const p of out.plan) {
                if (p.group === undefined) {
                  for (const f of p.report.findings)
                    expect(isDomainFinding(f) && f.let_lapse, `lapse in account message ${where()}`).not.toBe(
                      true,
                    );
                  continue;
                }
                for (const f of p.report.findings)
                  if (isDomainFinding(f))
                    expect(f.policy, `${f.domain_name} in group ${p.group} ${where()}`).toBe(p.group);
                const st = p.report as unknown as {
                  changes: { policy?: string }[];
                  resolved: { policy?: string }[];
                };
                for (const e of [...st.changes, ...st.resolved])
                  expect(e.policy, `entry in group ${p.group} ${where()}`).toBe(p.group);
              }
              for (const f of findings) {
                const name = f.domain_name;
                const group = f.policy;
                const silenced = f.snoozed_until !== undefined || f.acknowledged === true;
                // Let lapse: never repeated, escalated or announced.
                if (f.let_lapse) {
                  expect(
                    { repeated: f.repeated, esc: f.escalated_after_hours },
                    `${name} let lapse repeated or escalated ${where()}`,
                  ).toEqual({ repeated: undefined, esc: undefined });
                  continue;
                }
                // An escalation reaches the escalation recipients: in the account's message.
                if (f.escalated_after_hours !== undefined)
                  expect(
                    sentTo.get('')?.findings.some((x) => isDomainFinding(x) && x.domain_name === name),
                    `${name} escalated outside the account message ${where()}`,
                  ).toBe(true);
                if (group === undefined || !(group in CADENCE)) continue;
                const msg = sentTo.get(group);
                const carried =
                  msg?.findings.some((x) => isDomainFinding(x) && x.domain_name === name) === true;
                // News of the group reaches the group.
                if (!silenced && isNews(f) && LEVEL[group]?.includes(f.severity))
                  expect(carried, `${name} news (${f.change}) not sent to ${group} ${where()}`).toBe(true);
                // Within its cadence: a critical finding the group last heard of its cadence ago.
                const last = heard.get(`${group} ${name}`);
                const repeats = prev.domains[name]?.alerted?.repeats ?? 0;
                const cap = CAP[group];
                const uncapped = cap === undefined || repeats < cap;
                const cadence = CADENCE[group] as number;
                if (f.severity === 'critical' && !silenced && last && last.sig === sig(f) && uncapped)
                  if (now - last.at >= cadence * HOUR || now < last.at)
                    expect(
                      carried,
                      `${name} not heard by ${group} for ${(now - last.at) / HOUR} h ${where()}`,
                    ).toBe(true);
                // No storm: published again to the group only once its cadence passed.
                // A quarantine in its last 7 days to restore is repeated daily (20 h) whatever the cadence,
                // also one kept as remembered (its record not judged, read as another kind) by its restore-by.
                const kept = prev.domains[name]?.finding;
                const keptBy =
                  f.kind !== 'quarantine' && kept?.kind === 'quarantine' ? kept.restore_by : undefined;
                const lastDays =
                  (f.kind === 'quarantine' &&
                    typeof f.days_to_restore === 'number' &&
                    f.days_to_restore <= 7) ||
                  (keptBy !== undefined && Math.floor((Date.parse(keptBy) - now) / 86_400_000) <= 7);
                const floor = lastDays ? Math.min(cadence, 20) : cadence;
                if (f.repeated && last && last.sig === sig(f) && now >= last.at)
                  expect(
                    now - last.at >= floor * HOUR,
                    `${name} repeated to ${group} after ${(now - last.at) / HOUR} h ${where()}`,
                  ).toBe(true);
              }
              // A record published critical by what memory knew of a group's domain (a kept quarantine,
              // an expired domain whose record broke) stands for its finding: the group hears it within
              // its cadence, counted from when it last heard of the domain critical, whatever the cap.
              for (const p of r.report.problems) {
                const group = prev.domains[p.key ?? '']?.group;
                if (p.key === null || group === undefined || !(group in CADENCE)) continue;
                if (p.severity !== 'critical' || (!p.kept_quarantine && p.remembered_kind === undefined))
                  continue;
                const at = Math.max(
                  heard.get(`${group} ${p.key}`)?.at ?? 0,
                  heardRecord.get(`${group} ${p.key}`) ?? 0,
                );
                if (at > 0 && (now - at >= (CADENCE[group] as number) * HOUR || now < at))
                  expect(
                    sentTo.get(group)?.problems.some((x) => x.key === p.key),
                    `${p.key} record not heard by ${group} for ${(now - at) / HOUR} h ${where()}`,
                  ).toBe(true);
              }
              // An unreadable record repeated for its criticality: of a domain not let lapse.
              if (r.why.some((w) => /^\d+ unreadable records? (in quarantine|of (a )?critical)/.test(w))) {
                const lapsing = (k: string | null) => prev.domains[k ?? '']?.group === 'lapse';
                expect(
                  r.report.problems.some((p) => p.key !== null && !lapsing(p.key)),
                  `unreadable records of domains let lapse repeated ${where()}`,
                ).toBe(true);
              }
              // A domain that left or came back reaches the group it was or is in.
              for (const c of r.report.changes) {
                if (c.kind !== 'left_account' && c.kind !== 'returned') continue;
                if (c.policy === undefined || !(c.policy in CADENCE)) continue;
                const msg = sentTo.get(c.policy) as unknown as {
                  changes: { kind: string; domain_name?: string }[];
                };
                expect(
                  msg?.changes.some((x) => x.kind === c.kind && x.domain_name === c.domain_name),
                  `${c.domain_name} ${c.kind} not sent to ${c.policy} ${where()}`,
                ).toBe(true);
              }
              for (const f of findings) lastFinding.set(f.domain_name, f);
              for (const name of out.read)
                if (!findings.some((f) => f.domain_name === name)) lastFinding.delete(name);
              // A group heard of a finding no more once it moved or changed: the sig check covers a change.
              for (const f of findings)
                for (const g of Object.keys(CADENCE))
                  if (g !== f.policy || f.snoozed_until || f.acknowledged)
                    heard.delete(`${g} ${f.domain_name}`);
              hear(out);
              for (const p of out.plan)
                for (const x of p.group === undefined ? [] : p.report.problems)
                  if (x.key !== null) heardRecord.set(`${p.group} ${x.key}`, now);
              state = parseState(JSON.parse(JSON.stringify(out.next)), 'state.json');
            }
          },
        ),
        { numRuns: 2000, seed: 20261127 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
