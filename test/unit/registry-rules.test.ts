import { describe, expect, it } from 'vitest';
import { bothSides } from '../../functions/core/alerts/registry-words';
import { type DomainFinding, type RegistryView, sortFindings } from '../../functions/core/findings/classify';
import { registryNextStep } from '../../functions/core/findings/next-step';
import {
  judgeNotFound,
  judgeRegistry,
  type ResellerSide,
  withRegistryView,
} from '../../functions/core/findings/registry-rules';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const POLICY = { toleranceDays: 2, criticalDays: 7 };

const reseller = (over: Partial<ResellerSide> = {}): ResellerSide => ({
  domain_name: 'shop.com',
  date_expiry: Date.parse('2027-06-01T00:00:00Z'),
  quarantine: false,
  auto_renew: true,
  registrant_handle: 'C1',
  ...over,
});

describe('judgeRegistry', () => {
  it('agrees when the dates are within the tolerance, either way', () => {
    const side = reseller();
    for (const shift of [0, 2 * DAY, -2 * DAY])
      expect(
        judgeRegistry(side, { status: ['active'], expiration: side.date_expiry + shift }, NOW, POLICY),
      ).toEqual({ kind: 'agree' });
  });

  it('finds an expiry mismatch beyond the tolerance: a warning when the registry date is beyond the critical days', () => {
    const judged = judgeRegistry(
      reseller(),
      { status: ['active'], expiration: Date.parse('2026-12-01T00:00:00Z') },
      NOW,
      POLICY,
    );
    expect(judged).toEqual({
      kind: 'disagree',
      view: {
        kind: 'registry_expiry_mismatch',
        severity: 'warning',
        date_expiry: '2026-12-01T00:00:00.000Z',
        days_left: 8,
        status: ['active'],
      },
    });
    const justOver = judgeRegistry(
      reseller(),
      { status: [], expiration: reseller().date_expiry + 2 * DAY + 1 },
      NOW,
      POLICY,
    );
    expect(justOver.kind).toBe('disagree');
  });

  it('makes the mismatch critical when the registry date is within the critical days, or past', () => {
    for (const at of [NOW + 7 * DAY, NOW + DAY, NOW - 30 * DAY]) {
      const judged = judgeRegistry(reseller(), { status: [], expiration: at }, NOW, POLICY);
      expect(judged.kind === 'disagree' && judged.view.severity).toBe('critical');
    }
  });

  it('finds redemption and pending delete (critical) unless the reseller lists the domain in quarantine', () => {
    for (const status of [['redemption period'], ['pending delete'], ['active', 'redemption period']]) {
      const judged = judgeRegistry(reseller(), { status, expiration: null }, NOW, POLICY);
      expect(judged.kind === 'disagree' && [judged.view.kind, judged.view.severity]).toEqual([
        'registry_redemption',
        'critical',
      ]);
    }
    expect(
      judgeRegistry(
        reseller({ quarantine: true, date_expiry: NOW - 20 * DAY }),
        { status: ['redemption period', 'pending delete'], expiration: NOW + 345 * DAY },
        NOW,
        POLICY,
      ),
    ).toEqual({ kind: 'agree' });
  });

  it('finds client and server hold (critical), redemption first when both show', () => {
    for (const hold of ['client hold', 'server hold']) {
      const judged = judgeRegistry(
        reseller(),
        { status: [hold], expiration: reseller().date_expiry },
        NOW,
        POLICY,
      );
      expect(judged.kind === 'disagree' && [judged.view.kind, judged.view.severity]).toEqual([
        'registry_hold',
        'critical',
      ]);
    }
    const both = judgeRegistry(
      reseller(),
      { status: ['server hold', 'pending delete'], expiration: null },
      NOW,
      POLICY,
    );
    expect(both.kind === 'disagree' && both.view.kind).toBe('registry_redemption');
  });

  it('is not checkable without a published expiration, yet still sees a hold', () => {
    expect(judgeRegistry(reseller(), { status: ['active'], expiration: null }, NOW, POLICY)).toEqual({
      kind: 'no_expiration',
    });
    expect(judgeRegistry(reseller(), { status: ['client hold'], expiration: null }, NOW, POLICY).kind).toBe(
      'disagree',
    );
  });

  it('does not read a gTLD auto-renewal after expiry as a mismatch', () => {
    const expired = reseller({ date_expiry: NOW - 3 * DAY, auto_renew: false });
    expect(
      judgeRegistry(
        expired,
        { status: ['active', 'auto renew period'], expiration: expired.date_expiry + 365 * DAY },
        NOW,
        POLICY,
      ),
    ).toEqual({ kind: 'agree' });
  });

  it('keeps at most 12 status values of at most 64 characters from a hostile server', () => {
    const status = ['client hold', ...Array.from({ length: 50 }, () => 'x'.repeat(1000))];
    const judged = judgeRegistry(reseller(), { status, expiration: null }, NOW, POLICY);
    expect(judged.kind === 'disagree' && judged.view.status).toHaveLength(12);
    expect(judged.kind === 'disagree' && judged.view.status[1]).toHaveLength(64);
  });
});

const view = (over: Partial<RegistryView> = {}): RegistryView => ({
  kind: 'registry_hold',
  severity: 'critical',
  date_expiry: '2027-06-01T00:00:00.000Z',
  days_left: 190,
  status: ['client hold'],
  server: 'https://rdap.example',
  ...over,
});

const expiring = (severity: DomainFinding['severity']): DomainFinding => ({
  domain_name: 'shop.com',
  kind: 'expiring',
  severity,
  date_expiry: '2026-12-10T00:00:00.000Z',
  days_left: 17,
  auto_renew: false,
  registrant: { handle: 'C1', name: 'Anna' },
});

describe('withRegistryView: one finding per domain, neither side hidden', () => {
  it('makes the registry’s view the finding of a domain the reseller has nothing to say about', () => {
    const finding = withRegistryView(null, reseller(), view(), NOW);
    expect(finding).toMatchObject({
      domain_name: 'shop.com',
      kind: 'registry_hold',
      severity: 'critical',
      date_expiry: '2027-06-01T00:00:00.000Z',
      days_left: 190,
      auto_renew: true,
      registrant: { handle: 'C1' },
      registry: view(),
    });
    expect(finding.reseller_finding).toBeUndefined();
  });

  it('leads with the registry when it is more severe, carrying the reseller’s finding', () => {
    const finding = withRegistryView(expiring('warning'), reseller(), view(), NOW);
    expect(finding).toMatchObject({
      kind: 'registry_hold',
      severity: 'critical',
      reseller_finding: { kind: 'expiring', severity: 'warning' },
      registrant: { handle: 'C1', name: 'Anna' },
    });
    const words = bothSides(finding, (g) => `${g.kind} words`);
    expect(words).toBe(
      "on hold at the registry (client hold): it does not resolve; the reseller's record: expiring words",
    );
  });

  it('leads with the reseller on a tie, carrying the registry’s view', () => {
    const finding = withRegistryView(expiring('critical'), reseller(), view(), NOW);
    expect(finding).toMatchObject({ kind: 'expiring', severity: 'critical', registry: view() });
    expect(bothSides(finding, (g) => `${g.kind} words`)).toBe(
      'expiring words; the registry: on hold at the registry (client hold): it does not resolve',
    );
  });

  it('says the issue’s words for a renewal that has not reached the registry, and its next step', () => {
    const mismatch = view({
      kind: 'registry_expiry_mismatch',
      severity: 'warning',
      date_expiry: '2026-12-01T00:00:00.000Z',
      days_left: 8,
      status: ['active'],
    });
    const finding = withRegistryView(null, reseller(), mismatch, NOW);
    expect(bothSides(finding, () => '')).toBe(
      'the reseller lists it until 2027-06-01; the registry ends it on 2026-12-01: the renewal has not reached the registry',
    );
    expect(registryNextStep(mismatch, finding.date_expiry)).toMatch(
      /^Ask the reseller why the renewal has not reached the registry, before 1 Dec 2026/,
    );
    expect(registryNextStep(view(), finding.date_expiry)).toMatch(
      /^Check the registrant's verification first/,
    );
  });

  it('sorts a registry date sooner than the reseller’s by the registry’s days left', () => {
    const soon = withRegistryView(
      null,
      reseller({ domain_name: 'b.com' }),
      view({ kind: 'registry_expiry_mismatch', severity: 'critical', days_left: 2 }),
      NOW,
    );
    const later = { ...expiring('critical'), domain_name: 'a.com', days_left: 5 };
    expect(sortFindings([later, soon]).map((f) => f.domain_name)).toEqual(['b.com', 'a.com']);
  });
});

describe('judgeNotFound', () => {
  it('finds a gTLD domain the registry does not know: critical when the reseller record is expired or within the critical days, else a warning', () => {
    expect(judgeNotFound(reseller(), NOW, POLICY)).toEqual({
      kind: 'registry_unknown',
      severity: 'warning',
      date_expiry: null,
      days_left: null,
      status: [],
    });
    for (const at of [NOW + 7 * DAY, NOW + DAY, NOW - 30 * DAY])
      expect(judgeNotFound(reseller({ date_expiry: at }), NOW, POLICY)?.severity).toBe('critical');
    expect(judgeNotFound(reseller({ date_expiry: NOW + 8 * DAY }), NOW, POLICY)?.severity).toBe('warning');
  });

  it('says nothing for a domain added to the account within the last day: the registry may not serve it yet', () => {
    // Registered minutes ago (or a 404 a cache kept from the availability check before it).
    for (const added of [NOW - 5 * 60_000, NOW - DAY + 60_000, NOW + 60_000])
      expect(judgeNotFound(reseller({ date_created: added }), NOW, POLICY)).toBeNull();
    for (const added of [NOW - DAY - 60_000, null, undefined])
      expect(judgeNotFound(reseller({ date_created: added }), NOW, POLICY)?.kind).toBe('registry_unknown');
  });

  it('says nothing for a ccTLD, an xn-- TLD or a domain the reseller lists in quarantine', () => {
    for (const name of ['shop.nl', 'shop.co.uk', 'SHOP.DE.', 'shop.xn--p1ai', 'shop.рф'])
      expect(judgeNotFound(reseller({ domain_name: name }), NOW, POLICY)).toBeNull();
    expect(judgeNotFound(reseller({ quarantine: true }), NOW, POLICY)).toBeNull();
    for (const name of ['shop.org', 'shop.info', 'SHOP.Com.', 'bücher.shop', 'shop.io1'])
      expect(judgeNotFound(reseller({ domain_name: name }), NOW, POLICY)?.kind).toBe('registry_unknown');
  });

  it('puts it in words on both sides, with its next step', () => {
    const view: RegistryView = {
      ...(judgeNotFound(reseller(), NOW, POLICY) as Omit<RegistryView, 'server'>),
      server: 'https://rdap.example',
    };
    const f = withRegistryView(null, reseller(), view, NOW);
    expect(bothSides(f, () => 'x')).toBe(
      'the registry does not know it (HTTP 404 or 410, asked twice) while the reseller lists it as registered: deleted at the registry, or never registered',
    );
    expect(registryNextStep(view, f.date_expiry)).toMatch(/^Confirm it with a WHOIS or registry lookup/);
  });
});
