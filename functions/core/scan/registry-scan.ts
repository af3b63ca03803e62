import { StoppedError } from '../base/errors';
import { cutText, normalizeDomainName, safeText } from '../base/text';
import {
  type DomainFinding,
  type Finding,
  isDomainFinding,
  type Registrant,
  type RegistryFindingKind,
  type RegistryView,
  type Severity,
  severityRank,
  sortFindings,
  summaryOf,
} from '../findings/classify';
import { type ResellerSide, withRegistryView } from '../findings/registry-rules';
import type { BootstrapInfo, LoadedBootstrap } from '../registry/bootstrap';
import type { RdapClient } from '../registry/rdap-client';
import {
  type CheckReason,
  checkRegistry,
  type RegistryCandidate,
  type RegistryCounts,
  type RegistryProblem,
  recheckShare,
} from '../registry/registry-check';
import { inTodaysSample, recheckRanks, sampleRank, todayOfCycle } from '../registry/sample';
import type { ResellerClient } from '../reseller/client';
import type { Domain } from '../reseller/schemas';
import { markFinding, type ResolvedPolicy } from './policies';

/**
 * The scan's registry check (`scan --registry-check`, docs/registry.md): while the account is read,
 * the domains to check are picked (every domain with a finding at warning or above, and the day's
 * rotating sample of the rest; with memory, also the domains it remembers a registry finding for);
 * once it is read, they are looked up at their registries within the query budget, and what the
 * registry says that the reseller does not joins the findings, one finding per domain.
 */

/** What the scan needs for the registry check. */
export interface RegistryScanOptions {
  /** The bootstrap, read (or kept from an earlier scan); throws when it cannot be had. */
  readonly bootstrap: () => Promise<LoadedBootstrap>;
  readonly client: RdapClient;
  /** Most domains looked up per scan (RDAP_QUERY_BUDGET). */
  readonly budget: number;
  /** Days over which the rotating sample covers the account (REGISTRY_CHECK_DAYS). */
  readonly days: number;
  /** Dates further apart than this many days disagree (REGISTRY_TOLERANCE_DAYS). */
  readonly toleranceDays: number;
  /** With memory: the domains it remembers a registry finding for, and what became of them. @default none */
  readonly recheck?: RegistryRecheck;
}

/** Memory's side of the registry check (functions/core/memory/registry-memory.ts). */
export interface RegistryRecheck {
  /**
   * The names memory remembers a registry finding for, each with its kind, once it has read them;
   * each is checked again until the sources agree (else a finding would seem to resolve on the days
   * its sample does not come round), within the part of the budget docs/registry.md gives them.
   */
  readonly names: () => Promise<ReadonlyMap<string, RegistryFindingKind>>;
  /**
   * Told once the check is done: every re-check it could not confirm, all of them, where the
   * report's `registry.unconfirmed` lists at most 100. Memory keeps these as they were and may
   * resolve the others; the whole list never leaves the process (the report is what is published).
   */
  readonly unconfirmed: (names: readonly string[]) => void;
}

/** The report's `registry` section. */
export interface RegistryReport extends RegistryCounts {
  /** The bootstrap used, when one could be had. */
  readonly bootstrap: (BootstrapInfo & Omit<LoadedBootstrap, 'bootstrap'>) | null;
  readonly budget: number;
  readonly days: number;
  readonly tolerance_days: number;
  /** Today's day of the rotating sample's cycle, from 1 to `days`. */
  readonly sample_day: number;
  /** What went wrong at RDAP servers (or with the bootstrap): info, never a failed scan; at most 20. */
  readonly problems: readonly RegistryProblem[];
  /**
   * Remembered registry findings that could not be re-checked this scan, or whose registry said
   * nothing of them (memory keeps them as they were); at most 100 names, the rest counted in
   * `unconfirmed_omitted`. Memory is told the whole list beside the report (RegistryRecheck).
   */
  readonly unconfirmed: readonly string[];
  /** Unconfirmed names beyond the 100 listed (memory knows them all: it is told beside the report). */
  readonly unconfirmed_omitted?: number;
}

/** The section's lists are cut here: it travels in the alert's JSON, four times, within SNS's 256 KB. */
const PROBLEMS_KEPT = 20;
const UNCONFIRMED_KEPT = 100;

/** The section's lists within their bounds, what was cut counted. */
function bounded(problems: RegistryProblem[], unconfirmed: string[]) {
  const kept = problems.slice(0, PROBLEMS_KEPT);
  const cut = problems.slice(PROBLEMS_KEPT);
  if (cut.length)
    kept.push({
      server: `${cut.length} more servers`,
      severity: 'info',
      reason: 'failed too; their domains are counted as not checked',
      domains_not_checked: cut.reduce((n, p) => n + p.domains_not_checked, 0),
    });
  return {
    problems: kept,
    unconfirmed: unconfirmed.slice(0, UNCONFIRMED_KEPT),
    ...(unconfirmed.length > UNCONFIRMED_KEPT
      ? { unconfirmed_omitted: unconfirmed.length - UNCONFIRMED_KEPT }
      : {}),
  };
}

/** Severity rank at or above which a domain with a finding is always checked. */
const FLAGGED_FROM = severityRank('warning');

/** Picks the domains to check while the account is read; keeps only those, a few fields each. */
export class RegistryCandidates {
  private readonly picked = new Map<string, RegistryCandidate>();
  /** The policy each picked domain falls under, by its name as read: a registry finding of its own names it too. */
  private readonly groups = new Map<string, ResolvedPolicy>();

  constructor(
    private readonly now: number,
    private readonly days: number,
  ) {}

  /** One domain as read, with its finding (if any) and the policy it falls under (if any). */
  consider(domain: Domain, finding: DomainFinding | null, group?: ResolvedPolicy): void {
    const name = normalizeDomainName(domain.domain_name);
    if (finding && severityRank(finding.severity) >= FLAGGED_FROM)
      this.pick(sideOf(domain), 'flagged', finding.severity === 'critical' ? 0 : 1);
    else if (inTodaysSample(name, this.now, this.days))
      this.pick(sideOf(domain), 'sample', sampleRank(name, this.now, this.days));
    else return;
    if (group) this.groups.set(domain.domain_name, group);
  }

  /** The policy a picked domain falls under, by its name as read. */
  groupOf(name: string): ResolvedPolicy | undefined {
    return this.groups.get(name);
  }

  /**
   * Adds a domain memory asks to re-check (with the finding it remembers, and its place among the
   * re-checks: recheckRanks), or makes one already picked a re-check.
   */
  recheck(side: ResellerSide, remembered: RegistryFindingKind, rank: number): void {
    this.picked.set(side.domain_name, { ...side, reason: 'recheck', rank, remembered });
  }

  /** How many domains are picked. */
  get size(): number {
    return this.picked.size;
  }

  /** True when `name` (as read) is picked. */
  has(name: string): boolean {
    return this.picked.has(name);
  }

  /** A picked domain's reseller side, by its name as read. */
  sideOf(name: string): ResellerSide | undefined {
    return this.picked.get(name);
  }

  list(): RegistryCandidate[] {
    return [...this.picked.values()];
  }

  private pick(side: ResellerSide, reason: CheckReason, rank: number): void {
    this.picked.set(side.domain_name, { ...side, reason, rank });
  }
}

/** The reseller's side of a domain, the few fields the registry rules and a finding need. */
function sideOf(domain: Domain): ResellerSide {
  return {
    domain_name: domain.domain_name,
    date_expiry: domain.date_expiry,
    quarantine: domain.status.includes('quarantine'),
    auto_renew: domain.auto_renew,
    registrant_handle: domain.registrant_handle,
    ...(domain.date_created == null ? {} : { date_created: domain.date_created }),
  };
}

/** A report's findings, summary, time and registry section once the registry check has run. */
export async function withRegistryCheck<R extends RegistryReportable>(
  report: R,
  candidates: RegistryCandidates,
  run: RegistryRun & { readonly started: number; readonly clock: () => number },
): Promise<R & { registry: RegistryReport }> {
  const { findings, summary, registry } = await runRegistryCheck(report.findings, candidates, run);
  const finished = run.clock();
  return {
    ...report,
    generated_at: new Date(finished).toISOString(),
    stats: { ...report.stats, duration_ms: finished - run.started },
    summary,
    findings,
    registry,
  };
}

/** The parts of a report the registry check changes (scan.ts's Report has them all). */
interface RegistryReportable {
  readonly generated_at: string;
  readonly stats: { readonly duration_ms: number };
  readonly summary: Readonly<Record<Severity, number>>;
  readonly findings: readonly Finding[];
}

/** What a registry check runs with besides its options. */
export interface RegistryRun {
  readonly options: RegistryScanOptions;
  /** The account's client: memory's re-checks are looked up in the account by name. */
  readonly reseller: ResellerClient;
  readonly now: number;
  /** CRITICAL_DAYS: a registry expiration within it is critical. */
  readonly criticalDays: number;
  /** The account's contacts by handle, to name the registrant of a finding the registry alone gives. */
  readonly registrants: ReadonlyMap<string, Registrant>;
}

/** What {@link runRegistryCheck} changes in a report: its findings, its summary, and its own section. */
export interface RegistryOutcome {
  readonly findings: Finding[];
  readonly summary: Record<Severity, number>;
  readonly registry: RegistryReport;
}

/**
 * Runs the check on the picked domains (and memory's, looked up by name in the account) and merges
 * what the registry says into `findings`. Never throws for anything RDAP does: a bootstrap that
 * cannot be read leaves every domain unchecked, with the reason in the section's problems. Nor for
 * an error of the check itself: the account's own findings are alerted all the same, and the
 * section says no registry was checked, and why. Only a stop (Ctrl-C) ends it.
 */
export async function runRegistryCheck(
  findings: readonly Finding[],
  candidates: RegistryCandidates,
  run: RegistryRun,
): Promise<RegistryOutcome> {
  const { options, now } = run;
  const lookedUp = await addRechecks(candidates, options, run);
  const base = {
    budget: options.budget,
    days: options.days,
    tolerance_days: options.toleranceDays,
    sample_day: todayOfCycle(now, options.days) + 1,
  };
  const { outcome, unconfirmed } = await checkOrSayWhy(findings, candidates, run, { base, lookedUp });
  // Memory hears of every re-check not confirmed, where the report (published) lists 100.
  options.recheck?.unconfirmed(unconfirmed);
  return outcome;
}

/** The check, or why no registry was checked; with every re-check it could not confirm. */
async function checkOrSayWhy(
  findings: readonly Finding[],
  candidates: RegistryCandidates,
  run: RegistryRun,
  had: { readonly base: SectionBase; readonly lookedUp: RecheckLookups },
): Promise<{ outcome: RegistryOutcome; unconfirmed: readonly string[] }> {
  const { options } = run;
  const { base, lookedUp } = had;
  let loaded: LoadedBootstrap;
  try {
    loaded = await options.bootstrap();
  } catch (error) {
    if (stopped(error, options)) throw error;
    return unreadOutcome(findings, unread(candidates, base, error, lookedUp, 'bootstrap'));
  }
  try {
    return await checkLoaded(findings, candidates, run, { base, lookedUp, loaded });
  } catch (error) {
    if (stopped(error, options)) throw error;
    return unreadOutcome(findings, unread(candidates, base, error, lookedUp, 'registry check'));
  }
}

/** The parts of the report's section the check sets whether or not a registry was checked. */
type SectionBase = Pick<RegistryReport, 'budget' | 'days' | 'tolerance_days' | 'sample_day'>;

/** A stop (Ctrl-C: the client's signal) ends the scan; any other error ends only the check. */
const stopped = (error: unknown, options: RegistryScanOptions): boolean =>
  error instanceof StoppedError || options.client.signal?.aborted === true;

/** The findings as they were, with a section that says why no registry was checked. */
const unreadOutcome = (
  findings: readonly Finding[],
  { registry, unconfirmed }: { registry: RegistryReport; unconfirmed: readonly string[] },
) => ({ outcome: { findings: [...findings], summary: summaryOf(findings), registry }, unconfirmed });

/** The check with its bootstrap in hand: the picked domains looked up, and what they say merged. */
async function checkLoaded(
  findings: readonly Finding[],
  candidates: RegistryCandidates,
  run: RegistryRun,
  had: { readonly base: SectionBase; readonly lookedUp: RecheckLookups; readonly loaded: LoadedBootstrap },
): Promise<{ outcome: RegistryOutcome; unconfirmed: readonly string[] }> {
  const { options, now } = run;
  const { base, lookedUp, loaded } = had;
  const checked = await checkRegistry({
    candidates: candidates.list(),
    bootstrap: loaded.bootstrap,
    client: options.client,
    now,
    budget: options.budget,
    policy: { toleranceDays: options.toleranceDays, criticalDays: run.criticalDays },
    perServer: options.client.concurrencyPerServer,
  });
  const merged = mergeViews(findings, checked.views, candidates, run);
  const { bootstrap, ...read } = loaded;
  const unconfirmed = [...lookedUp.unconfirmed, ...checked.unconfirmed];
  const registry = {
    ...base,
    bootstrap: { ...bootstrap.info, ...read },
    ...withBeyondBudget(checked.counts, lookedUp.beyondBudget),
    ...bounded([...lookedUp.problems, ...checked.problems], unconfirmed),
  };
  return { outcome: { findings: merged, summary: summaryOf(merged), registry }, unconfirmed };
}

/** Memory's re-checks that could not be looked up in the account, and why. */
interface RecheckLookups {
  readonly unconfirmed: string[];
  readonly problems: RegistryProblem[];
  /** Re-checks not searched for: the budget was spent on those before them. */
  beyondBudget: number;
}

/** The counts with memory's re-checks left beyond the budget before they were searched for. */
function withBeyondBudget(counts: RegistryCounts, beyond: number): RegistryCounts {
  if (!beyond) return counts;
  return {
    ...counts,
    candidates: { ...counts.candidates, recheck: counts.candidates.recheck + beyond },
    not_checked: { ...counts.not_checked, budget: counts.not_checked.budget + beyond },
  };
}

/**
 * Memory's re-checks, in their rotating order (recheckRanks): each is looked up in the account by
 * name unless the read picked it already. A look-up that fails leaves that domain unconfirmed
 * (memory keeps what it knew), never the scan failed.
 */
async function addRechecks(
  candidates: RegistryCandidates,
  options: RegistryScanOptions,
  run: Pick<RegistryRun, 'reseller' | 'now'>,
): Promise<RecheckLookups> {
  const out: RecheckLookups = { unconfirmed: [], problems: [], beyondBudget: 0 };
  if (!options.recheck) return out;
  const { reseller } = run;
  const asked = await options.recheck.names();
  const ranks = recheckRanks(asked.keys(), run.now, recheckShare(options.budget));
  const inLine = [...asked].sort(([a], [b]) => (ranks.get(a) as number) - (ranks.get(b) as number));
  // The places the budget can give re-checks: their share, and what the flagged and sample leave.
  let picked = candidates.size;
  for (const [name] of inLine) if (candidates.has(name)) picked--;
  const places = Math.max(recheckShare(options.budget), options.budget - picked);
  let unsearched: string[] | undefined;
  let rechecks = 0;
  for (const [name, remembered] of inLine) {
    const rank = ranks.get(name) as number;
    const known = candidates.sideOf(name);
    if (known) {
      candidates.recheck(known, remembered, rank);
      rechecks++;
      continue;
    }
    // One reseller search each, one after another: none for a lookup the budget will not make.
    if (rechecks >= places) {
      out.unconfirmed.push(name);
      out.beyondBudget++;
      continue;
    }
    // A server that does not search by name has each look-up read the whole account, per spelling,
    // out of the scan's time budget: after the first, the rest wait for the next scan.
    if (unsearched) {
      unsearched.push(name);
      continue;
    }
    try {
      // Not picked while the account was read: its record, once more (memory holds no dates).
      const domain = await reseller.lookUpDomain(name, { stopUnfiltered: true });
      if (domain === 'unfiltered') unsearched = [name];
      else if (domain) {
        candidates.recheck(sideOf(domain), remembered, rank);
        rechecks++;
      }
      // Listed by the read, yet not found by name: nothing was checked, so memory keeps what it knew.
      else out.unconfirmed.push(name);
    } catch (error) {
      // Any failure but a stop costs this re-check only: a TypeError here failed the whole scan, unalerted.
      if (stopped(error, options)) throw error;
      out.unconfirmed.push(name);
      out.problems.push({
        server: 'reseller',
        severity: 'info',
        reason: `${cutText(safeText(name), 80)} could not be read again for its registry re-check (${cutText(safeText(String((error as Error)?.message ?? error)), 200)})`,
        domains_not_checked: 1,
      });
    }
  }
  if (unsearched) {
    for (const name of unsearched) out.unconfirmed.push(name); // a spread of 200 000 overflows the stack
    out.problems.push({
      server: 'reseller',
      severity: 'info',
      reason: `${unsearched.length} domain${unsearched.length === 1 ? '' : 's'} could not be read again for their registry re-check: the reseller does not search by domain_name (its search for ${cutText(safeText(unsearched[0] as string), 80)} listed other domains), and reading the whole account for each would take the scan's time`,
      domains_not_checked: unsearched.length,
    });
  }
  return out;
}

/** The findings with each registry view joined to its domain's finding, or made one. */
function mergeViews(
  findings: readonly Finding[],
  views: ReadonlyMap<string, RegistryView>,
  candidates: RegistryCandidates,
  run: RegistryRun,
): Finding[] {
  const out = [...findings];
  const at = new Map<string, number>();
  out.forEach((f, i) => {
    if (isDomainFinding(f)) at.set(f.domain_name, i);
  });
  for (const [name, view] of views) {
    const side = candidates.sideOf(name);
    if (!side) continue;
    const index = at.get(name);
    const existing = index === undefined ? null : (out[index] as DomainFinding);
    const finding = withRegistryView(existing, side, view, run.now);
    // A finding the registry alone gives goes to the domain's group, as the reseller's would.
    if (finding.policy === undefined) markFinding(finding, candidates.groupOf(name));
    const named = finding.registrant && run.registrants.get(finding.registrant.handle);
    if (named) finding.registrant = named;
    if (index === undefined) out.push(finding);
    else out[index] = finding;
  }
  return sortFindings(out);
}

/** The section when no bootstrap could be had: nothing checked, and why. */
function unread(
  candidates: RegistryCandidates,
  base: SectionBase,
  error: unknown,
  lookedUp: RecheckLookups,
  server: string,
): { registry: RegistryReport; unconfirmed: string[] } {
  const list = candidates.list();
  const byReason = { recheck: lookedUp.beyondBudget, flagged: 0, sample: 0 };
  for (const c of list) byReason[c.reason]++;
  const unconfirmed = [
    ...lookedUp.unconfirmed,
    ...list.filter((c) => c.reason === 'recheck').map((c) => c.domain_name),
  ];
  const registry: RegistryReport = {
    ...base,
    bootstrap: null,
    candidates: byReason,
    queries: 0,
    requests: 0,
    checked: 0,
    agree: 0,
    disagree: 0,
    not_checkable: { no_rdap_service: 0, no_expiration: 0, not_found: 0 },
    not_checked: { budget: lookedUp.beyondBudget, time: 0, server_failed: list.length, name_refused: 0 },
    ...bounded(
      [
        {
          server,
          severity: 'info',
          reason: `no registry was checked: ${cutText(safeText(String((error as Error)?.message ?? error)), 300)}`,
          domains_not_checked: list.length,
        },
        ...lookedUp.problems,
      ],
      unconfirmed,
    ),
  };
  return { registry, unconfirmed };
}
