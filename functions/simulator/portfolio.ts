import { domainToASCII } from 'node:url';
import { quarantinePeriodOf } from '../core/findings/quarantine-periods';

/**
 * A deterministic reseller portfolio for the simulator, and its ground truth: every record is
 * generated from an intended scenario, so tests compare the scan against what the generator meant,
 * not against the classifier itself. Ground truth assumes the default policy (30-day window, 7
 * critical days).
 *
 * Two profiles ({@link PORTFOLIO_PROFILES}):
 * - `realistic` (the default): a reseller's year. Expiry dates spread over twelve months, so about
 *   30/365 of the domains fall in any 30-day window; about 5 % with auto-renew off; a few expired,
 *   in quarantine or without an auto-renew value; about 14 % of the domains give a finding. A record
 *   the scan cannot read has no expiry date (`null`): what a server with a typed date column can get
 *   wrong, and what the empty search value still selects.
 * - `stress`: every kind in bulk (about 42 % of the domains flagged) and unreadable records whose
 *   `date_expiry` is free text no date search can select, so a proven filtered read must fall back.
 *   Its records are exactly what the generator made before profiles existed.
 *
 * The first domains walk through every scenario in both, so small portfolios hold every kind.
 *
 * Deadlines (derived from each record's index and dates, never from the random sequence, so a seed
 * gives the same portfolio as before they existed): every record has `date_renewal`, the day before
 * expiry (the coming renewal); a quarantined domain's `date_deleted` lies within its TLD's real
 * restore period (functions/core/findings/quarantine-periods.ts), the .de and gTLD ones in their last days;
 * some auto-renew domains expiring soon have a renewal that failed (`date_renewal` days past, the
 * expiry not moved); and some domains are premium (EUR, a few USD) or custom-priced.
 */

/** A record as the API would send it: plain JSON, aliases and all. */
export type RawRecord = Record<string, unknown>;

export interface ExpectedFinding {
  /** Domain name or contact handle. */
  readonly key: string;
  readonly kind: string;
  readonly severity: 'critical' | 'warning' | 'info';
}

export interface Portfolio {
  readonly domains: RawRecord[];
  readonly contacts: RawRecord[];
  readonly truth: {
    readonly findings: ExpectedFinding[];
    /** Keys of records generated malformed on purpose. */
    readonly problems: string[];
  };
}

/** The portfolio profiles; see the module comment. */
export const PORTFOLIO_PROFILES = ['realistic', 'stress'] as const;
export type PortfolioProfile = (typeof PORTFOLIO_PROFILES)[number];

export interface PortfolioOptions {
  /** @default 'realistic' */
  readonly profile?: PortfolioProfile;
  /** Number of domains. @default 200 */
  readonly domains?: number;
  /** @default 1 */
  readonly seed?: number;
  /** The instant expiry dates are laid out around (epoch ms). */
  readonly now: number;
  /**
   * Appends this many records after the regular ones (which stay as the seed makes them), cycling
   * through the cases a filtered read can miss: no `date_expiry` (a problem), `date_expiry: null`
   * (a problem), auto-renew `null` beyond the window, no auto-renew field within it, a domain
   * cancelled before it expired (quarantined, expiry beyond the window, auto-renew still on), and a
   * renewal that failed two days ago on a domain expiring in 43 days, beyond the expiry window.
   * @default 0
   */
  readonly edgeCases?: number;
}

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** mulberry32: small, fast, and the same sequence on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

type Scenario =
  | 'healthy'
  | 'renews_soon'
  | 'auto_renew_off'
  | 'warning'
  | 'critical'
  | 'expired'
  | 'quarantine'
  | 'missing_auto_renew'
  | 'boundary_7'
  | 'boundary_30'
  | 'expires_now'
  | 'malformed';

/** Scenario weights per profile; the first domains walk through every scenario so small portfolios hold all kinds. */
const WEIGHTS: Readonly<Record<PortfolioProfile, ReadonlyArray<readonly [Scenario, number]>>> = {
  // Per 1 000 domains. Expiry spread over a year puts 30/365 ≈ 8 % in the window: 75 with
  // auto-renew on, the rest without it (warning, critical, the boundaries) or past it. About 5 % of
  // the domains have auto-renew off, and a handful are expired, quarantined or without the field.
  realistic: [
    ['healthy', 857],
    ['renews_soon', 75],
    ['auto_renew_off', 45],
    ['warning', 4],
    ['critical', 2],
    ['expired', 3],
    ['quarantine', 4],
    ['missing_auto_renew', 5],
    ['boundary_7', 1],
    ['boundary_30', 1],
    ['expires_now', 1],
    ['malformed', 2],
  ],
  stress: [
    ['healthy', 560],
    ['renews_soon', 100],
    ['auto_renew_off', 150],
    ['warning', 50],
    ['critical', 30],
    ['expired', 30],
    ['quarantine', 30],
    ['missing_auto_renew', 10],
    ['boundary_7', 1],
    ['boundary_30', 1],
    ['expires_now', 1],
    ['malformed', 2],
  ],
};

const WORDS = [
  'tulip',
  'canal',
  'bakery',
  'studio',
  'garden',
  'atelier',
  'fiets',
  'molen',
  'haven',
  'polder',
  'dijk',
  'kaas',
];
const IDN_WORDS = ['bücher', 'café', 'müller', 'straße', 'élan', 'zürich', 'ørsted', 'kœnig'];
const TLDS = ['nl', 'nl', 'nl', 'com', 'eu', 'be', 'de', 'co.uk', 'com.au', 'org'];
const FIRST = [
  'Anna',
  'Bram',
  'Chen',
  'Daan',
  'Eva',
  'Fatima',
  'Gert',
  'Hanna',
  'Ivo',
  'Joke',
  'Kees',
  'Lotte',
];
const LAST = ['de Vries', 'Jansen', 'Bakker', 'Visser', 'Smit', 'Meijer', 'Mulder', 'Bos', 'Vos', 'Peters'];
const COMPANIES = ['', '', 'Bloem BV', 'Haven Media', 'Polder IT', 'Kaashandel Gouda', 'Studio Noord'];

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** Writes a date the way a careless server might: with an offset or a fraction, still RFC 3339. */
function isoWithOffset(ms: number, variant: number): string {
  if (variant === 1) {
    const local = new Date(ms + 2 * HOUR).toISOString().replace('Z', '');
    return `${local.slice(0, 19)}+02:00`;
  }
  if (variant === 2) return new Date(ms).toISOString().replace('Z', '123Z');
  return iso(ms);
}

export function generatePortfolio(options: PortfolioOptions): Portfolio {
  const count = options.domains ?? 200;
  const profile = options.profile ?? 'realistic';
  const weights = WEIGHTS[profile];
  const totalWeight = weights.reduce((sum, [, w]) => sum + w, 0);
  const random = seededRandom(options.seed ?? 1);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const now = options.now;
  const findings: ExpectedFinding[] = [];
  const problems: string[] = [];
  // Contacts first, then domains, each drawing from the one seeded stream in a fixed order: the
  // same seed gives the same portfolio, which tests and the docs' pinned runs rely on.
  const contacts = generateContacts(Math.max(4, Math.ceil(count / 20)), now, random, pick, findings);
  const domains: RawRecord[] = [];
  for (let i = 0; i < count; i++) {
    const scenario =
      i < weights.length ? (weights[i]?.[0] as Scenario) : weighted(weights, random() * totalWeight);
    const idn = i % 17 === 5;
    const word = idn ? pick(IDN_WORDS) : pick(WORDS);
    const tld = pick(TLDS);
    const unicodeName = `${word}-${i.toString(36)}.${tld}`;
    const name = idn ? domainToASCII(unicodeName) : unicodeName;
    const registrant = contacts[Math.floor(random() * contacts.length)]?.handle as string;
    const facts = scenarioFacts(scenario, name, i, now, random);
    const shape = { i, name, tld, idn, registrant, techHandle: contacts[0]?.handle, profile, now };
    domains.push(domainRecord(scenario, facts, shape));
    if (scenario === 'malformed') problems.push(name);
    else if (facts.expected) findings.push({ key: name, ...facts.expected });
  }
  for (let i = 0; i < (options.edgeCases ?? 0); i++) {
    const edge = edgeCase(i, now, contacts[i % contacts.length]?.handle as string);
    domains.push(edge.record);
    if (edge.expected === 'problem') problems.push(String(edge.record.domain_name));
    else findings.push({ key: String(edge.record.domain_name), ...edge.expected });
  }
  return { domains, contacts, truth: { findings, problems } };
}

/** The account's contacts; one pending validation (and about 8 % more) each adds its finding. */
function generateContacts(
  contactCount: number,
  now: number,
  random: () => number,
  pick: <T>(list: readonly T[]) => T,
  findings: ExpectedFinding[],
): RawRecord[] {
  const contacts: RawRecord[] = [];
  for (let i = 0; i < contactCount; i++) {
    const handle = `C${String(i + 1).padStart(5, '0')}`;
    const pending = i === 1 || random() < 0.08;
    const first = pick(FIRST);
    const last = pick(LAST);
    contacts.push({
      handle,
      company_name: pick(COMPANIES),
      name: `${first} ${last}`,
      address_1: `Dorpsstraat ${i + 1}`,
      postal_code: '1234 AB',
      city: 'Utrecht',
      country: 'NL',
      phone: `+31.20${String(1_000_000 + i)}`,
      email: `${first.toLowerCase()}.${last.toLowerCase().replace(/\s+/g, '')}${i}@example.nl`,
      status: pending ? ['ok', 'pending_validation'] : ['ok'],
      // The field table types connections as a string, the examples as an integer: send both.
      connections: i % 3 === 0 ? String(i % 7) : i % 7,
      date_created: iso(now - 400 * DAY),
      date_last_updated: iso(now - 10 * DAY),
      auto_delete: false,
    });
    if (pending) findings.push({ key: handle, kind: 'contact_pending_validation', severity: 'warning' });
  }
  return contacts;
}

/** What a scenario makes of one domain: its dates, auto-renew, status, and the finding expected. */
interface ScenarioFacts {
  readonly expiry: number;
  readonly autoRenew: boolean | undefined;
  readonly status: string[];
  readonly deleted: number | null;
  readonly expected: Omit<ExpectedFinding, 'key'> | null;
}

function scenarioFacts(
  scenario: Scenario,
  name: string,
  i: number,
  now: number,
  random: () => number,
): ScenarioFacts {
  const healthy = now + (60 + Math.floor(random() * 640)) * DAY + Math.floor(random() * DAY);
  const facts: ScenarioFacts = {
    expiry: healthy,
    autoRenew: true,
    status: ['registered'],
    deleted: null,
    expected: null,
  };
  const off = { ...facts, autoRenew: false };
  switch (scenario) {
    case 'healthy':
    case 'malformed':
      return facts;
    case 'renews_soon':
      return {
        ...facts,
        expiry: now + (1 + Math.floor(random() * 28)) * DAY + HOUR,
        expected: renewalFails(i)
          ? { kind: 'renewal_failed', severity: 'critical' }
          : { kind: 'expiring', severity: 'info' },
      };
    case 'auto_renew_off':
      return { ...off, expected: { kind: 'auto_renew_off', severity: 'info' } };
    case 'warning':
      return {
        ...off,
        expiry: now + (8 + Math.floor(random() * 21)) * DAY + 2 * HOUR,
        expected: { kind: 'expiring', severity: 'warning' },
      };
    case 'critical':
      return {
        ...off,
        expiry: now + Math.floor(random() * 7) * DAY + HOUR,
        expected: { kind: 'expiring', severity: 'critical' },
      };
    case 'boundary_7':
      return { ...off, expiry: now + 7 * DAY, expected: { kind: 'expiring', severity: 'critical' } };
    case 'boundary_30':
      return { ...off, expiry: now + 30 * DAY, expected: { kind: 'expiring', severity: 'warning' } };
    case 'expires_now':
      return { ...facts, expiry: now, expected: { kind: 'expired', severity: 'critical' } };
    case 'expired':
      return {
        ...off,
        expiry: now - (1 + Math.floor(random() * 40)) * DAY,
        expected: { kind: 'expired', severity: 'critical' },
      };
    case 'quarantine': {
      const expiry = now - (5 + Math.floor(random() * 30)) * DAY;
      return {
        ...off,
        expiry,
        deleted: deletedWithinPeriod(name, expiry, now, i),
        status: ['quarantine'],
        expected: { kind: 'quarantine', severity: 'critical' },
      };
    }
    case 'missing_auto_renew':
      return { ...facts, autoRenew: undefined, expected: { kind: 'auto_renew_off', severity: 'info' } };
  }
}

/** Where a domain record's other fields come from: its index, name and the account. */
interface RecordShape {
  readonly i: number;
  readonly name: string;
  readonly tld: string;
  readonly idn: boolean;
  readonly registrant: string;
  readonly techHandle: unknown;
  readonly profile: PortfolioProfile;
  readonly now: number;
}

/** The domain record as the API would send it, varied by index so the client meets every documented form. */
function domainRecord(scenario: Scenario, facts: ScenarioFacts, shape: RecordShape): RawRecord {
  const { i, name, tld, idn, registrant, profile, now } = shape;
  const { expiry, autoRenew } = facts;
  const dateVariant = i % 5 === 0 ? 1 : i % 7 === 0 ? 2 : 0;
  const [sld, ...rest] = name.split('.');
  const record: RawRecord = {
    domain_name: name,
    sld,
    tld: rest.join('.'),
    status: facts.status,
    date_expiry:
      scenario !== 'malformed'
        ? isoWithOffset(expiry, dateVariant)
        : profile === 'stress'
          ? `${iso(expiry).slice(0, 10)} sometime`
          : null,
    date_created: iso(now - 800 * DAY),
    date_deleted: facts.deleted === null ? null : iso(facts.deleted),
    // The coming renewal, the day before expiry; a failed one lies days in the past, the expiry unmoved.
    date_renewal:
      scenario === 'malformed'
        ? null
        : iso(scenario === 'renews_soon' && renewalFails(i) ? now - (2 + (i % 4)) * DAY : expiry - DAY),
    auth_code: null,
    transfer_lock: tld === 'nl' ? null : i % 2 === 0,
    contacts: [
      { type: 'admin', handle: registrant },
      { type: 'tech', handle: shape.techHandle },
    ],
    ...priceFields(i),
    dns_hosted: true,
    dns_hosted_template: null,
    nsgroup: null,
    dnssec: i % 4 === 0 ? 'signed' : 'unsigned',
    tags: i % 9 === 0 ? ['vip'] : [],
    services: i % 11 === 0 ? ['idprotect'] : [],
    idn_language: idn ? 'de' : null,
  };
  // The documentation's own aliases, in some records, so the client stays honest.
  if (autoRenew !== undefined) record[i % 4 === 1 ? 'auto_renewal' : 'auto_renew'] = autoRenew;
  record[i % 6 === 2 ? 'auto_renewal_period' : 'auto_renew_period'] = 12;
  record[i % 10 === 3 ? 'registant_handle' : 'registrant_handle'] = registrant;
  return record;
}

/** Auto-renew domains expiring soon whose renewal failed (a spent prepaid balance): the first one and about 1 in 25 after. */
const renewalFails = (i: number): boolean => i % 25 === 1;

/** About 1 in 29 domains is premium (EUR, a third of those USD), 1 in 31 custom-priced. */
function priceFields(i: number): RawRecord {
  if (i % 29 === 3)
    return {
      premium_domain: true,
      premium_price: { currency: i % 87 === 32 ? 'USD' : 'EUR', price: 120 + (i % 9) * 35.5 },
      custom_price_domain: false,
    };
  return { premium_domain: false, custom_price_domain: i % 31 === 7 };
}

/**
 * When a quarantined domain was deleted: the day after expiry, but inside its TLD's restore period
 * (a name past it would have been released). The 30-day TLDs (.de, gTLDs) fall in their last days,
 * so a portfolio shows both ordinary and LAST DAYS deadlines; unknown TLDs keep the day after expiry.
 */
function deletedWithinPeriod(name: string, expiry: number, now: number, i: number): number {
  const period = quarantinePeriodOf(name);
  const dayAfter = expiry + DAY;
  if (!period) return dayAfter;
  const latestAgo = (period.restoreDays - 2 - (i % 4)) * DAY;
  return period.restoreDays <= 30 ? now - latestAgo : Math.max(dayAfter, now - latestAgo);
}

const EDGE_CASES = [
  'no_date_expiry',
  'null_date_expiry',
  'null_auto_renew_beyond',
  'no_auto_renew_in_window',
  'cancelled_early',
  'renewal_failed_beyond',
] as const;

/** One appended edge-case record, with what the rules must make of it. No randomness: seeds stay as they were. */
function edgeCase(
  i: number,
  now: number,
  registrant: string,
): { record: RawRecord; expected: Omit<ExpectedFinding, 'key'> | 'problem' } {
  const kind = EDGE_CASES[i % EDGE_CASES.length] as (typeof EDGE_CASES)[number];
  const name = `edge-${kind.replace(/_/g, '-')}-${i.toString(36)}.nl`;
  const record: RawRecord = {
    domain_name: name,
    sld: name.slice(0, -3),
    tld: 'nl',
    status: ['registered'],
    date_expiry: iso(now + (200 + i) * DAY),
    auto_renew: true,
    auto_renew_period: 12,
    date_created: iso(now - 800 * DAY),
    date_deleted: null,
    registrant_handle: registrant,
    contacts: [{ type: 'admin', handle: registrant }],
  };
  switch (kind) {
    case 'no_date_expiry':
      delete record.date_expiry;
      return { record, expected: 'problem' };
    case 'null_date_expiry':
      record.date_expiry = null;
      record.auto_renew = false;
      return { record, expected: 'problem' };
    case 'null_auto_renew_beyond':
      record.auto_renew = null;
      return { record, expected: { kind: 'auto_renew_off', severity: 'info' } };
    case 'no_auto_renew_in_window':
      delete record.auto_renew;
      record.date_expiry = iso(now + 12 * DAY + HOUR);
      return { record, expected: { kind: 'expiring', severity: 'warning' } };
    case 'cancelled_early':
      record.status = ['quarantine'];
      record.date_deleted = iso(now - 2 * DAY);
      return { record, expected: { kind: 'quarantine', severity: 'critical' } };
    case 'renewal_failed_beyond':
      record.date_expiry = iso(now + 43 * DAY + HOUR);
      record.date_renewal = iso(now - 2 * DAY);
      return { record, expected: { kind: 'renewal_failed', severity: 'critical' } };
  }
}

function weighted(weights: ReadonlyArray<readonly [Scenario, number]>, at: number): Scenario {
  for (const [scenario, weight] of weights) {
    if (at < weight) return scenario;
    at -= weight;
  }
  return 'healthy';
}
