import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { isWorse } from '../../functions/core/memory/actions';
import { stageOf } from '../../functions/core/memory/escalation';
import type { StatefulFinding } from '../../functions/core/memory/state';
import {
  applyDomainEvent,
  type DomainEvent,
  eventOf,
  HOUR,
  type Modelled,
  modelOf,
  nextScanAt,
  scanModel,
  stepOf,
  T0,
  withAction,
} from '../support/account-model';
import { DAY } from '../support/state-scan';
import { DEFAULT_STATE_POLICY, EMPTY_STATE, parseState } from '../support/whole-state';

/**
 * A model of an account over any sequence of scans (docs/memory.md as the oracle): 2 to 5 domains
 * that renew, near expiry, expire, enter quarantine, are restored, leave and come back, get a status
 * the API does not document or a record that cannot be read, flip auto-renew or transfer lock; the
 * clock advances by minutes to weeks and now and then runs a little back (--allow-clock-skew);
 * snoozes and acknowledgements are made between scans; some reads are cut short. What a user relies
 * on holds for each scan: a critical finding is never silenced past its cadence, the same finding
 * is not announced twice, nothing is resolved or said gone by a read that did not show it, a domain
 * said gone is said back, and a snooze holds until the finding gets worse.
 */

type Event = DomainEvent | 'none' | 'snooze' | 'ack';

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
    'auto_renew',
    'lock',
    'snooze',
    'ack',
    'renewal_due',
  ]),
);

/** The deployment's settings, with or without the policies' escalation (docs/policies.md#escalation). */
const ESCALATING = { ...DEFAULT_STATE_POLICY, escalation: { afterHours: 24, withinDays: 7 } };

const signature = (f: StatefulFinding) =>
  'domain_name' in f
    ? `${f.kind} ${f.severity} ${f.date_expiry} ${stageOf(f, DEFAULT_STATE_POLICY.thresholds)}`
    : '';

type Marked = DomainFinding & StatefulFinding & { repeated?: boolean };

describe('memory between scans, as a model of an account', () => {
  it('keeps the promises a user relies on over any sequence of scans', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 5 }),
        fc.array(step, { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        (size, steps, escalating) => {
          const policy = escalating ? ESCALATING : DEFAULT_STATE_POLICY;
          /** Escalations said per domain, kind and rung, until a resolution or a silence. */
          const escalations = new Set<string>();
          const model = modelOf(size);
          let now = T0;
          let out = scanModel(model, now, EMPTY_STATE, false, policy);
          let state = out.result.next;
          /** When each domain's critical finding was last in a published alert, unsilenced. */
          const lastHeard = new Map<string, { at: number; severity: string }>();
          /** The last announced (new or escalated) finding of each domain, until a resolution. */
          const announced = new Map<string, string>();
          /** Domains said gone, and when. */
          const gone = new Map<string, number>();
          const lastFinding = new Map<string, Marked>();
          let lastProblems = new Set<string>();
          let criticalProblemSince: number | undefined;
          /** The kind of each domain's finding at the last scan that judged its record. */
          const judgedKind = new Map<string, string>();
          const record = (r: typeof out) => {
            for (const f of r.result.report.findings as Marked[])
              if ('domain_name' in f) lastFinding.set(f.domain_name, f);
          };
          const heard = (r: typeof out, at: number) => {
            for (const f of r.result.report.findings as Marked[]) {
              if (!('domain_name' in f)) continue;
              const silent = f.snoozed_until !== undefined || f.acknowledged === true;
              if (f.change !== 'ongoing' && r.result.publish && !silent)
                announced.set(f.domain_name, signature(f));
              if (f.severity === 'info' || silent) continue;
              const was = lastHeard.get(f.domain_name);
              if (r.result.publish || was?.severity !== f.severity)
                lastHeard.set(f.domain_name, { at, severity: f.severity });
            }
          };
          record(out);
          heard(out, now);
          const trace: unknown[] = [];
          let latest = now;
          /** The last scan read the whole account and nothing had happened before it. */
          let settled = false;
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
              // The links and the command line offer no silence in a quarantine's last days.
              // Made between the scans: after the last one, no later than this one.
              const acted =
                e === 'snooze' || e === 'ack' ? withAction(state, name, e, f, n, before, now) : undefined;
              if (acted) {
                // After a silence the team has its afterHours again: escalation counts from its end.
                for (const x of [...escalations]) if (x.startsWith(`${name} `)) escalations.delete(x);
                state = acted;
              } else applyDomainEvent(m, e, n, now);
            }
            const prev = state;
            out = scanModel(model, now, prev, s.incomplete, policy);
            const r = out.result;
            trace.push({
              at: (now - T0) / HOUR,
              events,
              incomplete: s.incomplete,
              publish: r.publish,
              why: r.why,
            });
            const where = () => JSON.stringify(trace);
            const findings = (r.report.findings as Marked[]).filter((f) => 'domain_name' in f);
            const resolvedNames = new Set(r.report.resolved.map((x) => x.domain_name ?? ''));
            const complete = !s.incomplete;
            // Resolution honesty: no departure from a read that did not show the whole account, nor of a domain still there.
            for (const c of r.report.changes) {
              if (c.kind !== 'left_account') continue;
              expect(complete, `left_account from an incomplete read ${where()}`).toBe(true);
              const m = model.find((x) => x.record.domain_name === c.domain_name);
              expect(m?.present, `${c.domain_name} said gone while listed ${where()}`).toBe(false);
              gone.set(c.domain_name, now);
            }
            // Nothing resolved but from a record read and judged, or a departure.
            for (const x of r.report.resolved) {
              if (x.domain_name === undefined || x.reason === 'left_account') continue;
              expect(
                out.judged.has(x.domain_name),
                `${x.domain_name} resolved (${x.reason}) unjudged ${where()}`,
              ).toBe(true);
            }
            // Said back: a domain said gone within 90 days and read again.
            for (const [name, at] of gone) {
              if (!out.read.has(name)) continue;
              const back = r.report.changes.some((c) => c.kind === 'returned' && c.domain_name === name);
              if (now - at < 90 * DAY && now >= at)
                expect(back, `${name} back without returned ${where()}`).toBe(true);
              gone.delete(name);
            }
            for (const f of findings) {
              const name = f.domain_name;
              const silenced = f.snoozed_until !== undefined || f.acknowledged === true;
              const was = judgedKind.has(name) ? { kind: judgedKind.get(name) } : undefined;
              // A quarantine is announced at the first scan that reads it.
              // No snooze or acknowledgement of what it was before silences it (only one made for the quarantine).
              const actions = prev.domains[name]?.actions ?? prev.departed?.[name]?.actions;
              const forQuarantine =
                actions?.snooze?.kind === 'quarantine' || actions?.acknowledged?.kind === 'quarantine';
              if (
                f.kind === 'quarantine' &&
                was?.kind !== 'quarantine' &&
                out.judged.has(name) &&
                !forQuarantine
              )
                expect(
                  { name, change: f.change, publish: r.publish },
                  `quarantine not announced ${where()}`,
                ).toMatchObject({ change: expect.stringMatching(/new|escalated/), publish: true });
              // Never silenced: a critical finding is heard within its cadence (20 h), a warning within a week's (164 h).
              const cadence = f.severity === 'critical' ? 20 : f.severity === 'warning' ? 164 : undefined;
              const last = lastHeard.get(name);
              if (
                cadence !== undefined &&
                !silenced &&
                last?.severity === f.severity &&
                now - last.at >= cadence * HOUR
              )
                expect(
                  r.publish,
                  `${name} ${f.severity} not heard for ${(now - last.at) / HOUR} h ${where()}`,
                ).toBe(true);
              // No storm: the same finding is not announced twice without a resolution between.
              if (f.change !== 'ongoing' && !silenced && !resolvedNames.has(name)) {
                const sig = signature(f);
                const returned = r.report.changes.some(
                  (c) => c.kind === 'returned' && c.domain_name === name,
                );
                if (!returned && announced.get(name) === sig)
                  expect.fail(`${name} announced ${f.change} again as ${sig} ${where()}`);
              }
              // Acknowledged: holds while the expiry, kind and auto-renew stay, outside a quarantine's last days.
              const ack =
                prev.domains[name]?.actions?.acknowledged ?? prev.departed?.[name]?.actions?.acknowledged;
              if (ack && out.judged.has(name)) {
                const same =
                  ack.kind === f.kind &&
                  Date.parse(ack.date_expiry) === Date.parse(f.date_expiry) &&
                  ack.auto_renew === f.auto_renew;
                const last =
                  f.kind === 'quarantine' && typeof f.days_to_restore === 'number' && f.days_to_restore <= 7;
                expect(f.acknowledged === true, `${name} acknowledgement ${where()}`).toBe(same && !last);
              }
              // Escalation: never of a silenced finding, once per rung of the same finding.
              const esc = (f as { escalated_after_hours?: number }).escalated_after_hours;
              if (silenced)
                for (const e of [...escalations]) if (e.startsWith(`${name} `)) escalations.delete(e);
              if (esc !== undefined) {
                expect(silenced, `${name} escalated while silenced ${where()}`).toBe(false);
                const id = `${name} ${f.kind} ${stageOf(f, policy.thresholds)}`;
                expect(escalations.has(id), `${id} escalated twice ${where()}`).toBe(false);
                escalations.add(id);
              }
              // Snooze: a snoozed finding that did not get worse stays out; a worse one is announced.
              const snooze = prev.domains[name]?.actions?.snooze ?? prev.departed?.[name]?.actions?.snooze;
              if (
                snooze &&
                Date.parse(snooze.until) > now &&
                Date.parse(snooze.at) <= now &&
                out.judged.has(name)
              ) {
                const last =
                  f.kind === 'quarantine' && typeof f.days_to_restore === 'number' && f.days_to_restore <= 7;
                if ((isWorse(f, snooze) || last) && !f.acknowledged)
                  expect(
                    { silenced, publish: r.publish },
                    `${name} worse than its snooze yet silent ${where()}`,
                  ).toEqual({
                    silenced: false,
                    // Announced now, unless announced already (the snooze was made for what it was before).
                    publish: f.severity === 'info' || announced.get(name) === signature(f) ? r.publish : true,
                  });
                else if (!f.acknowledged)
                  expect(f.snoozed_until, `${name} snoozed but announced ${where()}`).toBe(snooze.until);
              }
            }
            for (const n of resolvedNames) announced.delete(n);
            for (const e of [...escalations])
              if (resolvedNames.has(e.split(' ')[0] ?? '')) escalations.delete(e);
            for (const c of r.report.changes)
              if (c.kind === 'left_account' && c.domain_name !== undefined) {
                // Gone: what it was is resolved, and a return is another story.
                announced.delete(c.domain_name);
                lastHeard.delete(c.domain_name);
              }
            // An unchanged, healthy account says nothing between scans until the weekly summary.
            if (
              s.events.length === 0 &&
              !s.incomplete &&
              settled &&
              findings.length === 0 &&
              r.report.problems.length === 0 &&
              prev.last_published_at !== null &&
              now - Date.parse(prev.last_published_at) < 7 * DAY &&
              now >= Date.parse(prev.last_scan_at ?? '')
            )
              expect(r.publish, `an unchanged account spoke ${where()}`).toBe(false);
            // Nothing happened since a whole read: nothing changed, resolved or newly unreadable; only time speaks.
            if (
              r.publish &&
              s.events.length === 0 &&
              !s.incomplete &&
              settled &&
              now >= Date.parse(prev.last_scan_at ?? '')
            )
              expect(r.why.join(), `news from an unchanged account ${where()}`).not.toMatch(
                /changed|resolved|new unreadable/,
              );
            // A record that cannot be read now of a domain last heard of as critical is heard within the cadence too.
            for (const p of r.report.problems) {
              const last =
                p.key === null || p.reason.startsWith('status ') ? undefined : lastHeard.get(p.key);
              const acts = p.key === null ? undefined : prev.domains[p.key]?.actions;
              // Silenced until its remembered expiry passes: expiring turned expired lifts what was made of it.
              const was = p.key === null ? undefined : prev.domains[p.key]?.finding;
              const turned = was?.kind === 'expiring' && Date.parse(was.date_expiry ?? '') <= now;
              const quiet =
                !turned && (acts?.acknowledged || (acts?.snooze && Date.parse(acts.snooze.until) > now));
              if (p.key === null || last?.severity !== 'critical' || quiet) continue;
              if (now - last.at >= 20 * HOUR)
                expect(r.publish, `unreadable ${p.key} critical not heard ${where()}`).toBe(true);
              if (r.publish) lastHeard.set(p.key, { at: now, severity: 'critical' });
            }
            // An unreadable record in quarantine is heard within the critical cadence too.
            if (r.report.problems.some((p) => p.severity === 'critical')) {
              if (criticalProblemSince === undefined) criticalProblemSince = now;
              else if (now - criticalProblemSince >= 20 * HOUR)
                expect(r.publish, `unreadable quarantine not heard ${where()}`).toBe(true);
              if (r.publish) criticalProblemSince = now;
            } else criticalProblemSince = undefined;
            // An unreadable record is news once: the same records as the last scan are none. A record is
            // what it says (its own severity), not what memory adds: one critical by what memory last
            // knew of its domain (`remembered_kind`) says no severity of its own, so one that said
            // quarantine and no longer does (renewed while unreadable) says something else: news.
            const says = (p: (typeof r.report.problems)[number]) =>
              p.remembered_kind ? undefined : p.severity;
            const keys = new Set(r.report.problems.map((p) => `${p.key} ${p.reason} ${says(p)}`));
            if ([...keys].every((k) => lastProblems.has(k)))
              expect(r.why.join(), `unreadable records said again ${where()}`).not.toMatch(/new unreadable/);
            lastProblems = keys;
            // Findings of domains not read keep their last; the ones read are what they are now.
            for (const f of findings) lastFinding.set(f.domain_name, f);
            for (const name of out.judged)
              judgedKind.set(name, findings.find((f) => f.domain_name === name)?.kind ?? '');
            for (const name of out.judged)
              if (!findings.some((f) => f.domain_name === name)) lastFinding.delete(name);
            for (const name of out.read)
              if (!findings.some((f) => f.domain_name === name)) lastHeard.delete(name);
            for (const f of findings)
              if (f.severity === 'info' || f.snoozed_until || f.acknowledged) lastHeard.delete(f.domain_name);
            heard(out, now);
            // As a file store keeps it: written as JSON and read back, checked.
            state = parseState(JSON.parse(JSON.stringify(r.next)), 'state.json');
            settled = s.events.length === 0 && !s.incomplete;
          }
        },
      ),
      { numRuns: 1000, seed: 20261127 },
    );
  });
});
