import {
  type ClassifyPolicy,
  classify,
  classifyContact,
  compareFindings,
  type DomainFinding,
  type Finding,
  type Severity,
} from './classify';
import { DeadlineError, IncompleteListingError } from './errors';
import { domainNameProblem } from './links';
import type { ListFilter, Problem, ResellerClient } from './reseller-client';
import { normalizeDomainName } from './text';

export const SCAN_MODES = ['full', 'filtered'] as const;
export type ScanMode = (typeof SCAN_MODES)[number];

/** The JSON report: `scan --json`, the SNS JSON variant, the Lambda's log. */
export interface Report {
  readonly generated_at: string;
  readonly now: string;
  readonly source: { readonly base_url: string; readonly mode: ScanMode };
  readonly policy: { readonly expiry_days: number; readonly critical_days: number };
  readonly stats: {
    readonly domains_scanned: number;
    readonly contacts_scanned: number;
    readonly requests: number;
    readonly duration_ms: number;
  };
  readonly summary: Readonly<Record<Severity, number>>;
  readonly findings: readonly Finding[];
  readonly problems: readonly Problem[];
}

/** What a scan needs. */
export interface ScanOptions {
  readonly client: ResellerClient;
  /** The instant the rules evaluate against (epoch ms). */
  readonly now: number;
  readonly policy: ClassifyPolicy;
  /** @default 'full' */
  readonly mode?: ScanMode;
  /** Signs a restore link for a quarantined domain; without it findings carry no `restore_url`. */
  readonly restoreLinkFor?: (domainName: string) => string;
  /** Seconds the scan may take, for the error that says so. */
  readonly timeBudgetSeconds?: number;
  /** Wall clock for `generated_at` and `duration_ms`. @default Date.now */
  readonly clock?: () => number;
}

const DAY_MS = 86_400_000;

/**
 * Reads the whole account (domains and contacts, concurrently), classifies page by page keeping
 * only findings, and returns the report. Throws rather than return a partial report: a listing
 * that changed under the scan is read once more, then the scan fails.
 */
export async function scanAccount(options: ScanOptions): Promise<Report> {
  const clock = options.clock ?? Date.now;
  const started = clock();
  const requestsBefore = options.client.requests;
  try {
    try {
      return await scanOnce(options, started, clock, requestsBefore);
    } catch (error) {
      if (!(error instanceof IncompleteListingError && error.retryable)) throw error;
    }
    try {
      return await scanOnce(options, started, clock, requestsBefore); // the account moved under us: one fresh read
    } catch (again) {
      if (!(again instanceof IncompleteListingError)) throw again;
      throw new IncompleteListingError(
        `the account changed while it was read, twice in a row (${again.message}); run the scan again when the account is quiet`,
        { retryable: false, cause: again },
      );
    }
  } catch (error) {
    if (error instanceof DeadlineError) {
      const budget = options.timeBudgetSeconds ? ` of ${options.timeBudgetSeconds} s` : '';
      throw new DeadlineError(
        `the scan could not read the whole account within its time budget${budget} (${error.message}); ` +
          'raise the time budget (Lambda timeout or --time-budget), raise --concurrency, or use --mode filtered',
      );
    }
    throw error;
  }
}

async function scanOnce(
  options: ScanOptions,
  started: number,
  clock: () => number,
  requestsBefore: number,
): Promise<Report> {
  const { client, now, policy } = options;
  const mode = options.mode ?? 'full';
  const findings: Finding[] = [];
  const domainFindings: DomainFinding[] = [];
  const problems: Problem[] = [];
  // Full mode: the client already drops records repeated across pages. Filtered mode also merges
  // several searches, so it remembers the names it has seen (flagged domains only).
  const seenAcrossSearches = mode === 'filtered' ? new Set<string>() : null;
  let domainsScanned = 0;
  const contactsByHandle = new Map<string, { name: string; company_name: string; email: string }>();
  let contactsScanned = 0;

  const readDomains = async (filter: ListFilter) => {
    for await (const page of client.listDomains(filter)) {
      problems.push(...page.problems);
      for (const domain of page.records) {
        if (seenAcrossSearches) {
          if (seenAcrossSearches.has(domain.domain_name)) continue;
          seenAcrossSearches.add(domain.domain_name);
        }
        domainsScanned++;
        const finding = classify(domain, now, policy);
        if (finding) domainFindings.push(finding);
      }
    }
  };
  const readContacts = async () => {
    for await (const page of client.listContacts()) {
      problems.push(...page.problems);
      for (const contact of page.records) {
        contactsScanned++;
        contactsByHandle.set(contact.handle, {
          name: contact.name,
          company_name: contact.company_name,
          email: contact.email,
        });
        const finding = classifyContact(contact);
        if (finding) findings.push(finding);
      }
    }
  };

  const domainReads =
    mode === 'full' ? [readDomains({})] : filteredQueries(now, policy).map((filter) => readDomains(filter));
  await Promise.all([...domainReads, readContacts()]);

  for (const finding of domainFindings) {
    const handle = finding.registrant?.handle;
    const contact = handle ? contactsByHandle.get(handle) : undefined;
    if (handle && contact) finding.registrant = { handle, ...contact };
    if (finding.kind === 'quarantine' && options.restoreLinkFor)
      attachRestoreLink(finding, options.restoreLinkFor);
    findings.push(finding);
  }
  findings.sort(compareFindings);
  problems.sort((a, b) => a.resource.localeCompare(b.resource) || a.page - b.page);

  const summary: Record<Severity, number> = { critical: 0, warning: 0, info: 0 };
  for (const f of findings) summary[f.severity]++;
  const finished = clock();
  return {
    generated_at: new Date(finished).toISOString(),
    now: new Date(now).toISOString(),
    source: { base_url: client.baseUrl, mode },
    policy: { expiry_days: policy.expiryDays, critical_days: policy.criticalDays },
    stats: {
      domains_scanned: domainsScanned,
      contacts_scanned: contactsScanned,
      requests: client.requests - requestsBefore,
      duration_ms: finished - started,
    },
    summary,
    findings,
    problems,
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

/**
 * The searches that together return every domain that can produce a finding, split on the
 * window's end so they barely overlap (few wasted requests):
 *  1. expiry at or before the window's end: expired and expiring domains (and most quarantined);
 *  2. beyond it, auto-renew off or absent (`auto_renewal=` is the documented "empty" value);
 *  3. beyond it, quarantined (cancelled before expiry).
 * A domain outside all three is healthy by the rules, so the findings equal full mode's. This
 * relies on the server applying the documented search syntax; full mode does not.
 */
export function filteredQueries(now: number, policy: ClassifyPolicy): ListFilter[] {
  const windowEnd = new Date(now + policy.expiryDays * DAY_MS).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return [
    { date_expiry: `<=${windowEnd}` },
    { date_expiry: `>${windowEnd}`, auto_renewal: ['false', ''] },
    { date_expiry: `>${windowEnd}`, status: ['quarantine'] },
  ];
}
