import { cutText, normalizeDomainName } from '../base/text';
import { type Finding, isDomainFinding } from '../findings/classify';
import type { Problem } from '../reseller/client';
import { DOCUMENTED_DOMAIN_STATUSES, type Domain } from '../reseller/schemas';

/**
 * The problems a scan adds of its own beyond the records that do not parse, and the order the
 * report lists them in.
 */

export const DATES_ONLY =
  "; the domain was checked by its dates only: look at it in the reseller's control panel";

/**
 * Never depend on an unstated rule: a status the documentation does not show (pending delete,
 * redemption, transferred out…) may be a domain about to be lost.
 */
export function undocumentedStatusProblem(domain: Domain, page: number): Problem | null {
  const undocumented = domain.status.filter((v) => !DOCUMENTED_DOMAIN_STATUSES.includes(v));
  if (undocumented.length === 0) return null;
  return {
    resource: 'domain',
    key: domain.domain_name,
    page,
    reason: `status ${statusList(undocumented)} is not one the API documents (registered, quarantine)${DATES_ONLY}`,
    dates_only: true,
  };
}

/**
 * True for the problem {@link undocumentedStatusProblem} makes: its domain was read and classified,
 * but by its dates only, so what the scan says of it cannot resolve what memory knew (compare.ts).
 * Told by its `dates_only` mark, not the words of its reason: a reworded or cut reason is the same record.
 */
export const judgedByDatesOnly = (p: Problem): boolean =>
  p.resource === 'domain' && p.key !== null && p.dates_only === true;

/**
 * The documentation spells the registrant handle two ways (`registant_handle` in its field table,
 * `registrant_handle` in its examples): one field. A record giving both, disagreeing, says two
 * things of one registrant, and a changed registrant (a hijack's first sign) may be the one not
 * read: the domain is checked, and the record named.
 */
export function registrantConflictProblem(domain: Domain, page: number): Problem | null {
  if (!domain.registrant_conflict) return null;
  const [examples, table] = domain.registrant_conflict.map((h) => JSON.stringify(cutText(h, 40)));
  return {
    resource: 'domain',
    key: domain.domain_name,
    page,
    reason: `the record gives its registrant handle twice, and the two disagree: registrant_handle ${examples}, registant_handle ${table} (the documentation spells the one field both ways); the domain was checked, named by registrant_handle; look at its registrant in the reseller's control panel`,
    registrant_conflict: true,
  };
}

/** Status values from the API as a message shows them: quoted, the first few, each cut. */
export function statusList(values: readonly string[]): string {
  const shown = values.slice(0, 3).map((v) => JSON.stringify(cutText(v, 40)));
  return values.length > shown.length
    ? `${shown.join(', ')} and ${values.length - shown.length} more`
    : shown.join(', ');
}

/**
 * An empty account is far more often the wrong key, account or environment than a real one: say so,
 * unless a domain problem already explains the missing domains.
 */
export function flagEmptyAccount(problems: Problem[], accountSize: number): void {
  if (accountSize !== 0 || problems.some((p) => p.resource === 'domain')) return;
  problems.push({
    resource: 'domain',
    key: null,
    page: 1,
    reason:
      "the account lists no domains at all: check that the key and base URL (RESELLER_BASE_URL, or the account's resellerBaseUrl) are for the account you mean (live, not test), or whether every domain left it",
  });
}

/** Records that may be quarantined domains first: they are critical items. Then by resource and page. */
export function sortProblems(problems: Problem[]): void {
  problems.sort(
    (a, b) =>
      Number(b.severity === 'critical') - Number(a.severity === 'critical') ||
      a.resource.localeCompare(b.resource) ||
      a.page - b.page,
  );
}

/**
 * Whether a problem record is an unreadable record: one of the reseller's that the scan could not
 * read, so its domain was not checked. Not one read by its dates only (a status the API does not
 * document, a kept quarantine or a remembered critical among them), nor one read and checked with its
 * registrant given twice, nor a damaged item of our own stored state (`state`: its domains were checked,
 * as if seen for the first time). The one decision of what "could not be read" counts, in every channel.
 */
export const unreadable = (p: Problem): boolean =>
  p.resource !== 'state' && p.dates_only !== true && p.registrant_conflict !== true;

/** How many of `problems` are {@link unreadable}: what every count of unreadable records says. */
export const unreadIn = (problems: readonly Problem[]): number => problems.filter(unreadable).length;

/** A name or handle is cut to this many characters in alerts and their JSON (a valid domain name has at most 253), and counted as cut. */
export const KEY_MAX = 260;

/** A domain's name as a critical item is counted by: normalised (memory's key), cut as the message's JSON carries it (message.ts). */
const criticalName = (name: string): string => normalizeDomainName(cutText(name, KEY_MAX));

/** What a critical record is counted by: its domain's name ({@link criticalName}), else its place. */
const criticalKey = (p: Problem, i: number): string | number =>
  p.resource === 'domain' && p.key !== null ? criticalName(p.key) : i;

/**
 * The critical records of `problems` that are critical items of their own: a domain's first only (a
 * domain listed under two spellings is one item), and none of a domain with a critical finding among
 * `findings` (listed twice, one record read in quarantine: that finding is its item; the record stays
 * among the records to look at). The one rule the alerts count critical items by (alert.ts
 * criticalProblems) and memory repeats unreadable quarantines by (unjudged-memory.ts
 * unreadableQuarantineCount), so no channel and no repeat says a domain twice.
 */
export function criticalRecords(problems: readonly Problem[], findings: readonly Finding[]): Problem[] {
  if (!problems.some((p) => p.severity === 'critical')) return [];
  const found = criticalFindingNames(findings);
  const seen = new Set<string | number>();
  return problems.filter((p, i) => {
    const key = criticalKey(p, i);
    if (p.severity !== 'critical' || seen.has(key) || found.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The names of the domains with a critical finding, made once a list: an alert asks a dozen times, of up to a million findings. */
const criticalNamesOf = new WeakMap<readonly Finding[], ReadonlySet<string | number>>();

function criticalFindingNames(findings: readonly Finding[]): ReadonlySet<string | number> {
  const known = criticalNamesOf.get(findings);
  if (known) return known;
  const names = new Set<string>();
  for (const f of findings)
    if (f.severity === 'critical' && isDomainFinding(f)) names.add(criticalName(f.domain_name));
  criticalNamesOf.set(findings, names);
  return names;
}
