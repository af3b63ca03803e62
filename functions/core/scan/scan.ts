import { DeadlineError, IncompleteListingError, ResellerApiError } from '../base/errors';
import { retry } from '../base/retry';
import { normalizeDomainName, plainDomain, plural } from '../base/text';
import {
  type ClassifyPolicy,
  classify,
  classifyContact,
  type DomainFinding,
  type Finding,
  type Registrant,
  sortFindings,
  summaryOf,
} from '../findings/classify';
import { domainNameProblem } from '../links/links';
import type { ListFilter, ListingRules, ListPage, Problem, ResellerClient } from '../reseller/client';
import { RecordRegistry } from '../reseller/record-registry';
import type { Domain } from '../reseller/schemas';
import {
  COVERAGE_PARTS,
  type CoverageCounts,
  type CoveragePart,
  countCoverage,
  coverageSearches,
  READ_PARTS,
} from './coverage';
import { onMove, READS, rotation } from './moves';
import { markFinding, type PolicySet, reportPolicies } from './policies';
import { RegistryCandidates, type RegistryScanOptions, withRegistryCheck } from './registry-scan';
import { renewalCosts } from './renewal-costs';
import { type RenewalMeaning, renewalRuleOff, voteOnRenewal } from './renewal-vote';
import type { Report, ScanMode } from './report';
import {
  flagEmptyAccount,
  registrantConflictProblem,
  sortProblems,
  statusList,
  undocumentedStatusProblem,
} from './scan-problems';
import { confirmUnlisted } from './unlisted';

export { type Report, SCAN_MODES, type ScanMode } from './report';

/** What a scan needs. */
export interface ScanOptions {
  readonly client: ResellerClient;
  /** The instant the rules evaluate against (epoch ms). */
  readonly now: number;
  readonly policy: ClassifyPolicy;
  /** Policies per domain group: a domain one matches is judged by its thresholds and marked with its name. @default none */
  readonly policies?: PolicySet;
  /** @default 'auto' */
  readonly mode?: ScanMode;
  /** Signs a restore link for a quarantined domain; without it findings carry no `restore_url`. */
  readonly restoreLinkFor?: (domainName: string) => string;
  /**
   * Seconds the scan may take, for the error that says so; a function for a deadline that moves while
   * the read runs (asked when the error is written: the budget then in force).
   */
  readonly timeBudgetSeconds?: number | (() => number);
  /** Wall clock for `generated_at` and `duration_ms`. @default Date.now */
  readonly clock?: () => number;
  /**
   * Sees every domain read, with or without a finding (the state store watches their fields), the
   * page it was on, and the policy it falls under (its name; undefined: none). `attempt` rises when
   * the read starts over: drop what earlier attempts handed out.
   */
  readonly observe?: (domain: Domain, attempt: number, page: number, group: string | undefined) => void;
  /** Checks domains against their registries' RDAP once the account is read (docs/registry.md). @default off */
  readonly registry?: RegistryScanOptions;
  /**
   * With memory: the remembered names this read did not list, to be announced as gone. A few are
   * looked up first: one the account holds means the pages moved under the read (a domain leaving
   * an earlier page slides the next one onto it, unread), and the account is read again.
   */
  readonly unlisted?: () => Promise<readonly string[]>;
}

/**
 * Reads the whole account (domains and contacts, concurrently), classifies page by page keeping
 * only findings, and returns the report. A listing that changed under the scan is read once more
 * (when a whole read still fits in the time left), then read to its end and reported as it is,
 * marked incomplete (`source.incomplete`): the findings it holds are alerted, and the run fails
 * after (an account changing faster than it can be read must not silence all of its findings).
 */
export async function scanAccount(options: ScanOptions): Promise<Report> {
  const clock = options.clock ?? Date.now;
  const started = clock();
  const requestsBefore = options.client.requests;
  const read = await readAccount(options, started, clock, requestsBefore);
  if (!read.candidates || !options.registry) return read.report;
  return withRegistryCheck(read.report, read.candidates, {
    options: options.registry,
    reseller: options.client,
    now: options.now,
    criticalDays: options.policy.criticalDays,
    registrants: read.registrants,
    started,
    clock,
  });
}

/** The account read into a report (read once more if it moved), and the domains the registry check picked. */
async function readAccount(
  options: ScanOptions,
  started: number,
  clock: () => number,
  requestsBefore: number,
): Promise<AccountRead> {
  let attempts = 0;
  try {
    return await retry(
      (attempt) => {
        attempts = attempt;
        return scanOnce(options, started, clock, requestsBefore, attempt);
      },
      // The account moved under the read: one fresh read, at once (and that one reads on: onMove).
      { retries: READS - 1, shouldRetry: ({ error }) => isRetryableListing(error) && { delayMs: 0 } },
    );
  } catch (error) {
    if (error instanceof IncompleteListingError && attempts > 1)
      throw new IncompleteListingError(
        `the account changed while it was read, twice in a row (${error.message}); run the scan again when the account is quiet`,
        { retryable: false, cause: error },
      );
    if (!(error instanceof DeadlineError)) throw error;
    const { timeBudgetSeconds } = options;
    const seconds = typeof timeBudgetSeconds === 'function' ? timeBudgetSeconds() : timeBudgetSeconds;
    const budget = seconds ? ` of ${seconds} s` : '';
    throw new DeadlineError(
      `the scan could not read the whole account within its time budget${budget} (${error.message}); ` +
        "raise the time budget (scanTimeoutMinutes on AWS, up to Lambda's 15 minutes; --time-budget on the command line) or --concurrency; --mode auto (the default) reads less when its proof holds",
    );
  }
}

const isRetryableListing = (error: unknown): boolean =>
  error instanceof IncompleteListingError && error.retryable;

/** One read of the account: its report, and the registry check's candidates when it is on. */
interface AccountRead {
  readonly report: Report;
  readonly candidates: RegistryCandidates | undefined;
  /** The registrants by handle, to name them on the registry's findings too. */
  readonly registrants: ReadonlyMap<string, Registrant>;
}

/**
 * One read of the whole account into a report: domains and contacts together, then the renewal
 * rule settled by the account's vote, then findings and problems put in the report's order.
 */
async function scanOnce(
  options: ScanOptions,
  started: number,
  clock: () => number,
  requestsBefore: number,
  attempt: number,
): Promise<AccountRead> {
  const { client, now, policy } = options;
  const mode = options.mode ?? 'auto';
  const registry = options.registry;
  const gathered = startGathering(registry ? new RegistryCandidates(now, registry.days) : undefined);
  // Contacts are needed whatever the domains' proof says: read them while it is counted.
  // What a listing that moves does, and how one the budget will cut goes on from another page each
  // hour (no page, of domains or of contacts, is left unread for good): the same for both lists.
  const rules = {
    onMove: onMove(attempt, client, { started, clock }, gathered.domainPages),
    rotation: rotation(client, now, clock),
  };
  const reads = [
    readAllDomains({ options, attempt, rules, gathered }, mode),
    readContacts(client, gathered, rules),
  ] as const;
  // One read failing ends the try: the other stops at its next page before the next try starts, so
  // a domain of this try never reaches observe once the next one has begun.
  const [howRead] = await Promise.all(reads).catch(async (error: unknown) => {
    gathered.stopped = true;
    await Promise.allSettled(reads);
    throw error;
  });
  if (options.unlisted) await confirmUnlisted(client, options.unlisted, gathered, rules.onMove);
  const renewalOff = renewalRuleOff(gathered.meaning);
  if (renewalOff) judgeWithoutRenewalRule(gathered, now, policy, options.policies);
  const findings = [...gathered.contactFindings, ...completeDomainFindings(gathered, options.restoreLinkFor)];
  sortFindings(findings);
  flagEmptyAccount(gathered.problems, howRead.coverage?.all ?? gathered.domainsScanned);
  sortProblems(gathered.problems);
  const report = assembleReport({
    options,
    mode,
    howRead,
    gathered,
    findings,
    renewalOff,
    requests: client.requests - requestsBefore,
    started,
    finished: clock(),
  });
  return { report, candidates: gathered.registry, registrants: gathered.registrants };
}

/** What the concurrent reads of domains and contacts gather, kept for one attempt. */
interface Gathering {
  /** Shared by both reads in the order they arrive; sorted for the report at the end. */
  readonly problems: Problem[];
  readonly contactFindings: Finding[];
  /** Kept apart until the contacts are read: their registrants are named from the contact list. */
  readonly domainFindings: DomainFinding[];
  /** Kept only for the few domains flagged renewal_failed: classified again if the rule is off. */
  readonly renewalSuspects: Map<DomainFinding, Domain>;
  readonly meaning: RenewalMeaning;
  /** One registrant object per contact, shared by the findings of its domains (they never change it). */
  readonly registrants: Map<string, Registrant>;
  /** With the registry check: the domains it will look up, picked as they are read. */
  readonly registry: RegistryCandidates | undefined;
  domainsScanned: number;
  contactsScanned: number;
  /** Why a listing reported as it was could not be read whole (ListPage.incomplete). */
  readonly incomplete: string[];
  /** Set when the other read failed this try: a read stops at its next page. */
  stopped: boolean;
  /** The first domain read, as the server spelled it: a search for it checks what a 404 means. */
  listed?: string;
  /** The last domain read after the first: a second check of what a 404 means, if the first cannot tell. */
  lastListed?: Domain;
  /** Domain pages taken, of how many their listings' page 1 promised: the pace a move is judged by. */
  readonly domainPages: { read: number; pages: number };
}

/** An empty gathering: every attempt starts from nothing, so a retried read counts nothing twice. */
function startGathering(registry: RegistryCandidates | undefined): Gathering {
  return {
    registry,
    problems: [],
    contactFindings: [],
    domainFindings: [],
    renewalSuspects: new Map(),
    meaning: { dated: 0, yearBefore: 0 },
    registrants: new Map(),
    domainsScanned: 0,
    contactsScanned: 0,
    incomplete: [],
    stopped: false,
    domainPages: { read: 0, pages: 0 },
  };
}

/** What the domain read hands each record to: the scan's options, the attempt, where it gathers. */
interface DomainReading {
  readonly options: ScanOptions;
  readonly attempt: number;
  /** What a listing that moves does on this read, and how a cut one spreads its cut over runs. */
  readonly rules: Required<Pick<ListingRules, 'onMove' | 'rotation'>>;
  readonly gathered: Gathering;
}

/** How the domains were read, for the report's `source`. */
interface HowRead {
  readonly read: Report['source']['read'];
  readonly fallbackReason?: string;
  readonly coverage?: CoverageCounts;
}

/**
 * Reads every domain the way the mode asks: in full, or only the searches whose counts prove they
 * cover the account (auto: when that also takes fewer pages), falling back to a full read saying why.
 */
async function readAllDomains(reading: DomainReading, mode: ScanMode): Promise<HowRead> {
  if (mode === 'full') return readWholeAccount(reading, {});
  if (reading.attempt >= READS)
    return readWholeAccount(reading, {
      fallbackReason:
        'the first read could not be proven whole, as its pages did not match its totals (a listing that moved, or totals that fall short of the account)',
    });
  const { client, now, policy, policies } = reading.options;
  // A policy's longer expiry window widens what the searches must list in full.
  const widest = policies ? { ...policy, expiryDays: policies.widestExpiryDays } : policy;
  const searches = coverageSearches(now, widest);
  // Page 1 of the whole account first: it counts the account, shows the page size the server
  // serves, and on an account of a few pages starts the full read at once.
  const whole = await client.measureDomains(searches.all);
  const counts = COVERAGE_PARTS.length - 1;
  if (mode === 'auto' && whole.pages - 1 <= counts) {
    const fallbackReason = `the account fits in ${plural(Math.max(whole.pages, 1), 'page')}: reading the rest of it costs no more requests than the ${counts} counts a filtered read starts with`;
    return readWholeAccount(reading, { fallbackReason }, whole.first);
  }
  const proof = await countCoverage(client, searches, whole.total);
  const coverage = proof.counts ? { coverage: proof.counts } : {};
  if (!proof.proven) {
    const fallbackReason = `the filtered read could not be proven complete: ${proof.reason}`;
    return readWholeAccount(reading, { fallbackReason, ...coverage });
  }
  const proven = proof.counts;
  // A part the counts say is empty is read too (one request): a domain moving into it between the
  // counts and the read (quarantined, its auto-renew turned off) makes its page 1 count other
  // than its proof, and the scan reads again; left unread, it was missed for the run.
  const parts = READ_PARTS;
  const filteredPages = parts.reduce(
    (n, part) => n + Math.max(1, Math.ceil(proven[part] / whole.perPage)),
    0,
  );
  // auto takes the cheaper of two complete reads; filtered was asked for by name. A full read
  // now starts again at page 1: the account may have changed during the counts.
  if (mode === 'filtered' || filteredPages <= whole.pages) {
    const merge: Merge = {
      records: new RecordRegistry('domain', normalizeDomainName),
      problemsSeen: new Set(),
    };
    const read = (part: CoveragePart) =>
      readDomains(reading, searches[part], { merge, expectedTotal: proven[part], widerTotal: proven.all });
    await Promise.all(parts.map(read));
    const unread = 'beyond_renewing_registered';
    if (merge.mixed === undefined || proven[unread] === 0) return { read: 'filtered', ...coverage };
    // How a server matches one status against a list of them is not documented: the natural way
    // (any of them) counts such a domain as registered, in the part left unread, where one with a
    // status the API does not document may be a domain about to be lost. This account has them.
    await read(unread);
    const fallbackReason = `${merge.mixed.name} holds the status registered beside another (${merge.mixed.others}): a search on status may count such a domain as registered, so the part a filtered read leaves unread was read too`;
    return { read: 'full', fallbackReason, ...coverage };
  }
  const fallbackReason = `reading only the parts that can give a finding would take ${plural(filteredPages, 'page')}, the whole account ${whole.pages}`;
  return readWholeAccount(reading, { fallbackReason, ...coverage });
}

/** Reads every domain page (from `first` when page 1 is in hand) and says why, when it was a fallback. */
async function readWholeAccount(
  reading: DomainReading,
  why: Omit<HowRead, 'read'>,
  first?: ListPage<Domain>,
): Promise<HowRead> {
  await readDomains(reading, {}, { first });
  return { read: 'full', ...why };
}

/**
 * The proven searches of a filtered read, read concurrently as one listing: what each has already
 * handed out. The same record in two of them (the account moved between them) is read once; another
 * record under the same name is a problem, as paginate makes it within one listing. A problem
 * without a readable name cannot be matched across searches; it may be listed twice, never lost.
 */
interface Merge {
  readonly records: RecordRegistry;
  readonly problemsSeen: Set<string>;
  /** The first domain read whose statuses hold registered beside another value, and those values. */
  mixed?: { readonly name: string; readonly others: string };
}

/**
 * Reads one listing page by page into the gathering. In a filtered read (`merge`), a search whose
 * first page counts other than its proof did fails the attempt, so the scan reads again.
 */
async function readDomains(
  reading: DomainReading,
  filter: ListFilter,
  {
    first,
    merge,
    expectedTotal,
    widerTotal,
  }: { first?: ListPage<Domain>; merge?: Merge; expectedTotal?: number; widerTotal?: number },
): Promise<void> {
  const { gathered, options } = reading;
  for await (const page of options.client.listDomains(filter, first, {
    ...reading.rules,
    onDeadline: 'report',
    // A part counted below the whole account ends no capped window: its other end is not asked.
    ...(widerTotal === undefined ? {} : { widerTotal }),
  })) {
    if (gathered.stopped) return;
    gathered.domainPages.read++;
    if (page.page === 1) gathered.domainPages.pages += page.totalPages;
    if (page.incomplete) gathered.incomplete.push(page.incomplete);
    if (expectedTotal !== undefined && page.page === 1) checkCountStands(page, expectedTotal);
    for (const problem of page.problems) {
      if (!merge || firstSighting(merge, problem)) gathered.problems.push(problem);
    }
    for (const domain of page.records) {
      if (merge && !admitMerged(reading, merge, domain, page.page)) continue;
      if (merge && !merge.mixed && domain.status.includes('registered')) {
        const others = domain.status.filter((value) => value !== 'registered');
        if (others.length)
          merge.mixed = { name: plainDomain(domain.domain_name), others: statusList(others) };
      }
      tallyDomain(reading, domain, page.page);
    }
  }
}

/**
 * The proof counted this search a moment ago: a read that finds another total means the account
 * moved in between (or the server answers counts and reads differently). Read again.
 */
function checkCountStands(page: ListPage<Domain>, expectedTotal: number): void {
  if (page.totalResults === expectedTotal) return;
  throw new IncompleteListingError(
    `a search counted ${expectedTotal} domains for the proof but listed ${page.totalResults} when read`,
    { retryable: true },
  );
}

/** True the first time a search reports a named problem: the same record seen by two searches is one problem. */
function firstSighting(merge: Merge, problem: Problem): boolean {
  if (problem.key === null) return true;
  const seen = `${problem.key}\n${problem.reason}`;
  if (merge.problemsSeen.has(seen)) return false;
  merge.problemsSeen.add(seen);
  return true;
}

/**
 * True for a record no other search has handed out. Another record under the same name is a
 * problem instead: critical when it says quarantine, since it was not checked.
 */
function admitMerged(reading: DomainReading, merge: Merge, domain: Domain, page: number): boolean {
  const key = reading.options.client.rawKeyOf(domain) || domain.domain_name;
  const admission = merge.records.admit(key, domain, ', in another search');
  if (admission.kind === 'new') return true;
  if (admission.kind !== 'repeat') {
    reading.gathered.problems.push({
      resource: 'domain',
      key,
      page,
      reason: admission.reason,
      ...(domain.status.includes('quarantine') ? { severity: 'critical' as const } : {}),
    });
  }
  return false;
}

/** Counts, shows and classifies one domain read, and lets it vote on what `date_renewal` means. */
function tallyDomain(reading: DomainReading, domain: Domain, page: number): void {
  const { options, gathered } = reading;
  const { now, policy } = options;
  gathered.domainsScanned++;
  if (gathered.listed === undefined) gathered.listed = options.client.rawKeyOf(domain) || domain.domain_name;
  else gathered.lastListed = domain;
  const group = options.policies?.policyFor(domain);
  options.observe?.(domain, reading.attempt, page, group?.policy.name);
  const found = classify(domain, now, group ? group.classify : policy);
  const finding = found && group ? markFinding(found, group) : found;
  if (finding) gathered.domainFindings.push(finding);
  gathered.registry?.consider(domain, finding, group);
  voteOnRenewal(gathered.meaning, domain, now);
  if (finding?.kind === 'renewal_failed') gathered.renewalSuspects.set(finding, domain);
  for (const problem of [undocumentedStatusProblem(domain, page), registrantConflictProblem(domain, page)])
    if (problem) gathered.problems.push(problem);
}

/**
 * Reads every contact for the registrants' names and the contacts pending validation. Contacts only
 * name registrants and flag pending validations: a key that may not read them (or a contact list
 * that fails) must not stop the alert about every domain.
 */
async function readContacts(client: ResellerClient, gathered: Gathering, rules: ListingRules): Promise<void> {
  try {
    await readContactPages(client, gathered, rules);
  } catch (error) {
    // A list that moved is read again; one that cannot be read (a runaway page count too) is a problem.
    const unreadable =
      error instanceof ResellerApiError || (error instanceof IncompleteListingError && !error.retryable);
    if (!unreadable) throw error;
    gathered.problems.push({
      resource: 'contact',
      key: null,
      page: 0,
      reason: `the contact list could not be read (${error.message}); registrants are not named and contacts pending validation are not checked`,
    });
  }
}

/** Reads the contact pages into the gathering: registrants by handle, and the contacts' own findings. */
async function readContactPages(
  client: ResellerClient,
  gathered: Gathering,
  rules: ListingRules,
): Promise<void> {
  for await (const page of client.listContacts({}, { ...rules, onDeadline: 'report' })) {
    if (gathered.stopped) return;
    if (page.incomplete) gathered.incomplete.push(page.incomplete);
    for (const problem of page.problems) gathered.problems.push(problem);
    for (const contact of page.records) {
      gathered.contactsScanned++;
      gathered.registrants.set(contact.handle, {
        handle: contact.handle,
        name: contact.name,
        company_name: contact.company_name,
        email: contact.email,
      });
      const finding = classifyContact(contact);
      if (finding) gathered.contactFindings.push(finding);
    }
  }
}

/**
 * The account's `date_renewal` reads as the last renewal: the domains flagged `renewal_failed` are
 * classified again without that rule, and kept only if another rule still finds them.
 */
function judgeWithoutRenewalRule(
  gathered: Gathering,
  now: number,
  policy: ClassifyPolicy,
  policies: PolicySet | undefined,
): void {
  const { domainFindings, renewalSuspects } = gathered;
  for (let i = 0; i < domainFindings.length; i++) {
    const domain = renewalSuspects.get(domainFindings[i] as DomainFinding);
    if (!domain) continue;
    const group = policies?.policyFor(domain);
    const again = classify(domain, now, { ...(group ? group.classify : policy), renewalCheck: false });
    if (again) domainFindings[i] = markFinding(again, group);
    else domainFindings.splice(i--, 1);
  }
}

/**
 * Finishes the domain findings once the contacts are read: the registrant named from the contact
 * list, and a quarantine's restore link signed when the scan can sign one.
 */
function completeDomainFindings(
  gathered: Gathering,
  restoreLinkFor: ScanOptions['restoreLinkFor'],
): DomainFinding[] {
  for (const finding of gathered.domainFindings) {
    const handle = finding.registrant?.handle;
    const contact = handle ? gathered.registrants.get(handle) : undefined;
    if (contact) finding.registrant = contact;
    if (finding.kind === 'quarantine' && restoreLinkFor) attachRestoreLink(finding, restoreLinkFor);
  }
  return gathered.domainFindings;
}

/** Everything the report is made from, once the account is read. */
interface ReportParts {
  readonly options: ScanOptions;
  readonly mode: ScanMode;
  readonly howRead: HowRead;
  readonly gathered: Gathering;
  readonly findings: Finding[];
  readonly renewalOff: string | undefined;
  readonly requests: number;
  readonly started: number;
  readonly finished: number;
}

/** The report in its JSON shape: optional parts appear only when they say something. */
function assembleReport(parts: ReportParts): Report {
  const { options, mode, howRead, gathered, findings, renewalOff } = parts;
  const { client, now, policy } = options;
  const costs = renewalCosts(findings, now, policy.expiryDays);
  const overrides = policy.quarantineDays ?? {};
  return {
    generated_at: new Date(parts.finished).toISOString(),
    now: new Date(now).toISOString(),
    source: {
      base_url: client.baseUrl,
      mode,
      read: howRead.read,
      ...(howRead.fallbackReason !== undefined ? { fallback_reason: howRead.fallbackReason } : {}),
      ...(howRead.coverage ? { coverage: howRead.coverage } : {}),
      ...(gathered.incomplete.length ? { incomplete: gathered.incomplete.join('; ') } : {}),
    },
    policy: {
      expiry_days: policy.expiryDays,
      critical_days: policy.criticalDays,
      ...(Object.keys(overrides).length ? { quarantine_days: overrides } : {}),
      ...(options.policies?.resolved.length ? { policies: reportPolicies(options.policies) } : {}),
    },
    ...(renewalOff ? { renewal_rule_off: renewalOff } : {}),
    ...(costs ? { renewal_costs: costs } : {}),
    stats: {
      domains_scanned: gathered.domainsScanned,
      contacts_scanned: gathered.contactsScanned,
      requests: parts.requests,
      duration_ms: parts.finished - parts.started,
    },
    summary: summaryOf(findings),
    findings,
    problems: gathered.problems,
  };
}

/**
 * Signs the restore link of a quarantined domain under its normalised name (lower case, no trailing
 * dot, punycode). A name that still cannot be signed gets a line saying so instead: one odd record
 * must never stop the alert about every other domain.
 */
function attachRestoreLink(finding: DomainFinding, sign: (domainName: string) => string): void {
  const name = normalizeDomainName(finding.domain_name);
  const problem = domainNameProblem(name);
  if (problem) {
    finding.restore_unavailable = `no restore link: ${problem}; restore it in the reseller's control panel`;
    return;
  }
  try {
    finding.restore_url = sign(name);
  } catch (error) {
    finding.restore_unavailable = `no restore link: ${(error as Error).message}; restore it in the reseller's control panel`;
  }
}
