import { normalizeDomainName } from '../base/text';
import {
  type DomainFinding,
  daysLeft,
  REGISTRY_FINDING_KINDS,
  RESELLER_FINDING_KINDS,
  type RegistryFindingKind,
  type RegistryView,
  type ResellerFindingKind,
  type Severity,
  severityRank,
} from './classify';

/**
 * The registry check's rules (docs/registry.md): what the registry's RDAP answer says about a
 * domain, put beside what the reseller's record says. Pure, like classify: the RDAP client
 * (functions/core/registry) hands in the registry's facts, the scan the reseller's.
 *
 * Never louder than it knows: a registry that publishes no expiration cannot contradict a date,
 * and a date the registry shows while the domain is being deleted or auto-renewed at the registry
 * is not the registrant's date.
 */

/** True for a kind the registry check gives. */
export const isRegistryKind = (kind: string): kind is RegistryFindingKind =>
  (REGISTRY_FINDING_KINDS as readonly string[]).includes(kind);

/** RFC 8056 statuses (RDAP words) that mean the registry is deleting the domain. */
export const REDEMPTION_STATUSES = ['redemption period', 'pending delete'] as const;
/** RFC 8056 statuses that take the domain out of the DNS. */
export const HOLD_STATUSES = ['client hold', 'server hold'] as const;
/**
 * The registry's expiration is not the registrant's while it shows these: after expiry a gTLD
 * registry renews the domain by itself for a year, which the registrar may still undo.
 */
export const AUTO_RENEW_STATUSES = ['auto renew period'] as const;

/** What the registry's RDAP answer says about one domain, as the rules read it. */
export interface RegistryFacts {
  /** Status values in RDAP's words (RFC 8056), lower case: `client hold`, `redemption period`. */
  readonly status: readonly string[];
  /** The `expiration` event (epoch ms); null when the registry publishes none. */
  readonly expiration: number | null;
}

/** What the reseller's record says, as the registry rules (and a finding made from them) need it. */
export interface ResellerSide {
  readonly domain_name: string;
  /** Epoch ms. */
  readonly date_expiry: number;
  /** The record's status includes `quarantine`. */
  readonly quarantine: boolean;
  readonly auto_renew: boolean | null;
  readonly registrant_handle: string | null;
  /** Epoch ms: when the domain was added to the account (`date_created`), when the record says. */
  readonly date_created?: number | null;
}

/** A domain added to the account this recently may not be served by its registry's RDAP yet. */
const NEWLY_ADDED_MS = 86_400_000;

/** Thresholds of the registry rules. */
export interface RegistryPolicy {
  /** Dates further apart than this many days disagree. @default 2 */
  readonly toleranceDays: number;
  /** A registry expiration within this many days is critical (CRITICAL_DAYS). */
  readonly criticalDays: number;
}

/** How one domain compares with its registry. */
export type RegistryJudgement =
  | { readonly kind: 'agree' }
  /** No status to object to and no expiration to compare: the registry cannot confirm the date. */
  | { readonly kind: 'no_expiration' }
  | { readonly kind: 'disagree'; readonly view: Omit<RegistryView, 'server'> };

const DAY_MS = 86_400_000;
/** Statuses kept on a finding, and their length: the values come from a server we do not control. */
const STATUS_KEPT = 12;
const STATUS_LENGTH = 64;

/** The registry's statuses as a finding keeps them: at most 12, each at most 64 characters. */
export const keptStatus = (status: readonly string[]): string[] =>
  status.slice(0, STATUS_KEPT).map((s) => s.slice(0, STATUS_LENGTH));

/**
 * The registry rules, first match wins: redemption (redemption period or pending delete while the
 * reseller does not list the domain in quarantine), hold (client or server hold, likewise), then an
 * expiration further than the tolerance from the reseller's `date_expiry` (not while the reseller
 * lists it in quarantine, nor while the registry shows an auto-renew period). Severity: critical,
 * except an expiry mismatch whose registry date lies beyond `criticalDays`, a warning.
 */
export function judgeRegistry(
  reseller: ResellerSide,
  registry: RegistryFacts,
  now: number,
  policy: RegistryPolicy,
): RegistryJudgement {
  const has = (words: readonly string[]) => registry.status.some((s) => words.includes(s));
  const expiration = registry.expiration;
  const view = (kind: RegistryFindingKind, severity: RegistryView['severity']) => ({
    kind: 'disagree' as const,
    view: {
      kind,
      severity,
      date_expiry: expiration === null ? null : new Date(expiration).toISOString(),
      days_left: expiration === null ? null : daysLeft(expiration, now),
      status: keptStatus(registry.status),
    },
  });
  // A quarantine at the reseller is the registry's redemption and hold: the same news, already critical.
  if (!reseller.quarantine && has(REDEMPTION_STATUSES)) return view('registry_redemption', 'critical');
  if (!reseller.quarantine && has(HOLD_STATUSES)) return view('registry_hold', 'critical');
  if (expiration === null) return { kind: 'no_expiration' };
  if (reseller.quarantine || has(REDEMPTION_STATUSES) || has(AUTO_RENEW_STATUSES)) return { kind: 'agree' };
  if (Math.abs(expiration - reseller.date_expiry) <= policy.toleranceDays * DAY_MS) return { kind: 'agree' };
  const critical = expiration <= now + policy.criticalDays * DAY_MS;
  return view('registry_expiry_mismatch', critical ? 'critical' : 'warning');
}

/**
 * True when the name's TLD is a gTLD as far as it can be told without a list: its last label (in
 * ASCII) is neither two ASCII letters (a ccTLD) nor an `xn--` label (IDN ccTLDs and gTLDs look alike).
 * ICANN's gTLD RDAP Profile obliges every gTLD registry to serve every registered name over RDAP.
 */
export function isGenericTld(name: string): boolean {
  const ascii = normalizeDomainName(name);
  const tld = ascii.slice(ascii.lastIndexOf('.') + 1);
  return (
    tld.length > 0 && !/^[a-z]{2}$/.test(tld) && !tld.startsWith('xn--') && /^[a-z0-9-]{1,63}$/.test(tld)
  );
}

/**
 * A registry's HTTP 404 for a domain the reseller lists: `registry_unknown` when its TLD is a gTLD
 * (which must serve every registered name over RDAP: the domain was deleted at the registry, or never
 * registered) and the reseller does not list it in quarantine (the registry's deletion is then the
 * same news); critical when the reseller's record is expired or within `criticalDays` (a lapse the
 * registry has carried out: a drop-catcher can take the name any moment), else a warning. Null for a
 * ccTLD or an `xn--` TLD, whose registries may serve only part of their names over RDAP.
 */
export function judgeNotFound(
  reseller: ResellerSide,
  now: number,
  policy: RegistryPolicy,
): Omit<RegistryView, 'server'> | null {
  if (!isGenericTld(reseller.domain_name) || notFoundExplained(reseller, now)) return null;
  const critical = reseller.date_expiry <= now + policy.criticalDays * DAY_MS;
  return {
    kind: 'registry_unknown',
    severity: critical ? 'critical' : 'warning',
    date_expiry: null,
    days_left: null,
    status: [],
  };
}

/**
 * True when the domain itself explains a 404 from a registry that works: the reseller lists it in
 * quarantine (the registry may have purged it), or it was added within a day. Registered minutes
 * ago, its 404 may be the registry's lag or a cached answer from the availability check before it,
 * not a deletion. A date_created more than a day ahead is not a registration at all (a wrong date):
 * believed, it would keep a deleted domain silent until that date.
 */
export function notFoundExplained(reseller: ResellerSide, now: number): boolean {
  const added = reseller.date_created;
  return reseller.quarantine || (typeof added === 'number' && Math.abs(now - added) < NEWLY_ADDED_MS);
}

/**
 * The one finding of a domain once the registry's view is known: one finding per domain, the more
 * severe side leading and the other carried on it, so neither hides the other. Without a finding
 * from the reseller's record, the registry's is the finding. On a tie the reseller's leads (its
 * restore link, its memory) and carries the registry's as `registry`; when the registry's is more
 * severe it leads, carrying the reseller's as `reseller_finding`.
 */
export function withRegistryView(
  existing: DomainFinding | null,
  reseller: ResellerSide,
  view: RegistryView,
  now: number,
): DomainFinding {
  if (existing && severityRank(existing.severity) >= severityRank(view.severity))
    return { ...existing, registry: view };
  if (existing) {
    const kind = existing.kind as ResellerFindingKind;
    return {
      ...existing,
      kind: view.kind,
      severity: view.severity,
      registry: view,
      ...((RESELLER_FINDING_KINDS as readonly string[]).includes(kind)
        ? { reseller_finding: { kind, severity: existing.severity } }
        : {}),
    };
  }
  return {
    domain_name: reseller.domain_name,
    date_expiry: new Date(reseller.date_expiry).toISOString(),
    days_left: daysLeft(reseller.date_expiry, now),
    auto_renew: reseller.auto_renew,
    registrant: reseller.registrant_handle ? { handle: reseller.registrant_handle } : null,
    kind: view.kind,
    severity: view.severity as Severity,
    registry: view,
  };
}
