import { describe, expect, it } from 'vitest';
import { SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import { buildAlertMessage, reportJsonOf, snsPublishBytes } from '../../functions/core/alerts/message';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, reportOf } from '../support/report';

/**
 * Found by a hostile review: the JSON keeps up to 100 unreadable records, and the digest was given
 * only the room they left. A record's key and reason are cut to a few hundred characters, but a
 * key or reason of quotes, backslashes or control characters is escaped twice inside the message
 * (a control character takes seven bytes), so a hundred of them took all the room: the e-mail
 * named none of the critical findings, no next step and no link, while the JSON carried records
 * nobody could read. The e-mail comes first (docs/alerts.md).
 */
describe('unreadable records whose text escapes long', () => {
  const reportWith = (character: string): Report => {
    const findings = Array.from({ length: 60 }, (_, i) =>
      domainFinding(`shop-${i}.nl`, 'expiring', 'critical', 3, {
        actions: { page: `https://sentinel.example/f/shop-${i}.nl` } as never,
      }),
    );
    const problems = Array.from({ length: 100 }, (_, i) => ({
      resource: 'domain' as const,
      key: `${character.repeat(300)}${i}`,
      page: 1,
      reason: character.repeat(400),
    }));
    return {
      ...reportOf(findings, problems),
      report_url: 'https://sentinel.example/report',
      report_json_url: 'https://sentinel.example/report.json',
    } as Report;
  };

  for (const [what, character] of [
    ['control characters', '\u0001'],
    ['quotes', '"'],
    ['backslashes', '\\'],
  ] as const) {
    it(`names every critical finding in the e-mail with its next step, records of ${what} beside them`, () => {
      const alert = buildAlertMessage(reportWith(character));
      expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
      expect(alert.digest.named.critical).toBe(60);
      const { email } = JSON.parse(alert.message) as { email: string };
      expect(email).toContain('- shop-59.nl: expires');
      expect(email.match(/ {2}Next: /g)?.length ?? 0).toBeGreaterThanOrEqual(10);
      // The JSON still says how many records it left out, so a program fetches the whole.
      const json = JSON.parse(reportJsonOf(alert));
      expect(json.truncated).toBe(true);
      expect(json.problems.length + json.omitted.problems).toBe(100);
    });
  }
});
