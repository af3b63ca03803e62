import { describe, expect, it } from 'vitest';
import { criticalCount, renderSms } from '../../functions/core/alerts/alert';
import { renderDigest } from '../../functions/core/alerts/digest';
import { buildAlertMessage, reportJsonOf, truncateReport } from '../../functions/core/alerts/message';
import type { ScanMemory } from '../../functions/core/memory/scan-memory';
import { unreadableQuarantineCount } from '../../functions/core/memory/unjudged-memory';
import type { Report } from '../../functions/core/scan/scan';
import { reportOf } from '../support/report';

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
    const repeatedInLog = unreadableQuarantineCount(report.problems, noMemory, noneLapse);

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
