import { describe, expect, it } from 'vitest';
import { decideAction } from '../../functions/core/decisions/action-decision';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { parseSigningKeys, signLink } from '../../functions/core/links/links';
import { MemoryActionStore } from '../support/memory-action-store';

/**
 * Found by a hostile review: the fresh links a snooze or acknowledge link offers for a finding that
 * changed since it was sent must not outlive the link that made them (as the finding page's links
 * expire with the finding link): else a link a minute from expiry opened a page whose button, and
 * links, acted for a day longer, and each further change of the finding made another day.
 */

const NOW = Date.parse('2026-11-22T06:00:00Z');
const keys = parseSigningKeys('l'.repeat(40));
const LEFT_S = 60;

/** Sent for a warning; the domain is critical now (three days left). */
const critical: DomainFinding = {
  domain_name: 'example.nl',
  kind: 'expiring',
  severity: 'critical',
  date_expiry: new Date(NOW + 3 * 86_400_000).toISOString(),
  days_left: 3,
  auto_renew: false,
  registrant: null,
};

function input(action: 'snooze' | 'acknowledge', method: 'GET' | 'POST') {
  const link = signLink({
    baseUrl: 'https://x.example',
    action,
    subject: 'example.nl',
    finding: { kind: 'expiring', severity: 'warning' },
    keys,
    now: NOW,
    ttlSeconds: LEFT_S,
  });
  const token = Object.fromEntries(new URL(link).searchParams);
  return {
    token,
    value: {
      action,
      method,
      domain: 'example.nl',
      token,
      form: {},
      now: NOW,
      signingKeys: async () => keys,
      port: async () => ({ store: new MemoryActionStore(), findFinding: async () => critical }),
    },
  };
}

const expOf = (relative: string) =>
  Number(new URL(relative, 'https://x.example/snooze/example.nl').searchParams.get('exp'));

describe('links offered for a finding that changed', () => {
  it.each(['snooze', 'acknowledge'] as const)(
    'expire with the %s link that made them, on its page',
    async (action) => {
      const { token, value } = input(action, 'GET');
      const outcome = await decideAction(value);
      expect(outcome.kind).toBe('confirm');
      expect(outcome.confirm?.sentFor).toBeDefined();
      expect(expOf(outcome.confirm?.formAction ?? '')).toBeLessThanOrEqual(Number(token.exp));
      expect(outcome.confirm?.linkExpires).toBeLessThanOrEqual(Number(token.exp) * 1000);
    },
  );

  it.each(['snooze', 'acknowledge'] as const)(
    'expire with the %s link that made them, after its POST',
    async (action) => {
      const { token, value } = input(action, 'POST');
      const outcome = await decideAction(value);
      expect(outcome.kind).toBe('finding_changed');
      expect(expOf(outcome.changed?.links.snooze ?? '')).toBeLessThanOrEqual(Number(token.exp));
      expect(expOf(outcome.changed?.links.acknowledge ?? '')).toBeLessThanOrEqual(Number(token.exp));
    },
  );
});
