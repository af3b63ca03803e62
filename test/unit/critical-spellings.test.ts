import { describe, expect, it } from 'vitest';
import { criticalCount, criticalProblems, renderSms } from '../../functions/core/alerts/alert';
import { chatNotificationOf } from '../../functions/core/alerts/chat';
import { renderDigest } from '../../functions/core/alerts/digest';
import { buildAlertMessage, reportJsonOf, truncateReport } from '../../functions/core/alerts/message';
import { type DomainFinding, isDomainFinding } from '../../functions/core/findings/classify';
import { alertView, snoozeOf } from '../../functions/core/memory/actions';
import type { ScanMemory } from '../../functions/core/memory/scan-memory';
import { unreadableQuarantineCount } from '../../functions/core/memory/unjudged-memory';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, reportOf } from '../support/report';
import { DAY, domain, scanWithState } from '../support/state-scan';
import { DEFAULT_STATE_POLICY, EMPTY_STATE, type ScanState } from '../support/whole-state';

type Problem = Report['problems'][number];
const inQuarantine = (key: string): Problem => ({
  resource: 'domain',
  key,
  page: 1,
  reason: 'status redemptionPeriod, record unreadable',
  severity: 'critical',
});
/** One domain the reseller lists twice, under two spellings (case and a trailing dot), each record saying quarantine. */
const twoSpellings = () => reportOf([], [inQuarantine('Bloem.NL'), inQuarantine('bloem.nl.')]);
const noMemory = { prior: new Map() } as unknown as ScanMemory;
const noneLapse = () => false;

describe('a domain listed under two spellings whose records both say quarantine', () => {
  it('is one critical item in the alert, its attributes and the log', () => {
    // Act
    const report = twoSpellings();
    const alert = buildAlertMessage(report);
    const repeatedInLog = unreadableQuarantineCount(report.problems, report.findings, noMemory, noneLapse);

    // Assess
    expect(criticalCount(report)).toBe(1);
    expect(alert.attributes.critical_count).toBe(1);
    expect(alert.subject).toContain('1 critical');
    expect(repeatedInLog).toBe(1);
  });

  it('is named once as one critical item in the SMS and the digest, as the subject counts it', () => {
    // Act
    const report = twoSpellings();
    const digest = renderDigest(report);

    // Assess: the second spelling stays among the records that could not be read.
    expect(renderSms(report)).toBe('1 critical: bloem.nl quarantine?');
    expect(digest).toContain('CRITICAL (1)\n- Bloem.NL: says it is in quarantine');
    expect(digest).toContain('- domain bloem.nl. on page 1');
  });

  it('is one critical item when a cut leaves one spelling out', () => {
    // Act: the log's cut and the message's JSON each keep the first record only.
    const report = twoSpellings();
    const logged = truncateReport(report, 0, 1);
    const json = JSON.parse(reportJsonOf(buildAlertMessage(report))) as Report;

    // Assess
    expect(criticalCount(logged)).toBe(1);
    expect(criticalCount(json)).toBe(1);
  });

  it('is still two critical items when the two records are two domains', () => {
    expect(criticalCount(reportOf([], [inQuarantine('bloem.nl'), inQuarantine('bloem.be')]))).toBe(2);
  });

  it('is counted alike in the whole report and the message JSON when a name is too long to carry whole', () => {
    // Prepare: a hostile listing's names past the message's cut (260 characters), one with a trailing dot.
    const long = 'a'.repeat(260);
    const report = reportOf([], [inQuarantine(long), inQuarantine(`${long}.`)]);

    // Act
    const json = JSON.parse(reportJsonOf(buildAlertMessage(report))) as Report;

    // Assess: chat counts from the JSON what the subject counts from the report.
    expect(criticalCount(json)).toBe(criticalCount(report));
  });
});

/** bloem.nl read in quarantine: a critical finding. */
const quarantineFinding = () =>
  domainFinding('bloem.nl', 'quarantine', 'critical', -25, {
    date_deleted: '2026-11-02T09:00:00.000Z',
    restore_by: '2026-12-02T09:00:00.000Z',
    days_to_restore: 10,
  });
/** A second record of bloem.nl, spelled otherwise, that says quarantine: not checked, so a critical problem record. */
const secondRecord: Problem = {
  resource: 'domain',
  key: 'Bloem.NL.',
  page: 2,
  reason:
    'duplicate domain name (case, trailing dot): "bloem.nl" and "Bloem.NL."; only the first was checked',
  severity: 'critical',
};

describe('a domain read as a critical finding whose second record is a critical problem record', () => {
  it('is one critical item in every channel, the record still among those to look at', () => {
    // Prepare
    const report = reportOf([quarantineFinding()], [secondRecord]);

    // Act
    const alert = buildAlertMessage(report);
    const json = JSON.parse(reportJsonOf(alert)) as Report;
    const chat = chatNotificationOf(alert);
    const digest = renderDigest(report);

    // Assess
    expect(criticalCount(report)).toBe(1);
    expect(alert.attributes.critical_count).toBe(1);
    expect(alert.attributes.severity).toBe('critical');
    expect(alert.subject).toBe('domain-sentinel: 1 critical, 0 warning, 1 unreadable record');
    expect(renderSms(report)).toBe('1 critical: bloem.nl quarantine 10d left');
    expect(criticalProblems(report)).toEqual([]);
    expect(digest).toContain('CRITICAL (1)\n- bloem.nl: in quarantine');
    expect(digest).toContain('- domain Bloem.NL. on page 2: duplicate domain name');
    expect(criticalCount(json)).toBe(1);
    expect(chat.content.keywords).toContain('1 critical');
    expect(chat.content.title).toContain('1 critical');
  });

  it('is one critical item in the log and the JSON when a cut leaves the finding out and keeps the record', () => {
    // Prepare
    const report = reportOf([quarantineFinding()], [secondRecord]);

    // Act: the log's cut keeps no finding and the record.
    const logged = truncateReport(report, 0, 1);

    // Assess: the record stands for its domain where the finding is not carried, and the sum holds.
    expect(criticalCount(logged)).toBe(1);
    expect(criticalCount(truncateReport(report, 1, 0))).toBe(1);
  });

  it('is one critical item when the problem record comes first and the finding second', () => {
    // Prepare: the first record could not be read (says quarantine), the second was read in quarantine.
    const unread: Problem = {
      ...secondRecord,
      key: 'bloem.nl',
      page: 1,
      reason: 'status quarantine, record unreadable',
    };
    const report = reportOf([domainFinding('Bloem.NL.', 'quarantine', 'critical', -25)], [unread]);

    // Act
    const alert = buildAlertMessage(report);

    // Assess
    expect(criticalCount(report)).toBe(1);
    expect(alert.attributes.critical_count).toBe(1);
    expect(renderSms(report)).toMatch(/^1 critical: bloem\.nl /);
    expect(renderDigest(report)).toContain('- domain bloem.nl on page 1: status quarantine');
  });

  it('is still two critical items when the record is of another domain', () => {
    const other = { ...secondRecord, key: 'bloem.be' };
    expect(criticalCount(reportOf([quarantineFinding()], [other]))).toBe(2);
  });
});

describe('the publish log of a domain read as a critical finding whose second record says quarantine', () => {
  const T0 = Date.parse('2026-11-22T06:00:00Z');
  const HOUR = 3_600_000;
  /** bloem.nl read in quarantine (21 days to restore), and listed again under another spelling, unreadable. */
  const listedTwice = (now: number, state: ScanState, policy = DEFAULT_STATE_POLICY) =>
    scanWithState(
      [
        domain('bloem.nl', T0, {
          status: ['quarantine'],
          auto_renew: false,
          date_expiry: T0 - 10 * DAY,
          date_deleted: T0 - 9 * DAY,
        }),
      ],
      now,
      state,
      { problems: [secondRecord], policy },
    );

  it('counts the record in no unreadable quarantine repeat: the finding is its critical item', () => {
    // Prepare
    const report = reportOf([quarantineFinding()], [secondRecord]);

    // Act
    const repeatedInLog = unreadableQuarantineCount(report.problems, report.findings, noMemory, noneLapse);

    // Assess
    expect(repeatedInLog).toBe(0);
  });

  it('repeats the finding on the critical cadence and not the record beside it', () => {
    // Prepare
    const first = listedTwice(T0, EMPTY_STATE);

    // Act
    const nextDay = listedTwice(T0 + 21 * HOUR, first.next);

    // Assess
    expect(first.publish).toBe(true);
    expect(nextDay.why).toEqual(['1 critical repeated after 20 h']);
  });

  it('repeats the record when a snooze keeps the finding out of the alert: the record is then its critical item', () => {
    // Prepare: the finding snoozed for a week after the first alert.
    const first = listedTwice(T0, EMPTY_STATE);
    const found = first.report.findings.find(isDomainFinding) as DomainFinding;
    const memory = first.next.domains['bloem.nl'];
    const state = {
      ...first.next,
      domains: { 'bloem.nl': { ...memory, actions: { snooze: snoozeOf(found, 7, T0 + HOUR) } } },
    } as ScanState;

    // Act
    const nextDay = listedTwice(T0 + 21 * HOUR, state);

    // Assess: the alert names the record as its one critical item, and the log says why it speaks.
    expect(criticalCount(alertView(nextDay.report, nextDay.silenced))).toBe(1);
    expect(nextDay.why).toEqual(['1 unreadable record in quarantine repeated after 20 h']);
  });

  it('does not publish for the record once the finding has used its repeats', () => {
    // Prepare: no repeats after the first alert.
    const policy = { ...DEFAULT_STATE_POLICY, repeat: { ...DEFAULT_STATE_POLICY.repeat, cap: 0 } };
    const first = listedTwice(T0, EMPTY_STATE, policy);

    // Act
    const nextDay = listedTwice(T0 + 21 * HOUR, first.next, policy);

    // Assess
    expect(nextDay.publish).toBe(false);
  });

  it('repeats the record once an expired finding beside it has used its repeats: no last days repeat that finding', () => {
    // Prepare: bloem.nl read expired, its second record says quarantine; no repeats after the first alert.
    const policy = { ...DEFAULT_STATE_POLICY, repeat: { ...DEFAULT_STATE_POLICY.repeat, cap: 0 } };
    const expired = domain('bloem.nl', T0, { auto_renew: false, date_expiry: T0 - 2 * DAY });
    const scan = (now: number, state: ScanState) =>
      scanWithState([expired], now, state, { problems: [secondRecord], policy });
    const first = scan(T0, EMPTY_STATE);

    // Act
    const nextDay = scan(T0 + 21 * HOUR, first.next);

    // Assess: the record that says quarantine is repeated on the critical cadence, as with no finding beside it.
    expect(nextDay.why).toEqual(['1 unreadable record in quarantine repeated after 20 h']);
  });
});
