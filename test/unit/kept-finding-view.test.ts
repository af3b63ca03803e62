import { describe, expect, it } from 'vitest';
import { renderSms } from '../../functions/core/alerts/alert';
import { chatItems } from '../../functions/core/alerts/chat';
import { renderDigest } from '../../functions/core/alerts/digest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { jsonElement } from '../../functions/core/memory/report-json';
import { DomainFindingShape } from '../../functions/core/memory/report-view';
import type { Report } from '../../functions/core/scan/scan';
import { HOUR, T0 } from '../support/account-model';
import { DAY, domain, heldInQuarantine, scanUnjudged as run, scanOf } from '../support/state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, EMPTY_STATE } from '../support/whole-state';

/**
 * A quarantine kept as remembered while its record reads expired (a status the API does not
 * document): memory judges it as the quarantine, so every channel says so, with its restore-by.
 */

/** In .nl quarantine (40 days to restore) since 35 days before T0: restore by 27 Nov 2026 06:00 UTC. */
const held = heldInQuarantine(T0, 35);

/** Alerted at T0 in quarantine, read an hour on with an undocumented status, then a day on. */
function keptReport(): Report {
  const first = run([held], T0, EMPTY_STATE);
  const odd = { ...held, status: ['pendingDelete'] };
  const second = run([odd], T0 + HOUR, first.next);
  return run([odd], T0 + 25 * HOUR, second.next).report as unknown as Report;
}

const only = (report: Report) => report.findings[0] as DomainFinding;

describe('a quarantine kept as remembered while its record reads expired, as published', () => {
  it('carries the remembered quarantine and its restore-by in the JSON', () => {
    const f = only(keptReport());
    expect(f.kind).toBe('expired');
    expect(f.remembered).toEqual({
      kind: 'quarantine',
      severity: 'critical',
      restore_by: '2026-11-27T06:00:00.000Z',
      days_to_restore: 3,
      because: 'status_undocumented',
    });
    expect(DomainFindingShape.safeParse(f).success).toBe(true);
  });

  it('says the remembered quarantine and its last days in the digest line', () => {
    const digest = renderDigest(keptReport());
    expect(digest).toContain(
      'held.nl: last read in quarantine, LAST DAYS: restore by 27 Nov 2026 06:00 UTC, 3 days left; its record now says expired',
    );
    expect(digest).toContain('with a status the API does not document');
  });

  it('points its next step to the control panel and the remembered restore-by', () => {
    const f = only(keptReport());
    const step = (jsonElement('findings', f) as { next_step: string }).next_step;
    expect(step).toContain("Check it in the reseller's control panel now");
    expect(step).toContain('restore it there by 27 Nov 2026 06:00 UTC (3 days left)');
    expect(step).not.toMatch(/^Renew/);
  });

  it('names its last days in the SMS, within one part', () => {
    const sms = renderSms(keptReport());
    expect(sms).toContain('held.nl LAST DAYS 3d to restore?');
    expect(sms.length).toBeLessThanOrEqual(160);
  });

  it('says it in chat too', () => {
    const [item] = chatItems(keptReport());
    expect(item?.what).toContain('last read in quarantine');
    expect(item?.next).toContain('restore it there by');
  });

  it('is ordered by its remembered restore-by, before quarantines with more days left', () => {
    // Twenty .nl quarantines with 30 days to restore: the kept one, 3 days left, comes first.
    const later = Array.from({ length: 20 }, (_, i) =>
      domain(`later${String(i).padStart(2, '0')}.nl`, T0, {
        auto_renew: false,
        status: ['quarantine'],
        date_expiry: T0 - 11 * DAY,
        date_deleted: T0 - 10 * DAY,
      }),
    );
    const first = run([held, ...later], T0, EMPTY_STATE);
    const odd = { ...held, status: ['pendingDelete'] };
    const second = run([odd, ...later], T0 + HOUR, first.next);
    const report = run([odd, ...later], T0 + 25 * HOUR, second.next).report as unknown as Report;
    expect((report.findings[0] as DomainFinding).domain_name).toBe('held.nl');
    expect(renderSms(report)).toMatch(/^21 critical: held\.nl LAST DAYS 3d to restore\?; later00\.nl/);
    expect(renderDigest(report)).toMatch(/CRITICAL \(21\)\n- (REPEATED )?held\.nl: last read in quarantine/);
    expect(chatItems(report)[0]?.name).toContain('held.nl');
  });

  it('names a registry finding kept because the registry could not be checked', () => {
    const late = domain('r.nl', T0, { auto_renew: false, date_expiry: T0 + 20 * DAY });
    const read = scanOf([late], T0);
    const asRead = read.report.findings[0] as DomainFinding;
    const registry = {
      kind: 'registry_redemption' as const,
      severity: 'critical' as const,
      date_expiry: null,
      days_left: null,
      status: ['redemption period'],
      server: 'https://rdap.example.nl',
    };
    const redeem = {
      ...asRead,
      kind: 'registry_redemption' as const,
      severity: 'critical' as const,
      registry,
    };
    const state = EMPTY_STATE;
    const first = compareWithState({
      report: { ...read.report, findings: [redeem] },
      observed: read.observed,
      state,
      policy: DEFAULT_STATE_POLICY,
    });
    const again = scanOf([late], T0 + HOUR);
    const section = { days: 7, tolerance_days: 1, sample_day: 1, problems: [], unconfirmed: ['r.nl'] };
    const report = { ...again.report, registry: { ...again.report.registry, ...section } } as Report;
    const kept = compareWithState({
      report,
      observed: again.observed,
      state: first.next,
      policy: DEFAULT_STATE_POLICY,
    });
    const f = kept.report.findings[0] as DomainFinding;
    expect(f.remembered).toEqual({
      kind: 'registry_redemption',
      severity: 'critical',
      because: 'registry_unconfirmed',
    });
    // The digest of the finding alone (this registry section holds only what memory reads).
    const { registry: _section, ...shown } = kept.report;
    const digest = renderDigest(shown as unknown as Report);
    expect(digest).toContain('r.nl: last read in redemption at the registry; its record now says expires');
    expect(digest).toContain('and the registry could not be checked this scan');
    // Published critical as remembered: the SMS names it as the redemption it was last read as.
    expect(renderSms(shown as unknown as Report)).toContain('1 critical: r.nl registry redemption?');
  });

  it('is published at the remembered severity when its record reads lower, so every channel names it', () => {
    // The undocumented status moved the expiry on a year: read by its dates, auto-renew off (info).
    const first = run([held], T0, EMPTY_STATE);
    const odd = { ...held, status: ['pendingDelete'], date_expiry: T0 + 300 * DAY };
    const second = run([odd], T0 + HOUR, first.next);
    const report = run([odd], T0 + 25 * HOUR, second.next).report as unknown as Report;
    const f = only(report);
    expect(f.kind).toBe('auto_renew_off');
    expect(f.remembered?.severity).toBe('critical');
    expect(f.severity).toBe('critical');
    expect(report.summary).toEqual({ critical: 1, warning: 0, info: 0 });
    expect(renderSms(report)).toContain('held.nl LAST DAYS 3d to restore?');
    const digest = renderDigest(report);
    expect(digest).toContain('held.nl: last read in quarantine, LAST DAYS: restore by 27 Nov 2026 06:00 UTC');
    expect(digest).not.toContain('Nothing critical or urgent');
    expect(chatItems(report)[0]?.severity).toBe('critical');
  });

  it('is not marked when memory judges it as read', () => {
    const first = run([held], T0, EMPTY_STATE);
    const again = run([held], T0 + 25 * HOUR, first.next);
    expect(only(again.report as unknown as Report)).not.toHaveProperty('remembered');
  });

  it('refuses a stored remembered restore-by that is not a time', () => {
    const f = only(keptReport());
    const bad = { ...f, remembered: { ...f.remembered, restore_by: 'soon' } };
    expect(DomainFindingShape.safeParse(bad).success).toBe(false);
  });
});
