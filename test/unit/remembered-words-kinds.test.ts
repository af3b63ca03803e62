import { describe, expect, it } from 'vitest';
import { describeDomainFinding } from '../../functions/core/alerts/alert';
import { DOMAIN_FINDING_KINDS } from '../../functions/core/findings/classify';
import { nextStep, rememberedWords, utcDay } from '../../functions/core/findings/next-step';
import { domainFinding } from '../support/report';

/**
 * Every kind memory may keep as remembered is said in words after "last read": registry_unknown,
 * added as a kind, was said as its code ("last read registry_unknown") in the e-mail, chat and the
 * finding page when a registry that could not be checked left it kept.
 */
describe('rememberedWords', () => {
  it('has words for every domain finding kind, none of them the code', () => {
    for (const kind of DOMAIN_FINDING_KINDS) expect(rememberedWords(kind)).not.toContain('_');
  });

  it('says a kept registry_unknown in words in the description and the next step', () => {
    const f = domainFinding('shop.com', 'auto_renew_off', 'critical', 120, {
      remembered: { kind: 'registry_unknown', severity: 'critical', because: 'registry_unconfirmed' },
    });
    expect(describeDomainFinding(f, f.date_expiry, utcDay)).not.toContain('registry_unknown');
    expect(nextStep(f)).not.toContain('registry_unknown');
  });
});
