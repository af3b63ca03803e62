import { describe, expect, it } from 'vitest';
import { chatNotificationOf } from '../../functions/core/alerts/chat';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import type { Domain } from '../../functions/core/reseller/schemas';
import type { Report } from '../../functions/core/scan/scan';
import {
  registrantConflictProblem,
  undocumentedStatusProblem,
} from '../../functions/core/scan/scan-problems';
import { reportOf } from '../support/report';

/**
 * The digest's header, the subject and chat counted every problem record as one that "could not be
 * read and was not checked", a record read by its dates only (a status the API does not document)
 * and one read and checked with its registrant given twice among them: the person was told the
 * scan missed domains it had checked. One decision (alert.ts unreadableCount) now counts those that
 * could not be read, in every channel, and the others are said as records to look at.
 */
describe('problem records that were read are not counted as unreadable', () => {
  const record = (name: string, more: Partial<Domain> = {}) =>
    ({ domain_name: name, status: ['registered'], ...more }) as unknown as Domain;
  const datesOnly = undocumentedStatusProblem(record('odd.nl', { status: ['pendingTransfer'] }), 1);
  const twice = registrantConflictProblem(
    record('twice.nl', { registrant_conflict: ['H-1', 'H-2'] } as Partial<Domain>),
    1,
  );
  const broken: Report['problems'][number] = {
    resource: 'domain',
    key: 'broken.nl',
    page: 2,
    reason: 'date_expiry: Invalid input',
  };
  if (!datesOnly || !twice) throw new Error('the scan made no problem of these records');
  const alert = buildAlertMessage(reportOf([], [datesOnly, twice, broken]));
  const email = (JSON.parse(alert.message) as { email: string }).email;

  it('says in the digest which records could not be read and which say something to look at', () => {
    expect(email).not.toContain('3 records could not be read');
    expect(email).toContain(
      'PROBLEMS: 3 records: 1 could not be read and was not checked; 2 say something to look at:',
    );
  });

  it('counts only the record that could not be read as unreadable in the subject and chat', () => {
    expect(alert.subject).toContain('1 unreadable record, 2 records to look at');
    const chat = chatNotificationOf(alert);
    expect(chat.metadata.additionalContext.unreadableRecords).toBe('1');
    expect(chat.content.nextSteps).toContain(
      "1 record could not be read: check it in the reseller's control panel.",
    );
  });

  it('keeps a message of records that were read a warning', () => {
    const read = buildAlertMessage(reportOf([], [datesOnly, twice]));
    expect(read.attributes.severity).toBe('warning');
    expect(read.subject).toContain('2 records to look at');
    expect(read.subject).not.toContain('unreadable');
  });
});

/**
 * A damaged item of our own stored state (memory/scan-memory.ts, `resource: 'state'`) was counted
 * among the unreadable records, which the digest says "could not be read and were not checked" and
 * chat sends to the reseller's control panel: its domains were checked (as if seen for the first
 * time), and the reseller has no such record. It is now a record to look at, shown as a state item.
 */
describe('a damaged item of the stored state is not an unreadable reseller record', () => {
  const damaged: Report['problems'][number] = {
    resource: 'state',
    key: 'bloem.nl',
    page: 0,
    reason:
      'could not be read (domains["bloem.nl"].alerted.at: not an RFC 3339 date-time): what it remembers was checked again and compared as if seen for the first time',
  };
  const broken: Report['problems'][number] = {
    resource: 'domain',
    key: 'broken.nl',
    page: 2,
    reason: 'date_expiry: Invalid input',
  };

  it('is counted apart from the record that could not be read, in the subject, the digest and chat', () => {
    // Act
    const alert = buildAlertMessage(reportOf([], [broken, damaged]));
    const email = (JSON.parse(alert.message) as { email: string }).email;
    const chat = chatNotificationOf(alert);

    // Assess
    expect(alert.subject).toContain('1 unreadable record, 1 record to look at');
    expect(email).toContain(
      'PROBLEMS: 2 records: 1 could not be read and was not checked; 1 says something to look at:',
    );
    expect(email).toContain('- state item bloem.nl: could not be read');
    expect(chat.metadata.additionalContext.unreadableRecords).toBe('1');
  });

  it("alone sends no one to the reseller's control panel", () => {
    // Act
    const alert = buildAlertMessage(reportOf([], [damaged]));
    const chat = chatNotificationOf(alert);

    // Assess
    expect(alert.subject).toContain('1 record to look at');
    expect(alert.subject).not.toContain('unreadable');
    expect(chat.metadata.additionalContext.unreadableRecords).toBe('0');
    expect(chat.content.nextSteps?.join('\n')).not.toContain("reseller's control panel");
  });
});
