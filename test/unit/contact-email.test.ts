import { describe, expect, it } from 'vitest';
import { renderDigest } from '../../functions/core/alerts/digest';
import { buildAlertMessage, reportJsonOf } from '../../functions/core/alerts/message';
import type { ContactFinding } from '../../functions/core/findings/classify';
import { nextStep } from '../../functions/core/findings/next-step';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, reportOf } from '../support/report';

/**
 * Found by a hostile review: a contact's e-mail comes from the reseller's API as any text. The
 * digest made a registrant's name and company inert (no mail client links them), but wrote the
 * e-mail as it came, in the registrant line and in the next step of a contact awaiting validation:
 * "Ask <see https://evil.example/login> to confirm the validation e-mail now", a live link in our
 * own alert. Nor was it cut in the next step: one contact with an e-mail of 300 KB made its JSON
 * finding too big for the message, and every finding after it was left out of the JSON, and so out
 * of chat and the webhooks, which read it.
 */
const contactWith = (email: string): ContactFinding => ({
  handle: 'C9',
  kind: 'contact_pending_validation',
  severity: 'warning',
  name: 'Bram Bos',
  company_name: '',
  email,
});

describe('a contact e-mail from the API', () => {
  it('is shown as text no mail client links when it is not a plain address', () => {
    const hostile = 'see https://evil.example/login or www.pay-renewal.example';
    const registrant = { handle: 'C1', name: 'Anna', company_name: 'Bloem', email: hostile };
    const digest = renderDigest(
      reportOf([domainFinding('shop.nl', 'expiring', 'critical', 3, { registrant }), contactWith(hostile)]),
    );
    expect(digest).not.toContain('https://evil.example');
    expect(digest).not.toContain('www.pay-renewal.example');
    expect(digest).toContain('https[:]//evil[.]example/login');
    expect(nextStep(contactWith(hostile))).not.toContain('https://');
  });

  it('keeps a plain address as it is', () => {
    const digest = renderDigest(reportOf([contactWith('bram.bos+dns@mail.example.nl')]));
    expect(digest).toContain('<bram.bos+dns@mail.example.nl>');
    expect(nextStep(contactWith('bram@example.nl'))).toContain('Ask <bram@example.nl> to confirm');
  });

  it('is cut in the next step, so one long e-mail leaves the JSON room for the findings after it', () => {
    const warnings = Array.from({ length: 5 }, (_, i) =>
      domainFinding(`w${i}.nl`, 'expiring', 'warning', 20),
    );
    const report = {
      ...reportOf([
        domainFinding('crit.nl', 'expiring', 'critical', 2),
        contactWith(`${'a'.repeat(300_000)}@x.nl`),
        ...warnings,
      ]),
      report_json_url: 'https://sentinel.example/report.json',
    } as Report;
    expect(nextStep(contactWith(`${'a'.repeat(300_000)}@x.nl`)).length).toBeLessThan(600);
    const json = JSON.parse(reportJsonOf(buildAlertMessage(report)));
    expect(json.findings).toHaveLength(7);
  });
});

describe('a contact handle from the API', () => {
  // The same review: the handle is any text too, shown in the registrant line and the contact's own line.
  it('is shown as text no mail client links', () => {
    const handle = 'https://evil.example/x';
    const registrant = { handle, name: 'Anna', company_name: 'Bloem', email: 'anna@example.nl' };
    const digest = renderDigest(
      reportOf([
        domainFinding('shop.nl', 'expiring', 'critical', 3, { registrant }),
        { ...contactWith('bram@example.nl'), handle },
      ]),
    );
    expect(digest).not.toContain('https://evil.example');
    expect(digest).toContain('[https[:]//evil[.]example/x]');
    expect(digest).toContain('- contact https[:]//evil[.]example/x: validation pending');
  });
});
