import type { Finding, Severity } from '../findings/classify';
import type { Problem } from '../reseller/paging';
import type { CoverageCounts } from './coverage';
import type { ReportPolicy } from './policies';
import type { RegistryReport } from './registry-scan';
import type { RenewalCosts } from './renewal-costs';

/** The report a scan makes (scan.ts), in its JSON shape, and the ways a scan reads the domains. */

/**
 * How the scan reads the domains. `full`: every page. `filtered`: only the searches whose
 * pagination totals prove they cover the whole account, or every page when they do not.
 * `auto` (the default): as filtered, and every page also when that takes fewer pages.
 */
export const SCAN_MODES = ['auto', 'full', 'filtered'] as const;
export type ScanMode = (typeof SCAN_MODES)[number];

/** The JSON report: `scan --json`, the SNS JSON variant, the Lambda's log. */
export interface Report {
  readonly generated_at: string;
  readonly now: string;
  readonly source: {
    readonly base_url: string;
    /** The account's name, when the deployment scans several (docs/accounts.md). */
    readonly account?: string;
    /** With `account`: its alerts' label (its `accountLabel`, else its name), for readers of the JSON. */
    readonly account_label?: string;
    /** With `account`: the zone of its alerts' dates (its `timeZone`), so a webhook dates them as its e-mail does. */
    readonly time_zone?: string;
    /** A group's own alert: the policy whose domains alone it carries (functions/core/alerts/groups.ts). */
    readonly group?: string;
    readonly mode: ScanMode;
    /** What was read: every domain page, or only the searches the counts proved complete. */
    readonly read: 'full' | 'filtered';
    /** Why `auto` or `filtered` mode read the account in full: the proof failed, or it was cheaper. */
    readonly fallback_reason?: string;
    /** The searches' pagination totals the proof was made from (auto and filtered modes). */
    readonly coverage?: CoverageCounts;
    /**
     * Why this report is not the whole account: a listing changed while it was read (on the second
     * read the scan tries, or on the first when no time was left for a second), or the time budget
     * ran out while a listing was read. Its findings stand, and its problems say what may be
     * missing; the run that made it fails once its alert is out (incompleteScanError, moves.ts).
     */
    readonly incomplete?: string;
  };
  readonly policy: {
    readonly expiry_days: number;
    readonly critical_days: number;
    /** QUARANTINE_DAYS, when set: restore periods by TLD over the built-in table. */
    readonly quarantine_days?: Readonly<Record<string, number>>;
    /** The policies per domain group, in the order they are tried, each with what applied to its domains. */
    readonly policies?: readonly ReportPolicy[];
  };
  /** Why the `renewal_failed` rule is off: the account's `date_renewal` is not the coming renewal. Absent: on. */
  readonly renewal_rule_off?: string;
  /** What the renewals due in the expiry window that carry a price will cost, per currency. */
  readonly renewal_costs?: RenewalCosts;
  readonly stats: {
    readonly domains_scanned: number;
    readonly contacts_scanned: number;
    readonly requests: number;
    readonly duration_ms: number;
  };
  readonly summary: Readonly<Record<Severity, number>>;
  readonly findings: readonly Finding[];
  readonly problems: readonly Problem[];
  /** Signed read-only link to this report as a page (functions/core/scan/report-links.ts). */
  readonly report_url?: string;
  /**
   * Signed read-only link to this very report as JSON (report-links.ts): where a message too small
   * for the whole report sends a program for the rest (alerts/alert.ts).
   */
  readonly report_json_url?: string;
  /** Signed read-only link to the calendar feed of the findings. */
  readonly calendar_url?: string;
  /** The registry check (`--registry-check`, docs/registry.md): what was checked, and what could not be. */
  readonly registry?: RegistryReport;
}
