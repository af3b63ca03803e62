import type { Contact, Domain, DomainPrice } from '../reseller/schemas';
import { type QuarantineOverrides, restoreDeadline } from './quarantine-periods';

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Rank for comparisons: critical > warning > info. */
export const severityRank = (s: Severity): number => SEVERITIES.indexOf(s);

/** The kinds the reseller's record gives (the rules below); the registry check adds its own. */
export const RESELLER_FINDING_KINDS = [
  'quarantine',
  'expired',
  'renewal_failed',
  'expiring',
  'auto_renew_off',
] as const;
export type ResellerFindingKind = (typeof RESELLER_FINDING_KINDS)[number];

/**
 * What the registry check can find (its rules are registry-rules.ts), most severe first; the first
 * that applies is the one. Listed here with the finding they make, so the finding's type needs
 * nothing from the rules that judge it (which import this module).
 */
export const REGISTRY_FINDING_KINDS = [
  'registry_redemption',
  'registry_hold',
  'registry_expiry_mismatch',
  /** A gTLD registry answers 404 for a domain the reseller lists as registered (registry-rules' judgeNotFound). */
  'registry_unknown',
] as const;
export type RegistryFindingKind = (typeof REGISTRY_FINDING_KINDS)[number];

/** Every kind of domain finding: the reseller's rules, then the registry check's. */
export const DOMAIN_FINDING_KINDS = [...RESELLER_FINDING_KINDS, ...REGISTRY_FINDING_KINDS] as const;
export type DomainFindingKind = (typeof DOMAIN_FINDING_KINDS)[number];

/** The registry's side of a finding: its kind, severity and the facts it was judged on. */
export interface RegistryView {
  readonly kind: RegistryFindingKind;
  readonly severity: 'warning' | 'critical';
  /** The registry's expiration (ISO 8601, UTC); null when it publishes none. */
  readonly date_expiry: string | null;
  /** Whole days to the registry's expiration, negative once past; null without one. */
  readonly days_left: number | null;
  /** The statuses the registry showed (RDAP words), as far as they are kept (see `keptStatus` in registry-rules.ts). */
  readonly status: readonly string[];
  /** The RDAP server that answered: its origin. */
  readonly server: string;
}

/** Thresholds of the finding rules. */
export interface ClassifyPolicy {
  /** Domains expiring within this many days are `expiring`. @default 30 */
  readonly expiryDays: number;
  /** Expiring without auto-renew within this many days is critical. @default 7 */
  readonly criticalDays: number;
  /** Restore periods by TLD (QUARANTINE_DAYS) over the built-in table. @default none */
  readonly quarantineDays?: QuarantineOverrides;
  /**
   * Whether `renewal_failed` applies; the scan turns it off for an account whose `date_renewal`
   * means something else (see scan.ts). @default true
   */
  readonly renewalCheck?: boolean;
}

export const DEFAULT_POLICY: ClassifyPolicy = { expiryDays: 30, criticalDays: 7 };

/** What the registrant contact tells the reader: whom to call. */
export interface Registrant {
  readonly handle: string;
  readonly name?: string;
  readonly company_name?: string;
  readonly email?: string;
}

export interface DomainFinding {
  readonly domain_name: string;
  readonly kind: DomainFindingKind;
  readonly severity: Severity;
  /** ISO 8601, UTC. */
  readonly date_expiry: string;
  readonly days_left: number;
  readonly auto_renew: boolean | null;
  readonly date_deleted?: string | null;
  /** Quarantine: the last instant a restore is possible (`date_deleted` + the TLD's period); null when unknown. */
  readonly restore_by?: string | null;
  /** Quarantine: whole days left to restore, 0 on the last day, negative once past; null when unknown. */
  readonly days_to_restore?: number | null;
  /** Quarantine: why `restore_by` is unknown (no `date_deleted`, or no period known for the TLD). */
  readonly restore_deadline_unknown?: string;
  /** `renewal_failed`: the renewal that was due and did not happen (ISO 8601). */
  readonly date_renewal?: string;
  /** Premium or custom-priced domains: the renewal price, as far as the record states it. */
  price?: DomainPrice;
  registrant: Registrant | null;
  restore_url?: string;
  /** Why a quarantined domain carries no restore link (its name cannot be signed), in words to act on. */
  restore_unavailable?: string;
  /**
   * What the registry's RDAP says that the reseller's record does not (the registry check,
   * docs/registry.md): on a `registry_*` finding its own facts, on any other finding a second
   * opinion shown beside the reseller's.
   */
  registry?: RegistryView;
  /**
   * On a `registry_*` finding: the less severe finding the reseller's own record gave, still shown
   * (one finding per domain, the more severe one leading).
   */
  reseller_finding?: { readonly kind: ResellerFindingKind; readonly severity: Severity };
  /** Signed links for what can be done about it (functions/core/memory/actions.ts). */
  actions?: FindingActions;
  /** ISO 8601: snoozed until then; left out of alerts meanwhile unless it gets worse. */
  snoozed_until?: string;
  /** Acknowledged ("we let this one go"): left out of alerts until its expiry, status or auto-renew changes. */
  acknowledged?: boolean;
  /** ISO 8601: when it was acknowledged. */
  acknowledged_at?: string;
  /** The policy (domain group) that applied, by name (functions/core/scan/policies.ts); absent: the deployment's own settings. */
  policy?: string;
  /** Its policy lets it lapse: kept in the report, left out of every alert. */
  let_lapse?: true;
  /**
   * Set by memory when it judges this finding as the one it remembers (docs/memory.md): the record
   * could not be judged (a status the API does not document) or the registry not checked this scan,
   * and the remembered finding is another kind or has a remembered restore-by.
   */
  remembered?: RememberedFinding;
}

/** The finding memory kept for a domain whose record this scan could not judge or confirm. */
export interface RememberedFinding {
  readonly kind: DomainFindingKind;
  readonly severity: Severity;
  /** A remembered quarantine: its restore-by (the sooner of the remembered and the read), null when unknown. */
  readonly restore_by?: string | null;
  /** A remembered quarantine: whole days left to restore, as `days_to_restore`; null when unknown. */
  readonly days_to_restore?: number | null;
  /**
   * An `expired` memory infers, not read: the expiry it last read, which has passed since (the
   * record reads another). Absent when the kind is what was read.
   */
  readonly date_expiry?: string;
  /** Why it is kept: the record's status is not documented, or the registry could not be checked. */
  readonly because: 'status_undocumented' | 'registry_unconfirmed';
}

/** The finding as memory remembers it (its kind, severity and restore-by), or the finding itself. */
export function asRemembered(f: DomainFinding): DomainFinding {
  const r = f.remembered;
  if (!r) return f;
  const { because: _why, ...kept } = r;
  return { ...f, ...kept };
}

/** The signed links of a domain finding, by action. */
export interface FindingActions {
  /** The finding's own page: what to do, and the links below, each asking to confirm. */
  page?: string;
  restore?: string;
  snooze?: string;
  acknowledge?: string;
}

export interface ContactFinding {
  readonly handle: string;
  readonly kind: 'contact_pending_validation';
  readonly severity: 'warning';
  readonly name: string;
  readonly company_name: string;
  readonly email: string;
}

export type Finding = DomainFinding | ContactFinding;

export const isDomainFinding = (f: Finding): f is DomainFinding => f.kind !== 'contact_pending_validation';

/** How many findings there are of each severity: a report's `summary`. */
export function summaryOf(findings: readonly Finding[]): Record<Severity, number> {
  const summary: Record<Severity, number> = { critical: 0, warning: 0, info: 0 };
  for (const f of findings) summary[f.severity]++;
  return summary;
}

const DAY_MS = 86_400_000;
/** A scheduled renewal is this long past before its not happening counts: renewals run in batches. */
export const RENEWAL_GRACE_MS = DAY_MS;
/** A `date_renewal` at most this long before `date_expiry` is the coming renewal, not last year's. */
export const RENEWAL_WINDOW_MS = 60 * DAY_MS;

/**
 * True when auto-renew is on and the scheduled renewal (`date_renewal`, at most 60 days before
 * expiry) is at least 24 hours past while the domain has not expired: it was due and did not happen.
 */
export function renewalFailed(domain: Domain, now: number): boolean {
  const renewal = domain.date_renewal;
  return (
    domain.auto_renew === true &&
    typeof renewal === 'number' &&
    now - renewal >= RENEWAL_GRACE_MS &&
    renewal >= domain.date_expiry - RENEWAL_WINDOW_MS &&
    domain.date_expiry > now
  );
}

/** Whole days from `now` to `expiry`, rounded down; negative once expired. */
export const daysLeft = (expiry: number, now: number): number => Math.floor((expiry - now) / DAY_MS);

/**
 * The finding rules (README, "What it finds"), first match wins: quarantine, expired, renewal
 * failed, expiring, auto-renew off.
 * Pure: no clock, no I/O. A domain with no auto-renew field counts as off (a false alarm is cheaper
 * than a lost domain). Returns null for a healthy domain.
 */
export function classify(
  domain: Domain,
  now: number,
  policy: ClassifyPolicy = DEFAULT_POLICY,
): DomainFinding | null {
  const days = daysLeft(domain.date_expiry, now);
  const renews = domain.auto_renew === true;
  // One object literal per finding shape, no spread: a spread copy of a shared `base` gave each of
  // 40 000 findings a hidden class of its own in V8 (about 300 bytes each of shape data).
  const finding = (kind: ResellerFindingKind, severity: Severity): DomainFinding => ({
    domain_name: domain.domain_name,
    date_expiry: new Date(domain.date_expiry).toISOString(),
    days_left: days,
    auto_renew: domain.auto_renew,
    registrant: domain.registrant_handle ? { handle: domain.registrant_handle } : null,
    kind,
    severity,
  });
  const priced = (f: DomainFinding): DomainFinding => {
    if (domain.price) f.price = domain.price;
    return f;
  };
  if (domain.status.includes('quarantine')) {
    const deadline = restoreDeadline(domain.domain_name, domain.date_deleted, now, policy.quarantineDays);
    return priced({
      domain_name: domain.domain_name,
      date_expiry: new Date(domain.date_expiry).toISOString(),
      days_left: days,
      auto_renew: domain.auto_renew,
      registrant: domain.registrant_handle ? { handle: domain.registrant_handle } : null,
      kind: 'quarantine',
      severity: 'critical',
      date_deleted: domain.date_deleted === null ? null : new Date(domain.date_deleted).toISOString(),
      restore_by: deadline.known ? deadline.restore_by : null,
      days_to_restore: deadline.known ? deadline.days_to_restore : null,
      ...(deadline.known ? {} : { restore_deadline_unknown: deadline.reason }),
    });
  }
  if (domain.date_expiry <= now) return priced(finding('expired', 'critical'));
  if (policy.renewalCheck !== false && renewalFailed(domain, now)) {
    return priced({
      domain_name: domain.domain_name,
      date_expiry: new Date(domain.date_expiry).toISOString(),
      days_left: days,
      auto_renew: domain.auto_renew,
      registrant: domain.registrant_handle ? { handle: domain.registrant_handle } : null,
      kind: 'renewal_failed',
      severity: 'critical',
      date_renewal: new Date(domain.date_renewal as number).toISOString(),
    });
  }
  if (domain.date_expiry <= now + policy.expiryDays * DAY_MS) {
    return priced(
      finding('expiring', renews ? 'info' : days <= policy.criticalDays ? 'critical' : 'warning'),
    );
  }
  if (!renews) return priced(finding('auto_renew_off', 'info'));
  return null;
}

/** A contact still in validation: domains under it may be suspended by the registry. */
export function classifyContact(contact: Contact): ContactFinding | null {
  if (!contact.status.includes('pending_validation')) return null;
  return {
    handle: contact.handle,
    kind: 'contact_pending_validation',
    severity: 'warning',
    name: contact.name,
    company_name: contact.company_name,
    email: contact.email,
  };
}

/** True when any finding is at `level` or above. */
export const anyAtOrAbove = (findings: readonly Finding[], level: Severity): boolean =>
  findings.some((f) => severityRank(f.severity) >= severityRank(level));

/**
 * What the report order compares: critical first; within a severity, quarantined domains first
 * (the closest to being lost; one memory keeps as a quarantine, `remembered`, among them), by days
 * left to restore (an unknown deadline after the known ones);
 * then fewer days left (contacts last), then name.
 */
interface OrderKey {
  readonly rank: number;
  /** 0 for quarantine, 1 for the rest. */
  readonly group: number;
  readonly days: number;
  readonly name: string;
}

function orderKey(read: Finding): OrderKey {
  if (!isDomainFinding(read)) {
    const rank = severityRank(read.severity);
    return { rank, group: 1, days: Number.POSITIVE_INFINITY, name: read.handle };
  }
  // A quarantine memory kept while its record reads another kind: ordered as that quarantine.
  const f = read.remembered?.kind === 'quarantine' ? asRemembered(read) : read;
  const rank = severityRank(f.severity);
  if (f.kind === 'quarantine') {
    const left = f.days_to_restore;
    return {
      rank,
      group: 0,
      days: typeof left === 'number' ? left : Number.MAX_SAFE_INTEGER,
      name: f.domain_name,
    };
  }
  // A registry date sooner than the reseller's is the nearer deadline.
  const registryDays = f.registry?.days_left;
  const days = typeof registryDays === 'number' ? Math.min(f.days_left, registryDays) : f.days_left;
  return { rank, group: 1, days, name: f.domain_name };
}

function compareKeys(a: OrderKey, b: OrderKey): number {
  if (a.rank !== b.rank) return b.rank - a.rank;
  if (a.group !== b.group) return a.group - b.group;
  if (a.days !== b.days) return a.days < b.days ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Report order: critical first, quarantine by days left to restore, then fewer days left (contacts last), then name. */
export const compareFindings = (a: Finding, b: Finding): number => compareKeys(orderKey(a), orderKey(b));

/**
 * Sorts `findings` in place in {@link compareFindings}'s order, computing each key once: findings
 * come in several shapes, and reading their fields in each of n·log n comparisons was most of a
 * 100 000-domain scan's time after its last page.
 */
export function sortFindings<T extends Finding>(findings: T[]): T[] {
  const keyed = findings.map((finding) => ({ finding, key: orderKey(finding) }));
  keyed.sort((a, b) => compareKeys(a.key, b.key));
  for (let i = 0; i < keyed.length; i++) findings[i] = (keyed[i] as (typeof keyed)[number]).finding;
  return findings;
}
