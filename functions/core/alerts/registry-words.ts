import { cutText, plural, safeText } from '../base/text';
import type { DomainFinding, RegistryView, ResellerFindingKind } from '../findings/classify';
import { isRegistryKind } from '../findings/registry-rules';
import type { Report } from '../scan/scan';

/**
 * The registry check in words (docs/registry.md): what a registry finding says, its next step, and
 * the digest's lines on the check itself. Registry values are data from a server we do not control:
 * every status word is made safe and cut before it is shown.
 */

/** `2026-12-01`: the day of an ISO 8601 instant, in UTC, as the registry and the reseller write dates. */
const isoDay = (iso: string) => iso.slice(0, 10);

const statusWords = (view: RegistryView, of: readonly string[]) =>
  view.status
    .filter((s) => of.includes(s))
    .map((s) => cutText(safeText(s), 64))
    .join(', ');

/** What the registry says that the reseller does not, in words; `resellerExpiry` is the finding's `date_expiry`. */
export function describeRegistryView(view: RegistryView, resellerExpiry: string): string {
  switch (view.kind) {
    case 'registry_redemption':
      return `the registry has it in ${statusWords(view, ['redemption period', 'pending delete']) || 'redemption'} while the reseller lists it as registered: the registry is deleting it`;
    case 'registry_hold':
      return `on hold at the registry (${statusWords(view, ['client hold', 'server hold']) || 'hold'}): it does not resolve`;
    case 'registry_expiry_mismatch': {
      const registry = view.date_expiry ?? resellerExpiry;
      const why =
        Date.parse(registry) < Date.parse(resellerExpiry)
          ? 'the renewal has not reached the registry'
          : "the reseller's record is behind the registry's";
      const ends = (view.days_left ?? 0) < 0 ? 'the registry let it expire on' : 'the registry ends it on';
      return `the reseller lists it until ${isoDay(resellerExpiry)}; ${ends} ${isoDay(registry)}: ${why}`;
    }
    case 'registry_unknown':
      return 'the registry does not know it (HTTP 404 or 410, asked twice) while the reseller lists it as registered: deleted at the registry, or never registered';
  }
}

/** A day formatter, as alert.ts's dateFormat makes them. */
export type Day = (iso: string) => string;

/** A finding whose kind is one of the reseller's rules (classify.ts). */
export type ResellerSideFinding = DomainFinding & { readonly kind: ResellerFindingKind };

/**
 * A domain finding in words, both sides when it carries both: the leading side first, then the
 * other (`…; the registry: on hold …` or `…; the reseller's record: expires …`), so neither hides.
 */
export function bothSides(f: DomainFinding, resellerWords: (g: ResellerSideFinding) => string): string {
  const lead = isRegistryKind(f.kind)
    ? f.registry
      ? describeRegistryView(f.registry, f.date_expiry)
      : `${f.kind.replace(/_/g, ' ')}, expiry ${isoDay(f.date_expiry)}`
    : resellerWords(f as ResellerSideFinding);
  if (f.reseller_finding)
    return `${lead}; the reseller's record: ${resellerWords({ ...f, kind: f.reseller_finding.kind })}`;
  if (f.registry && !isRegistryKind(f.kind))
    return `${lead}; the registry: ${describeRegistryView(f.registry, f.date_expiry)}`;
  return lead;
}

/** `x.nl registry hold`: a registry finding in an SMS (the name already made GSM-7). */
export function registrySmsItem(name: string, view: Pick<RegistryView, 'kind' | 'date_expiry'>): string {
  if (view.kind === 'registry_redemption') return `${name} registry redemption`;
  if (view.kind === 'registry_hold') return `${name} registry hold`;
  if (view.kind === 'registry_unknown') return `${name} unknown at registry`;
  return `${name} registry ends ${view.date_expiry ? isoDay(view.date_expiry) : '?'}`;
}

/**
 * The digest's lines on the check: what was checked, what could not be and why, the bootstrap's
 * date, and each server that failed (info: nothing the alert is about).
 */
export function registryDigestLines(report: Report): string[] {
  const r = report.registry;
  if (!r) return [];
  // A 404 is an answer, not a check: without it here a registry that knows none of the domains
  // would read as every domain checked and none disagreeing.
  const notFound = r.not_checkable.not_found;
  const notCheckable = r.not_checkable.no_rdap_service + r.not_checkable.no_expiration + notFound;
  // A report written before name_refused was counted apart has none (those were in server_failed).
  const refused = r.not_checked.name_refused ?? 0;
  const notChecked = r.not_checked.budget + r.not_checked.time + r.not_checked.server_failed + refused;
  const source = r.bootstrap
    ? `bootstrap published ${r.bootstrap.publication ? isoDay(r.bootstrap.publication) : 'without a date'}${r.bootstrap.cached ? ', kept from an earlier read' : ''}`
    : 'no bootstrap';
  const lines = [
    `REGISTRY CHECK (RDAP, ${source}): ${plural(r.checked, 'domain')} checked against the registry, ${r.disagree} disagreeing; day ${r.sample_day} of ${r.days} of the rotating sample; ${r.queries} of ${r.budget} queries.`,
  ];
  if (notCheckable)
    lines.push(
      `  Not checkable: ${r.not_checkable.no_rdap_service} in a TLD without RDAP, ${r.not_checkable.no_expiration} whose registry publishes no expiry date${notFound ? `, ${notFound} the registry does not know (HTTP 404 or 410)` : ''}.`,
    );
  if (notChecked)
    lines.push(
      `  Not checked this time: ${r.not_checked.budget} beyond the query budget, ${r.not_checked.time} out of time, ${r.not_checked.server_failed} at a failing RDAP server${refused ? `, ${refused} its RDAP server answered for the name alone (HTTP 400: it could not read the query)` : ''}.`,
    );
  for (const p of r.problems.slice(0, 10))
    lines.push(`  - (info) ${cutText(safeText(p.server), 120)}: ${cutText(safeText(p.reason), 300)}`);
  if (r.problems.length > 10) lines.push(`  - and ${r.problems.length - 10} more (see the JSON report)`);
  lines.push('');
  return lines;
}
