import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { renderCalendar } from '../../functions/core/pages/calendar';
import { domainFinding, reportOf } from '../support/report';

/**
 * Found by a review: the feed against RFC 5545's own grammar (3.1 and 3.4): every content line, the
 * last one too, ends with CRLF (`icalobject = "BEGIN:VCALENDAR" CRLF icalbody "END:VCALENDAR" CRLF`),
 * and no line is longer than 75 octets, a folded multibyte character never split.
 */

const report = reportOf([
  domainFinding('xn--bcher-kva.nl', 'expiring', 'critical', 3),
  domainFinding(`xn--${'b'.repeat(40)}-9la.nl`, 'expired', 'critical', -2),
  domainFinding('plain.nl', 'expiring', 'warning', 20),
]);

describe('the calendar feed as RFC 5545 writes it', () => {
  it('ends every content line with CRLF, END:VCALENDAR included', () => {
    const text = renderCalendar(report, { accountLabel: 'Ünïcödé 日本語 account; a, b' });
    expect(text.endsWith('END:VCALENDAR\r\n')).toBe(true);
    expect(text).not.toMatch(/[^\r]\n/);
    expect(text).not.toMatch(/\r(?!\n)/);
  });

  it('folds at 75 octets without splitting a character, and a parser reads the names back whole', () => {
    const label = `Ünïcödé ${'日本語'.repeat(12)}; a, b`;
    const text = renderCalendar(report, { accountLabel: label });
    const lines = text.split('\r\n').slice(0, -1);
    for (const line of lines) {
      expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
      expect(Buffer.from(line).toString('utf8')).not.toContain('\uFFFD');
    }
    // Unfolded (RFC 5545 3.1: a CRLF and one space are removed), the line is the escaped name whole.
    const unfolded = text.replace(/\r\n /g, '').split('\r\n');
    expect(unfolded).toContain(`X-WR-CALNAME:domain-sentinel (Ünïcödé ${'日本語'.repeat(12)}\\; a\\, b)`);
    const calendar = new ICAL.Component(ICAL.parse(text));
    expect(calendar.getAllSubcomponents('vevent')[0]?.getFirstPropertyValue('summary')).toBe(
      'Expires: xn--bcher-kva.nl (bücher.nl) (auto-renew off)',
    );
    expect(calendar.getFirstPropertyValue('prodid')).toBeTruthy();
    expect(calendar.getFirstPropertyValue('version')).toBe('2.0');
    const events = calendar.getAllSubcomponents('vevent');
    expect(events).toHaveLength(3);
    for (const e of events) {
      expect(e.getFirstPropertyValue('uid')).toMatch(/^[0-9a-f]{32}@domain-sentinel$/);
      expect(e.getFirstPropertyValue('dtstamp')).toBeTruthy();
    }
  });
});
