import { describe, expect, it } from 'vitest';
import { decideRestore, type RestoreInput, type RestorePort } from '../../functions/core/decisions/restore';
import { AGAIN_FIELD } from '../../functions/core/decisions/restore-again';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import {
  AUDIT_UNREADABLE,
  type AuditEntry,
  auditEntry,
  auditLine,
  parseAuditEntries,
  RESENT_WINDOW_MS,
  RESTORE_CLAIM_MS,
  RESTORE_SENDING,
} from '../../functions/core/memory/audit';
import { renderConfirmPage } from '../../functions/core/pages/restore-page';
import type { Domain } from '../../functions/core/reseller/schemas';

/**
 * A restore answered 202 (queued) or with an unknown outcome leaves the domain in quarantine for a
 * while, beyond the 15-minute claim: the confirmation page names it, and another restore is sent
 * only when asked for again.
 */

const KEYS = parseSigningKeys('again-signing-key-0123456789abcdef0123');
const NOW = Date.parse('2026-11-22T06:00:00Z');
const DOMAIN = 'example.com';

const quarantined: Domain = {
  domain_name: DOMAIN,
  status: ['quarantine'],
  date_expiry: NOW - 20 * 86_400_000,
  auto_renew: false,
  auto_renew_period: 12,
  date_deleted: NOW - 19 * 86_400_000,
  registrant_handle: 'C1',
};

function port() {
  const calls: string[] = [];
  const reseller: RestorePort = {
    findDomain: async (name) => {
      calls.push(`find ${name}`);
      return quarantined;
    },
    restoreDomain: async (name) => {
      calls.push(`restore ${name}`);
      return { status: 202, bodyEmpty: true };
    },
  };
  return { reseller, calls };
}

const sent = (outcome: string, ago: number, domain = DOMAIN, isSent = true): AuditEntry =>
  auditEntry({ at: NOW - ago, domain, outcome, status: 504, via: 'web', sent: isSent });

function input(
  method: string,
  reseller: RestorePort,
  trail: () => Promise<readonly AuditEntry[] | null>,
  form: Record<string, string> = {},
): RestoreInput {
  const url = new URL(signRestoreLink({ baseUrl: 'https://x.test/', domain: DOMAIN, keys: KEYS, now: NOW }));
  return {
    method,
    domain: DOMAIN,
    token: Object.fromEntries(url.searchParams),
    now: NOW,
    signingKeys: async () => KEYS,
    reseller: async () => reseller,
    form: { confirm_domain: DOMAIN, ...form },
    earlierRestores: trail,
  };
}

const AFTER_CLAIM = RESTORE_CLAIM_MS + 60_000;

describe('a restore sent recently, with the domain still in quarantine', () => {
  it.each([
    ['outcome_unknown', 'unknown, it may still be queued at the reseller'],
    [RESTORE_SENDING, 'unknown, none was recorded after it went out'],
    ['restored', 'reported restored, yet the domain still shows quarantine'],
  ])('the confirmation page names an earlier %s restore', async (outcome, said) => {
    const { reseller } = port();
    const decided = await decideRestore(input('GET', reseller, async () => [sent(outcome, AFTER_CLAIM)]));
    expect(decided.kind).toBe('confirm');
    // The JSON answer of a GET (its message) says it too, for a program.
    expect(decided.message).toContain(`${DOMAIN} is in quarantine. A restore of ${DOMAIN} was sent at`);
    expect(decided.message).toContain('Another restore needs restore_again=yes.');
    expect(decided.confirm?.earlierRestore).toBe(
      `A restore of ${DOMAIN} was sent at 2026-11-22 05:44 UTC through a restore link (outcome: ${said}); a second restore may be charged again. Check the domain in the reseller’s control panel first.`,
    );
  });

  it('a POST without the extra confirmation sends nothing (409) and gives its claim up', async () => {
    const { reseller, calls } = port();
    const released: string[] = [];
    const claim = {
      take: async () => ({ taken: true, until: NOW + 15 * 60_000 }),
      release: async () => void released.push('released'),
    };
    const decided = await decideRestore({
      ...input('POST', reseller, async () => [sent('outcome_unknown', AFTER_CLAIM)]),
      claim,
    });
    expect(decided).toMatchObject({ kind: 'resend_unconfirmed', status: 409, attempt: true });
    expect(decided.sent).toBeUndefined();
    expect(decided.message).toContain(`A restore of ${DOMAIN} was sent at 2026-11-22 05:44 UTC`);
    expect(decided.message).toContain('Nothing was sent');
    expect(calls).toEqual([`find ${DOMAIN}`]);
    expect(released).toEqual(['released']);
  });

  it.each(['yes', 'on'])('a POST with %s in the extra confirmation sends another restore', async (value) => {
    const { reseller, calls } = port();
    const trail = async () => [sent('outcome_unknown', AFTER_CLAIM)];
    const decided = await decideRestore(input('POST', reseller, trail, { [AGAIN_FIELD]: value }));
    expect(decided.sent).toBe(true);
    expect(calls).toContain(`restore ${DOMAIN}`);
  });

  it('the page box confirms the restore it names, and a form sent again after a newer one sends nothing', async () => {
    const { reseller, calls } = port();
    const first = sent('outcome_unknown', AFTER_CLAIM + 3_600_000);
    const page = await decideRestore(input('GET', reseller, async () => [first]));
    expect(page.confirm?.earlierRestoreAt).toBe(first.at);
    const html = renderConfirmPage({
      domain: DOMAIN,
      ...(page.confirm ?? { linkExpires: NOW, formAction: '', quarantinedSince: null }),
    });
    expect(html).toContain(`name="restore_again" value="${first.at}" required`);
    // The form with the box ticked, sent again (a reload) after the restore it sent went out too.
    const second = sent(RESTORE_SENDING, AFTER_CLAIM);
    const replayed = await decideRestore(
      input('POST', reseller, async () => [second, first], { [AGAIN_FIELD]: first.at }),
    );
    expect(replayed.kind).toBe('resend_unconfirmed');
    expect(calls).not.toContain(`restore ${DOMAIN}`);
    const confirmed = await decideRestore(
      input('POST', reseller, async () => [second, first], { [AGAIN_FIELD]: second.at }),
    );
    expect(confirmed.sent).toBe(true);
  });

  it.each([
    ['older than the window', sent('outcome_unknown', RESENT_WINDOW_MS + 1)],
    ['of another domain', sent('outcome_unknown', AFTER_CLAIM, 'other.com')],
    ['refused by the reseller', sent('refused', AFTER_CLAIM)],
    ['never sent', sent('confirmation_missing', AFTER_CLAIM, DOMAIN, false)],
  ])('an entry %s is not named', async (_why, entry) => {
    const { reseller, calls } = port();
    const page = await decideRestore(input('GET', reseller, async () => [entry]));
    expect(page.confirm).toBeDefined();
    expect(page.confirm?.earlierRestore).toBeUndefined();
    const posted = await decideRestore(input('POST', reseller, async () => [entry]));
    expect(posted.sent).toBe(true);
    expect(calls).toContain(`restore ${DOMAIN}`);
  });

  it('names an entry whose time does not read (a hand edit): it may be recent', async () => {
    const { reseller, calls } = port();
    const damaged = { ...sent(RESTORE_SENDING, AFTER_CLAIM), at: 'yesterday<b>' };
    const page = await decideRestore(input('GET', reseller, async () => [damaged]));
    expect(page.confirm?.earlierRestore).toContain('was sent at yesterday<b> UTC');
    const html = renderConfirmPage({
      domain: DOMAIN,
      ...(page.confirm ?? { linkExpires: NOW, formAction: '', quarantinedSince: null }),
    });
    expect(html).toContain('sent at yesterday&#60;b&#62; UTC');
    expect(html).not.toContain('yesterday<b>');
    const posted = await decideRestore(input('POST', reseller, async () => [damaged]));
    expect(posted.kind).toBe('resend_unconfirmed');
    expect(calls).not.toContain(`restore ${DOMAIN}`);
  });

  it('names an entry kept under another spelling of the name (upper case, a trailing dot)', async () => {
    const { reseller } = port();
    const decided = await decideRestore(
      input('GET', reseller, async () => [sent('outcome_unknown', AFTER_CLAIM, 'EXAMPLE.com.')]),
    );
    expect(decided.confirm?.earlierRestore).toContain('was sent at');
  });

  it.each(['GET', 'POST'])(
    'a trail that cannot be read refuses a %s (503), sending nothing',
    async (method) => {
      const { reseller, calls } = port();
      const decided = await decideRestore(
        input(method, reseller, async () => Promise.reject(new Error('disk on fire')), {
          [AGAIN_FIELD]: 'yes',
        }),
      );
      expect(decided).toMatchObject({ kind: 'audit_unavailable', status: 503 });
      expect(decided.message).toContain(`${DOMAIN} was NOT restored: the audit trail could not be read`);
      expect(decided.detail).toContain('disk on fire');
      expect(calls).toEqual([`find ${DOMAIN}`]);
    },
  );

  it('with no trail (no state store) nothing is named', async () => {
    const { reseller } = port();
    const decided = await decideRestore(input('GET', reseller, async () => null));
    expect(decided.confirm?.earlierRestore).toBeUndefined();
  });
});

describe('an entry of the trail that does not read', () => {
  const unreadable = parseAuditEntries([{ ...sent(RESTORE_SENDING, AFTER_CLAIM), status: 'two hundred' }]);

  it('is listed as one that could not be read, kept with the restores sent', () => {
    expect(unreadable).toMatchObject([{ domain: DOMAIN, outcome: AUDIT_UNREADABLE, sent: true }]);
    expect(unreadable.map((e) => auditLine(e))).toEqual([
      `2026-11-22 05:44:00 UTC  ${DOMAIN}: an entry that could not be read; it may be a restore sent to the reseller`,
    ]);
  });

  it('is named before another restore of its domain, which is sent only when asked for again', async () => {
    const { reseller, calls } = port();
    const page = await decideRestore(input('GET', reseller, async () => unreadable));
    expect(page.confirm?.earlierRestore).toBe(
      `An entry of the audit trail that could not be read may be a restore of ${DOMAIN} sent at 2026-11-22 05:44 UTC; a second restore may be charged again. Check the domain in the reseller’s control panel first.`,
    );
    const refused = await decideRestore(input('POST', reseller, async () => unreadable));
    expect(refused.kind).toBe('resend_unconfirmed');
    expect(calls).not.toContain(`restore ${DOMAIN}`);
    const again = await decideRestore(
      input('POST', reseller, async () => unreadable, {
        [AGAIN_FIELD]: page.confirm?.earlierRestoreAt ?? '',
      }),
    );
    expect(again.sent).toBe(true);
  });

  it('with no domain or time that reads, is named before a restore of any domain', async () => {
    const { reseller } = port();
    const page = await decideRestore(input('GET', reseller, async () => parseAuditEntries(['garbage'])));
    expect(page.confirm?.earlierRestore).toBe(
      `An entry of the audit trail that could not be read may be a restore of ${DOMAIN} sent at an unknown time; a second restore may be charged again. Check the domain in the reseller’s control panel first.`,
    );
  });
});
