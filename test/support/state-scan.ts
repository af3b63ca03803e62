import {
  classify,
  compareFindings,
  type Finding,
  type Severity,
} from '../../functions/core/findings/classify';
import type { StatePolicy } from '../../functions/core/memory/state';
import { type WatchedFields, watchedFieldsOf } from '../../functions/core/memory/state';
import type { Domain } from '../../functions/core/reseller/schemas';
import type { Report } from '../../functions/core/scan/scan';
import { undocumentedStatusProblem } from '../../functions/core/scan/scan-problems';
import {
  compareWithState,
  DEFAULT_STATE_POLICY,
  type ScanState,
  type WholeCompareResult,
} from './whole-state';

export const DAY = 86_400_000;

/** A healthy, locked, signed domain expiring in a year; override what the test is about. */
export function domain(name: string, now: number, overrides: Partial<Domain> = {}): Domain {
  return {
    domain_name: name,
    status: ['registered'],
    date_expiry: now + 365 * DAY,
    auto_renew: true,
    auto_renew_period: 12,
    date_deleted: null,
    registrant_handle: 'C1',
    transfer_lock: true,
    auth_code_present: false,
    nsgroup: null,
    dns_hosted: true,
    dnssec: 'signed',
    ...overrides,
  };
}

/** The report and observations a full scan of `domains` at `now` would hand the state comparison. */
export function scanOf(
  domains: readonly Domain[],
  now: number,
  options: { mode?: 'full' | 'filtered'; problems?: Report['problems'] } = {},
): { report: Report; observed: Map<string, WatchedFields> } {
  const findings: Finding[] = [];
  for (const d of domains) {
    const f = classify(d, now);
    if (f) findings.push(f);
  }
  findings.sort(compareFindings);
  const summary: Record<Severity, number> = { critical: 0, warning: 0, info: 0 };
  for (const f of findings) summary[f.severity]++;
  const iso = new Date(now).toISOString();
  return {
    report: {
      generated_at: iso,
      now: iso,
      source: { base_url: 'http://reseller.test', mode: options.mode ?? 'full', read: 'full' },
      policy: { expiry_days: 30, critical_days: 7 },
      stats: { domains_scanned: domains.length, contacts_scanned: 0, requests: 1, duration_ms: 1 },
      summary,
      findings,
      problems: options.problems ?? [],
    },
    observed: new Map(domains.map((d) => [d.domain_name, watchedFieldsOf(d)])),
  };
}

/**
 * A full scan of `domains` at `now` compared with `state`, as the scheduled scan compares it: the
 * default policy (or `options.policy`) and the simulator's scope.
 */
export function scanWithState(
  domains: readonly Domain[],
  now: number,
  state: ScanState,
  { policy = DEFAULT_STATE_POLICY, ...options }: Parameters<typeof scanOf>[2] & { policy?: StatePolicy } = {},
): WholeCompareResult {
  const { report, observed } = scanOf(domains, now, options);
  return compareWithState({ report, observed, state, policy, scope: 'http://reseller.test' });
}

/** The problems a scan reports of the records among `domains` with a status the API does not document. */
export const undocumentedProblems = (domains: readonly Domain[]): Report['problems'] =>
  domains.flatMap((d) => undocumentedStatusProblem(d, 1) ?? []);

/**
 * scanWithState as the scan reads records with a status the API does not document: each is reported
 * as a problem, so memory keeps the finding it remembers of them rather than judge them.
 */
export const scanUnjudged = (
  domains: readonly Domain[],
  now: number,
  state: ScanState,
  policy: StatePolicy = DEFAULT_STATE_POLICY,
): WholeCompareResult =>
  scanWithState(domains, now, state, { policy, problems: undocumentedProblems(domains) });

/** held.nl in .nl quarantine (40 days to restore) since `deletedDaysAgo` days before `now`, expired a day before that. */
export const heldInQuarantine = (now: number, deletedDaysAgo: number): Domain =>
  domain('held.nl', now, {
    auto_renew: false,
    status: ['quarantine'],
    date_expiry: now - (deletedDaysAgo + 1) * DAY,
    date_deleted: now - deletedDaysAgo * DAY,
  });

/**
 * `held`'s record read renewed under a status the API does not document (`pendingDelete`): its expiry
 * `days` on from `now`, no longer deleted, auto-renew on unless `autoRenew` says otherwise. Dates
 * alone judge it: with auto-renew on it gives no finding while memory keeps the quarantine.
 */
export const renewedUndocumented = (held: Domain, now: number, days = 300, autoRenew = true): Domain => ({
  ...held,
  status: ['pendingDelete'],
  date_expiry: now + days * DAY,
  date_deleted: null,
  auto_renew: autoRenew,
});

/** What each scan at `times` says (its why, less the "nothing" lines), `state` carried from one to the next. */
export function whysAt(
  times: readonly number[],
  state: ScanState,
  scan: (now: number, state: ScanState) => WholeCompareResult,
): string[][] {
  return times.map((now) => {
    const r = scan(now, state);
    state = r.next;
    return r.why.filter((w) => !w.startsWith('nothing'));
  });
}
