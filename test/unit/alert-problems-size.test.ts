import { describe, expect, it } from 'vitest';
import { SNS_MAX_BYTES } from '../../functions/core/alerts/alert';
import { buildAlertMessage, reportJsonOf, snsPublishBytes } from '../../functions/core/alerts/message';
import type { Report } from '../../functions/core/scan/scan';
import { domainFinding, reportOf } from '../support/report';

/**
 * Found by a hostile review: the JSON keeps up to 100 unreadable records, and the digest was given
 * only the room they left. A record's key (its name as the API sent it) is cut to 260 characters,
 * but a key of quotes, backslashes or control characters is escaped twice inside the message (a
 * control character takes seven bytes): a hundred such records took some 180 KB, and the e-mail
 * of 3 000 critical findings named 608 of them instead of some 2 800 (with a reason of the same
 * characters too, none at all). The e-mail comes first (docs/alerts.md).
 */
describe('unreadable records whose text escapes long', () => {
  const reportWith = (character: string): Report => {
    const findings = Array.from({ length: 3000 }, (_, i) =>
      domainFinding(`shop-${i}.nl`, 'expiring', 'critical', 3, {
        actions: { page: `https://sentinel.example/f/shop-${i}.nl` } as never,
      }),
    );
    const problems = Array.from({ length: 100 }, (_, i) => ({
      resource: 'domain' as const,
      key: `${character.repeat(250)}${i}`,
      page: 1,
      reason: 'date_expiry: Invalid input: expected string, received null',
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
    it(`gives the e-mail its room beside records named in ${what}`, () => {
      const alert = buildAlertMessage(reportWith(character));
      expect(snsPublishBytes(alert)).toBeLessThanOrEqual(SNS_MAX_BYTES);
      // Without such records the digest names all 3 000: the records may cost it a few, no more.
      expect(alert.digest.named.critical).toBeGreaterThan(2600);
      const { email } = JSON.parse(alert.message) as { email: string };
      expect(email.match(/ {2}Next: /g)?.length ?? 0).toBeGreaterThanOrEqual(10);
      // The JSON still says how many records it left out, so a program fetches the whole.
      const json = JSON.parse(reportJsonOf(alert));
      expect(json.truncated).toBe(true);
      expect(json.problems.length + json.omitted.problems).toBe(100);
    });
  }
});
