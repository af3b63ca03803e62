import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { eventUid, renderCalendar } from '../../functions/core/pages/calendar';
import type { Domain } from '../../functions/core/reseller/schemas';
import type { Report } from '../../functions/core/scan/scan';
import { HOUR, T0 } from '../support/account-model';
import { domainFinding, reportOf } from '../support/report';
import { DAY, domain, heldInQuarantine, scanUnjudged } from '../support/state-scan';
import { EMPTY_STATE, type ScanState } from '../support/whole-state';

/**
 * The calendar feed of a quarantine memory keeps as remembered while its record cannot be judged
 * (a status the API does not document): its restore-by event stays, on the remembered deadline,
 * under the UID it had while the record read quarantine, and it is as urgent as that quarantine.
 */

function run(d: readonly Domain[], now: number, state: ScanState) {
  const r = scanUnjudged(d, now, state);
  return { report: r.report as unknown as Report, next: r.next };
}

/** In .nl quarantine (40 days to restore) since 35 days before T0: restore by 27 Nov 2026 06:00 UTC. */
const held = heldInQuarantine(T0, 35);
/** Expiring in 20 days, auto-renew off: a warning. */
const other = domain('aaa.nl', T0, { auto_renew: false, date_expiry: T0 + 20 * DAY });

/** The report read in quarantine at T0 (judged), then of `odd` a day on (kept as remembered). */
function judgedThenKept(odd: Domain, also: readonly Domain[] = []) {
  const judged = run([held, ...also], T0, EMPTY_STATE);
  const second = run([odd, ...also], T0 + HOUR, judged.next);
  return { judged: judged.report, kept: run([odd, ...also], T0 + 25 * HOUR, second.next).report };
}

const readExpired: Domain = { ...held, status: ['pendingDelete'] };
const readRenewed: Domain = {
  ...held,
  status: ['pendingDelete'],
  date_expiry: T0 + 300 * DAY,
  date_deleted: null,
};

const events = (ics: string) =>
  new ICAL.Component(ICAL.parse(ics)).getAllSubcomponents('vevent').map((e) => new ICAL.Event(e));

/** An event's DTSTAMP, as epoch ms. */
function stampOf(e: ICAL.Event | undefined): number {
  if (!e) throw new Error('no such event');
  return (e.component.getFirstPropertyValue('dtstamp') as ICAL.Time).toJSDate().getTime();
}

describe('the calendar feed of a quarantine kept as remembered', () => {
  it('has its restore-by event while its record reads expired, under the UID it had', () => {
    const { judged, kept } = judgedThenKept(readExpired);
    expect(kept.findings[0]).toMatchObject({ kind: 'expired', remembered: { kind: 'quarantine' } });
    const before = events(renderCalendar(judged)).find((e) => e.summary.startsWith('Restore by:'));
    const after = events(renderCalendar(kept)).find((e) => e.summary.startsWith('Restore by:'));
    expect(after?.summary).toBe('Restore by: held.nl (last day to restore)');
    expect(after?.startDate.toString()).toBe('2026-11-27');
    expect(after?.description).toContain('LAST DAYS: restore by 27 Nov 2026 06:00 UTC, 3 days left');
    expect(after?.uid).toBe(before?.uid);
  });

  it('keeps the UID of its own event while its record reads another kind, the newer one told by DTSTAMP', () => {
    for (const odd of [readExpired, readRenewed]) {
      const { judged, kept } = judgedThenKept(odd);
      const own = (ics: string) => events(ics).find((e) => !e.summary.startsWith('Restore by:'));
      const before = own(renderCalendar(judged));
      const after = own(renderCalendar(kept));
      expect(after?.summary).not.toBe(before?.summary);
      expect(after?.uid).toBe(before?.uid);
      // One SEQUENCE throughout (RFC 5546: a lower one is a stale copy, and the feed keeps no past
      // to raise it from); the later DTSTAMP makes the kept event the newer one.
      expect([before?.sequence, after?.sequence]).toEqual([0, 0]);
      expect(stampOf(after)).toBeGreaterThan(stampOf(before));
      const f = kept.findings[0];
      if (!f || !('domain_name' in f)) throw new Error('no domain finding');
      expect(eventUid(f)).toBe(after?.uid);
      const uids = events(renderCalendar(kept)).map((e) => e.uid);
      expect(new Set(uids).size).toBe(uids.length);
    }
  });

  it('keeps the UID of its own event when its record reads quarantine again', () => {
    const judged = run([held], T0, EMPTY_STATE);
    const second = run([readExpired], T0 + HOUR, judged.next);
    const kept = run([readExpired], T0 + 25 * HOUR, second.next);
    const back = run([held], T0 + 49 * HOUR, kept.next).report;
    const uids = (r: Report) => events(renderCalendar(r)).map((e) => e.uid);
    expect(back.findings[0]).toMatchObject({ kind: 'quarantine' });
    expect(back.findings[0]).not.toHaveProperty('remembered');
    expect(uids(back)).toEqual(uids(judged.report));
    expect(uids(kept.report)).toEqual(uids(judged.report));
    // Its SEQUENCE never falls from one feed to the next, or a client that honours it keeps the kept copy.
    const own = (r: Report) => events(renderCalendar(r)).find((e) => !e.summary.startsWith('Restore by:'));
    expect(own(back)?.sequence).toBeGreaterThanOrEqual(own(kept.report)?.sequence as number);
    expect(stampOf(own(back))).toBeGreaterThan(stampOf(own(kept.report)));
  });

  it('has its restore-by event, with its alarm, while its record reads as an info finding', () => {
    const { kept } = judgedThenKept(readRenewed);
    // Published at the higher of the two severities (withRemembered), its record reading info.
    expect(kept.findings[0]).toMatchObject({
      kind: 'auto_renew_off',
      severity: 'critical',
      remembered: { kind: 'quarantine' },
    });
    const ics = renderCalendar(kept);
    const restore = events(ics).find((e) => e.summary.startsWith('Restore by:'));
    expect(restore?.startDate.toString()).toBe('2026-11-27');
    expect(ics).toContain('TRIGGER:-P7D');
  });

  it('puts its events among the critical ones while its record reads as an info finding', () => {
    const { kept } = judgedThenKept(readRenewed, [other]);
    const summaries = events(renderCalendar(kept)).map((e) => e.summary);
    expect(summaries).toEqual([
      'Expires: held.nl (auto-renew off)',
      'Restore by: held.nl (last day to restore)',
      'Expires: aaa.nl (auto-renew off)',
    ]);
    // A feed too small for every event keeps its urgent ones whole, the kept quarantine among them.
    const whole = renderCalendar(kept);
    const tight = renderCalendar(kept, { budgetBytes: Buffer.byteLength(whole) - 200 });
    expect(tight).toContain('DESCRIPTION:held.nl: last read in quarantine');
  });

  it('uses the remembered restore-by when the record reads a later one', () => {
    // A quarantine read with a later deadline (a registry finding not confirmed, say) that memory
    // judges by the sooner one it remembers (unjudged-memory.ts judgedAs).
    const { judged } = judgedThenKept(readExpired);
    const read = judged.findings[0] as DomainFinding;
    const later = {
      ...read,
      restore_by: '2026-12-02T06:00:00.000Z',
      days_to_restore: 8,
      remembered: {
        kind: 'quarantine',
        severity: 'critical',
        restore_by: read.restore_by,
        days_to_restore: 3,
        because: 'registry_unconfirmed',
      },
    } satisfies DomainFinding;
    const restore = (f: DomainFinding) =>
      events(renderCalendar({ ...judged, findings: [f] })).filter((e) => e.summary.startsWith('Restore by:'));
    expect(restore(later).map((e) => e.startDate.toString())).toEqual(['2026-11-27']);
    expect(restore(later)[0]?.description).toContain('restore by 27 Nov 2026 06:00 UTC');
    expect(restore(later)[0]?.uid).toBe(restore(read)[0]?.uid);
  });
});

describe('the calendar feed of a registry expiry mismatch kept as remembered', () => {
  it('keeps the UID of its event while the registry is not checked again, and when it is', () => {
    // The reseller's record ends in 20 days (a warning of its own), the registry's in 3.
    const registry = {
      kind: 'registry_expiry_mismatch',
      severity: 'critical',
      date_expiry: '2026-11-25T06:00:00.000Z',
      days_left: 3,
      status: [],
      server: 'https://rdap.example',
    } as const;
    const read = domainFinding('ends.com', 'registry_expiry_mismatch', 'critical', 20, {
      registry,
      reseller_finding: { kind: 'expiring', severity: 'warning' },
    });
    // Not checked again: the record read alone, with the mismatch memory keeps (no registry date).
    const kept = domainFinding('ends.com', 'expiring', 'critical', 20, {
      remembered: { kind: 'registry_expiry_mismatch', severity: 'critical', because: 'registry_unconfirmed' },
    });
    const own = (f: DomainFinding) => events(renderCalendar(reportOf([f])))[0];
    expect(own(read)?.startDate.toString()).toBe('2026-11-25');
    expect(own(kept)?.uid).toBe(own(read)?.uid);
    expect(eventUid(kept)).toBe(eventUid(read));
  });
});
