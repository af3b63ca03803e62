import { describe, expect, it } from 'vitest';
import { decideFindingPage, type FindingPageInput } from '../../functions/core/decisions/finding-decision';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { parseSigningKeys, signLink, verifyLink } from '../../functions/core/links/links';
import { domainFinding, NOW_ISO } from '../support/report';

const keys = parseSigningKeys('f'.repeat(40));
const NOW = Date.parse(NOW_ISO);
const quarantined = domainFinding('lost.nl', 'quarantine', 'critical', -30, {
  restore_by: '2026-12-11T06:00:00.000Z',
  days_to_restore: 19,
});

/** The query of a finding link for `domain`, signed `ttl` seconds ahead. */
function tokenFor(domain: string, ttl = 7 * 86_400): Record<string, string> {
  const url = new URL(
    signLink({
      baseUrl: 'https://x.example/prod',
      action: 'finding',
      subject: domain,
      keys,
      now: NOW,
      ttlSeconds: ttl,
    }),
  );
  expect(url.pathname).toBe(`/prod/finding/${domain}`);
  return Object.fromEntries(url.searchParams);
}

const input = (over: Partial<FindingPageInput> = {}): FindingPageInput => ({
  method: 'GET',
  domain: 'lost.nl',
  token: tokenFor('lost.nl'),
  now: NOW,
  signingKeys: async () => keys,
  findFinding: async (name) => (name === 'lost.nl' ? { finding: quarantined, reportNow: NOW_ISO } : null),
  silencing: true,
  ...over,
});

/** The query of a relative link the page offers, checked as the action's own route checks it. */
function verifies(
  link: string | undefined,
  action: 'restore' | 'snooze' | 'acknowledge',
  finding: DomainFinding,
) {
  const url = new URL(link ?? '', 'https://x.example/prod/finding/lost.nl');
  expect(url.pathname).toBe(`/prod/${action}/lost.nl`);
  return (
    verifyLink({
      action,
      subject: 'lost.nl',
      token: Object.fromEntries(url.searchParams),
      keys,
      now: NOW + 1000,
    }).ok &&
    (action === 'restore' || url.searchParams.get('kind') === finding.kind)
  );
}

describe('the finding page decision', () => {
  it('shows the finding with its actions, each signed for its own route and expiring with the link', async () => {
    const out = await decideFindingPage(input());
    expect(out.kind).toBe('show');
    if (out.kind !== 'show') return;
    expect(out.finding).toBe(quarantined);
    expect(verifies(out.links.restore, 'restore', quarantined)).toBe(true);
    expect(verifies(out.links.snooze, 'snooze', quarantined)).toBe(true);
    expect(verifies(out.links.acknowledge, 'acknowledge', quarantined)).toBe(true);
    const exp = Number(tokenFor('lost.nl').exp);
    expect(out.linksExpire).toBe(exp * 1000);
    expect(Number(new URL(out.links.restore ?? '', 'https://x.example/').searchParams.get('exp'))).toBe(exp);
  });

  it('offers no restore for what is not in quarantine, and no snooze or acknowledge without a state store', async () => {
    const expiring = domainFinding('lost.nl', 'expiring', 'warning', 20);
    const out = await decideFindingPage(
      input({ silencing: false, findFinding: async () => ({ finding: expiring, reportNow: NOW_ISO }) }),
    );
    expect(out.kind === 'show' && out.links).toEqual({});
    expect(out.kind === 'show' && out.noSilence).toMatch(/need a state store/);
  });

  it('offers no snooze in a quarantine’s last days, which are alerted daily', async () => {
    const last = { ...quarantined, days_to_restore: 3 };
    const out = await decideFindingPage(
      input({ findFinding: async () => ({ finding: last, reportNow: NOW_ISO }) }),
    );
    expect(out.kind === 'show' && Object.keys(out.links)).toEqual(['restore']);
    expect(out.kind === 'show' && out.noSilence).toMatch(/last days to restore/);
  });

  it('is read-only, and refuses a changed, misused or expired link before it reads anything', async () => {
    let reads = 0;
    const counting = input({
      findFinding: async () => {
        reads++;
        return null;
      },
    });
    await expect(decideFindingPage({ ...counting, method: 'POST' })).resolves.toMatchObject({ status: 405 });
    const token = tokenFor('lost.nl');
    const changed = { ...token, sig: `${token.sig?.slice(0, -1)}${token.sig?.endsWith('A') ? 'B' : 'A'}` };
    await expect(decideFindingPage({ ...counting, token: changed })).resolves.toMatchObject({ status: 403 });
    // Another domain's link, and a restore link used as a finding link.
    await expect(decideFindingPage({ ...counting, token: tokenFor('other.nl') })).resolves.toMatchObject({
      status: 403,
    });
    const restore = Object.fromEntries(
      new URL(
        signLink({ baseUrl: 'https://x.example', action: 'restore', subject: 'lost.nl', keys, now: NOW }),
      ).searchParams,
    );
    await expect(decideFindingPage({ ...counting, token: restore })).resolves.toMatchObject({ status: 403 });
    await expect(
      decideFindingPage({ ...counting, token: tokenFor('lost.nl', 60), now: NOW + 61_000 }),
    ).resolves.toMatchObject({
      status: 410,
    });
    await expect(decideFindingPage({ ...counting, domain: 'LOST..nl' })).resolves.toMatchObject({
      status: 400,
    });
    expect(reads).toBe(0);
    // HEAD is decided as GET is, so it answers GET's status (the handler leaves the body out).
    const get = await decideFindingPage({ ...counting, method: 'GET' });
    await expect(decideFindingPage({ ...counting, method: 'HEAD' })).resolves.toEqual(get);
  });

  it('says there is nothing to do for a domain the latest report no longer has, and 503 when it cannot be read', async () => {
    await expect(decideFindingPage(input({ findFinding: async () => null }))).resolves.toMatchObject({
      kind: 'no_finding',
      status: 200,
    });
    await expect(
      decideFindingPage(input({ findFinding: async () => Promise.reject(new Error('S3 down')) })),
    ).resolves.toMatchObject({ kind: 'store_failed', status: 503 });
  });
});
